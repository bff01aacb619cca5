"""Trace divergences of a version against its predecessor, with noise set apart.

Run 1 of each version is compared. The entry points that diverged are then
re-run alone on both versions (``confirm`` times, ``histeg.runs.confirm``, in
an order that keeps a clock read at any resolution from passing for a change), and
with ``--repeat N`` the whole suite ran N times: what differs between runs of
one version is noise (``histeg.compare.noise``) for that entry point and
function, in the kinds seen there (lines, parameters, return, calls); it is set
aside from the divergences between the versions and reported on its own. Each
divergence left is classified (``histeg.compare.classes``).
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from histeg.compare.calls import CallDivergence, Tree, compare_calls
from histeg.compare.classes import classify, outcomes_differ
from histeg.compare.entry_points import (
    EntryKey,
    EntryRef,
    entry_points,
    match_entry_points,
    read_manual_matching,
)
from histeg.compare.noise import NoiseMap, Unstable, merge, natures
from histeg.compare.sampling import choose, groups, unsettled
from histeg.compare.test_matching import read_renames
from histeg.compare.unexplained import SECOND_ROUND_FACTOR, Explanations, explanations
from histeg.errors import HistegError
from histeg.records.divergences import (
    CompleteRuns,
    ConfirmationSample,
    DivergenceClass,
    DivergenceSummary,
    EntryPoints,
    ListedDivergence,
    NestedDivergence,
    Noise,
    TargetedReruns,
    TraceDivergences,
)
from histeg.records.runs import Confirmations, Purpose
from histeg.settings.table import CONFIRM_SAMPLE
from histeg.store import SYNTAX_CHANGES, TRACE_DIVERGENCES, TRACE_MATCHING, OutputStore
from histeg.traces.reader import TraceFile, trace_files


@dataclass
class Divergence:
    entry: EntryKey
    call: CallDivergence
    classes: tuple[DivergenceClass, ...] = ()
    """Its divergence classes (``histeg.compare.classes``); empty until classified."""

    def record(self) -> ListedDivergence:
        call = self.call
        return ListedDivergence(
            entry_point=self.entry,
            function=call.function,
            call_chain=list(call.chain),
            call_path=list(call.path),
            kinds=call.kinds,
            classes=list(self.classes),
            metrics=call.metrics_record(),
            details=call.details,
            children=[],
        )

    def nested(self) -> NestedDivergence:
        """Its record below a divergent caller: the entry point and the path are the caller's."""
        call = self.call
        return NestedDivergence(
            function=call.function,
            call_chain=list(call.chain),
            kinds=call.kinds,
            classes=list(self.classes),
            metrics=call.metrics_record(),
            details=call.details,
            children=[],
        )


@dataclass
class Confirmation:
    """What the targeted re-runs did for one comparison."""

    runs: int
    """Re-runs per version asked for (0: none)."""
    entry_points: int = 0
    """Entry points of the new version that diverged and were re-run (with their old counterparts)."""
    complete: tuple[int, int] = (0, 0)
    """Complete re-runs available on the old and the new version."""
    unexplained: int = 0
    """Entry points re-run in a second round: a divergence survived the first and no changed code explains it."""
    unexplained_complete: tuple[int, int] = (0, 0)
    """Complete second-round re-runs on the old and the new version."""
    seconds: float = 0.0
    """Re-running the divergent entry points on both versions and comparing the re-runs."""
    sample: ConfirmationSample | None = None
    """What round 1 re-ran of each (function, kind) of divergence."""

    def record(self) -> TargetedReruns:
        return TargetedReruns(
            runs=self.runs,
            entry_points=self.entry_points,
            complete_runs=CompleteRuns(old=self.complete[0], new=self.complete[1]),
            unexplained_entry_points=self.unexplained,
            unexplained_runs=SECOND_ROUND_FACTOR * self.runs if self.unexplained else 0,
            unexplained_complete_runs=(
                CompleteRuns(old=self.unexplained_complete[0], new=self.unexplained_complete[1]) if self.unexplained else None
            ),
            sample=self.sample,
        )


