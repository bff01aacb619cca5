"""What merge mode (--merges) writes for a merge: ``mergeDivergences.json``."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from histeg.records.base import Part, Record
from histeg.records.divergences import EntryKey, Identifier, Kind, TargetedReruns
from histeg.records.history import MergeParents, MergeVersion
from histeg.records.types import CommitId, Count

Relation = Literal["differs", "equal", "unknown"]
MergeClass = Literal["lost", "introduced"]
Side = Literal["firstParent", "secondParent"]
PairName = Literal["mergeVsFirstParent", "mergeVsSecondParent", "firstParentVsBase", "secondParentVsBase"]


class Relations(Part, kw_only=True):
    """What each comparison says at this place: unknown where the entry point was not matched or the place is noise there."""

    merge_vs_first_parent: Relation
    merge_vs_second_parent: Relation
    first_parent_vs_base: Relation
    second_parent_vs_base: Relation


class MergeDivergence(Part, kw_only=True):
    """One entry point, function and kind of divergence where the merge lost a parent's behaviour or introduced its own."""

    entry_point: EntryKey
    function: Identifier
    kind: Kind
    classes: Annotated[list[MergeClass], msgspec.Meta(min_length=1)]
    lost_from: Annotated[list[Side], msgspec.Meta(description="The parents whose change relative to the base the merge does not keep.")]
    relations: Relations
    target: Annotated[
        Identifier,
        msgspec.Meta(
            description=(
                "The function it is charged to, whatever the impact set: itself when it is project code (in the sources, not a test), "
                "else its closest such caller in the trace's call chain, else itself (a test's own code, reported as test code)."
            )
        ),
    ]


class MergeComparison(Part, kw_only=True):
    """One of the four comparisons, made by the same comparison, with the same noise handling, as a version and its predecessor."""

    name: PairName
    new: MergeVersion
    old: MergeVersion
    matched_entry_points: Count
    divergences: Annotated[Count, msgspec.Meta(description="Divergences left once noise is set aside.")]
    noise: Count
    confirmation: TargetedReruns


class MergeNoise(Part, kw_only=True):
    """An (entry point, function) unstable in one comparison: its kinds are unknown there, never equal."""

    comparison: PairName
    entry_point: EntryKey
    function: Identifier
    kinds: list[Kind]


class ChangedSides(Part, kw_only=True):
    """Functions with syntax changes on each side: from the base to the parent, and from the parent to the merge."""

    first_parent: list[str]
    second_parent: list[str]


class MergeSummary(Part, kw_only=True):
    lost: Annotated[Count, msgspec.Meta(description="Places (entry point, function, kind) classified lost.")]
    introduced: Count
    targets: Annotated[Count, msgspec.Meta(description="Functions charged with a merge class.")]


class MergeDivergences(Record, kw_only=True):
    """A merge compared with both parents and their base (TOM's merge oracles): behaviour lost and introduced, each charged to a
    target, and the impact set (functions within the call distance of both sides' changes)."""

    FILE = "mergeDivergences.json"
    TITLE = "<index>/mergeDivergences.json"
    schema_version: Literal[2] = 2  # 2: every divergence has a target, whatever the impact set
    identifier: CommitId
    parents: MergeParents
    distance: Annotated[Count, msgspec.Meta(description="The call distance d of the impact set (--merge-distance).")]
    changed: ChangedSides
    impact_set: Annotated[
        list[str],
        msgspec.Meta(
            description=(
                "Functions within distance d (in the merge's call graph, either direction) of both sides' changes; "
                "the changed functions of both sides when no function is near both. It does not limit the targets."
            )
        ),
    ]
    comparisons: list[MergeComparison]
    divergences: list[MergeDivergence]
    noise: list[MergeNoise]
    summary: MergeSummary


__all__ = [
    "ChangedSides",
    "MergeClass",
    "MergeComparison",
    "MergeDivergence",
    "MergeDivergences",
    "MergeNoise",
    "MergeSummary",
    "PairName",
    "Relation",
    "Relations",
    "Side",
]
