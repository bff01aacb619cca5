"""The four comparisons of a merge, made by ``compare_versions``, and the merge classes they give per place.

Each pair (merge and first parent, merge and second parent, each parent and
the base) is compared by the very function that compares a version with its
predecessor, re-runs and noise included: ``compare_versions`` takes the pair.
The re-runs it makes are stored with the version they were made beside, so a
rerun of histeg reuses them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from histeg.compare.divergences import VersionComparison, compare_versions
from histeg.compare.entry_points import EntryKey
from histeg.merges.classify import Classified, Observation, Relation, classify
from histeg.records.divergences import Kind
from histeg.records.merges import PairName
from histeg.store import OutputStore

PAIRS: tuple[PairName, ...] = ("mergeVsFirstParent", "mergeVsSecondParent", "firstParentVsBase", "secondParentVsBase")
Place = tuple[EntryKey, str, Kind]
"""(entry point, function, kind of divergence)."""


def compare_pair(store: OutputStore, new: int, old: int, jobs: int, confirm: int, sample: int) -> VersionComparison:
    """``new`` against ``old``; the new version's matching hints apply only when ``old`` is its own predecessor."""
    hints = store.version(new).comparing_against_index == old
    return compare_versions(store, old, new, hints=hints, with_sections=False, jobs=jobs, confirm_runs=confirm, sample=sample)


@dataclass
class PairFacts:
    """What one comparison says, by place."""

    compared: set[EntryKey]
    differs: dict[tuple[EntryKey, str], set[Kind]] = field(default_factory=dict)
    unknown: dict[tuple[EntryKey, str], set[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, comparison: VersionComparison) -> PairFacts:
        facts = cls(set(comparison.entry_functions))
        for divergence in comparison.divergences:
            facts.differs.setdefault((divergence.entry, divergence.call.function), set()).update(divergence.call.kinds)
        for key, unstable in comparison.unstable.items():
            facts.unknown.setdefault(key, set()).update(unstable.kinds)
        return facts

    def relation(self, entry: EntryKey, function: str, kind: Kind) -> Relation:
        if entry not in self.compared or kind in self.unknown.get((entry, function), ()):
            return None
        return kind in self.differs.get((entry, function), ())


def observe(facts: dict[PairName, PairFacts | None]) -> dict[Place, Observation]:
    """Every place some comparison found different, with what all four say there (a missing comparison: unknown)."""
    places: set[Place] = set()
    for found in facts.values():
        if found is not None:
            places.update((entry, function, kind) for (entry, function), kinds in found.differs.items() for kind in kinds)

    def relation(name: PairName, place: Place) -> Relation:
        found = facts.get(name)
        return None if found is None else found.relation(*place)

    return {place: Observation(*(relation(name, place) for name in PAIRS)) for place in sorted(places, key=_order)}


def classified(observations: dict[Place, Observation]) -> Iterable[tuple[Place, Observation, Classified]]:
    for place, observed in observations.items():
        result = classify(observed)
        if result.classes:
            yield place, observed, result


def _order(place: Place) -> tuple[object, ...]:
    entry, function, kind = place
    return (entry, function, kind)