@dataclass
class VersionComparison:
    index: int
    against: int
    divergences: list[Divergence] = field(default_factory=list)
    noise: list[Divergence] = field(default_factory=list)
    """Divergences between the versions that runs of one version also show: not ranked."""
    unstable: NoiseMap = field(default_factory=dict)
    """(entry point, function) pairs that diverge between runs of one version, and how."""
    matched: int = 0
    only_old: list[EntryKey] = field(default_factory=list)
    only_new: list[EntryKey] = field(default_factory=list)
    entry_functions: dict[EntryKey, set[str]] = field(default_factory=dict)
    """Functions called under each matched entry point (new version): the traces a target appears in."""
    new_entry_functions: dict[EntryKey, set[str]] = field(default_factory=dict)
    """Functions called under each entry point only the new version has (new or renamed tests)."""
    old_entry_functions: dict[EntryKey, set[str]] = field(default_factory=dict)
    """Functions called under each matched entry point in the old version (keyed as in the new): what a
    removed or renamed definition did before."""
    carried: dict[EntryKey, list[str]] = field(default_factory=dict)
    """Per matched entry point whose test outcome changed, the changed functions that entry points of its process ran
    before it, in either version's first run: the state they left (a module's list, a cache) reaches it there, and
    not when it is re-run alone. Its divergences that the re-runs alone did not show again are kept, not noise."""
    confirmation: Confirmation = field(default_factory=lambda: Confirmation(0))
    compare_seconds: float = 0.0
    """Time spent comparing the versions' first runs (re-runs and their comparisons not included)."""

    def executed(self) -> dict[EntryKey, set[str]]:
        """Functions called under each matched entry point in either version."""
        return {key: functions | self.old_entry_functions.get(key, set()) for key, functions in self.entry_functions.items()}

    @property
    def noise_keys(self) -> set[tuple[EntryKey, str]]:
        return set(self.unstable)

    def noisy_functions(self) -> list[str]:
        return sorted({function for _, function in self.unstable})


def run_directories(store: OutputStore, index: int) -> list[Path]:
    runs = sorted((p for p in store.traces(index).glob("run-*") if p.is_dir()), key=lambda p: int(p.name.split("-")[1]))
    if not runs or not trace_files(runs[0]):
        raise HistegError(f"version {index} has no traces in {store.traces(index)} (its tracing did not complete)")
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


def _end_workers(pool: ProcessPoolExecutor) -> None:
    """Pending pairs cancelled and the worker processes ended now, not once they finish the pair at hand:
    a pair of long paths can keep a worker busy for seconds, and a SIGTERM or Ctrl-C is to end histeg at once."""
    workers = list((pool._processes or {}).values())  # the executor ends its workers only by waiting for them
    pool.shutdown(wait=False, cancel_futures=True)
    for worker in workers:
        worker.terminate()
    deadline = time.monotonic() + 1.0
    for worker in workers:
        worker.join(max(deadline - time.monotonic(), 0.0))
        if worker.is_alive():
            worker.kill()
            worker.join()


class Comparer:
    """Compares matched entry points, in worker processes when there are enough of them to decode.

    Results are put back in the order of the pairs, so they are the same for any number of workers."""

    def __init__(self, jobs: int = 1, with_sections: bool = True) -> None:
        self.jobs = jobs
        self.with_sections = with_sections
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if kind is None:
            pool.shutdown(cancel_futures=True)
        else:  # an interrupt or an error: nobody waits for the results, so nobody waits for a busy worker either
            _end_workers(pool)

    def divergences(
        self, old: dict[EntryKey, EntryRef], new: dict[EntryKey, EntryRef], pairs: list[tuple[EntryKey, EntryKey]]
    ) -> list[Divergence]:
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
            work = [
                [
                    (str(old[pairs[k][0]].file.path), old[pairs[k][0]].index, str(new[pairs[k][1]].file.path), new[pairs[k][1]].index)
                    for k in group
                ]
                for group in groups
            ]
            for group, results in zip(groups, self._pool.map(_compare_in_worker, work, [self.with_sections] * len(work)), strict=True):
                found.update(zip(group, results, strict=True))
        else:
            for k in todo:
                found[k] = compare_entry_points(old[pairs[k][0]], new[pairs[k][1]], self.with_sections)
        return [Divergence(pairs[k][1], call) for k in range(len(pairs)) for call in found.get(k, ())]

    def unstable(self, runs: list[dict[EntryKey, EntryRef]], keys: set[EntryKey] | None = None) -> NoiseMap:
        """What differs between the first run of one version and each other run, under the entry
        points ``keys`` (None: all). An entry point some runs have and others lack is unstable whole."""
        found: NoiseMap = {}
        first = runs[0]
        for other in runs[1:]:
            matching = match_entry_points(first, other)
            pairs = [pair for pair in matching.pairs if keys is None or pair[1] in keys]
            for divergence in self.divergences(first, other, pairs):
                found.setdefault((divergence.entry, divergence.call.function), Unstable()).add(divergence.call)
            for key in (*matching.only_old, *matching.only_new):
                if keys is None or key in keys:
                    found.setdefault((key, key.root), Unstable()).add_all()
        return found


