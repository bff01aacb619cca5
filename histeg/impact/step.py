"""Pipeline step 6 for one version: divergences, mapping, ranking, written to disk."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from histeg.compare.divergences import VersionComparison, compare_versions, write_divergences
from histeg.config import VersionSettings
from histeg.impact.changes import load_changes
from histeg.impact.mapping import map_divergences
from histeg.impact.scaling import Scaling
from histeg.impact.targets import FunctionInfo, Target, build_targets, entry_label, in_directories
from histeg.runs.confirm import DEFAULT_CONFIRM_RUNS
from histeg.statics.callgraph import call_distance, load_call_graph
from histeg.statics.functions import read_function_table
from histeg.statics.reads import ValueReads, value_reads
from histeg.store import CALL_GRAPH, FILE_CHANGES, FUNCTIONS, SYNTAX_CHANGES, TESTING_TARGETS, VERSION, OutputStore, read_json, write_json

SCHEMA_VERSION = 2
SYNTAX_TARGETS = "syntaxTargets.json"
DIVERGENCE_TARGETS = "divergenceTargets.json"


@dataclass
class ImpactOptions:
    scaling: Scaling = field(default_factory=Scaling)
    metrics: tuple[str, ...] = ("sections",)
    restrict: bool = False
    flat: bool = False
    for_syntax: bool = False
    for_divergence: bool = False
    jobs: int = 0
    """Worker processes comparing entry points (0: one per core, up to 4)."""
    confirm: int = DEFAULT_CONFIRM_RUNS
    """Targeted re-runs per version of the entry points that diverged (0: none)."""

    def workers(self) -> int:
        import os

        return self.jobs or min(4, len(os.sched_getaffinity(0)))

    def to_json(self) -> dict[str, Any]:
        return {"metrics": list(self.metrics), "restrictSyntaxMapping": self.restrict, "confirmRuns": self.confirm,
                "scaling": self.scaling.to_json()}


def _function_table(store: OutputStore, *indices: int) -> dict[str, FunctionInfo]:
    """New version first: its files and lines win over the old version's."""
    table: dict[str, FunctionInfo] = {}
    for index in indices:
        for row in read_json(store.file(index, FUNCTIONS)).get("functions", []):
            table.setdefault(row["identifier"], FunctionInfo(row["kind"], row["file"], (row["firstLine"], row["lastLine"])))
    return table


def _reads(store: OutputStore, index: int, settings: VersionSettings) -> ValueReads:
    return value_reads(read_function_table(store.snapshot(index), settings))


def _document(store: OutputStore, index: int, options: ImpactOptions, ranked: list[Target], extra: dict[str, Any]) -> dict[str, Any]:
    version = read_json(store.file(index, VERSION))
    return {
        "schemaVersion": SCHEMA_VERSION,
        "identifier": version["identifier"],
        "comparingAgainstVersion": version["comparingAgainstVersion"],
        "options": options.to_json(),
        "targets": [target.to_json(rank) for rank, target in enumerate(ranked, 1)],
        **extra,
    }


def _ranked(targets: list[Target]) -> list[Target]:
    return sorted(targets, key=lambda t: (-t.value.total, t.identifier))


def _changed_test_data(store: OutputStore, index: int, settings: VersionSettings) -> list[str]:
    """Files in the tests directories that changed and are not Python: inputs of the entry points."""
    changed = read_json(store.file(index, FILE_CHANGES)).get("changes", [])
    paths = {path for change in changed if not change["python"] for path in (change["oldPath"], change["newPath"]) if path}
    return sorted(path for path in paths if in_directories(path, settings.tests))


def compute_targets(store: OutputStore, index: int, options: ImpactOptions) -> dict[str, Any]:
    version = read_json(store.file(index, VERSION))
    against = version["comparingAgainstIndex"]
    comparison: VersionComparison = compare_versions(store, index, with_sections="sections" in options.metrics, jobs=options.workers(),
                                                     confirm_runs=options.confirm)
    mapping_started = time.perf_counter()
    write_divergences(store, comparison, options.flat)
    changes = load_changes(store.file(index, SYNTAX_CHANGES))
    graph = load_call_graph(store.file(index, CALL_GRAPH))
    settings = VersionSettings.from_json(version)
    reads = _reads(store, index, settings) if changes.values else {}  # who reads what matters only for changed values
    table = _function_table(store, index, against)
    tests = frozenset(identifier for identifier, info in table.items() if in_directories(info.file, settings.tests))
    test_data = _changed_test_data(store, index, settings)
    mapped = map_divergences(
        comparison.divergences, changes, reads, lambda a, b: call_distance(graph, a, b), options.restrict, tests, bool(test_data),
        entry_functions=comparison.entry_functions,
    )
    targets = build_targets(changes, mapped, comparison, table, options.scaling, options.metrics)
    ignored = set(settings.ignore.functions)
    targets = [t for t in targets if t.identifier.rpartition(".")[2].rpartition(":")[2] not in ignored]
    test_targets = [t for t in targets if in_directories(t.file, settings.tests)]
    everywhere = any(d in ("", ".") for d in settings.sources)
    product = [t for t in targets if t not in test_targets and (everywhere or in_directories(t.file, settings.sources))]
    other = [t for t in targets if t not in test_targets and t not in product]
    noisy = sorted({function for _, function in comparison.unstable})
    extra = {
        "testCode": [t.to_json(None) for t in _ranked(test_targets)],
        "otherCode": [t.to_json(None) for t in _ranked(other)],
        "noise": {"functions": noisy, "entryPoints": sorted({entry.label or entry.root for entry, _ in comparison.unstable}),
                  "divergences": len(comparison.noise), "unstable": _unstable(comparison),
                  "confirmation": comparison.confirmation.to_json()},
        "testData": {
            "files": test_data,
            "divergences": len(mapped.by_test_data),
            "functions": sorted({d.call.function for d in mapped.by_test_data}),
        },
        "unmatchedEntryPoints": {"onlyInOld": [k.to_json() for k in comparison.only_old], "onlyInNew": [k.to_json() for k in comparison.only_new]},
        "summary": {
            "targets": len(product),
            "withImpact": sum(1 for t in product if t.impact.local or t.impact.non_local),
            "unmapped": sum(1 for t in product if t.unmapped),
            "divergences": len(comparison.divergences),
            "noise": len(comparison.noise),
        },
    }
    ranked = _ranked(product)
    write_json(store.file(index, TESTING_TARGETS), _document(store, index, options, ranked, extra))
    if options.for_syntax:
        syntax_only = [t for t in product if t.syntax_changes]
        write_json(store.file(index, SYNTAX_TARGETS), _document(store, index, options, _ranked(syntax_only), {}))
    if options.for_divergence:
        divergent = [t for t in product if t.impact.local or t.impact.non_local]
        write_json(store.file(index, DIVERGENCE_TARGETS), _document(store, index, options, _ranked(divergent), {}))
    seconds = {"compare": round(comparison.compare_seconds + time.perf_counter() - mapping_started, 3),
               "confirm": round(comparison.confirmation.seconds, 3)}
    return {"targets": len(ranked), "top": [t.identifier for t in ranked[:3]], "noise": noisy, "seconds": seconds}


def _unstable(comparison: VersionComparison) -> list[dict[str, Any]]:
    """Each (entry point, function) that differed between runs of one version, with the nature of the difference."""
    return [{"entryPoint": entry_label(entry), "function": function,
             "natures": sorted(found.natures)} for (entry, function), found in sorted(comparison.unstable.items(), key=lambda item: item[0])]
