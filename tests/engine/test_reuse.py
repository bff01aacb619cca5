"""The engine's one reuse decision, over a real output directory and real steps that write files."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from histeg.engine.fingerprint import fingerprint
from histeg.engine.runner import read_states, results, run_step
from histeg.records.steps import StepStates
from histeg.step import Step, StepResult
from histeg.store import OutputStore
from tests.conftest import validate_output
from tests.statics.versions import make_version


@dataclass
class Run:
    """A run as the runner sees it, with knobs standing for settings and for the world outside the output directory."""

    store: OutputStore
    override: bool = False
    setting: int = 1
    environment_present: bool = True
    fail_with: str | None = None
    crash: bool = False
    ran: list[str] = field(default_factory=list)


def _write(name: str, output: str) -> Callable[[Run, int], StepResult]:
    def run(context: Run, index: int) -> StepResult:
        context.ran.append(name)
        if context.crash:
            raise RuntimeError("the step broke")
        (context.store.version_dir(index) / output).write_text(f"{name} {context.setting}\n", encoding="utf-8")
        return StepResult({"wrote": output}, context.fail_with)

    return run


FIRST = Step(
    name="first",
    doing="making the first result",
    outputs=("first.txt",),
    inputs=lambda context, index: {"setting": context.setting},
    run=_write("first", "first.txt"),
    still_valid=lambda context, index: context.environment_present,
)
SECOND = Step(
    name="second",
    doing="making the second result",
    outputs=("second.txt",),
    upstream=("first",),
    inputs=lambda context, index: {},
    run=_write("second", "second.txt"),
)


@pytest.fixture
def context(tmp_path: Path) -> Run:
    return Run(make_version(tmp_path / "out", {"src/lib.py": "x = 1\n"}))


def both(context: Run) -> list[str]:
    context.ran.clear()
    for step in (FIRST, SECOND):
        run_step(step, context, 0)
    return list(context.ran)


def _nothing(context: Run) -> None:
    return None


def _change_setting(context: Run) -> None:
    context.setting = 2


def _remove_output(context: Run) -> None:
    context.store.file(0, "first.txt").unlink()


def _remove_downstream_output(context: Run) -> None:
    context.store.file(0, "second.txt").unlink()


def _override(context: Run) -> None:
    context.override = True


def _environment_gone(context: Run) -> None:
    context.environment_present = False


def _other_histeg(context: Run) -> None:
    """States written by another histeg version: their fingerprints cannot match this one's."""
    path = context.store.file(0, StepStates.FILE)
    path.write_text(path.read_text(encoding="utf-8").replace('"histeg": "', '"histeg": "0.0.0+other-'), encoding="utf-8")
    states = read_states(context.store, 0)
    for state in states.steps.values():
        state.fingerprint = fingerprint(state.inputs)
    states.write(path)


def _damaged_states(context: Run) -> None:
    context.store.file(0, StepStates.FILE).write_text("{", encoding="utf-8")


@pytest.mark.parametrize(
    ("change", "runs_again"),
    [
        (_nothing, []),
        (_change_setting, ["first", "second"]),
        (_remove_output, ["first", "second"]),
        (_remove_downstream_output, ["second"]),
        (_override, ["first", "second"]),
        (_environment_gone, ["first", "second"]),
        (_other_histeg, ["first", "second"]),
        (_damaged_states, ["first", "second"]),
    ],
    ids=lambda value: value.__name__.strip("_") if callable(value) else None,
)
def test_a_step_runs_again_exactly_when_what_it_depends_on_changed(
    context: Run, change: Callable[[Run], None], runs_again: list[str]
) -> None:
    assert both(context) == ["first", "second"]
    change(context)
    assert both(context) == runs_again
    if not context.override and context.environment_present:
        assert both(context) == [], "once recomputed, it is reused"


def test_a_step_that_ran_again_with_the_same_inputs_makes_its_readers_run_again(context: Run) -> None:
    both(context)
    before = results(context.store, 0)
    _remove_output(context)
    assert both(context) == ["first", "second"]
    after = results(context.store, 0)
    assert after["first"] != before["first"], "same inputs, new result: the result id says which computation it was"
    state = read_states(context.store, 0).steps["first"]
    assert state.fingerprint == fingerprint(state.inputs)


def test_a_failed_result_is_recorded_and_never_reused(context: Run) -> None:
    context.fail_with = "the build failed"
    result = run_step(FIRST, context, 0)
    assert result.failure == "the build failed" and result.summary["reused"] is False
    assert read_states(context.store, 0).steps["first"].status == "failed"
    assert "first" not in results(context.store, 0), "a failed step gives its readers nothing to build on"
    context.ran.clear()
    context.fail_with = None
    assert run_step(FIRST, context, 0).failure is None and context.ran == ["first"]


def test_a_crashing_step_is_recorded_as_failed_and_the_error_goes_on(context: Run) -> None:
    context.crash = True
    with pytest.raises(RuntimeError, match="the step broke"):
        run_step(FIRST, context, 0)
    assert read_states(context.store, 0).steps["first"].status == "failed"
    context.crash = False
    context.ran.clear()
    run_step(FIRST, context, 0)
    assert context.ran == ["first"]


def test_reuse_gives_back_the_summary_and_the_states_file_follows_its_schema(context: Run) -> None:
    first = run_step(FIRST, context, 0)
    again = run_step(FIRST, context, 0)
    assert (first.summary["reused"], again.summary["reused"]) == (False, True)
    assert again.summary["wrote"] == "first.txt" and again.summary["seconds"] == {"total": 0.0}
    data = validate_output(context.store.file(0, StepStates.FILE))
    inputs = data["steps"]["first"]["inputs"]
    assert inputs == {"histeg": inputs["histeg"], "step": "first", "upstream": {}, "setting": 1}


def test_inputs_are_fingerprinted_whatever_the_order_of_keys() -> None:
    assert fingerprint({"a": 1, "b": [Path("x"), 2]}) == fingerprint({"b": ["x", 2], "a": 1})
    assert fingerprint({"a": 1}) != fingerprint({"a": 2})


def _steps(first_rules: int | None, second_rules: int | None) -> tuple[Step, Step]:
    return replace(FIRST, rules=first_rules), replace(SECOND, rules=second_rules)


def _run_all(context: Run, steps: tuple[Step, ...]) -> list[str]:
    context.ran.clear()
    for step in steps:
        run_step(step, context, 0)
    return list(context.ran)


def test_a_step_whose_rules_were_raised_runs_again_with_its_readers_and_nothing_before_it(context: Run) -> None:
    assert _run_all(context, _steps(None, 1)) == ["first", "second"]
    assert _run_all(context, _steps(None, 1)) == [], "the same rules: reused"
    assert _run_all(context, _steps(None, 2)) == ["second"], "the second step's rules changed: only its result is made again"
    assert _run_all(context, _steps(1, 2)) == ["first", "second"], "rules declared on the first step: it and its reader"
    assert _run_all(context, _steps(1, 2)) == []
    inputs = validate_output(context.store.file(0, StepStates.FILE))["steps"]["second"]["inputs"]
    assert inputs["rules"] == 2


def test_the_pipeline_steps_that_compare_and_rank_declare_their_rules() -> None:
    from histeg.compare.step import COMPARE
    from histeg.impact.step import TARGETS
    from histeg.merges.step import MERGES
    from histeg.statics.step import STATICS
    from histeg.syntax.step import SYNTAX

    assert all(isinstance(step.rules, int) for step in (COMPARE, TARGETS, MERGES, STATICS, SYNTAX))
