"""The line budget: lines for the first N calls of a function per entry point, calls and returns for all."""

from __future__ import annotations

import pytest

from histeg.compare.divergences import compare_entry_points
from tests.tracing.conftest import TRACERS, TracedRun

FILES = {
    "src/hot.py": '''
        def step(x):
            if x % 2:
                return x + 1
            return x


        def spin(n):
            total = 0
            for i in range(n):
                total += step(i)
            return total


        def down(n):
            if n == 0:
                return 0
            return down(n - 1) + 1


        def numbers(n):
            for i in range(n):
                yield i


        def interleaved():
            first = numbers(3)
            head = next(first)
            others = [sum(numbers(2)) for _ in range(4)]
            return head, others, list(first)
    ''',
    "src/paused.py": '''
        import threading


        def paused(x, started, go):
            started.set()
            go.wait()
            return x + 1


        def worker(started, go):
            return paused(1, started, go)


        def spend_while_paused():
            started, go, done = threading.Event(), threading.Event(), threading.Event()
            done.set()
            thread = threading.Thread(target=worker, args=(started, go))
            thread.start()
            started.wait()
            total = sum(paused(i, threading.Event(), done) for i in range(6))
            go.set()
            thread.join()
            return total
    ''',
    "tests/test_paused.py": '''
        from paused import spend_while_paused


        def test_paused():
            assert spend_while_paused() == 21
    ''',
    "tests/test_hot.py": '''
        from hot import down, interleaved, spin


        def test_spin():
            assert spin(10) == 50


        def test_spin_again():
            assert spin(10) == 50


        def test_down():
            assert down(6) == 6


        def test_numbers():
            assert interleaved() == (0, [1, 1, 1, 1], [1, 2])
    ''',
}


@pytest.fixture(scope="module", params=TRACERS)
def run(tmp_path_factory: pytest.TempPathFactory, project_runner, request: pytest.FixtureRequest) -> TracedRun:
    traced = project_runner(tmp_path_factory.mktemp("budget"), FILES, tracer=request.param, line_budget=4)
    assert traced.proc.returncode == 0, traced.proc.stdout + traced.proc.stderr
    return traced


def test_lines_for_the_first_calls_then_calls_only(run: TracedRun) -> None:
    steps = [call for _, call in run.entry("test_spin").children[0][1].children]
    assert len(steps) == 10 and all(call.ended for call in steps)
    assert [call.lines_complete for call in steps] == [True] * 4 + [False] * 6
    assert all(call.lines for call in steps[:4]) and not any(call.lines for call in steps[4:])
    assert [call.returned.repr for call in steps] == ["0", "2", "2", "4", "4", "6", "6", "8", "8", "10"], "returns are recorded for all"


def test_every_entry_point_starts_with_a_fresh_budget(run: TracedRun) -> None:
    steps = [call for _, call in run.entry("test_spin_again").children[0][1].children]
    assert [call.lines_complete for call in steps] == [True] * 4 + [False] * 6


def test_running_calls_of_the_function_lose_the_rest_of_their_lines(run: TracedRun) -> None:
    calls = [call for call in run.entry("test_down").walk() if call.function.ident == "hot:down"]
    assert len(calls) == 7
    assert [call.lines_complete for call in calls] == [False] * 7, "the four outer calls were running when the budget was spent"
    assert calls[0].lines == [1, 3] and calls[-1].lines == []


def test_suspended_generators_are_marked_too(run: TracedRun) -> None:
    generators = [call for call in run.entry("test_numbers").walk() if call.function.ident == "hot:numbers"]
    assert [call.lines_complete for call in generators] == [False, True, True, True, False]
    assert [len(call.yielded) for call in generators] == [3, 2, 2, 2, 2] and generators[0].lines[:2] == [1, 2]


def test_a_call_on_another_thread_loses_its_lines_when_this_one_spends_the_budget(run: TracedRun) -> None:
    """The worker's call of ``paused`` waits while the test's own calls spend the function's budget; its last line is
    never recorded, and its entry point ends (and reaches the file) before the test's, where the budget was spent."""
    (worker,) = [root for root in run.roots if root.function.ident == "paused:worker"]
    (_, call), = worker.children
    assert call.function.ident == "paused:paused" and call.lines == [1, 2]
    assert not call.lines_complete, "its last line was lost, yet the call reads as complete"
    mains = [c for c in run.entry("test_paused").walk() if c.function.ident == "paused:paused"]
    assert len(mains) == 6 and mains[0].lines_complete and not mains[-1].lines_complete


def test_both_collectors_write_the_same_words(tmp_path_factory: pytest.TempPathFactory, project_runner) -> None:
    runs = {kind: project_runner(tmp_path_factory.mktemp(kind), FILES, tracer=kind, line_budget=4) for kind in TRACERS}

    def shape(traced: TracedRun) -> list:
        return [(c.function.ident, c.lines, c.lines_complete, len(c.children)) for root in traced.roots for c in root.walk()]

    assert shape(runs["c"]) == shape(runs["python"])
    assert runs["c"].traces[0].line_events == runs["python"].traces[0].line_events


def test_unknown_lines_are_no_divergence(run: TracedRun, tmp_path_factory: pytest.TempPathFactory, project_runner) -> None:
    """Lines beyond the budget on one side only: not different, unknown."""
    full = project_runner(tmp_path_factory.mktemp("full"), FILES, tracer="c", line_budget=0)
    assert compare_entry_points(full.entry_ref("test_spin"), run.entry_ref("test_spin")) == []
