"""Targeted re-runs: the entry points that diverged between two versions, run again on each version.

A divergence between versions is noise when the same entry point also diverges between runs of
one version. Re-running the whole suite to find out costs a full traced run per version; re-running
only the tests that diverged costs a few seconds. A version's re-runs come in batches: each batch is
``runs`` re-runs of a selection (per pytest command its node ids, other commands whole), written to
``OUT/<index>/traces/confirm-<b>/run-<k>/`` and listed in ``OUT/<index>/confirmations.json``. Each
batch is made for one comparison (``pairedWith``: the other version), together with the other
version's batch and in an order (``schedule``) that no clock can fool: a divergence of the first runs
that the re-runs do not show in every pair is the moment's, not the code's, and so is one on which
the re-runs of one version disagree. Re-runs are never compared with the full run: a test run alone
may see other state than after the tests before it, and that is not noise.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from histeg.envs.runtime import runtime_of
from histeg.errors import HistegError
from histeg.records.runs import Batch, Confirmations, Purpose, Rerun, Runs, TraceCommand
from histeg.runs.runner import CONFIRMATIONS, RUN_DIR, RUNS, Launch, version_settings
from histeg.store import OutputStore, force_rmtree
from histeg.tracing.session import COLLECT_ALL

DEFAULT_CONFIRM_RUNS = 2
ZYGOTE_LOG = "zygote.log"
"""In the folder of the batch that started it: what the process pytest re-runs are forked from said, when it failed."""
RERUN_PYTEST_OPTIONS = ("--tb=no",)
"""What a re-run's pytest is given before the version's own options: no failure reports. Re-runs are read for their
traces and outcomes, never for their output, and writing a failing test's report (its traceback, with the source and
the assertion's operands) is most of a re-run's time when a change fails many tests: humanize's time tests, 168 of them
failing, take 8.7-11.6 s CPU with reports and 2.6 s without. Only pytest's reporting reads the option, after a test's
phases have run; outcomes stay as they are. A user's own ``--tb`` comes later and wins."""

Selection = dict[str, frozenset[str] | None]
"""Per command label: the pytest node ids to run, or None for the whole command."""


def _covers(batch: Batch, command: str, label: str) -> bool:
    if command not in batch.selection:
        return False
    chosen = batch.selection[command]
    return chosen is None or label == "" or label in chosen


def paired(confirmations: Confirmations, paired_with: str, round: int = 1) -> list[Batch]:
    return [batch for batch in confirmations.batches if batch.paired_with == paired_with and batch.round == round]


def missing(confirmations: Confirmations, wanted: Mapping[str, set[str]], paired_with: str, round: int = 1) -> dict[str, set[str]]:
    """Per command, the labels of ``wanted`` no batch made for this comparison, in this round, has run."""
    result: dict[str, set[str]] = {}
    batches = paired(confirmations, paired_with, round)
    for command, labels in wanted.items():
        left = {label for label in labels if not any(_covers(batch, command, label) for batch in batches)}
        if left:
            result[command] = left
    return result


def load_confirmations(store: OutputStore, index: int) -> Confirmations:
    """The version's re-runs made so far; none when they were made for other runs or by another histeg version."""
    path = store.file(index, CONFIRMATIONS)
    identifier = Runs.read(store.file(index, RUNS)).identifier
    if not path.is_file():
        return Confirmations(identifier=identifier, batches=[])
    try:
        confirmations = Confirmations.read(path)
    except HistegError:  # written by another histeg version, or damaged: re-run again
        return Confirmations(identifier=identifier, batches=[])
    return confirmations if confirmations.identifier == identifier else Confirmations(identifier=identifier, batches=[])


@dataclass
class _Batch:
    """One version's batch of re-runs for a comparison: prepared, its runs made by ``confirm_pair`` in its order."""

    store: OutputStore
    index: int
    confirmations: Confirmations
    paired_with: str
    round: int
    purpose: Purpose
    selection: Selection
    commands: dict[str, TraceCommand]
    launch: Launch
    directory: Path
    select_files: dict[str, Path]
    records: list[Rerun] = field(default_factory=list)

    def rerun(self, repetition: int) -> None:
        run_dir = self.directory / f"run-{repetition}"
        run_dir.mkdir()
        self.records.extend(
            self.launch.run(
                Rerun, self.commands[label], repetition, run_dir, self.select_files.get(label), f"{RUN_DIR}-confirm-{repetition}"
            )
            for label in sorted(self.selection)
        )

    def write(self) -> Confirmations:
        relative = self.directory.relative_to(self.store.version_dir(self.index)).as_posix()
        chosen = {label: None if ids is None else sorted(ids) for label, ids in sorted(self.selection.items())}
        runs = sorted(self.records, key=lambda run: (run.repetition, run.command.label))
        self.confirmations.batches.append(
            Batch(directory=relative, paired_with=self.paired_with, selection=chosen, round=self.round, purpose=self.purpose, runs=runs)
        )
        self.confirmations.write(self.store.file(self.index, CONFIRMATIONS))
        return self.confirmations


