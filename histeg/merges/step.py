"""The merge step (merge mode, --merges): after the targets step, each merge compared with its parents and base.

Its result depends on the merge's own steps (``upstream``) and on the results
of both parents and the base: a parent traced again compares anew, an
unchanged rerun reuses ``mergeDivergences.json`` and the marked targets.
"""

from __future__ import annotations

from typing import Any

from histeg.engine.inputs import settings_values
from histeg.engine.runner import results
from histeg.errors import HistegError
from histeg.history.extract import read_merge_marks
from histeg.records.merges import MergeDivergences
from histeg.step import Step, StepContext, StepResult

MERGE_DIVERGENCES = MergeDivergences.FILE
_ROLES = {"firstParent": "first parent", "secondParent": "second parent", "base": "merge base"}


MERGE_RULES = 1
"""Raised with any change to how a merge is compared with its parents and base or what it reports (``Step.rules``)."""


def _skip(context: StepContext, index: int) -> str | None:
    if not context.settings.merges:
        return "not in merge mode (--merges)"
    return None if read_merge_marks(context.store, index).merge is not None else "not a merge"


def _inputs(context: StepContext, index: int) -> dict[str, Any]:
    store = context.store
    version = store.version(index)
    merge = read_merge_marks(store, index).merge
    members = merge.members() if merge is not None else {}
    return {
        "identifier": version.identifier,
        "merge": merge,
        "members": {role: {"identifier": store.version(i).identifier, "results": results(store, i)} for role, i in members.items()},
        # it compares pairs and charges targets
        "settings": {key: value for step in ("compare", "targets") for key, value in settings_values(context.settings, step).items()},
    }


def _run(context: StepContext, index: int) -> StepResult:
    store = context.store
    parents = read_merge_marks(store, index).merge
    assert parents is not None  # skipped otherwise
    from histeg.merges.run import compute_merge

    for role, member in parents.members().items():
        if context.traces_failed(member):
            raise HistegError(f"its {_ROLES[role]}, version {member}, failed")
        if "traces" not in results(store, member):
            raise HistegError(f"its {_ROLES[role]}, version {member}, has no complete traces")
    return StepResult(compute_merge(store, index, context.settings))


MERGES = Step(
    name="merges",
    doing="comparing merges with their parents and base",
    outputs=(MERGE_DIVERGENCES,),
    upstream=("syntax", "statics", "traces", "compare", "targets"),
    inputs=_inputs,
    run=_run,
    skip=_skip,
    rules=MERGE_RULES,
)
