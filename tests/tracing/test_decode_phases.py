"""Each phase of decoding alone, in C (``_decode.c``) against the Python reference (``events.py``).

Why: ``test_decode_parity`` compares whole decodings; when they differ, these
say in which phase (tokens, columns, digests, export). Every C phase is given
the *Python* output of the phase before, so a phase is checked on its own and
not only after the earlier phases agreed. The C phases chained must also give
what ``Decoder.decode`` gives: the single call sealing and comparisons make.
The traces are those of ``test_decode_parity`` (the builder's random traces
and a deep recursion) and one written by the real C collector.
"""

from __future__ import annotations

import dataclasses
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from histeg.traces import events, seal
from histeg.traces.reader import TraceFile
from tests.tracing.conftest import TracedRun
from tests.tracing.test_decode_parity import (
    CASES,
    assert_same_columns,
    deep_recursion,
    needs_c,
    random_case,
)
from tests.tracing.trace_builder import write_trace

pytestmark = needs_c


@dataclasses.dataclass
class Stream:
    """One entry point's words, with what both implementations decode it against."""

    where: str
    words: bytes
    c: Any
    """``_decode.Decoder`` with the trace's definitions."""
    table: events.FunctionTable
    value_hashes: array


def streams(path: Path, where: str, python_reference: Callable[[], Any]) -> Iterator[Stream]:
    file = TraceFile(path)
    with python_reference():
        python = seal.decoder(file.definitions)
    c = seal.decoder(file.definitions)._c
    for entry in range(len(file.entries)):
        yield Stream(f"{where}, entry {entry}", bytes(file.words(entry)), c, python.table, python.value_hashes)


def words_of(stream: Stream) -> array:
    words = array("H")
    words.frombytes(stream.words)
    return words


def uint32(data: bytes) -> list[int]:
    return array("I", data).tolist()


# -- the phases' outputs in one form --------------------------------------------------------------


def python_tokens(tokens: events.Tokens) -> tuple[list[tuple[Any, ...]], int]:
    """Per call: its fields, then its lines, parameters and yields; and the line events."""
    calls = [(c.function, c.parent, c.at, c.thread, c.end, c.result, int(c.complete), c.lines, c.params, c.yields) for c in tokens.calls]
    return calls, tokens.line_events


def c_tokens(raw: tuple[Any, ...]) -> tuple[list[tuple[Any, ...]], int]:
    """``python_tokens`` of what ``Decoder.tokens`` gives (lines and yields as (call, value) pairs in stream order)."""
    fields = [array(code, data).tolist() for code, data in zip("IiIIBIB", raw[:7], strict=True)]
    count = len(fields[0])
    lines: list[list[int]] = [[] for _ in range(count)]
    yields: list[list[int]] = [[] for _ in range(count)]
    for grouped, data in ((lines, raw[7]), (yields, raw[10])):
        pairs = uint32(data)
        for call, value in zip(pairs[::2], pairs[1::2], strict=True):
            grouped[call].append(value)
    params, param_start = uint32(raw[8]), uint32(raw[9])
    calls = [(*(column[k] for column in fields), lines[k], params[param_start[k] : param_start[k + 1]], yields[k]) for k in range(count)]
    return calls, raw[11]


def tokens_for_c(tokens: events.Tokens) -> tuple[Any, ...]:
    """Python tokens as ``Decoder.columns`` takes them (what ``Decoder.tokens`` gives)."""
    calls = tokens.calls
    columns = [array(code, [getattr(c, name) for c in calls]) for code, name in zip(
        "IiIIBIB", ("function", "parent", "at", "thread", "end", "result", "complete"), strict=True)]
    lines = array("I", [word for k, c in enumerate(calls) for position in c.lines for word in (k, position)])
    yields = array("I", [word for k, c in enumerate(calls) for value in c.yields for word in (k, value)])
    params = array("I", [value for c in calls for value in c.params])
    param_start = array("I", [0])
    for c in calls:
        param_start.append(param_start[-1] + len(c.params))
    return (*columns, lines, params, param_start, yields, tokens.line_events)


# -- the checks --------------------------------------------------------------------------------


