"""A merge's ``testingTargets.json`` with its merge classes: targets carrying one rank first.

The targets step ranks the merge against its first parent only; a behaviour
the merge lost from the second parent, or one it introduced where the first
parent's code is unchanged, may be no target there at all. Such functions are
added (value 0, a note saying why) where the targets step would report them
(test functions and other code unranked, beside the ranked list) and every
ranked target charged with a merge class moves to the front, in the targets step's own order (value, then identifier),
so that applying the classes again to an already marked file gives the same file.
"""

from __future__ import annotations

from collections.abc import Mapping

from histeg.impact.ranking import Layout, section_of
from histeg.impact.targets import FunctionInfo
from histeg.naming import split_identifier
from histeg.records.merges import MergeClass, Side
from histeg.records.targets import (
    DivergenceCounts,
    RankedTarget,
    TestingTargets,
    ValueParts,
)

NOTE = "merge: "
"""The prefix of every note this module writes; a note of the targets step never has it."""
ADDED = NOTE + "a target for its merge classes only: no change or divergence against the first parent"
KINDS = ("function", "method", "class", "module")


Charged = tuple[set[MergeClass], set[Side], list[str], list[str]]
"""What one target is charged with: its merge classes, the parents it lost from, the divergent functions and entry points."""


def _note(classes: set[MergeClass], lost_from: set[Side]) -> str:
    parts = []
    if "lost" in classes:
        sides = " and ".join(sorted(side.replace("Parent", " parent") for side in lost_from))
        parts.append(f"behaviour the {sides} changed is lost in the merge")
    if "introduced" in classes:
        parts.append("the merge introduces behaviour neither parent has")
    return NOTE + "; ".join(parts)


def _unmarked(target: RankedTarget) -> RankedTarget | None:
    """The target as the targets step wrote it; None for one this module added."""
    if ADDED in target.notes:
        return None
    target.merge_classes = []
    target.notes = [note for note in target.notes if not note.startswith(NOTE)]
    return target


def _added(identifier: str, info: FunctionInfo | None, affected: list[str], entries: list[str]) -> RankedTarget:
    module, qualname = split_identifier(identifier)
    zero = ValueParts(local={}, non_local={}, call_distance=0.0, affected_functions=0.0, syntax_changes=0.0, new_class=0.0, traces=0)
    return RankedTarget(
        rank=None,
        identifier=identifier,
        kind=info.kind if info is not None and info.kind in KINDS else "function",  # type: ignore[arg-type]  # one of KINDS: `in` does not narrow str to the Literal
        module=module,
        qualname=qualname,
        file=info.file if info is not None else None,
        lines=info.lines if info is not None else None,
        value=0.0,
        parts=zero,
        origin="unmapped divergence",
        new=False,
        syntax_changes=[],
        syntax_change_count=0,
        local_divergences=[],
        local_divergence_count=0,
        non_local_divergences=[],
        non_local_divergence_count=0,
        affected_functions=affected,
        entry_points=entries[:25],
        entry_point_count=len(entries),
        divergence_classes=DivergenceCounts(exception_only_in_new=0, exception_only_in_old=0, outcome_changed=0, silent=0),
        new_test_entry_points=[],
        new_test_entry_point_count=0,
        notes=[ADDED],
    )


def with_merge_classes(
    document: TestingTargets, charged: Mapping[str, Charged], functions: Mapping[str, FunctionInfo], layout: Layout
) -> TestingTargets:
    """``charged``: per target identifier, its merge classes, the parents it lost from, the divergent functions and entry points;
    ``layout``: the merge's sources and tests directories."""
    targets = [kept for target in document.targets if (kept := _unmarked(target)) is not None]
    document.test_code = [kept for target in document.test_code if (kept := _unmarked(target)) is not None]
    document.other_code = [kept for target in document.other_code if (kept := _unmarked(target)) is not None]
    known = {target.identifier: target for target in (*targets, *document.test_code, *document.other_code)}
    for identifier, (classes, lost_from, affected, entries) in sorted(charged.items()):
        target = known.get(identifier)
        if target is None:
            target = _added(identifier, functions.get(identifier), affected, entries)
            {"product": targets, "tests": document.test_code, "other": document.other_code}[section_of(target.file, layout)].append(target)
        target.merge_classes = sorted(classes)
        target.notes.append(_note(classes, lost_from))
    targets.sort(key=lambda t: (not t.merge_classes, not t.evidence, -t.value, t.identifier))  # as ranking.ranked within each
    for rank, target in enumerate(targets, 1):
        target.rank = rank
    document.targets = targets
    document.summary.targets = len(targets)
    document.summary.unmapped = sum(1 for t in targets if t.origin == "unmapped divergence")
    return document
