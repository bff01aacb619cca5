"""Exact call trees of a purpose-built project's pytest suite, traced in a child process."""

from __future__ import annotations

import pytest

from histeg.traces.call_tree import Call
from histeg.traces.records import Value
from tests.tracing.conftest import TRACERS

CORE = '''
import asyncio
import threading


def add(a, b):
    total = a + b
    return total


def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)


def countdown(n):
    while n > 0:
        yield n
        n -= 1


async def double_later(x):
    await nap()
    return 2 * x


async def nap():
    await asyncio.sleep(0)


def catcher():
    try:
        middle()
    except ValueError:
        return "caught"


def middle():
    fail()
    return "unreachable"


def fail():
    raise ValueError("deep")


def by_key(values):
    return sorted(values, key=negate)


def negate(x):
    return -x


def in_threads(n):
    results = []
    workers = [threading.Thread(target=work, args=(i, results)) for i in range(n)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return sorted(results)


def work(i, results):
    results.append(add(i, 10))
'''

TESTS = '''
import asyncio

from pkg.core import add, by_key, catcher, countdown, double_later, fact, in_threads


def test_add():
    assert add(1, 2) == 3


def test_fact():
    assert fact(3) == 6


def test_countdown():
    assert list(countdown(2)) == [2, 1]


def test_async():
    assert asyncio.run(double_later(3)) == 6


def test_caught_two_frames_up():
    assert catcher() == "caught"


def test_sorted_key():
    assert by_key([1, 2]) == [2, 1]


def test_threads():
    assert in_threads(2) == [10, 11]
'''


CALLS_PROJECT = {"src/pkg/__init__.py": "", "src/pkg/core.py": CORE, "tests/test_core.py": TESTS}


@pytest.fixture(scope="module", params=TRACERS)
def run(tmp_path_factory: pytest.TempPathFactory, project_runner, request: pytest.FixtureRequest):
    return project_runner(tmp_path_factory.mktemp("calls"), CALLS_PROJECT, tracer=request.param)


def v(type_name: str, rep: str | None) -> Value:
    return Value(type_name, rep)


def shape(call: Call) -> tuple:
    """A call tree as nested tuples: (function, lines, [(position, child shape)])."""
    return (call.function.ident, call.lines, [(pos, shape(child)) for pos, child in call.children])


def test_every_test_phase_passes_and_is_labelled(run):
    assert run.proc.returncode == 0, run.proc.stdout + run.proc.stderr
    assert len(run.traces) == 1 and not run.traces[0].truncated
    outcomes = run.traces[0].outcomes
    assert outcomes["tests/test_core.py::test_add"] == {"setup": "passed", "call": "passed", "teardown": "passed"}
    assert len(outcomes) == 7


def test_plain_call(run):
    root = run.entry("::test_add")
    assert shape(root) == ("tests.test_core:test_add", [1], [(1, ("pkg.core:add", [1, 2], []))])
    add = root.children[0][1]
    assert add.params == [v("int", "1"), v("int", "2")]
    assert add.returned == v("int", "3") and add.ended and add.raised is None
    assert root.returned == v("NoneType", "None")
    assert add.function.params == ("a", "b") and add.function.file == "src/pkg/core.py" and add.function.first_line == 5


def test_recursion(run):
    assert shape(run.entry("::test_fact")) == (
        "tests.test_core:test_fact", [1], [(1, (
            "pkg.core:fact", [1, 3], [(2, (
                "pkg.core:fact", [1, 3], [(2, (
                    "pkg.core:fact", [1, 2], []))]))]))],
    )
    returns = [call.returned for call in run.calls("pkg.core:fact")]
    assert returns == [v("int", "6"), v("int", "2"), v("int", "1")]


def test_generator_is_one_call_across_yields(run):
    root = run.entry("::test_countdown")
    assert shape(root) == ("tests.test_core:test_countdown", [1], [(1, ("pkg.core:countdown", [1, 2, 3, 1, 2, 3, 1], []))])
    gen = root.children[0][1]
    assert gen.function.kind == "generator"
    assert gen.yielded == [v("int", "2"), v("int", "1")]
    assert gen.returned == v("NoneType", "None") and gen.ended


