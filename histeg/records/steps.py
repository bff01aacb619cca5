"""``<index>/steps.json``: what each step of a version was computed from, so a rerun knows what is still valid."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from histeg.records.base import Part, Record
from histeg.records.types import Seconds

Digest = Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{64}$")]


class StepState(Part, kw_only=True):
    """One step's last run on this version."""

    fingerprint: Annotated[Digest, msgspec.Meta(description="SHA-256 of the step's inputs in canonical JSON.")]
    result: Annotated[
        Digest,
        msgspec.Meta(
            description=(
                "Identifies this computation of the step: the steps that read its results have it among their inputs, so they run "
                "again whenever it ran again, even with the same inputs."
            )
        ),
    ]
    status: Annotated[Literal["ok", "failed"], msgspec.Meta(description="Only an ok result is reused.")]
    seconds: Seconds
    inputs: Annotated[
        dict[str, Any], msgspec.Meta(description="What the fingerprint was computed from, for a person asking why a step ran again.")
    ]
    summary: Annotated[dict[str, Any], msgspec.Meta(description="What the step reported; given again when it is reused.")]


class StepStates(Record, kw_only=True):
    """The fingerprint of every step that ran on a version; a step whose inputs are unchanged is not run again."""

    FILE = "steps.json"
    TITLE = "<index>/steps.json"
    schema_version: Literal[1] = 1
    steps: dict[str, StepState]