def _prepare(
    store: OutputStore, index: int, wanted: Mapping[str, set[str]], paired_with: str, round: int, purpose: Purpose, stop: threading.Event
) -> _Batch:
    """A new batch of ``wanted`` on version ``index``, with the options, interpreter and timeout of its first runs."""
    confirmations = load_confirmations(store, index)
    recorded = Runs.read(store.file(index, RUNS))
    commands = {run.command.label: rerun_command(run.command) for run in recorded.runs}
    selection: Selection = {}
    for label, ids in wanted.items():
        command = commands.get(label)
        if command is None:
            raise HistegError(f"version {index} has no trace command {label!r} to re-run")
        named = frozenset(ids - {""})
        selection[label] = named if command.kind == "pytest" and named else None
    _, settings = version_settings(store, index)
    runtime = runtime_of(store.version_dir(index))
    number = 1 + max((int(b.directory.rsplit("-", 1)[1]) for b in confirmations.batches), default=0)
    directory = store.traces(index) / f"confirm-{number}"
    if directory.exists():  # left by re-runs that were interrupted: confirmations.json never named it
        force_rmtree(directory)
    directory.mkdir(parents=True)
    launch = Launch(
        store,
        index,
        settings,
        runtime,
        recorded.python,
        recorded.trace_options,
        recorded.timeout_seconds,
        stop=stop,
        zygote_log=directory / ZYGOTE_LOG,
    )
    select_files: dict[str, Path] = {}
    for label, chosen in selection.items():
        if chosen is not None:
            select_files[label] = directory / f"{label}.select"
            every_file = [COLLECT_ALL] if "" in wanted[label] else []  # a test module's import-time code: run where it is collected
            select_files[label].write_text("".join(f"{line}\n" for line in [*every_file, *sorted(chosen)]), encoding="utf-8")
    return _Batch(store, index, confirmations, paired_with, round, purpose, selection, commands, launch, directory, select_files)


def rerun_command(command: TraceCommand) -> TraceCommand:
    """A version's trace command as its re-runs run it (``RERUN_PYTEST_OPTIONS`` for a pytest command)."""
    if command.kind != "pytest":
        return command
    return msgspec.structs.replace(command, args=(*RERUN_PYTEST_OPTIONS, *command.args))


def schedule(runs: int) -> list[list[tuple[str, int]]]:
    """The order of a comparison's re-runs, in stages: a stage starts when the one before has ended, and the re-runs of a
    stage run side by side. The old version's re-run 1 comes first and alone, then every re-run of the new version, then
    the old version's others. Why: a value read from a clock, at any resolution, can only stay or move on from one
    stage to the next. If the old version's first and later re-runs read the same value, every new re-run, made between
    them, read it too, and the pairs of re-runs show no divergence there; if they read different values, the old
    version differs from itself there. Either way the clock's divergence is noise, never a change. Two versions re-run at
    the same time could read two values on either side of a tick (the old version 25 s twice, the new one 24 s twice),
    which nothing would tell from a change of code. One re-run per version cannot be so placed: it takes two."""
    if runs < 1:
        return []
    stages = [[("old", 1)], [("new", k) for k in range(1, runs + 1)], [("old", k) for k in range(2, runs + 1)]]
    return [stage for stage in stages if stage]


def confirm_pair(
    store: OutputStore,
    old: int,
    old_wanted: Mapping[str, set[str]],
    new: int,
    new_wanted: Mapping[str, set[str]],
    runs: int,
    round: int = 1,
    purpose: Purpose = "all",
) -> tuple[Confirmations, Confirmations]:
    """Re-run, ``runs`` times and in the order of ``schedule``, the entry points ``old_wanted`` on version ``old`` and
    ``new_wanted`` on version ``new`` (per command label: node ids, "" for the entry points no test owns) for their
    comparison. Batches made for it before are reused when they cover both; when either side lacks some, both sides are
    re-run in full, so that every entry point's re-runs on the two sides were made in one schedule. ``round`` 2 are the
    further re-runs of divergences that round 1 did not show to be noise and that no changed code explains. ``purpose``:
    what the batches are for, as ``Batch.purpose`` says."""
    old_identifier, new_identifier = store.version(old).identifier, store.version(new).identifier
    found = load_confirmations(store, old), load_confirmations(store, new)
    if runs < 1 or not (missing(found[0], old_wanted, new_identifier, round) or missing(found[1], new_wanted, old_identifier, round)):
        return found
    stop = threading.Event()
    sides = {
        "old": _prepare(store, old, old_wanted, new_identifier, round, purpose, stop),
        "new": _prepare(store, new, new_wanted, old_identifier, round, purpose, stop),
    }
    # the re-runs are independent processes in copies of their own: a stage's take the time of one on as many cores
    with ThreadPoolExecutor(max_workers=max(1, min(runs, len(os.sched_getaffinity(0))))) as pool:
        for stage in schedule(runs):
            try:
                list(pool.map(lambda item: sides[item[0]].rerun(item[1]), stage))
            except BaseException:  # only this thread sees a signal or a failed re-run: the others stop their groups and give up
                stop.set()
                raise
    return sides["old"].write(), sides["new"].write()


def usable_traces(store: OutputStore, index: int, confirmations: Confirmations, paired_with: str, round: int = 1) -> list[list[list[Path]]]:
    """Per re-run number, per batch, newest batch first, the trace files of complete re-runs (a re-run that
    broke, timed out or was cut short confirms nothing; failed tests are tolerated as in any run). Batches
    stay apart: each counts its entry points' occurrences on its own. The newest batch that has an entry
    point is the one to read: it was made in one schedule with the other version's newest."""
    per_run: dict[int, list[list[Path]]] = {}
    for batch in reversed(paired(confirmations, paired_with, round)):
        files: dict[int, list[Path]] = {}
        for run in batch.runs:
            if run.complete:
                files.setdefault(run.repetition, []).extend(store.version_dir(index) / path for path in run.traces)
        for repetition, paths in files.items():
            per_run.setdefault(repetition, []).append(paths)
    return [per_run[k] for k in sorted(per_run)]