def check_phases(stream: Stream, with_yields: bool) -> None:
    where = f"{stream.where}, with_yields={with_yields}"
    tokens = events.read_tokens(words_of(stream), stream.table, with_yields)
    assert c_tokens(stream.c.tokens(stream.words, with_yields)) == python_tokens(tokens), f"{where}: tokens differ"

    columns = events.build_columns(tokens)
    c_columns = stream.c.columns(tokens_for_c(tokens))
    for name, column, data in zip(events.CallColumns._fields, columns, c_columns, strict=True):
        assert data == column.tobytes(), f"{where}: column {name} differs"

    digests = events.compute_digests(columns, stream.table, stream.value_hashes)
    c_digests = stream.c.digests(columns)
    assert c_digests == (digests.digests, digests.own_digests, digests.line_digests), f"{where}: digests differ"

    exported = events.export_columns(columns, digests, tokens.line_events)
    assert_same_columns(seal.columns_from_c(stream.c.export(columns, c_digests, tokens.line_events)), exported, f"{where}: export")
    assert exported == events.decode(words_of(stream), stream.table, stream.value_hashes, with_yields)

    chained = stream.c.export(stream.c.columns(stream.c.tokens(stream.words, with_yields)), c_digests, tokens.line_events)
    assert chained == stream.c.decode(stream.words, with_yields), f"{where}: the C phases chained are not decode"


def check_trace(path: Path, where: str, python_reference: Callable[[], Any]) -> int:
    count = 0
    for stream in streams(path, where, python_reference):
        check_phases(stream, with_yields=True)
        check_phases(stream, with_yields=False)
        count += 1
    return count


@pytest.mark.parametrize("block", range(5))
def test_each_phase_alike_on_random_traces(block: int, tmp_path: Path, python_reference: Callable[[], Any]) -> None:
    checked = 0
    for seed in range(block * CASES // 5, (block + 1) * CASES // 5):
        case = random_case(seed, tmp_path)
        if not case.cut:  # a cut file may not split at all (test_decode_parity covers it)
            checked += check_trace(case.path, f"seed {seed}", python_reference)
    assert checked > CASES // 5


def test_each_phase_alike_on_a_deep_recursion(tmp_path: Path, python_reference: Callable[[], Any]) -> None:
    path = write_trace(tmp_path / "deep.htrace", deep_recursion(2_000), line_budget=3, value_budget=2).path
    assert check_trace(path, "deep recursion", python_reference) == 1


TRACED_PROJECT = {
    "src/shapes.py": """
        import threading


        class Grid:
            def __init__(self, width, height):
                self.cells = [[0] * width for _ in range(height)]

            def rows(self):
                for row in self.cells:
                    yield sum(row)

            def fill(self, value):
                for row in self.cells:
                    for x in range(len(row)):
                        row[x] = value
                return self


        def checked(value):
            if value < 0:
                raise ValueError(value)
            return value


        def in_threads(count):
            results = []
            workers = [threading.Thread(target=lambda n=n: results.append(checked(n))) for n in range(count)]
            for worker in workers:
                worker.start()
            for worker in workers:
                worker.join()
            return sorted(results)
    """,
    "tests/test_shapes.py": """
        import pytest

        from shapes import Grid, checked, in_threads


        def test_rows():
            rows = Grid(3, 4).fill(2).rows()
            assert next(rows) == 6
            assert list(rows) == [6, 6, 6]


        def test_many_fills():
            grid = Grid(2, 2)
            for value in range(20):
                grid.fill(value)
            assert list(grid.rows()) == [38, 38]


        def test_checked():
            with pytest.raises(ValueError):
                checked(-1)
            assert checked(3) == 3


        def test_threads():
            assert in_threads(4) == [0, 1, 2, 3]
    """,
}


def test_each_phase_alike_on_a_trace_of_the_c_collector(project_runner: Callable[..., TracedRun], tmp_path: Path,
                                                        python_reference: Callable[[], Any]) -> None:
    """A generator left suspended and resumed, exceptions, threads, and a line budget spent (``fill``)."""
    run = project_runner(tmp_path / "project", TRACED_PROJECT, tracer="c", line_budget=5)
    assert run.proc.returncode == 0, run.proc.stdout + run.proc.stderr
    assert not all(call.lines_complete for call in run.calls("shapes:Grid.fill")), "the line budget was not spent"
    checked = sum(check_trace(trace.path, trace.path.name, python_reference) for trace in run.traces)
    assert checked >= 4


def test_a_phase_refuses_columns_that_no_stream_gives(tmp_path: Path, python_reference: Callable[[], Any]) -> None:
    """The phases alone read columns from Python: a child listed before its parent, or offsets past a column, is refused."""
    path = write_trace(tmp_path / "deep.htrace", deep_recursion(3)).path
    (stream,) = streams(path, "deep", python_reference)
    columns = events.build_columns(events.read_tokens(words_of(stream), stream.table))
    reversed_children = columns._replace(children=array("I", reversed(columns.children)))
    with pytest.raises(ValueError):
        stream.c.digests(reversed_children)
    with pytest.raises(ValueError):
        stream.c.digests(columns._replace(line_start=array("I", [0] * (len(columns.line_start) - 1) + [len(columns.lines) + 1])))
    assert stream.c.digests(columns) == dataclasses.astuple(events.compute_digests(columns, stream.table, stream.value_hashes))
