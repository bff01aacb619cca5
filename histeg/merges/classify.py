"""Merge classes of one (entry point, function, kind), from four pairwise comparisons (after the TOM paper).

A merge M of parents P1 and P2 with merge base B is compared with each parent
and each parent with the base. What each comparison says at one entry point,
function and kind of divergence is a relation: they differ, they are equal
(compared and no divergence), or it is unknown (the entry point was not
matched, or the place is noise in that comparison: never taken for equal).

* **lost** from parent Pi (TOM's lost behaviour, the negation of chi_i): Pi
  changed the behaviour relative to the base and the merge does not keep it.
  Pi differs from B and M differs from Pi while the other parent equals B
  (which covers M equal to B). Where both parents changed the same place and
  the merge took one side, nothing is called lost: resolving a conflict by
  choosing a side is a decision, not an accident (the paper's false positives).
* **introduced** (TOM's unexpected behaviour, chi_3'): the merge differs from
  both parents there, a behaviour neither parent had.

Both may hold at once: a merge that rewrites a place one side changed loses
that side's behaviour and brings its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Relation = bool | None
"""True: the two versions differ there; False: compared and equal; None: unknown."""
Side = Literal["firstParent", "secondParent"]
MergeClass = Literal["lost", "introduced"]
LOST: MergeClass = "lost"
INTRODUCED: MergeClass = "introduced"


@dataclass(frozen=True)
class Observation:
    """The four comparisons at one entry point, function and kind."""

    merge_first: Relation
    """M against its first parent."""
    merge_second: Relation
    """M against its second parent."""
    first_base: Relation
    """The first parent against the base."""
    second_base: Relation
    """The second parent against the base."""


@dataclass(frozen=True)
class Classified:
    classes: tuple[MergeClass, ...]
    lost_from: tuple[Side, ...]
    """The parents whose change the merge lost."""


def _lost(merge_parent: Relation, parent_base: Relation, other_base: Relation) -> bool:
    return parent_base is True and merge_parent is True and other_base is False


def classify(observed: Observation) -> Classified:
    """The merge classes at one place; empty when nothing is lost or introduced, or too little is known to say."""
    lost_from: list[Side] = []
    if _lost(observed.merge_first, observed.first_base, observed.second_base):
        lost_from.append("firstParent")
    if _lost(observed.merge_second, observed.second_base, observed.first_base):
        lost_from.append("secondParent")
    classes: list[MergeClass] = [LOST] if lost_from else []
    if observed.merge_first is True and observed.merge_second is True:
        classes.append(INTRODUCED)
    return Classified(tuple(classes), tuple(lost_from))