def test_async_functions_nest_through_the_event_loop(run):
    root = run.entry("::test_async")
    assert shape(root) == (
        "tests.test_core:test_async", [1], [(1, ("pkg.core:double_later", [1, 2], [(1, ("pkg.core:nap", [1], []))]))],
    )
    outer = root.children[0][1]
    assert outer.function.kind == "coroutine"
    assert outer.params == [v("int", "3")] and outer.returned == v("int", "6")
    assert outer.yielded == [v("NoneType", "None")]


def test_exception_caught_two_frames_up(run):
    root = run.entry("::test_caught_two_frames_up")
    assert shape(root) == (
        "tests.test_core:test_caught_two_frames_up", [1], [(1, (
            "pkg.core:catcher", [1, 2, 3, 4], [(2, (
                "pkg.core:middle", [1], [(1, (
                    "pkg.core:fail", [1], []))]))]))],
    )
    catcher = root.children[0][1]
    middle = catcher.children[0][1]
    fail = middle.children[0][1]
    assert fail.raised == v("ValueError", "('deep',)") and fail.returned is None and fail.ended
    assert middle.raised == v("ValueError", "('deep',)")
    assert catcher.returned == v("str", "'caught'") and catcher.raised is None


def test_c_level_callback_nests_under_the_caller(run):
    root = run.entry("::test_sorted_key")
    by_key = root.children[0][1]
    assert shape(by_key) == ("pkg.core:by_key", [1], [(1, ("pkg.core:negate", [1], [])), (1, ("pkg.core:negate", [1], []))])
    assert [child.params for _, child in by_key.children] == [[v("int", "1")], [v("int", "2")]]


def test_threads_have_their_own_stacks_and_the_test_label(run):
    root = run.entry("::test_threads")
    in_threads = root.children[0][1]
    assert shape(in_threads) == ("pkg.core:in_threads", [1, 2, 3, 4, 3, 4, 3, 5, 6, 5, 6, 5, 7], [])
    workers = [c for c in run.roots if c.function.ident == "pkg.core:work"]
    assert len(workers) == 2
    assert {c.label for c in workers} == {"tests/test_core.py::test_threads"}
    assert all(c.thread != root.thread for c in workers) and workers[0].thread != workers[1].thread
    assert sorted(c.params[0].repr for c in workers) == ["0", "1"]
    for worker in workers:
        assert shape(worker) == ("pkg.core:work", [1], [(1, ("pkg.core:add", [1, 2], []))])
    names = {run.traces[0].threads[c.thread][1] for c in workers}
    assert all(name.startswith("Thread-") for name in names)


def canonical(call: Call) -> tuple:
    """Everything a call records, thread and ids aside."""
    return (call.function.ident, call.label, call.phase, call.lines, call.params, call.yielded, call.returned, call.raised,
            call.ended, [(pos, canonical(child)) for pos, child in call.children])


def test_c_and_python_collectors_record_the_same_calls(tmp_path_factory: pytest.TempPathFactory, project_runner) -> None:
    """The C collector is an optimisation of the Python one: same calls, lines, values and labels."""
    runs = {kind: project_runner(tmp_path_factory.mktemp(f"same-{kind}"), CALLS_PROJECT, tracer=kind) for kind in TRACERS}
    for kind, traced_run in runs.items():
        assert traced_run.proc.returncode == 0, traced_run.proc.stdout + traced_run.proc.stderr
        assert [trace.meta["tracer"] for trace in traced_run.traces] == [kind]

    def recorded(traced_run) -> list:
        # threads finish in any order: compare the entry points as a sorted multiset
        return sorted((canonical(root) for root in traced_run.roots), key=repr)

    c_calls, python_calls = (recorded(runs[kind]) for kind in TRACERS)
    assert len(c_calls) == 9 and sum(1 for root in runs["c"].roots for _ in root.walk()) > 20
    assert c_calls == python_calls
    assert runs["c"].traces[0].line_events == runs["python"].traces[0].line_events
