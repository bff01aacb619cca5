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
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from histeg.errors import HistegError
from histeg.runs.commands import TraceCommand
from histeg.runs.outcome import NOT_COMPLETE
from histeg.runs.runner import CONFIRMATIONS, RUN_DIR, RUNS, Launch, RunRecord, TraceOptions, version_settings
from histeg.envs.runtime import runtime_of
from histeg.store import OutputStore, read_json, write_json

SCHEMA_VERSION = 2
DEFAULT_CONFIRM_RUNS = 2

Selection = dict[str, frozenset[str] | None]
"""Per command label: the pytest node ids to run, or None for the whole command."""


@dataclass
class Batch:
    directory: str
    """Relative to the version directory."""
    paired_with: str
    """The identifier of the version this batch was made side by side with."""
    selection: Selection
    runs: list[dict[str, Any]]
    """``RunRecord.to_json()`` of each re-run."""

    def covers(self, command: str, label: str) -> bool:
        if command not in self.selection:
            return False
        chosen = self.selection[command]
        return chosen is None or label == "" or label in chosen

    def to_json(self) -> dict[str, Any]:
        return {"directory": self.directory, "pairedWith": self.paired_with,
                "selection": {command: None if ids is None else sorted(ids) for command, ids in sorted(self.selection.items())},
                "runs": self.runs}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Batch:
        selection = {command: None if ids is None else frozenset(ids) for command, ids in data["selection"].items()}
        return cls(data["directory"], data["pairedWith"], selection, list(data["runs"]))


@dataclass
class Confirmations:
    """The re-runs of one version made so far."""

    identifier: str
    batches: list[Batch] = field(default_factory=list)

    def paired(self, paired_with: str) -> list[Batch]:
        return [batch for batch in self.batches if batch.paired_with == paired_with]

    def missing(self, wanted: Mapping[str, set[str]], paired_with: str) -> dict[str, set[str]]:
        """Per command, the labels of ``wanted`` no batch made for this comparison has run."""
        result: dict[str, set[str]] = {}
        batches = self.paired(paired_with)
        for command, labels in wanted.items():
            left = {label for label in labels if not any(batch.covers(command, label) for batch in batches)}
            if left:
                result[command] = left
        return result

    def to_json(self) -> dict[str, Any]:
        return {"schemaVersion": SCHEMA_VERSION, "identifier": self.identifier, "batches": [b.to_json() for b in self.batches]}


def load_confirmations(store: OutputStore, index: int) -> Confirmations:
    path = store.file(index, CONFIRMATIONS)
    identifier = read_json(store.file(index, RUNS))["identifier"]
    if not path.is_file():
        return Confirmations(identifier)
    data = read_json(path)
    if data.get("schemaVersion") != SCHEMA_VERSION or data.get("identifier") != identifier:
        return Confirmations(identifier)
    return Confirmations(identifier, [Batch.from_json(item) for item in data["batches"]])


def confirm(store: OutputStore, index: int, wanted: Mapping[str, set[str]], runs: int, paired_with: str) -> Confirmations:
    """Re-run on version ``index`` whatever of ``wanted`` (per command label: node ids, "" for the
    entry points no test owns) has not been re-run yet for its comparison with ``paired_with``,
    ``runs`` times, with the options, interpreter and timeout of its first runs."""
    confirmations = load_confirmations(store, index)
    missing = confirmations.missing(wanted, paired_with)
    if not missing or runs < 1:
        return confirmations
    recorded = read_json(store.file(index, RUNS))
    commands = {run["command"]["label"]: TraceCommand.from_json(run["command"]) for run in recorded["runs"]}
    selection: Selection = {}
    for label, ids in missing.items():
        command = commands.get(label)
        if command is None:
            raise HistegError(f"version {index} has no trace command {label!r} to re-run")
        named = frozenset(ids - {""})
        selection[label] = named if command.kind == "pytest" and named else None
    _, settings = version_settings(store, index)
    runtime = runtime_of(store.version_dir(index))
    launch = Launch(store, index, settings, runtime, recorded["python"], TraceOptions.from_json(recorded["traceOptions"]),
                    float(recorded["timeoutSeconds"]))
    number = 1 + max((int(b.directory.rsplit("-", 1)[1]) for b in confirmations.batches), default=0)
    directory = store.traces(index) / f"confirm-{number}"
    directory.mkdir(parents=True, exist_ok=True)
    select_files: dict[str, Path] = {}
    for label, ids in selection.items():
        if ids is not None:
            select_files[label] = directory / f"{label}.select"
            select_files[label].write_text("".join(f"{nodeid}\n" for nodeid in sorted(ids)), encoding="utf-8")

    def rerun(repetition: int) -> list[RunRecord]:
        run_dir = directory / f"run-{repetition}"
        run_dir.mkdir(exist_ok=True)
        return [launch.run(commands[label], repetition, run_dir, select_files.get(label), f"{RUN_DIR}-confirm-{repetition}")
                for label in sorted(selection)]

    # the re-runs are independent processes in copies of their own: on two cores they take the time of one
    with ThreadPoolExecutor(max_workers=min(runs, len(os.sched_getaffinity(0)))) as pool:
        records = [record for batch in pool.map(rerun, range(1, runs + 1)) for record in batch]
    relative = directory.relative_to(store.version_dir(index)).as_posix()
    confirmations.batches.append(Batch(relative, paired_with, selection, [record.to_json() for record in records]))
    write_json(store.file(index, CONFIRMATIONS), confirmations.to_json())
    return confirmations


def usable_traces(store: OutputStore, index: int, confirmations: Confirmations, paired_with: str) -> list[list[list[Path]]]:
    """Per re-run number, per batch, the trace files of complete re-runs (a re-run that broke, timed
    out or was cut short confirms nothing; failed tests are tolerated as in any run). Batches stay
    apart: each counts its entry points' occurrences on its own."""
    per_run: dict[int, list[list[Path]]] = {}
    for batch in confirmations.paired(paired_with):
        files: dict[int, list[Path]] = {}
        for run in batch.runs:
            if run["outcome"] not in NOT_COMPLETE:
                files.setdefault(run["repetition"], []).extend(store.version_dir(index) / path for path in run["traces"])
        for repetition, paths in files.items():
            per_run.setdefault(repetition, []).append(paths)
    return [per_run[k] for k in sorted(per_run)]