Confirm = Callable[
    [int, dict[str, set[str]], int, dict[str, set[str]], int, int, Purpose],
    tuple[list[dict[EntryKey, EntryRef]], list[dict[EntryKey, EntryRef]]],
]
"""Re-runs of the old version and of the new one (their indices, each with the labels to cover per command; then the
re-runs per version and the round), made for their comparison in the order ``histeg.runs.confirm.schedule`` gives, as
loaded runs: the old version's, the new one's. Last, what the batches are for (``Batch.purpose``)."""


def irreproducible(
    between: list[Divergence],
    cross: list[list[Divergence]],
    new_present: list[set[EntryKey]],
    old_present: list[set[EntryKey]],
    new_to_old: dict[EntryKey, EntryKey],
) -> NoiseMap:
    """Divergences between the versions' first runs that the versions' re-runs, made side by side,
    do not show again: what differed was the moment or the machine (a clock read to the minute, a
    file left behind), not the code. A change of code shows in every pair of re-runs. Entry points
    missing from a re-run give no evidence either way."""
    if not cross:
        return {}
    seen: list[dict[tuple[EntryKey, str], set[str]]] = []
    for divergences in cross:
        kinds: dict[tuple[EntryKey, str], set[str]] = {}
        for divergence in divergences:
            kinds.setdefault((divergence.entry, divergence.call.function), set()).update(divergence.call.kinds)
        seen.append(kinds)
    found: NoiseMap = {}
    for divergence in between:
        key = (divergence.entry, divergence.call.function)
        present = all(
            divergence.entry in new and new_to_old.get(divergence.entry) in old for new, old in zip(new_present, old_present, strict=False)
        )  # re-runs that completed, on each side
        if not present:
            continue
        shown = set(divergence.call.kinds)
        for kinds in seen:
            shown &= kinds.get(key, set())
        missing = set(divergence.call.kinds) - shown
        if missing:
            unstable = found.setdefault(key, Unstable())
            unstable.kinds |= missing
            unstable.natures |= natures(divergence.call.without(set(divergence.call.kinds) - missing))
    return found


def _wanted(keys: Iterable[EntryKey], run: dict[EntryKey, EntryRef]) -> dict[str, set[str]]:
    """Labels to re-run per command. Entry points no test owns (a test module's import-time code)
    run in any pytest session: one test of the run takes them along, instead of the whole suite."""
    wanted: dict[str, set[str]] = {}
    for key in keys:
        wanted.setdefault(key.command, set()).add(key.label)
    for command, labels in wanted.items():
        if labels == {""}:
            owned = sorted(key.label for key in run if key.command == command and key.label)
            labels.update(owned[:1])
    return wanted


def compare_with_predecessor(
    store: OutputStore,
    index: int,
    with_sections: bool = True,
    jobs: int = 1,
    confirm_runs: int = 0,
    confirm: Confirm | None = None,
    sample: int = CONFIRM_SAMPLE,
) -> VersionComparison:
    """Version ``index`` against the version it is compared with, with its matching hints."""
    against = store.version(index).comparing_against_index
    if against is None:
        raise HistegError(f"version {index} has no predecessor to compare with")
    return compare_versions(
        store,
        against,
        index,
        hints=True,
        with_sections=with_sections,
        jobs=jobs,
        confirm_runs=confirm_runs,
        confirm=confirm,
        sample=sample,
    )


@dataclass
class _Pair:
    """Two versions' loaded runs and how their entry points match."""

    old_runs: list[dict[EntryKey, EntryRef]]
    new_runs: list[dict[EntryKey, EntryRef]]
    manual: list[tuple[EntryKey, EntryKey]] | None
    renames: dict[str, str]

    def __post_init__(self) -> None:
        self.matching = match_entry_points(self.old_runs[0], self.new_runs[0], self.manual, self.renames)
        self.old_to_new = dict(self.matching.pairs)
        self.new_to_old = {new: old for old, new in self.matching.pairs}

    def changed_outcome(self) -> set[EntryKey]:
        """Matched entry points whose test outcome differs between the versions' first runs."""
        old, new = self.old_runs[0], self.new_runs[0]
        return {
            new_key
            for old_key, new_key in self.matching.pairs
            if outcomes_differ(old[old_key].file.definitions.outcomes, new[new_key].file.definitions.outcomes, new_key.label)
        }


