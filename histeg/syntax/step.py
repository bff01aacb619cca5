"""The syntax step: ``syntaxChanges.json``, a version's changes against its predecessor's snapshot."""

from __future__ import annotations

from typing import Any

from histeg.engine.inputs import predecessor, snapshot_inputs
from histeg.step import Step, StepContext, StepResult
from histeg.store import SYNTAX_CHANGES


def _inputs(context: StepContext, index: int) -> dict[str, Any]:
    _, old = predecessor(context, index)
    return {"version": snapshot_inputs(context.store.version(index)), "against": snapshot_inputs(old) if old is not None else None}


def _run(context: StepContext, index: int) -> StepResult:
    from histeg.records.syntax import (
        SyntaxChanges,  # the parsers are imported when a version needs them
    )
    from histeg.syntax.analysis import analyze_version

    return StepResult({"changes": SyntaxChanges.read(analyze_version(context.store, index)).summary.changes})


SYNTAX_RULES = 1
"""Raised with any change to how trees are matched, edits found or classified (``Step.rules``)."""
SYNTAX = Step(name="syntax", doing="analysing syntax changes", outputs=(SYNTAX_CHANGES,), inputs=_inputs, run=_run, rules=SYNTAX_RULES)
