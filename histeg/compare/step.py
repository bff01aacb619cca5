"""The compare step: a version against its predecessor (``histeg.compare.version``), after both were traced."""

from __future__ import annotations

from typing import Any

from histeg.engine.fingerprint import file_digest
from histeg.engine.inputs import (
    against_inputs,
    first_version,
    predecessor,
    settings_values,
    snapshot_inputs,
)
from histeg.engine.runner import results
from histeg.errors import HistegError
from histeg.run_settings import record_settings
from histeg.step import Step, StepContext, StepResult
from histeg.store import COMPARISON, TRACE_DIVERGENCES, TRACE_MATCHING

COMPARISON_RULES = 1
"""Raised with any change to how traces are matched, compared, confirmed or told from noise (``Step.rules``)."""


def _inputs(context: StepContext, index: int) -> dict[str, Any]:
    settings = context.settings
    return {
        "version": snapshot_inputs(context.store.version(index)),
        "against": against_inputs(context, index),
        "settings": settings_values(settings, "compare"),
        "sections": "sections" in settings.metric,
        "traceMatching": file_digest(context.store.file(index, TRACE_MATCHING)),
    }


def _run(context: StepContext, index: int) -> StepResult:
    from histeg.compare.version import (
        compare_version,  # the comparison is imported when a version needs it
    )

    against, _ = predecessor(context, index)
    if context.traces_failed(against):
        raise HistegError(f"its predecessor, version {against}, failed")
    if against is not None and "traces" not in results(context.store, against):
        raise HistegError(f"its predecessor, version {against}, has no complete traces: include it in the versions of this run")
    record_settings(context.store, index, context.settings, "compare")
    return StepResult(compare_version(context.store, index, context.settings))


COMPARE = Step(
    name="compare",
    doing="comparing versions",
    outputs=(TRACE_DIVERGENCES, COMPARISON),
    upstream=("syntax", "traces"),
    inputs=_inputs,
    run=_run,
    skip=first_version,
    rules=COMPARISON_RULES,
)
