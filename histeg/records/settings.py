"""``<index>/settings.json``: the settings a version's traces and targets were made with, typed from the option table."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from histeg.records.base import Part, Record
from histeg.settings.table import OPTIONS

ORIGIN = Annotated[str, msgspec.Meta(description="default, the file it was read from, or the flag or argument that gave it.")]


def _setting(key: str, value_type: Any) -> Any:
    """``{"value": ..., "origin": ...}`` of one option, named after it (``RepeatSetting``)."""
    name = "".join(word.capitalize() for word in key.split("-")) + "Setting"
    return msgspec.defstruct(name, [("value", value_type), ("origin", ORIGIN)], bases=(Part,), kw_only=True, module=__name__)


def _section(step: str, description: str) -> Any:
    """One field per option that changes ``step``'s results, under its TOML key, typed as the table types it."""
    fields = [
        (
            option.name,
            Annotated[_setting(option.key, option.kind.json_type), msgspec.Meta(description=option.help)],
            msgspec.field(name=option.key),
        )
        for option in OPTIONS
        if option.step == step
    ]
    section = msgspec.defstruct(f"{step.capitalize()}Settings", fields, bases=(Part,), kw_only=True, module=__name__)
    section.__doc__ = description
    return section


TracesSettings = _section("traces", "Settings of the trace runs (runs.json, traces/).")
CompareSettings = _section("compare", "Settings of the comparison (traceDivergences.json, confirmations.json).")
TargetsSettings = _section("targets", "Settings of the ranking (testingTargets.json) and of merge mode.")


class RunSettings(Record, kw_only=True):
    """The settings a version's traces, comparison and testing targets were made with: only those that change results, each
    with its origin. The traces, compare and targets steps each write their own section and keep the others (null: not made yet)."""

    FILE = "settings.json"
    TITLE = "<index>/settings.json"
    schema_version: Literal[3] = 3  # 3: the compare section (export-flat and confirm moved there from targets)
    traces: TracesSettings | None  # type: ignore[valid-type]  # a Struct made from the option table at import time
    compare: CompareSettings | None  # type: ignore[valid-type]  # a Struct made from the option table at import time
    targets: TargetsSettings | None  # type: ignore[valid-type]  # a Struct made from the option table at import time
