"""What comparing traces writes, ``traceDivergences.json``, and what a user writes to steer it, ``traceMatching.json``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, Self

import msgspec

from histeg.errors import HistegError
from histeg.records.base import Part, Record, decoder
from histeg.records.types import CommitId, Count

Kind = Literal["lines", "parameters", "return", "calls"]
Nature = Literal["values", "path", "exception"]
DivergenceClass = Literal["exceptionOnlyInNew", "exceptionOnlyInOld", "outcomeChanged", "silent"]
Layout = Literal["tree", "flat"]

Identifier = Annotated[str, msgspec.Meta(pattern="^[^:]*:.*$", description="package.module:Qual.name")]
Kinds = Annotated[list[Kind], msgspec.Meta(min_length=1)]
Classes = Annotated[
    list[DivergenceClass],
    msgspec.Meta(
        min_length=1,
        description=(
            "Divergence classes: a call raised only in the new version (regression candidate) or only in the old one (fix); "
            "the test's outcome changed (visible); silent otherwise."
        ),
    ),
]
Details = Annotated[
    dict[str, Any],
    msgspec.Meta(
        description=(
            "What differed, as far as it did: sections ([old start, old end, new start, new end]), parameters (name, old, new), "
            "return (old and new: returned or raised, and the value), missingCalls, additionalCalls."
        )
    ),
]


class EntryKey(Part, frozen=True, order=True, kw_only=False):  # type: ignore[misc]  # msgspec allows a frozen Struct on a non-frozen base; mypy applies the dataclass rule
    """An entry point: the k-th root call of one function under one node id and phase of one trace command."""

    command: Annotated[str, msgspec.Meta(description="Label of the trace command (pytest, main-<module>, run-<cmd>).")]
    label: Annotated[str, msgspec.Meta(description="pytest node id, empty outside pytest.")]
    phase: str
    root: Identifier
    occurrence: Count


class Metrics(Part, kw_only=True, omit_defaults=True):
    distance: Annotated[
        Count,
        msgspec.Meta(
            description=(
                "Levenshtein distance of the line sequences (positions among the function's code lines); at least this when capped."
            )
        ),
    ]
    sections: Annotated[Count, msgspec.Meta(description="Divergent sections: maximal runs of edit operations.")]
    coverage: Annotated[Count, msgspec.Meta(description="Sum of per-line execution-count differences.")]
    parameters: Count
    returns: Annotated[int, msgspec.Meta(ge=0, le=1)]
    calls: Annotated[Count, msgspec.Meta(description="Missing plus additional child calls.")]
    capped: Annotated[
        bool,
        msgspec.Meta(
            description=(
                "Present (true) when the line sequences were too long and too far apart to compare exactly: the distance is a "
                "lower bound (the comparison's cutoff), and sections may join several stretches into one."
            )
        ),
    ] = False


class NestedDivergence(Part, kw_only=True):
    """A divergence below a divergent caller of the same entry point (tree layout)."""

    function: Identifier
    call_chain: Annotated[list[Identifier], msgspec.Meta(description="Functions from the entry point down to the caller.")]
    kinds: Kinds
    classes: Classes
    metrics: Metrics
    details: Details
    children: list[NestedDivergence]


class ListedDivergence(Part, kw_only=True):
    """A divergence with no divergent caller above it (tree layout), or any divergence (flat layout)."""

    entry_point: EntryKey
    function: Identifier
    call_chain: Annotated[list[Identifier], msgspec.Meta(description="Functions from the entry point down to the caller.")]
    call_path: Annotated[list[Count], msgspec.Meta(description="Child positions from the entry point down to the call (in the new trace).")]
    kinds: Kinds
    classes: Classes
    metrics: Metrics
    details: Details
    children: Annotated[list[NestedDivergence], msgspec.Meta(description="Empty in the flat layout.")]


class EntryPoints(Part, kw_only=True):
    matched: Count
    only_in_old: Annotated[
        list[EntryKey], msgspec.Meta(description="Entry points (e.g. removed tests) with no counterpart in this version.")
    ]
    only_in_new: list[EntryKey]


class Noise(Part, kw_only=True):
    entry_point: EntryKey
    function: str
    kinds: list[Kind]
    natures: Annotated[
        list[Nature],
        msgspec.Meta(
            description=("values: parameters or return values; path: lines or calls; exception: returned in one run, raised in another.")
        ),
    ]


class CompleteRuns(Part, kw_only=True):
    old: Count
    new: Count


class ConfirmationSample(Part, kw_only=True):
    """Round 1 re-runs a bounded sample of the entry points of each (function, kind) of divergence, and all of a group's
    entry points only when its sample showed instability; a stable sample's group keeps its other divergences."""

    per_group: Annotated[Count, msgspec.Meta(description="Entry points re-run per (function, kind) group at first (0: every one).")]
    groups: Annotated[Count, msgspec.Meta(description="(function, kind) groups of divergences.")]
    sampled_entry_points: Annotated[Count, msgspec.Meta(description="Entry points re-run as the groups' samples.")]
    widened_entry_points: Annotated[
        Count, msgspec.Meta(description="Further entry points re-run because a sample of one of their groups showed instability.")
    ]
    widened_groups: Annotated[list[str], msgspec.Meta(description="'function kind' of each group whose sample showed instability.")]


