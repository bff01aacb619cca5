"""What steps' results depend on, as the steps declare it: the version as extracted, settings, the predecessor's results.

Shared by the steps' own declarations; ``histeg.engine.runner`` fingerprints
what they return.
"""

from __future__ import annotations

from typing import Any

import msgspec

from histeg.engine.runner import results
from histeg.records.history import Version
from histeg.settings.model import Settings
from histeg.settings.show import settings_json
from histeg.settings.table import Step as SettingsStep
from histeg.step import StepContext
from histeg.store import OutputStore

_NOT_INPUTS = frozenset({"index", "msg", "author", "date", "comparingAgainstVersion", "comparingAgainstIndex", "merge", "mergeRoles"})

_NOT_COMPARED = frozenset({"compare", "targets", "merges"})
"""The predecessor's steps a comparison does not read: its own comparison (whose re-runs are paired with another
version), its targets and its merge marks. Whether they ran first changes nothing, so with ``-j N`` the comparisons need no order."""


def snapshot_inputs(version: Version) -> dict[str, Any]:
    """The commit and the per-version settings extraction resolved for it; which version it is compared with is not among them."""
    return {key: value for key, value in msgspec.to_builtins(version).items() if key not in _NOT_INPUTS}


COMMIT_NAMES = frozenset({"identifier", "shortIdentifier", "gitDescribe", "gitCommits"})
"""Inputs that name the commit rather than say how a step treats its files: a build that depends on them has another
fingerprint of its own."""


def apart_from_commit(inputs: dict[str, Any]) -> dict[str, Any]:
    """A step's recorded inputs without what names the commit and the step: two versions whose steps would take these
    alike treat the same files alike, so one may take the other's result when their files are the same."""
    version = {key: value for key, value in inputs.get("version", {}).items() if key not in COMMIT_NAMES}
    return {**{key: value for key, value in inputs.items() if key not in ("version", "upstream", "step")}, "version": version}


def version_inputs(context: StepContext, index: int) -> dict[str, Any]:
    return {"version": snapshot_inputs(context.store.version(index))}


def settings_values(settings: Settings, step: SettingsStep) -> dict[str, Any]:
    """The values of the settings that change ``step``'s results (those its ``settings.json`` section records)."""
    return {key: entry["value"] for key, entry in settings_json(settings, step).items()}


def predecessor(context: StepContext, index: int) -> tuple[int | None, Version | None]:
    against = context.store.version(index).comparing_against_index
    return against, (context.store.version(against) if against is not None else None)


def _compared_results(store: OutputStore, index: int) -> dict[str, str]:
    return {name: result for name, result in results(store, index).items() if name not in _NOT_COMPARED}


def against_inputs(context: StepContext, index: int) -> dict[str, Any] | None:
    """The predecessor as compared: its snapshot and the results a comparison reads."""
    against, old = predecessor(context, index)
    if against is None or old is None:
        return None
    return {"version": snapshot_inputs(old), "results": _compared_results(context.store, against)}


def first_version(context: StepContext, index: int) -> str | None:
    """A comparison's skip: the first version in the list has nothing to compare with."""
    return "first version in the list: nothing to compare with" if context.store.version(index).comparing_against_index is None else None
