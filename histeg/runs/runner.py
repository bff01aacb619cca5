"""Pipeline entry: run a version's trace commands, ``repeat`` times, and record every run.

Repetition ``k`` writes its traces, logs and per-command configs into
``OUT/<index>/traces/run-<k>/``; ``OUT/<index>/runs.json`` lists each run.
Earlier traces of the version are removed first so that runs of different
invocations never mix. The snapshot's source directories come right after
the tracer's hook on ``PYTHONPATH``: the version is imported from its
snapshot even when another copy of the project is installed.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from histeg.config import VersionSettings
from histeg.errors import HistegError
from histeg.runs.commands import TraceCommand, pytest_command, unique_labels
from histeg.runs.outcome import Outcome, judge
from histeg.runs.process import DEFAULT_GRACE_SECONDS, run_process
from histeg.store import VERSION, OutputStore, read_json, write_json
from histeg.tracing.activation import TraceConfig, traced_environment

RUNS = "runs.json"
TRACE_CONFIG = "traceConfig.json"
TRACE_SUFFIX = ".htrace"
DEFAULT_TIMEOUT_SECONDS = 600.0
SCHEMA_VERSION = 1


@dataclass
class RunRecord:
    repetition: int
    command: TraceCommand
    argv: list[str]
    exit_code: int | None
    outcome: Outcome
    message: str | None
    duration: float
    timed_out: bool
    tests: dict[str, int] | None
    traces: list[str]
    """Trace files written by the run, relative to the version directory."""
    log: str

    def to_json(self) -> dict[str, Any]:
        return {
            "repetition": self.repetition,
            "command": self.command.to_json(),
            "argv": self.argv,
            "exitCode": self.exit_code,
            "outcome": self.outcome,
            "message": self.message,
            "durationSeconds": round(self.duration, 3),
            "timedOut": self.timed_out,
            "tests": self.tests,
            "traces": self.traces,
            "log": self.log,
        }


@dataclass
class RunsSummary:
    index: int
    runs: list[RunRecord] = field(default_factory=list)

    @property
    def errors(self) -> list[RunRecord]:
        """Runs that say the version is broken (cannot start, pytest exit 2-5, killed, timed out)."""
        return [run for run in self.runs if run.outcome in ("error", "timeout")]

    @property
    def failures(self) -> list[RunRecord]:
        """Runs whose tests failed: tolerated, their traces are used like any other."""
        return [run for run in self.runs if run.outcome == "failed"]

    @property
    def trace_files(self) -> list[str]:
        return [path for run in self.runs for path in run.traces]

    def to_json(self, identifier: str, repeat: int, timeout: float, python: str) -> dict[str, Any]:
        return {
            "schemaVersion": SCHEMA_VERSION,
            "identifier": identifier,
            "repeat": repeat,
            "timeoutSeconds": timeout,
            "python": python,
            "runs": [run.to_json() for run in self.runs],
        }


def trace_config(
    store: OutputStore, index: int, settings: VersionSettings, trace_dir: Path, capture_values: bool = True, label: str | None = None,
    tracer: str = "auto",
) -> TraceConfig:
    return TraceConfig(
        root=str(store.snapshot(index).resolve()),
        sources=list(settings.sources),
        tests=list(settings.tests),
        trace_dir=str(trace_dir.resolve()),
        ignore_prefixes=list(settings.ignore.prefixes),
        ignore_suffixes=list(settings.ignore.suffixes),
        ignore_directories=list(settings.ignore.directories),
        ignore_functions=list(settings.ignore.functions),
        capture_values=capture_values,
        label=label,
        tracer=tracer,
    )


def version_settings(store: OutputStore, index: int) -> tuple[dict[str, Any], VersionSettings]:
    version = read_json(store.file(index, VERSION))
    return version, VersionSettings.from_json(version)


def write_trace_config(store: OutputStore, index: int, capture_values: bool = True, tracer: str = "auto") -> Path:
    """``OUT/<index>/traceConfig.json``: any run with it in ``HISTEG_TRACE_CONFIG`` traces the version."""
    _, settings = version_settings(store, index)
    path = store.file(index, TRACE_CONFIG)
    write_json(path, trace_config(store, index, settings, store.traces(index), capture_values, tracer=tracer).to_json())
    return path


def run_traces(
    store: OutputStore,
    index: int,
    commands: Sequence[TraceCommand] | None = None,
    repeat: int = 1,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    *,
    python: str | None = None,
    capture_values: bool = True,
    tracer: str = "auto",
    grace: float = DEFAULT_GRACE_SECONDS,
) -> RunsSummary:
    """Run every command ``repeat`` times under the tracer; default: the version's pytest suite."""
    if repeat < 1:
        raise HistegError(f"repeat must be at least 1, not {repeat}")
    if timeout <= 0:
        raise HistegError(f"timeout must be positive, not {timeout}")
    version, settings = version_settings(store, index)
    python = python or sys.executable
    commands = unique_labels(commands or [pytest_command(settings.tests)])
    snapshot = store.snapshot(index)
    if not snapshot.is_dir():
        raise HistegError(f"version {index} has no snapshot at {snapshot}")
    write_trace_config(store, index, capture_values, tracer)
    store.file(index, RUNS).unlink(missing_ok=True)
    shutil.rmtree(store.traces(index), ignore_errors=True)
    base_env = _base_environment(snapshot, settings)
    summary = RunsSummary(index)
    for repetition in range(1, repeat + 1):
        run_dir = store.traces(index) / f"run-{repetition}"
        run_dir.mkdir(parents=True)
        for command in commands:
            config_path = run_dir / f"{command.label}.{TRACE_CONFIG}"
            write_json(config_path, trace_config(store, index, settings, run_dir, capture_values, command.label, tracer).to_json())
            before = set(run_dir.glob(f"*{TRACE_SUFFIX}"))
            argv = command.argv(python)
            result = run_process(argv, snapshot, traced_environment(config_path, base_env), timeout, grace)
            verdict = judge(command, result)
            log = run_dir / f"{command.label}.log"
            log.write_text(_log_text(argv, result.exit_code, verdict.outcome, result.stdout_tail, result.stderr_tail), encoding="utf-8")
            produced = sorted(set(run_dir.glob(f"*{TRACE_SUFFIX}")) - before)
            summary.runs.append(
                RunRecord(
                    repetition, command, argv, result.exit_code, verdict.outcome, verdict.message, result.duration,
                    result.timed_out, verdict.tests, [_relative(store, index, p) for p in produced], _relative(store, index, log),
                )
            )
    write_json(store.file(index, RUNS), summary.to_json(version["identifier"], repeat, timeout, python))
    return summary


def _base_environment(snapshot: Path, settings: VersionSettings) -> dict[str, str]:
    env = dict(os.environ)
    roots = [str((snapshot / source).resolve()) for source in settings.sources]
    existing = [part for part in env.get("PYTHONPATH", "").split(os.pathsep) if part]
    env["PYTHONPATH"] = os.pathsep.join([*roots, *existing])
    env.pop("PYTEST_ADDOPTS", None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # the snapshot stays as extracted
    return env


def _relative(store: OutputStore, index: int, path: Path) -> str:
    return path.relative_to(store.version_dir(index)).as_posix()


def _log_text(argv: list[str], exit_code: int | None, outcome: str, stdout: str, stderr: str) -> str:
    return f"$ {' '.join(argv)}\nexit code: {exit_code}, outcome: {outcome}\n--- stdout (tail) ---\n{stdout}\n--- stderr (tail) ---\n{stderr}"