class TargetedReruns(Part, kw_only=True):
    """Targeted re-runs: the entry points that diverged between the versions, re-run alone on both versions to tell noise from a change."""

    runs: Annotated[Count, msgspec.Meta(description="Re-runs per version (0: none).")]
    entry_points: Annotated[
        Count,
        msgspec.Meta(
            description="Divergent entry points of the new version; re-run with their old counterparts as sample says (all without one)."
        ),
    ]
    complete_runs: CompleteRuns
    unexplained_entry_points: Annotated[
        Count,
        msgspec.Meta(
            description=(
                "Entry points re-run in a second round: a divergence of theirs survived the first and they ran no changed function "
                "in either version, in a version without a changed class- or module-level value (a version against its predecessor only)."
            )
        ),
    ] = 0
    unexplained_runs: Annotated[Count, msgspec.Meta(description="Second-round re-runs per version (0: no second round).")] = 0
    unexplained_complete_runs: CompleteRuns | None = None
    sample: ConfirmationSample | None = None


class DivergenceSummary(Part, kw_only=True):
    divergences: Count
    divergent_functions: Count
    noise: Count
    noisy_functions: list[str]


class TraceDivergences(Record, kw_only=True):
    """Where run 1 of this version behaved differently from run 1 of its predecessor, entry point by entry point. Divergences that also occur between runs of one version are noise and listed apart."""

    FILE = "traceDivergences.json"
    TITLE = "<index>/traceDivergences.json"
    schema_version: Literal[3] = 3
    identifier: CommitId
    comparing_against_version: CommitId
    layout: Annotated[
        Layout,
        msgspec.Meta(
            description=(
                "tree: divergences nested under their nearest divergent caller; flat (--export-flat): every divergence listed, none nested."
            )
        ),
    ]
    entry_points: EntryPoints
    divergences: list[ListedDivergence]
    noise: Annotated[
        list[Noise],
        msgspec.Meta(
            description=(
                "Every (entry point, function) that differed between runs of one version (whole-suite repeats or targeted re-runs), "
                "and how: its divergences between the versions in these kinds are noise for that entry point and function only."
            )
        ),
    ]
    confirmation: TargetedReruns
    summary: DivergenceSummary


class ManualPair(Part, kw_only=True):
    old: EntryKey
    new: EntryKey


class TraceMatching(Record, kw_only=True):
    """Entry points a user pairs by hand (a renamed test, say), written as in traceDivergences.json; these pairs come before automatic matching."""

    FILE = "traceMatching.json"
    TITLE = "<index>/traceMatching.json"
    pairs: list[ManualPair]

    @classmethod
    def decode(cls, payload: bytes, where: Path | str) -> Self:
        """Written by people, so without a schema version: only its fields are checked."""
        try:
            return decoder(cls).decode(payload)
        except msgspec.ValidationError as exc:
            raise HistegError(f"{where} does not match its schema: {exc}") from None
        except msgspec.DecodeError as exc:
            raise HistegError(f"corrupt JSON in {where}: {exc}") from None


__all__ = [
    "CompleteRuns",
    "DivergenceClass",
    "DivergenceSummary",
    "EntryKey",
    "EntryPoints",
    "Kind",
    "ListedDivergence",
    "ManualPair",
    "Metrics",
    "Nature",
    "NestedDivergence",
    "Noise",
    "TargetedReruns",
    "TraceDivergences",
    "TraceMatching",
]
