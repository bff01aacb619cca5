"""Targeted re-runs: the entry points that diverged between two versions, run again on each version.

A divergence between versions is noise when the same entry point also diverges between runs of
one version. Re-running the whole suite to find out costs a full traced run per version; re-running
only the tests that diverged costs a few seconds. A version's re-runs come in batches: each batch is
``runs`` re-runs of a selection (per pytest command its node ids, other commands whole), written to
``OUT/<index>/traces/confirm-<b>/run-<k>/`` and listed in ``OUT/<index>/confirmations.json``. Both
comparisons a version takes part in (as the new and as the old side) share them: Each batch is made for one comparison (``pairedWith``: the other version), at the same time as the
other version's batch, so that what the two show side by side can be compared: a divergence of the
first runs that re-runs made side by side do not show again came from the moment, not the code.
Re-runs are never compared with the full run: a test run alone may see other state than after the
tests before it, and that is not noise.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from histeg.envs.runtime import runtime_of
from histeg.errors import HistegError
from histeg.records.runs import Batch, Confirmations, Rerun, Runs
from histeg.runs.runner import CONFIRMATIONS, RUN_DIR, RUNS, Launch, version_settings
from histeg.store import OutputStore, force_rmtree

DEFAULT_CONFIRM_RUNS = 2

Selection = dict[str, frozenset[str] | None]
"""Per command label: the pytest node ids to run, or None for the whole command."""


def _covers(batch: Batch, command: str, label: str) -> bool:
    if command not in batch.selection:
        return False
    chosen = batch.selection[command]
    return chosen is None or label == "" or label in chosen


def paired(confirmations: Confirmations, paired_with: str) -> list[Batch]:
    return [batch for batch in confirmations.batches if batch.paired_with == paired_with]


def missing(confirmations: Confirmations, wanted: Mapping[str, set[str]], paired_with: str) -> dict[str, set[str]]:
    """Per command, the labels of ``wanted`` no batch made for this comparison has run."""
    result: dict[str, set[str]] = {}
    batches = paired(confirmations, paired_with)
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


def confirm(store: OutputStore, index: int, wanted: Mapping[str, set[str]], runs: int, paired_with: str) -> Confirmations:
    """Re-run on version ``index`` whatever of ``wanted`` (per command label: node ids, "" for the
    entry points no test owns) has not been re-run yet for its comparison with ``paired_with``,
    ``runs`` times, with the options, interpreter and timeout of its first runs."""
    confirmations = load_confirmations(store, index)
    left = missing(confirmations, wanted, paired_with)
    if not left or runs < 1:
        return confirmations
    recorded = Runs.read(store.file(index, RUNS))
    commands = {run.command.label: run.command for run in recorded.runs}
    selection: Selection = {}
    for label, ids in left.items():
        command = commands.get(label)
        if command is None:
            raise HistegError(f"version {index} has no trace command {label!r} to re-run")
        named = frozenset(ids - {""})
        selection[label] = named if command.kind == "pytest" and named else None
    _, settings = version_settings(store, index)
    runtime = runtime_of(store.version_dir(index))
    stop = threading.Event()
    launch = Launch(store, index, settings, runtime, recorded.python, recorded.trace_options, recorded.timeout_seconds, stop=stop)
    number = 1 + max((int(b.directory.rsplit("-", 1)[1]) for b in confirmations.batches), default=0)
    directory = store.traces(index) / f"confirm-{number}"
    if directory.exists():  # left by re-runs that were interrupted: confirmations.json never named it
        force_rmtree(directory)
    directory.mkdir(parents=True)
    select_files: dict[str, Path] = {}
    for label, ids in selection.items():
        if ids is not None:
            select_files[label] = directory / f"{label}.select"
            select_files[label].write_text("".join(f"{nodeid}\n" for nodeid in sorted(ids)), encoding="utf-8")

    def rerun(repetition: int) -> list[Rerun]:
        run_dir = directory / f"run-{repetition}"
        run_dir.mkdir()
        return [launch.run(Rerun, commands[label], repetition, run_dir, select_files.get(label), f"{RUN_DIR}-confirm-{repetition}")
                for label in sorted(selection)]

    # the re-runs are independent processes in copies of their own: on two cores they take the time of one
    with ThreadPoolExecutor(max_workers=min(runs, len(os.sched_getaffinity(0)))) as pool:
        try:
            records = [record for batch in pool.map(rerun, range(1, runs + 1)) for record in batch]
        except BaseException:  # only this thread sees a signal or a failed re-run: the others stop their groups and give up
            stop.set()
            raise
    relative = directory.relative_to(store.version_dir(index)).as_posix()
    chosen = {label: None if ids is None else sorted(ids) for label, ids in sorted(selection.items())}
    confirmations.batches.append(Batch(directory=relative, paired_with=paired_with, selection=chosen, runs=records))
    confirmations.write(store.file(index, CONFIRMATIONS))
    return confirmations


def usable_traces(store: OutputStore, index: int, confirmations: Confirmations, paired_with: str) -> list[list[list[Path]]]:
    """Per re-run number, per batch, the trace files of complete re-runs (a re-run that broke, timed
    out or was cut short confirms nothing; failed tests are tolerated as in any run). Batches stay
    apart: each counts its entry points' occurrences on its own."""
    per_run: dict[int, list[list[Path]]] = {}
    for batch in paired(confirmations, paired_with):
        files: dict[int, list[Path]] = {}
        for run in batch.runs:
            if run.complete:
                files.setdefault(run.repetition, []).extend(store.version_dir(index) / path for path in run.traces)
        for repetition, paths in files.items():
            per_run.setdefault(repetition, []).append(paths)
    return [per_run[k] for k in sorted(per_run)]
