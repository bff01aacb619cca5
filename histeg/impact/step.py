"""The targets step: the compare step's comparison ranked (``histeg.impact.compute``) into ``testingTargets.json``."""

from __future__ import annotations

from typing import Any

from histeg.engine.inputs import (
    against_inputs,
    first_version,
    settings_values,
    snapshot_inputs,
)
from histeg.run_settings import record_settings
from histeg.step import Step, StepContext, StepResult
from histeg.store import TESTING_TARGETS

RANKING_RULES = 1
"""Raised with any change to how divergences are mapped to changes, scored or ranked (``Step.rules``)."""


def _inputs(context: StepContext, index: int) -> dict[str, Any]:
    return {
        "version": snapshot_inputs(context.store.version(index)),
        "against": against_inputs(context, index),
        "settings": settings_values(context.settings, "targets"),
    }


def _run(context: StepContext, index: int) -> StepResult:
    from histeg.impact.compute import (
        compute_targets,  # the ranking is imported when a version needs it
    )

    record_settings(context.store, index, context.settings, "targets")
    return StepResult(compute_targets(context.store, index, context.settings))


TARGETS = Step(
    name="targets",
    doing="ranking testing targets",
    outputs=(TESTING_TARGETS,),
    upstream=("syntax", "statics", "traces", "compare"),
    inputs=_inputs,
    run=_run,
    skip=first_version,
    rules=RANKING_RULES,
)
