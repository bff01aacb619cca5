"""The statics step: ``functions.json`` and ``callGraph.json`` of a version, from its snapshot alone."""

from __future__ import annotations

from histeg.engine.inputs import version_inputs
from histeg.records.statics import Functions
from histeg.statics.export import STATICS_RULES
from histeg.step import Step, StepContext, StepResult
from histeg.store import CALL_GRAPH, FUNCTIONS


def _run(context: StepContext, index: int) -> StepResult:
    from histeg.statics.export import (
        export_static_facts,  # the analysis is imported when a version needs it
    )

    export_static_facts(context.store, index)
    return StepResult({"functions": len(Functions.read(context.store.file(index, FUNCTIONS)).functions)})


STATICS = Step(
    name="statics",
    doing="exporting static facts",
    outputs=(FUNCTIONS, CALL_GRAPH),
    inputs=version_inputs,
    run=_run,
    rules=STATICS_RULES,
)