def compare_versions(
    store: OutputStore,
    against: int,
    index: int,
    *,
    hints: bool,
    with_sections: bool = True,
    jobs: int = 1,
    confirm_runs: int = 0,
    confirm: Confirm | None = None,
    sample: int = CONFIRM_SAMPLE,
) -> VersionComparison:
    """Version ``index`` against version ``against``, any pair. ``hints``: the new version's matching hints
    (``traceMatching.json``, the renames of its ``syntaxChanges.json``) apply; they are about its own predecessor, so
    any other pair is matched by entry point keys alone. ``confirm`` re-runs entry points of both versions
    (``confirmed_runs`` by default) when ``confirm_runs`` > 0; the divergent entry points of run 1 are re-run on both,
    ``sample`` of them per (function, kind) at first (``histeg.compare.sampling``; 0: all)."""
    started = time.perf_counter()
    manual_path = store.file(index, TRACE_MATCHING)
    pair = _Pair(
        [load_run(d) for d in run_directories(store, against)],
        [load_run(d) for d in run_directories(store, index)],
        read_manual_matching(manual_path) if hints and manual_path.is_file() else None,
        read_renames(store.file(index, SYNTAX_CHANGES)) if hints else {},
    )
    unstable: NoiseMap = {}
    confirmation = Confirmation(confirm_runs)
    # a merge's pairs are not the ones its syntax changes describe: only a version and its predecessor use them
    explained = explanations(store.file(index, SYNTAX_CHANGES)) if hints else None
    changed_outcome = pair.changed_outcome()
    carried = _carried(pair, changed_outcome, explained) if explained is not None else {}
    with Comparer(jobs, with_sections) as comparer:
        between = comparer.divergences(pair.old_runs[0], pair.new_runs[0], pair.matching.pairs)
        if len(pair.new_runs) > 1:
            merge(unstable, comparer.unstable(pair.new_runs))
        if len(pair.old_runs) > 1:
            merge(unstable, comparer.unstable(pair.old_runs), pair.old_to_new)
        if confirm_runs > 0 and between:
            rerun: Confirm = confirm or (
                lambda old, old_wanted, new, new_wanted, runs, round, purpose: confirmed_runs(
                    store, old, old_wanted, new, new_wanted, runs, round, purpose
                )
            )
            started_confirming = time.perf_counter()

            def confirm_round(divergences: list[Divergence], runs: int, number: int, purpose: Purpose) -> tuple[int, int]:
                return _confirm(
                    comparer, pair, divergences, unstable, lambda old, new: rerun(against, old, index, new, runs, number, purpose)
                )

            confirmation.entry_points = len({divergence.entry for divergence in between})
            confirmation.complete, confirmation.sample = _confirm_sampled(between, unstable, carried, sample, confirm_runs, confirm_round)
            doubtful = _unexplained(between, unstable, explained, pair) if explained is not None else []
            if doubtful:  # every one of them: no change explains them, a sample of them would prove nothing of the others
                confirmation.unexplained = len({divergence.entry for divergence in doubtful})
                confirmation.unexplained_complete = confirm_round(doubtful, SECOND_ROUND_FACTOR * confirm_runs, 2, "all")
            confirmation.seconds = time.perf_counter() - started_confirming  # re-running and comparing the re-runs
    result = VersionComparison(
        index,
        against,
        matched=len(pair.matching.pairs),
        only_old=pair.matching.only_old,
        only_new=pair.matching.only_new,
        unstable=noise_of(unstable, carried),
        confirmation=confirmation,
    )
    result.carried = carried
    _set_noise_apart(result, between, changed_outcome)
    _record_functions(result, pair)
    result.compare_seconds = time.perf_counter() - started - confirmation.seconds
    return result


