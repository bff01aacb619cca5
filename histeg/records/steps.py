"""``<index>/steps.json``: what each step of a version was computed from, so a rerun knows what is still valid."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from histeg.records.base import Part, Record
from histeg.records.types import Seconds

Fingerprint = Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{64}$", description="SHA-256 of the step's inputs in canonical JSON.")]


class StepState(Part, kw_only=True):
    """One step's last run on this version."""

    fingerprint: Fingerprint
    status: Annotated[Literal["ok", "failed"], msgspec.Meta(description="Only an ok result is reused.")]
    seconds: Seconds
    inputs: Annotated[dict[str, object], msgspec.Meta(description="What the fingerprint was computed from, for a person asking why a step ran again.")]
    summary: Annotated[dict[str, object], msgspec.Meta(description="What the step reported; given again when it is reused.")]


class StepStates(Record, kw_only=True):
    """The fingerprint of every step that ran on a version; a step whose inputs are unchanged is not run again."""

    FILE = "steps.json"
    TITLE = "<index>/steps.json"
    schema_version: Literal[1] = 1
    steps: dict[str, StepState]
