"""Merge mode's work for one merge: the four comparisons, the classes, the impact set, ``mergeDivergences.json`` and the
merge's targets marked. Apart from the step's declaration, so that declaring the pipeline imports none of it."""

from __future__ import annotations

from typing import Any

from histeg.compare.entry_points import EntryKey
from histeg.compare.version import compare_workers
from histeg.engine.runner import results
from histeg.errors import HistegError
from histeg.history.extract import read_merge_marks
from histeg.impact.ranking import Layout
from histeg.impact.targets import function_table
from histeg.merges.charge import ProjectCode, charged_to
from histeg.merges.classify import INTRODUCED, LOST
from histeg.merges.compare import PAIRS, PairFacts, classified, compare_pair, observe
from histeg.merges.impact import changed_functions, impact_set
from histeg.merges.targets import Charged, with_merge_classes
from histeg.records.history import MergeParents, MergeVersion
from histeg.records.merges import (
    ChangedSides,
    MergeComparison,
    MergeDivergence,
    MergeDivergences,
    MergeNoise,
    MergeSummary,
    PairName,
    Relations,
)
from histeg.records.merges import Relation as RelationWord
from histeg.records.statics import Functions
from histeg.records.targets import TestingTargets
from histeg.settings.model import Settings
from histeg.statics.observed import observed_call_graph
from histeg.store import TESTING_TARGETS, OutputStore


def compute_merge(store: OutputStore, index: int, settings: Settings) -> dict[str, Any]:
    """Compare the merge ``index`` with its parents and base, write ``mergeDivergences.json`` and mark its targets."""
    parents = read_merge_marks(store, index).merge
    if parents is None:
        raise HistegError(f"version {index} is not a merge extracted in merge mode (--merges)")
    first, second = parents.first_parent.index, parents.second_parent.index
    base = parents.base.index if parents.base is not None else None
    pairs = {"mergeVsFirstParent": (index, first), "mergeVsSecondParent": (index, second)}
    if base is not None:
        pairs |= {"firstParentVsBase": (first, base), "secondParentVsBase": (second, base)}
    jobs = compare_workers(settings)
    comparisons = {
        name: compare_pair(store, new, old, jobs, settings.confirm, settings.confirm_sample) for name, (new, old) in pairs.items()
    }
    facts = {name: PairFacts.of(comparisons[name]) if name in comparisons else None for name in PAIRS}
    chains: dict[tuple[EntryKey, str], tuple[str, ...]] = {}
    for name in PAIRS:  # the merge's own call chains first, then the parents'
        for d in comparisons[name].divergences if name in comparisons else ():
            chains.setdefault((d.entry, d.call.function), d.call.chain)
    project = _project_code(store, index, parents)

    first_side = changed_functions(store, first, index) | (changed_functions(store, base, first) if base is not None else set())
    second_side = changed_functions(store, second, index) | (changed_functions(store, base, second) if base is not None else set())
    impact = impact_set(observed_call_graph(store, index), first_side, second_side, settings.merge_distance)

    divergences, charged = _charged(facts, chains, project)
    document = MergeDivergences(
        identifier=store.version(index).identifier,
        parents=parents,
        distance=settings.merge_distance,
        changed=ChangedSides(first_parent=sorted(first_side), second_parent=sorted(second_side)),
        impact_set=sorted(impact),
        comparisons=[_comparison(store, name, pairs[name], comparisons[name]) for name in PAIRS if name in comparisons],
        divergences=divergences,
        noise=[
            MergeNoise(comparison=name, entry_point=entry, function=function, kinds=sorted(unstable.kinds))  # type: ignore[arg-type]  # divergence kinds, typed str by compare.divergences
            for name in PAIRS
            if name in comparisons
            for (entry, function), unstable in sorted(comparisons[name].unstable.items(), key=lambda item: item[0])
        ],
        summary=MergeSummary(
            lost=sum(LOST in d.classes for d in divergences),
            introduced=sum(INTRODUCED in d.classes for d in divergences),
            targets=len(charged),
        ),
    )
    document.write(store.file(index, MergeDivergences.FILE))
    top = _mark_targets(store, index, project, charged)
    return {"lost": document.summary.lost, "introduced": document.summary.introduced, "targets": len(charged), "top": top}


def _charged(
    facts: dict[PairName, PairFacts | None], chains: dict[tuple[EntryKey, str], tuple[str, ...]], project: ProjectCode
) -> tuple[list[MergeDivergence], dict[str, Charged]]:
    """Every place the four comparisons classify (lost, introduced, ...), and per target what is charged to it."""
    divergences: list[MergeDivergence] = []
    charged: dict[str, Charged] = {}
    for (entry, function, kind), observed, result in classified(observe(facts)):
        target = charged_to(function, chains.get((entry, function), ()), project)
        relations = Relations(
            **{
                _field(name): _word(getattr(observed, attribute))
                for name, attribute in zip(PAIRS, ("merge_first", "merge_second", "first_base", "second_base"), strict=True)
            }
        )
        divergences.append(
            MergeDivergence(
                entry_point=entry,
                function=function,
                kind=kind,
                classes=list(result.classes),
                lost_from=list(result.lost_from),
                relations=relations,
                target=target,
            )
        )
        classes, lost_from, affected, entries = charged.setdefault(target, (set(), set(), [], []))
        classes.update(result.classes)
        lost_from.update(result.lost_from)
        if function not in affected:
            affected.append(function)
        label = entry.label or f"{entry.command}:{entry.root}#{entry.occurrence}"
        if label not in entries:
            entries.append(label)
    return divergences, charged


def _project_code(store: OutputStore, index: int, parents: MergeParents) -> ProjectCode:
    """The functions of the merge and its parents (the merge's rows first) and where the merge keeps its sources and tests."""
    tables = [Functions.read(store.file(i, Functions.FILE)).functions for i in (index, *parents.members().values())]
    settings = store.version(index).settings
    return ProjectCode(
        function_table(*tables), Layout(tuple(settings.sources), tuple(settings.tests), frozenset(settings.ignore.functions))
    )


def _mark_targets(store: OutputStore, index: int, project: ProjectCode, charged: dict[str, Charged]) -> list[str]:
    """The merge's testingTargets.json with its merge classes, when the targets step ranked it (it has a predecessor)."""
    path = store.file(index, TESTING_TARGETS)
    if store.version(index).comparing_against_index is None or "targets" not in results(store, index) or not path.is_file():
        return []
    document = with_merge_classes(TestingTargets.read(path), charged, project.functions, project.layout)
    document.write(path)
    return [target.identifier for target in document.targets[:3]]


def _comparison(store: OutputStore, name: PairName, pair: tuple[int, int], comparison: Any) -> MergeComparison:
    new, old = (store.version(i) for i in pair)
    return MergeComparison(
        name=name,
        new=MergeVersion(index=new.index, identifier=new.identifier),
        old=MergeVersion(index=old.index, identifier=old.identifier),
        matched_entry_points=comparison.matched,
        divergences=len(comparison.divergences),
        noise=len(comparison.noise),
        confirmation=comparison.confirmation.record(),
    )


def _field(name: str) -> str:
    return {
        "mergeVsFirstParent": "merge_vs_first_parent",
        "mergeVsSecondParent": "merge_vs_second_parent",
        "firstParentVsBase": "first_parent_vs_base",
        "secondParentVsBase": "second_parent_vs_base",
    }[name]


def _word(relation: bool | None) -> RelationWord:
    return "unknown" if relation is None else ("differs" if relation else "equal")