def _confirm_sampled(
    between: list[Divergence],
    unstable: NoiseMap,
    carried: Mapping[EntryKey, list[str]],
    per_group: int,
    runs: int,
    confirm_round: Callable[[list[Divergence], int, int, Purpose], tuple[int, int]],
) -> tuple[tuple[int, int], ConfirmationSample | None]:
    """Round 1: the sample of each (function, kind), then every entry point of the groups whose sample showed
    instability (``histeg.compare.sampling``). A sample of more than half the divergent entry points saves less than a
    widening would cost (another schedule of re-runs), so then every one is re-run in one batch. The complete re-runs
    per side (the fewer of the two batches) and the report."""
    by_group = groups((divergence.entry, divergence.call.function, divergence.call.kinds) for divergence in between)
    chosen = choose(by_group, per_group)
    diverging = {divergence.entry for divergence in between}
    if per_group <= 0 or 2 * len(chosen) > len(diverging):  # a widening would cost a schedule of its own: re-run all at once
        complete = confirm_round(between, runs, 1, "all")
        return complete, None if per_group <= 0 else _sample(per_group, len(by_group), len(diverging))
    report = _sample(per_group, len(by_group), len(chosen))
    complete = confirm_round([divergence for divergence in between if divergence.entry in chosen], runs, 1, "sample")
    unstable_groups = unsettled(by_group, chosen, noise_of(unstable, carried))  # what is not noise widens nothing
    wider = set().union(*(by_group[group] for group in unstable_groups)) - chosen if unstable_groups else set()
    if wider:
        report.widened_entry_points = len(wider)
        report.widened_groups = sorted(f"{function} {kind}" for function, kind in unstable_groups)
        more = confirm_round([divergence for divergence in between if divergence.entry in wider], runs, 1, "widened")
        complete = (min(complete[0], more[0]), min(complete[1], more[1]))
    return complete, report


def _sample(per_group: int, groups: int, sampled: int) -> ConfirmationSample:
    return ConfirmationSample(per_group=per_group, groups=groups, sampled_entry_points=sampled, widened_entry_points=0, widened_groups=[])


def _unexplained(between: list[Divergence], unstable: NoiseMap, explained: Explanations, pair: _Pair) -> list[Divergence]:
    """The divergences some kind of which is not noise yet and that no changed code explains. What a command's test
    modules ran while they were collected (their import-time code: entry points no test owns) ran before each of its
    tests, and its results reach them: a parametrize list built by a changed parser hands every case another value.
    A test whose outcome changed after changed code ran before it in its process (``_carried``) still gets the second
    round: a coin flip that failed it once and landed alike on every first re-run shows there, and is noise."""
    unowned = [(key, _functions_under(ref)) for run in (pair.old_runs[0], pair.new_runs[0]) for key, ref in run.items() if not key.label]
    collected = {command: explained.explain(functions) for command, functions in run_at_collection(unowned).items()}
    left = []
    for divergence in between:
        found = unstable.get((divergence.entry, divergence.call.function))
        if found is not None and not set(divergence.call.kinds) - found.kinds:
            continue
        entry = divergence.entry
        if collected.get(entry.command, False):
            continue
        executed = _functions_under(pair.new_runs[0][entry]) | _functions_under(pair.old_runs[0][pair.new_to_old[entry]])
        if not explained.explain(executed):
            left.append(divergence)
    return left


def noise_of(unstable: NoiseMap, carried: Mapping[EntryKey, list[str]]) -> NoiseMap:
    """``unstable`` as noise: under an entry point whose outcome changed after changed code ran in its process
    (``_carried``), only what differed between runs of one version is; what its re-runs alone did not show again may be
    that code's doing."""
    noise: NoiseMap = {}
    for key, found in unstable.items():
        if key[0] not in carried:
            noise[key] = found
        elif found.kinds & found.between_runs:
            noise[key] = Unstable(found.kinds & found.between_runs, set(found.natures), set(found.between_runs))
    return noise


def _carried(pair: _Pair, changed_outcome: set[EntryKey], explained: Explanations) -> dict[EntryKey, list[str]]:
    """Per entry point whose outcome changed, the changed functions the entry points before it in its process (its trace
    file, in the order they started) ran in either version's first run; only those after which changed code can have
    left state: a changed function ran before it, or a class- or module-level value changed and anything ran before it."""
    if not changed_outcome:
        return {}
    new_before = ran_before(pair.new_runs[0], changed_outcome, explained.functions)
    old_before = ran_before(pair.old_runs[0], {pair.new_to_old[key] for key in changed_outcome}, explained.functions)
    found: dict[EntryKey, list[str]] = {}
    for key in changed_outcome:
        functions, anything = new_before.get(key, (set(), False))
        old_functions, old_anything = old_before.get(pair.new_to_old[key], (set(), False))
        functions, anything = functions | old_functions, anything or old_anything
        if functions or (explained.values and anything):
            found[key] = sorted(functions)
    return found


