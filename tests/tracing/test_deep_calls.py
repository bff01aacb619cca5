"""Call trees 10,000 deep, traced for real: walking, the JSON form and ``histeg trace show`` do not recurse."""

from __future__ import annotations

import json
import json.scanner
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from histeg.report.trace_text import MAX_INDENT_DEPTH, MAX_JSON_INDENT_LEVEL
from histeg.traces.call_tree import Call, Trace
from tests.conftest import run_histeg
from tests.tracing.conftest import TracedRun, run_project

DEPTH = 10_000

FILES = {
    "src/deep.py": '''
        def deep(n):
            if n == 0:
                return 0
            return deep(n - 1) + 1
    ''',
    "tests/test_deep.py": f'''
        import sys

        from deep import deep


        def test_deep():
            limit = sys.getrecursionlimit()
            sys.setrecursionlimit({DEPTH} + 5000)
            try:
                assert deep({DEPTH}) == {DEPTH}
            finally:
                sys.setrecursionlimit(limit)
    ''',
}


@pytest.fixture(scope="module")
def deep_run(tmp_path_factory: pytest.TempPathFactory) -> TracedRun:
    """One run under the C collector, shared by the tests: every call's values recorded, so order shows in the parameters."""
    run = run_project(tmp_path_factory.mktemp("deep") / "project", FILES, value_budget=0, line_budget=0, tracer="c")
    assert run.proc.returncode == 0, run.proc.stdout + run.proc.stderr
    return run


@pytest.fixture(scope="module")
def deep_trace(deep_run: TracedRun) -> tuple[Trace, Call]:
    """The trace holding the test's call, and the outermost ``deep`` call."""
    entry = deep_run.entry("test_deep")
    (trace,) = [t for t in deep_run.traces if entry in t.entry_points]
    (outer,) = [child for _, child in entry.children if child.function.ident == "deep:deep"]
    return trace, outer


def test_walk_yields_every_call_in_pre_order(deep_trace: tuple[Trace, Call]) -> None:
    _, outer = deep_trace
    calls = list(outer.walk())
    assert len(calls) == DEPTH + 1
    assert [call.params[0].repr for call in calls] == [str(n) for n in range(DEPTH, -1, -1)]
    assert all(call.ended for call in calls) and calls[-1].returned.repr == "0" and outer.returned.repr == str(DEPTH)
    assert "children=1" in repr(outer)


def test_the_python_collector_records_the_whole_depth(tmp_path: Path) -> None:
    run = run_project(tmp_path / "project", FILES, tracer="python")
    assert run.proc.returncode == 0, run.proc.stdout + run.proc.stderr
    assert sum(1 for call in run.entry("test_deep").walk() if call.function.ident == "deep:deep") == DEPTH + 1


def test_to_json_nests_every_call(deep_trace: tuple[Trace, Call]) -> None:
    trace, outer = deep_trace
    chain = list(_nested_calls(outer.to_json()))
    assert len(chain) == DEPTH + 1
    assert [node["calledWithParameters"][0]["repr"] for node in chain[:3]] == [str(DEPTH), str(DEPTH - 1), str(DEPTH - 2)]
    assert chain[-1]["trace"] == [1, 2] and chain[-1]["returned"] == {"type": "int", "repr": "0"}
    (root,) = [t for t in trace.to_json()["traces"] if t.get("entryPoint", {}).get("label", "").endswith("test_deep")
               and t["entryPoint"]["phase"] == "call"]
    assert sum(1 for node in _nested_calls(root) if node["called"] == "deep:deep") == DEPTH + 1


def test_trace_show_prints_the_deep_tree(deep_trace: tuple[Trace, Call]) -> None:
    trace, _ = deep_trace
    result = run_histeg("trace", "show", "--max-lines", "0", str(trace.path))
    assert result.code == 0, result.stderr
    rows = result.stdout.splitlines()
    headers = [row for row in rows if "deep:deep(" in row]
    assert len(headers) == DEPTH + 1
    capped = "  " + "    " * MAX_INDENT_DEPTH
    assert f"{capped}deep:deep(n=int {DEPTH - MAX_INDENT_DEPTH + 1})  src/deep.py:1" in headers
    assert f"{capped}[{DEPTH + 1}] deep:deep(n=int 0)  src/deep.py:1" in headers
    assert f"{capped}[{DEPTH + 1}]   returned int 0" in rows
    assert max(len(row) for row in rows) < len(capped) + 100


def test_trace_show_json_round_trips(deep_trace: tuple[Trace, Call]) -> None:
    trace, _ = deep_trace
    result = run_histeg("trace", "show", "--json", str(trace.path))
    assert result.code == 0, result.stderr
    assert max(len(row) for row in result.stdout.splitlines()) < 2 * MAX_JSON_INDENT_LEVEL + 100
    with _recursion_limit(10 * DEPTH):
        parsed = _deep_loads(result.stdout)
        _assert_same(parsed, trace.to_json())
        del parsed


@contextmanager
def _recursion_limit(limit: int) -> Iterator[None]:
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(max(before, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(before)


def _deep_loads(text: str) -> Any:
    """``json.loads`` with the pure-Python scanner: the C scanner's recursion guard ignores ``sys.setrecursionlimit`` on 3.12."""
    decoder = json.JSONDecoder()
    decoder.scan_once = json.scanner.py_make_scanner(decoder)
    return decoder.decode(text)


def _nested_calls(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """A call's JSON node and all nodes nested in its ``trace``, in pre-order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed([step for step in current["trace"] if isinstance(step, dict)]))


def _assert_same(expected: Any, actual: Any) -> None:
    """Deep equality without recursion (``==`` on nested containers recurses in C); failures name the nesting depth."""
    stack = [(expected, actual, 0)]
    while stack:
        left, right, depth = stack.pop()
        assert type(left) is type(right), f"at depth {depth}: {type(left).__name__} != {type(right).__name__}"
        if isinstance(left, dict):
            assert list(left) == list(right), f"at depth {depth}"
            stack.extend((left[key], right[key], depth + 1) for key in left)
        elif isinstance(left, list):
            assert len(left) == len(right), f"at depth {depth}"
            stack.extend((a, b, depth + 1) for a, b in zip(left, right))
        else:
            assert left == right, f"at depth {depth}"
