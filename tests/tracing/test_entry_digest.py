"""The digest a trace's index gives each entry point (``events.index_entry``, ``Decoder.index``).

Why: comparisons skip a pair of entry points with equal digests without reading
them, so equal digests must mean equal behaviour, whatever ids each trace gave
its functions, values, threads and generators; and any change a comparison can
report must change the digest. Both implementations are checked on the same files.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

import pytest

from histeg.compare.divergences import compare_entry_points
from histeg.compare.entry_points import EntryRef
from histeg.traces import seal
from histeg.traces.reader import TraceFile
from tests.tracing.trace_builder import Entry, Fn, Node, Resume, Step, Val, Yield, write_trace

F = Fn("m:f", "m.py", 1, (2, 3, 4), ("x",))
G = Fn("m:g", "m.py", 5, (6, 7, 8), ())
H = Fn("m:h", "m.py", 10, (11, 12), ("y",))
GEN = Fn("m:gen", "m.py", 20, (21, 22, 23), (), generator=True)
OTHER = Fn("m:other", "m.py", 30, (31,), ("z",))


def entry(x: Any = 1, line: int = 7, returns: Any = 2, yielded: Any = 5) -> Node:
    """f(x) calls g, h(x), and a generator it resumes twice."""
    return Node(
        F,
        (x,),
        [
            2,
            Node(G, (), [6, line], returns=returns),
            Node(H, (Val("str", repr(str(x))),), [11, 12], returns=Val("str", "'h'")),
            Node(GEN, (), [21, Yield(yielded), 22, Yield(6), 23], name="gen"),
            3,
            Resume("gen"),
            4,
            Resume("gen"),
        ],
        returns=returns,
    )


@pytest.fixture(params=["c", "python"])
def implementation(request: pytest.FixtureRequest, python_reference: Callable[[], Any]) -> Iterator[None]:
    if request.param == "c" and not seal.native():
        pytest.skip("histeg.traces._decode is not built")
    context: AbstractContextManager[None] = python_reference() if request.param == "python" else nullcontext()
    with context:
        yield


def digest_of_last(path: Path, steps: list[Step]) -> tuple[TraceFile, bytes]:
    file = TraceFile(write_trace(path, steps).path)
    return file, file.entries[-1].digest


def test_the_same_behaviour_has_the_same_digest_whatever_the_ids(implementation: None, tmp_path: Path) -> None:
    """In the second trace another entry point runs first, on another thread: every function, value,
    thread and generator of the entry point has other ids there."""
    alone, first = digest_of_last(tmp_path / "a.htrace", [Entry(entry())])
    after, second = digest_of_last(
        tmp_path / "b.htrace",
        [
            Entry(Node(OTHER, (Val("str", "'z'"),), [31], returns=Val("str", "'q'")), thread=1),
            Entry(Node(GEN, (), [21, Yield(9), 22], name="early"), thread=1),
            Entry(entry()),
        ],
    )
    assert after.definitions.functions != alone.definitions.functions  # the ids do differ
    assert first == second
    assert compare_entry_points(EntryRef(alone, 0), EntryRef(after, len(after.entries) - 1)) == []


@pytest.mark.parametrize(
    "change",
    [
        {"x": 9},  # a parameter
        {"line": 8},  # a line of a callee
        {"returns": 3},  # a return value
        {"yielded": 7},  # a yielded value: digests of the columns leave yields out, the stream's does not
    ],
)
def test_any_change_changes_the_digest(implementation: None, change: dict[str, Any], tmp_path: Path) -> None:
    _, base = digest_of_last(tmp_path / "a.htrace", [Entry(entry())])
    _, changed = digest_of_last(tmp_path / "b.htrace", [Entry(entry(**change))])
    assert base != changed


def test_a_call_moved_among_the_lines_changes_the_digest(implementation: None, tmp_path: Path) -> None:
    """Same calls, same lines, but g is called after line 3 instead of before it."""
    before = Node(F, (1,), [2, Node(G, (), [6], returns=1), 3], returns=1)
    after = Node(F, (1,), [2, 3, Node(G, (), [6], returns=1)], returns=1)
    _, one = digest_of_last(tmp_path / "a.htrace", [Entry(before)])
    _, two = digest_of_last(tmp_path / "b.htrace", [Entry(after)])
    assert one != two


def test_both_implementations_give_the_same_digests(python_reference: Callable[[], Any], tmp_path: Path) -> None:
    if not seal.native():
        pytest.skip("histeg.traces._decode is not built")
    steps: list[Step] = [Entry(Node(OTHER, (1,), [31], returns=1), thread=2), Entry(entry())]
    native = [e.digest for e in TraceFile(write_trace(tmp_path / "c.htrace", steps).path).entries]
    with python_reference():
        reference = [e.digest for e in TraceFile(write_trace(tmp_path / "p.htrace", steps).path).entries]
    assert native == reference and len(set(native)) == 2
