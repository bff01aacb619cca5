"""The targets step for one version: read the compare step's comparison and what else the ranking needs, rank
(``ranking``), write the documents. Nothing is compared or re-run here."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from histeg.atomic import read_json
from histeg.compare.divergences import VersionComparison
from histeg.compare.version import read_comparison
from histeg.impact.changes import ChangeIndex, index_changes
from histeg.impact.documents import single_source, testing_targets
from histeg.impact.ranking import (
    Layout,
    Ranking,
    RankingInputs,
    changed_test_data,
    rank_version,
)
from histeg.impact.targets import FunctionInfo, function_table
from histeg.impact.untested import (
    changed_code,
    changed_executable_lines,
    changed_files,
    executed_lines,
    untested_changes,
)
from histeg.records.history import FileChanges, Version, VersionSettings
from histeg.records.statics import Functions
from histeg.records.syntax import SyntaxChanges
from histeg.records.targets import (
    DivergenceTargets,
    RankingOptions,
    SyntaxTargets,
    TestingTargets,
)
from histeg.settings.model import Settings
from histeg.statics.callgraph import call_distance
from histeg.statics.functions import read_function_table
from histeg.statics.observed import observed_call_graph
from histeg.statics.reads import ValueReads, value_reads
from histeg.store import FILE_CHANGES, SYNTAX_CHANGES, OutputStore


def ranking_options(settings: Settings, confirm_runs: int) -> RankingOptions:
    """What the targets files say they were valued with; ``confirm_runs``: what the comparison re-ran."""
    return RankingOptions(
        metrics=list(settings.metric),  # type: ignore[arg-type]  # names the option table checked, typed str in Settings
        restrict_syntax_mapping=settings.restrict_syntax_mapping,
        confirm_runs=confirm_runs,
        scaling=settings.scaling.to_json(),
        evidence_first=list(settings.evidence_first),  # type: ignore[arg-type]  # as above
    )


def load_changes(path: Path) -> ChangeIndex:
    return index_changes(SyntaxChanges.read(path).to_builtins())


def compute_targets(store: OutputStore, index: int, settings: Settings) -> dict[str, Any]:
    version = store.version(index)
    comparison = read_comparison(store, index)
    started = time.perf_counter()
    inputs = _inputs(store, version, comparison)
    ranking = rank_version(inputs, settings.scaling, settings.metric, settings.restrict_syntax_mapping, settings.evidence_first)
    untested = _write(store, version, settings, ranking, comparison, inputs.test_data)
    return {
        "targets": len(ranking.targets),
        "top": [t.identifier for t in ranking.targets[:3]],
        "noise": comparison.noisy_functions(),
        "untested": untested,
        "seconds": {"rank": round(time.perf_counter() - started, 3)},
    }


def _inputs(store: OutputStore, version: Version, comparison: VersionComparison) -> RankingInputs:
    index, settings = version.index, version.settings
    changes = load_changes(store.file(index, SYNTAX_CHANGES))
    graph = observed_call_graph(store, index)
    return RankingInputs(
        comparison=comparison,
        changes=changes,
        functions=_function_table(store, index, version.comparing_against_index),
        layout=Layout(tuple(settings.sources), tuple(settings.tests), frozenset(settings.ignore.functions)),
        reads=_reads(store, index, settings) if changes.values else {},  # who reads what matters only for changed values
        distance=lambda changed, divergent: call_distance(graph, changed, divergent),
        test_data=changed_test_data(read_json(store.file(index, FILE_CHANGES)).get("changes", []), settings.tests),
    )


def _function_table(store: OutputStore, new: int, old: int | None) -> dict[str, FunctionInfo]:
    """New version first: its files and lines win over the old version's."""
    indices = [new] if old is None else [new, old]
    return function_table(*(Functions.read(store.file(index, Functions.FILE)).functions for index in indices))


def _reads(store: OutputStore, index: int, settings: VersionSettings) -> ValueReads:
    return value_reads(read_function_table(store.snapshot(index), settings))


def _write(
    store: OutputStore, version: Version, settings: Settings, ranking: Ranking, comparison: VersionComparison, test_data: list[str]
) -> int:
    """Returns how many untested changes it listed."""
    index, identifier, valued_with = version.index, version.identifier, ranking_options(settings, comparison.confirmation.runs)
    against: str = version.comparing_against_version  # type: ignore[assignment]  # compared: it has one
    before = store.snapshot(version.comparing_against_index)  # type: ignore[arg-type]  # compared: it has one
    old_paths = {
        change.new_path: change.old_path for change in FileChanges.read(store.file(index, FILE_CHANGES)).changes if change.new_path
    }
    changeable = changed_executable_lines(store.snapshot(index), before, old_paths, changed_files(ranking.targets))
    changed = changed_code(ranking.targets, changeable, executed_lines(store.traces(index)))
    untested = untested_changes(ranking.targets, changed, changeable)
    testing_targets(identifier, against, valued_with, ranking, comparison, test_data, changed, untested).write(
        store.file(index, TestingTargets.FILE)
    )
    if settings.generate_for_syntax:
        single_source(SyntaxTargets, identifier, against, valued_with, ranking.syntax_targets()).write(
            store.file(index, SyntaxTargets.FILE)
        )
    if settings.generate_for_divergence:
        single_source(DivergenceTargets, identifier, against, valued_with, ranking.divergence_targets()).write(
            store.file(index, DivergenceTargets.FILE)
        )
    return len(untested)