def ran_before(run: dict[EntryKey, EntryRef], wanted: set[EntryKey], changed: AbstractSet[str]) -> dict[EntryKey, tuple[set[str], bool]]:
    """Per entry point of ``wanted``: the functions of ``changed`` that the entry points before it in its trace file ran,
    and whether any entry point ran before it there."""
    by_file: dict[int, list[tuple[int, EntryKey, EntryRef]]] = {}
    for key, ref in run.items():
        by_file.setdefault(id(ref.file), []).append((ref.index, key, ref))
    found: dict[EntryKey, tuple[set[str], bool]] = {}
    for entries in by_file.values():
        if not any(key in wanted for _, key, _ in entries):
            continue
        ran: set[str] = set()
        for position, (_, key, ref) in enumerate(sorted(entries, key=lambda item: item[0])):
            if key in wanted:
                found[key] = (set(ran), position > 0)
            ran |= _functions_under(ref) & changed
    return found


def run_at_collection(executed: Iterable[tuple[EntryKey, AbstractSet[str]]]) -> dict[str, set[str]]:
    """Per command, the functions its entry points that no test owns (its test modules' import-time code) ran: they ran
    before each of its tests, and what they made (a parametrize list, a module's table) reaches every one."""
    found: dict[str, set[str]] = {}
    for key, functions in executed:
        if not key.label:
            found.setdefault(key.command, set()).update(functions)
    return found


def _confirm(
    comparer: Comparer,
    pair: _Pair,
    between: list[Divergence],
    unstable: NoiseMap,
    rerun: Callable[[dict[str, set[str]], dict[str, set[str]]], tuple[list[dict[EntryKey, EntryRef]], list[dict[EntryKey, EntryRef]]]],
) -> tuple[int, int]:
    """The entry points of ``between`` re-run on both versions: what differs between re-runs of one version, or does not
    show again between the versions' re-runs, joins ``unstable``. Re-runs of one round are compared with each other
    alone: another round ran another selection, after which a test may find other state. The complete re-runs of each side."""
    suspects = {divergence.entry for divergence in between}
    old_suspects = {pair.new_to_old[key] for key in suspects}
    old_again, new_again = rerun(_wanted(old_suspects, pair.old_runs[0]), _wanted(suspects, pair.new_runs[0]))
    if len(new_again) > 1:
        merge(unstable, comparer.unstable(new_again, suspects))
    if len(old_again) > 1:
        merge(unstable, comparer.unstable(old_again, old_suspects), pair.old_to_new)
    cross = [
        comparer.divergences(
            old, new, [match for match in match_entry_points(old, new, pair.manual, pair.renames).pairs if match[1] in suspects]
        )
        for old, new in zip(old_again, new_again, strict=False)
    ]  # as many pairs as both sides completed
    merge(unstable, irreproducible(between, cross, [set(new) for new in new_again], [set(old) for old in old_again], pair.new_to_old))
    return len(old_again), len(new_again)


def _set_noise_apart(result: VersionComparison, between: list[Divergence], changed_outcome: set[EntryKey]) -> None:
    """Each divergence between the versions without the kinds that are noise for its (entry point, function), classified."""
    for divergence in between:
        found = result.unstable.get((divergence.entry, divergence.call.function))
        if found:
            result.noise.append(divergence)
            divergence = Divergence(divergence.entry, divergence.call.without(found.kinds))
            if not divergence.call.kinds:
                continue
        divergence.classes = classify(divergence.call, divergence.entry in changed_outcome)
        result.divergences.append(divergence)


def _record_functions(result: VersionComparison, pair: _Pair) -> None:
    """The functions under each entry point, in both versions: the traces a target appears in."""
    for old_key, new_key in pair.matching.pairs:
        result.entry_functions[new_key] = _functions_under(pair.new_runs[0][new_key])
        result.old_entry_functions[new_key] = _functions_under(pair.old_runs[0][old_key])
    for new_key in pair.matching.only_new:
        result.new_entry_functions[new_key] = _functions_under(pair.new_runs[0][new_key])


