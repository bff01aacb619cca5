"""Trace divergences of a version against its predecessor, with noise set apart.

Run 1 of each version is compared. With ``--repeat N`` the other runs are
compared with run 1 of the *same* version first: the kinds of divergence a
function shows there (lines, parameters, return, calls) are noise, set aside
from its divergences between the versions and reported in their own section.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from histeg.compare.calls import KINDS, CallDivergence, Tree, compare_calls
from histeg.compare.entry_points import EntryKey, EntryRef, entry_points, match_entry_points, read_manual_matching
from histeg.errors import HistegError
from histeg.store import TRACE_DIVERGENCES, TRACE_MATCHING, VERSION, OutputStore, read_json, write_json
from histeg.traces import TraceFile, trace_files

SCHEMA_VERSION = 1


@dataclass
class Divergence:
    entry: EntryKey
    call: CallDivergence

    def to_json(self) -> dict[str, Any]:
        return {
            "entryPoint": self.entry.to_json(),
            "function": self.call.function,
            "callChain": list(self.call.chain),
            "callPath": list(self.call.path),
            "kinds": self.call.kinds,
            "metrics": self.call.metrics(),
            "details": self.call.details,
        }


@dataclass
class VersionComparison:
    index: int
    against: int
    divergences: list[Divergence] = field(default_factory=list)
    noise: list[Divergence] = field(default_factory=list)
    """Divergences between the versions that runs of one version also show: not ranked."""
    noise_keys: set[tuple[EntryKey, str]] = field(default_factory=set)
    """(entry point, function) pairs that diverge between runs of one version."""
    matched: int = 0
    only_old: list[EntryKey] = field(default_factory=list)
    only_new: list[EntryKey] = field(default_factory=list)
    entry_functions: dict[EntryKey, set[str]] = field(default_factory=dict)
    """Functions called under each matched entry point (new version): the traces a target appears in."""


def run_directories(store: OutputStore, index: int) -> list[Path]:
    runs = sorted((p for p in store.traces(index).glob("run-*") if p.is_dir()), key=lambda p: int(p.name.split("-")[1]))
    if not runs or not trace_files(runs[0]):
        raise HistegError(f"version {index} has no traces in {store.traces(index)}; run 'histeg analyze' first")
    return runs


def load_run(directory: Path) -> dict[EntryKey, EntryRef]:
    """The entry points of one run, from the indexes of its trace files (nothing is decoded yet)."""
    return entry_points(TraceFile(path) for path in trace_files(directory))


def compare_entry_points(old: EntryRef, new: EntryRef, with_sections: bool = True) -> list[CallDivergence]:
    """The divergences of one matched pair of entry points; equal digests need no decoding."""
    if old.digest == new.digest:
        return []
    old_tree = Tree(old.file.columns(old.index), old.file.definitions)
    new_tree = Tree(new.file.columns(new.index), new.file.definitions)
    return list(compare_calls(old_tree, new_tree, with_sections))


PARALLEL_FROM = 32
"""Pairs to decode below which worker processes cost more than they save."""
_worker_files: dict[str, TraceFile] = {}
"""The trace files a worker process has open (a run has few; pairs arrive grouped by file)."""


def _opened(path: str) -> TraceFile:
    found = _worker_files.get(path)
    if found is None:
        if len(_worker_files) >= 8:
            _worker_files.clear()
        found = _worker_files[path] = TraceFile(Path(path))
    return found


def _compare_in_worker(work: list[tuple[str, int, str, int]], with_sections: bool) -> list[list[CallDivergence]]:
    return [compare_entry_points(EntryRef(_opened(old), i), EntryRef(_opened(new), j), with_sections) for old, i, new, j in work]


class Comparer:
    """Compares matched entry points, in worker processes when there are enough of them to decode.

    Results are put back in the order of the pairs, so they are the same for any number of workers."""

    def __init__(self, jobs: int = 1, with_sections: bool = True) -> None:
        self.jobs = jobs
        self.with_sections = with_sections
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> Comparer:
        return self

    def __exit__(self, *_: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)

    def divergences(self, old: dict[EntryKey, EntryRef], new: dict[EntryKey, EntryRef],
                    pairs: list[tuple[EntryKey, EntryKey]]) -> list[Divergence]:
        """Divergences of matched pairs, in the order of ``pairs``; compared in the order of the new run's
        files and entry points, so that each compressed block of events is read about once."""
        def place(position: int) -> tuple[str, int]:
            ref = new[pairs[position][1]]
            return str(ref.file.path), ref.index

        found: dict[int, list[CallDivergence]] = {}
        todo = [k for k in sorted(range(len(pairs)), key=place) if old[pairs[k][0]].digest != new[pairs[k][1]].digest]
        if self.jobs > 1 and len(todo) >= PARALLEL_FROM:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(self.jobs, mp_context=multiprocessing.get_context("spawn"))
            size = -(-len(todo) // (4 * self.jobs))
            groups = [todo[start : start + size] for start in range(0, len(todo), size)]
            work = [[(str(old[pairs[k][0]].file.path), old[pairs[k][0]].index, str(new[pairs[k][1]].file.path), new[pairs[k][1]].index)
                     for k in group] for group in groups]
            for group, results in zip(groups, self._pool.map(_compare_in_worker, work, [self.with_sections] * len(work)), strict=True):
                found.update(zip(group, results, strict=True))
        else:
            for k in todo:
                found[k] = compare_entry_points(old[pairs[k][0]], new[pairs[k][1]], self.with_sections)
        return [Divergence(pairs[k][1], call) for k in range(len(pairs)) for call in found.get(k, ())]

    def noise_kinds(self, runs: list[dict[EntryKey, EntryRef]]) -> dict[tuple[EntryKey, str], set[str]]:
        """(entry point, function) -> the kinds of divergence seen between runs of one version."""
        found: dict[tuple[EntryKey, str], set[str]] = {}
        first = runs[0]
        for other in runs[1:]:
            matching = match_entry_points(first, other)
            for divergence in self.divergences(first, other, matching.pairs):
                found.setdefault((divergence.entry, divergence.call.function), set()).update(divergence.call.kinds)
            for key in (*matching.only_old, *matching.only_new):
                found.setdefault((key, key.root), set()).update(KINDS)
        return found


def compare_versions(store: OutputStore, index: int, with_sections: bool = True, jobs: int = 1) -> VersionComparison:
    version = read_json(store.file(index, VERSION))
    against = version.get("comparingAgainstIndex")
    if against is None:
        raise HistegError(f"version {index} has no predecessor to compare with")
    new_runs = [load_run(d) for d in run_directories(store, index)]
    old_runs = [load_run(d) for d in run_directories(store, against)]
    manual_path = store.file(index, TRACE_MATCHING)
    manual = read_manual_matching(manual_path) if manual_path.is_file() else None
    matching = match_entry_points(old_runs[0], new_runs[0], manual)
    with Comparer(jobs, with_sections) as comparer:
        noise = comparer.noise_kinds(new_runs)
        old_noise = comparer.noise_kinds(old_runs)
        between = comparer.divergences(old_runs[0], new_runs[0], matching.pairs)
    old_to_new = dict(matching.pairs)
    for (key, function), kinds in old_noise.items():
        if key in old_to_new:
            noise.setdefault((old_to_new[key], function), set()).update(kinds)
    result = VersionComparison(index, against, matched=len(matching.pairs), only_old=matching.only_old, only_new=matching.only_new,
                               noise_keys=set(noise))
    # A function seen diverging between runs under one entry point is nondeterministic under all (under
    # some entry points two runs agree by chance, so pairs alone would let noise through), but only in
    # the kinds seen: an object whose state holds a random remark makes parameters noise, not lines.
    noisy_kinds: dict[str, set[str]] = {}
    for (_, function), kinds in noise.items():
        noisy_kinds.setdefault(function, set()).update(kinds)
    for divergence in between:
        kinds = noisy_kinds.get(divergence.call.function)
        if not kinds:
            result.divergences.append(divergence)
            continue
        result.noise.append(divergence)
        kept = divergence.call.without(kinds)
        if kept.kinds:
            result.divergences.append(Divergence(divergence.entry, kept))
    for _, new_key in matching.pairs:
        ref = new_runs[0][new_key]
        functions = ref.file.definitions.functions
        result.entry_functions[new_key] = {functions[f].ident for f in ref.file.entries[ref.index].functions}
    return result


MAX_TREE_DEPTH = 100
"""Deeper divergences (runaway recursion) are listed flat under the node at this depth;
their ``callChain`` still tells where they were. JSON writers refuse deeper nesting."""


def _tree(divergences: list[Divergence]) -> list[dict[str, Any]]:
    """Divergences nested under their nearest divergent ancestor, per entry point."""
    by_entry: dict[EntryKey, list[Divergence]] = {}
    for divergence in divergences:
        by_entry.setdefault(divergence.entry, []).append(divergence)
    result = []
    for entry, items in sorted(by_entry.items()):
        places: dict[tuple[int, ...], tuple[list[dict[str, Any]], int]] = {}  # path -> (where its descendants go, depth)
        roots: list[dict[str, Any]] = []
        for item in sorted(items, key=lambda d: d.call.path):
            node = {k: v for k, v in item.to_json().items() if k not in ("entryPoint", "callPath")} | {"children": []}
            path = item.call.path
            parent = next((places[path[:cut]] for cut in range(len(path) - 1, -1, -1) if path[:cut] in places), None)
            container, depth = (roots, 0) if parent is None else (parent[0], parent[1] + 1)
            container.append(node)
            places[path] = (node["children"] if depth < MAX_TREE_DEPTH else container, depth)
        result.append({"entryPoint": entry.to_json(), "divergences": roots})
    return result


def write_divergences(store: OutputStore, comparison: VersionComparison, flat: bool) -> Path:
    version = read_json(store.file(comparison.index, VERSION))
    noise_pairs = sorted(comparison.noise_keys)
    data = {
        "schemaVersion": SCHEMA_VERSION,
        "identifier": version["identifier"],
        "comparingAgainstVersion": version["comparingAgainstVersion"],
        "layout": "flat" if flat else "tree",
        "entryPoints": {
            "matched": comparison.matched,
            "onlyInOld": [key.to_json() for key in comparison.only_old],
            "onlyInNew": [key.to_json() for key in comparison.only_new],
        },
        "divergences": [d.to_json() for d in comparison.divergences] if flat else _tree(comparison.divergences),
        "noise": [{"entryPoint": entry.to_json(), "function": function} for entry, function in noise_pairs],
        "summary": {
            "divergences": len(comparison.divergences),
            "divergentFunctions": len({d.call.function for d in comparison.divergences}),
            "noise": len(comparison.noise),
            "noisyFunctions": sorted({function for _, function in comparison.noise_keys}),
        },
    }
    path = store.file(comparison.index, TRACE_DIVERGENCES)
    write_json(path, data)
    return path
