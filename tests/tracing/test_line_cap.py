"""The line cap: a function's lines for its first N line events per entry point, its calls, values and nesting for all.

Why: a lexer's loop over a long input makes millions of line events in one call, and the call budget (the first N
calls of a function) never bounds one call. Each event pays sys.monitoring's dispatch whatever the callback does.
"""

from __future__ import annotations

import pytest

from histeg.compare.divergences import compare_entry_points
from tests.tracing.conftest import TRACERS, TracedRun

CAP = 20
FILES = {
    "src/lexer.py": """
        def lex(n):
            out = []
            for i in range(n):
                if i % 3:
                    out.append(i)
            return len(out)


        def step(x):
            y = x + 1
            return y


        def steps(n):
            return [step(i) for i in range(n)]


        def tokens(n):
            for i in range(n):
                yield i
    """,
    "tests/test_lexer.py": """
        from lexer import lex, steps, tokens


        def test_lex():
            assert lex(100) == 66
            assert lex(3) == 2


        def test_lex_again():
            assert lex(100) == 66


        def test_steps():
            assert steps(15) == list(range(1, 16))


        def test_tokens():
            assert list(tokens(40)) == list(range(40))
    """,
}


@pytest.fixture(scope="module", params=TRACERS)
def run(tmp_path_factory: pytest.TempPathFactory, project_runner, request: pytest.FixtureRequest) -> TracedRun:
    traced = project_runner(tmp_path_factory.mktemp("cap"), FILES, tracer=request.param, line_budget=0, line_cap=CAP)
    assert traced.proc.returncode == 0, traced.proc.stdout + traced.proc.stderr
    return traced


def calls_of(run: TracedRun, test: str, function: str) -> list:
    return [call for call in run.entry(test).walk() if call.function.ident == function]


def test_a_long_call_keeps_its_first_lines_and_all_it_returns(run: TracedRun) -> None:
    long, short = calls_of(run, "test_lex", "lexer:lex")
    assert len(long.lines) == CAP and not long.lines_complete and long.ended
    assert long.lines[:6] == [1, 2, 3, 2, 3, 4]
    assert long.returned.repr == "66" and short.returned.repr == "2"
    assert short.lines == [] and not short.lines_complete, "the function's lines stay off until the next entry point"


def test_every_entry_point_starts_with_a_fresh_cap(run: TracedRun) -> None:
    (again,) = calls_of(run, "test_lex_again", "lexer:lex")
    assert len(again.lines) == CAP and not again.lines_complete


def test_short_calls_share_their_function_s_cap(run: TracedRun) -> None:
    calls = calls_of(run, "test_steps", "lexer:step")
    assert len(calls) == 15 and [call.returned.repr for call in calls] == [str(i) for i in range(1, 16)]
    assert sum(len(call.lines) for call in calls) == CAP
    assert [call.lines_complete for call in calls] == [True] * 9 + [False] * 6  # two lines each: the 10th reaches the cap


def test_a_generator_keeps_every_value_it_yields(run: TracedRun) -> None:
    (generator,) = calls_of(run, "test_tokens", "lexer:tokens")
    assert len(generator.yielded) == 40 and len(generator.lines) == CAP and not generator.lines_complete


def test_both_collectors_write_the_same_words(tmp_path_factory: pytest.TempPathFactory, project_runner) -> None:
    runs = {kind: project_runner(tmp_path_factory.mktemp(kind), FILES, tracer=kind, line_budget=0, line_cap=CAP) for kind in TRACERS}

    def shape(traced: TracedRun) -> list:
        return [(c.function.ident, c.lines, c.lines_complete, len(c.children)) for root in traced.roots for c in root.walk()]

    assert shape(runs["c"]) == shape(runs["python"])
    assert runs["c"].traces[0].line_events == runs["python"].traces[0].line_events


def test_no_cap_records_every_line_and_unknown_lines_are_no_divergence(
    run: TracedRun, tmp_path_factory: pytest.TempPathFactory, project_runner
) -> None:
    full = project_runner(tmp_path_factory.mktemp("full"), FILES, tracer="c", line_budget=0, line_cap=0)
    long, _ = calls_of(full, "test_lex", "lexer:lex")
    assert long.lines_complete and len(long.lines) > 10 * CAP
    for test in ("test_lex", "test_steps", "test_tokens"):
        assert compare_entry_points(full.entry_ref(test), run.entry_ref(test)) == [], test