def _functions_under(ref: EntryRef) -> set[str]:
    functions = ref.file.definitions.functions
    return {functions[f].ident for f in ref.file.entries[ref.index].functions}


def confirmed_runs(
    store: OutputStore,
    old: int,
    old_wanted: dict[str, set[str]],
    new: int,
    new_wanted: dict[str, set[str]],
    runs: int,
    round: int = 1,
    purpose: Purpose = "all",
) -> tuple[list[dict[EntryKey, EntryRef]], list[dict[EntryKey, EntryRef]]]:
    """Both versions' complete re-runs covering what each wants for their comparison, made now where missing, as loaded
    runs: the old version's, the new one's."""
    from histeg.runs.confirm import confirm_pair

    found = confirm_pair(store, old, old_wanted, new, new_wanted, runs, round, purpose)
    return (
        _loaded(store, old, found[0], store.version(new).identifier, round),
        _loaded(store, new, found[1], store.version(old).identifier, round),
    )


def _loaded(store: OutputStore, index: int, confirmations: Confirmations, paired_with: str, round: int) -> list[dict[EntryKey, EntryRef]]:
    """Per re-run number, the entry points of the version's re-runs; an entry point's newest batch wins."""
    from histeg.runs.confirm import usable_traces

    loaded = []
    for batches in usable_traces(store, index, confirmations, paired_with, round):
        merged: dict[EntryKey, EntryRef] = {}
        for files in batches:
            for key, ref in entry_points(TraceFile(path) for path in files).items():
                merged.setdefault(key, ref)
        loaded.append(merged)
    return loaded


MAX_TREE_DEPTH = 100
"""Deeper divergences (runaway recursion) are listed flat under the node at this depth;
their ``callChain`` still tells where they were. JSON writers refuse deeper nesting."""


def _tree(divergences: list[Divergence]) -> list[ListedDivergence]:
    """Divergences nested under their nearest divergent ancestor, per entry point."""
    by_entry: dict[EntryKey, list[Divergence]] = {}
    for divergence in divergences:
        by_entry.setdefault(divergence.entry, []).append(divergence)
    roots: list[ListedDivergence] = []
    for entry in sorted(by_entry):
        places: dict[tuple[int, ...], tuple[list[NestedDivergence], int]] = {}  # path -> (where its descendants go, depth)
        for item in sorted(by_entry[entry], key=lambda d: d.call.path):
            path = item.call.path
            parent = next((places[path[:cut]] for cut in range(len(path) - 1, -1, -1) if path[:cut] in places), None)
            if parent is None:
                root = item.record()
                roots.append(root)
                places[path] = (root.children, 0)
                continue
            container, depth = parent[0], parent[1] + 1
            node = item.nested()
            container.append(node)
            places[path] = (node.children if depth < MAX_TREE_DEPTH else container, depth)
    return roots


def _noise(comparison: VersionComparison) -> list[Noise]:
    """Every (entry point, function) found unstable between runs of one version, and how."""
    return [
        Noise(entry_point=entry, function=function, kinds=sorted(found.kinds), natures=sorted(found.natures))  # type: ignore[arg-type]  # kinds and natures named by compare.noise, typed str there
        for (entry, function), found in sorted(comparison.unstable.items(), key=lambda item: item[0])
    ]


def write_divergences(store: OutputStore, comparison: VersionComparison, flat: bool) -> Path:
    version = store.version(comparison.index)
    divergences = comparison.divergences
    summary = DivergenceSummary(
        divergences=len(divergences),
        divergent_functions=len({d.call.function for d in divergences}),
        noise=len(comparison.noise),
        noisy_functions=comparison.noisy_functions(),
    )
    document = TraceDivergences(
        identifier=version.identifier,
        comparing_against_version=version.comparing_against_version,  # type: ignore[arg-type]  # compared: it has one
        layout="flat" if flat else "tree",
        entry_points=EntryPoints(matched=comparison.matched, only_in_old=comparison.only_old, only_in_new=comparison.only_new),
        divergences=[d.record() for d in divergences] if flat else _tree(divergences),
        noise=_noise(comparison),
        confirmation=comparison.confirmation.record(),
        summary=summary,
    )
    path = store.file(comparison.index, TRACE_DIVERGENCES)
    document.write(path)
    return path
