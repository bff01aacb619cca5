"""The one place that decides whether a step's stored result is reused or computed again."""

from __future__ import annotations

import contextlib
import os
import time
from typing import Any, Literal

from histeg.engine.fingerprint import canonical, fingerprint
from histeg.errors import HistegError
from histeg.records.steps import StepState, StepStates
from histeg.step import Step, StepContext, StepResult
from histeg.store import OutputStore
from histeg.version import __version__


def read_states(store: OutputStore, index: int) -> StepStates:
    """The stored step states; an absent, damaged or older file means nothing is known, so everything runs."""
    try:
        return StepStates.read(store.file(index, StepStates.FILE))
    except HistegError:
        return StepStates(steps={})


EXTRACTION = "extract"
"""Extraction's result is the version as recorded, which the steps reading it fingerprint by its content
(``histeg.engine.inputs.snapshot_inputs``): its result id is no input of theirs, so that a folder adopted by the step
(made before it had a state) or a version re-extracted to the same content keeps every later result."""


def results(store: OutputStore, index: int) -> dict[str, str]:
    """The result id of each step that last succeeded on version ``index``: what a step reading them depends on."""
    return {name: state.result for name, state in read_states(store, index).steps.items() if state.status == "ok" and name != EXTRACTION}


def step_inputs(step: Step, context: StepContext, index: int, states: StepStates) -> dict[str, Any]:
    upstream = {name: (states.steps[name].result if name in states.steps else None) for name in step.upstream}
    rules = {} if step.rules is None else {"rules": step.rules}
    return canonical({"histeg": __version__, "step": step.name, **rules, "upstream": upstream, **step.inputs(context, index)})


def reusable(step: Step, context: StepContext, index: int, states: StepStates, key: str) -> StepState | None:
    previous = states.steps.get(step.name)
    if context.override or previous is None or previous.status != "ok" or previous.fingerprint != key:
        return None
    directory = context.store.version_dir(index)
    if not all((directory / name).exists() for name in step.outputs):
        return None
    if step.still_valid is not None and not step.still_valid(context, index):
        return None
    return previous


def run_step(step: Step, context: StepContext, index: int) -> StepResult:
    """Run ``step`` on version ``index`` unless its stored result is still valid; record what it ran from."""
    store = context.store
    states = read_states(store, index)
    inputs = step_inputs(step, context, index, states)
    key = fingerprint(inputs)
    previous = reusable(step, context, index, states, key)
    if previous is not None:
        return StepResult({**previous.summary, "reused": True, "seconds": {"total": 0.0}})
    started = time.perf_counter()
    result_id = fingerprint({"fingerprint": key, "started": time.time_ns(), "pid": os.getpid()})
    try:
        result = step.run(context, index)
    except BaseException:
        with contextlib.suppress(HistegError):  # the step's own error is the one to report
            _record(
                store,
                index,
                step.name,
                StepState(
                    fingerprint=key,
                    result=result_id,
                    status="failed",
                    seconds=round(time.perf_counter() - started, 3),
                    inputs=inputs,
                    summary={},
                ),
            )
        raise
    seconds = round(time.perf_counter() - started, 3)
    status: Literal["ok", "failed"] = "ok" if result.failure is None else "failed"
    _record(
        store,
        index,
        step.name,
        StepState(fingerprint=key, result=result_id, status=status, seconds=seconds, inputs=inputs, summary=result.summary),
    )
    return StepResult(
        {**result.summary, "reused": False, "seconds": {**result.summary.get("seconds", {}), "total": seconds}}, result.failure
    )


def _record(store: OutputStore, index: int, name: str, state: StepState) -> None:
    """Re-read before writing: the step may have rewritten the version directory meanwhile."""
    if not store.version_dir(index).is_dir():
        return
    states = read_states(store, index)
    states.steps[name] = state
    states.write(store.file(index, StepStates.FILE))
