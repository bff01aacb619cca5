"""Pipeline entry: run a version's trace commands, ``repeat`` times, and record every run.

Repetition ``k`` writes its traces, logs and per-command configs into
``OUT/<index>/traces/run-<k>/``; ``OUT/<index>/runs.json`` lists each run.
Earlier traces of the version are removed first so that runs of different
invocations never mix. Every command of every repetition runs in a fresh copy
of the snapshot (``OUT/<index>/.run``, removed afterwards), so a test that
writes files changes neither the snapshot nor the next run; the copy's source
directories come right after the tracer's hook on ``PYTHONPATH``, so the
version is imported from it even when another copy of the project is
installed. A run whose trace was not closed (``os._exit``, a signal) or lost
the tracer's tool id is not taken as complete.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from histeg.config import VersionSettings
from histeg.envs.runtime import Runtime, runtime_of
from histeg.errors import HistegError
from histeg.runs.commands import TraceCommand, pytest_command, unique_labels
from histeg.runs.outcome import NOT_COMPLETE, Outcome, Verdict, judge
from histeg.runs.process import DEFAULT_GRACE_SECONDS, run_process
from histeg.runs.workdir import fresh_copy
from histeg.store import VERSION, OutputStore, read_json, write_json
from histeg.tracing.activation import TraceConfig, traced_environment
from histeg.tracing.format import FORMAT_VERSION, read_meta, read_status
from histeg.tracing.seal import seal
from histeg.tracing.values import DEFAULT_REDACT

RUNS = "runs.json"
CONFIRMATIONS = "confirmations.json"
"""The targeted re-runs of a version (``histeg.runs.confirm``): they live and die with its traces."""
TRACE_CONFIG = "traceConfig.json"
TRACE_SUFFIX = ".htrace"
RUN_DIR = ".run"
"""The fresh copy of the snapshot a run works in, inside the version directory."""
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
    """Complete trace files written by the run, relative to the version directory."""
    log: str
    incomplete: list[str] = field(default_factory=list)
    """Trace files of child processes that ended without closing them (``os._exit``): not used."""

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
            "incompleteTraces": self.incomplete,
            "log": self.log,
        }


@dataclass
class RunsSummary:
    index: int
    runs: list[RunRecord] = field(default_factory=list)

    @property
    def errors(self) -> list[RunRecord]:
        """Runs that say the version is broken (cannot start, pytest exit 2-5, killed, timed out)
        or whose traces cannot be trusted (truncated, the tracer lost its tool id)."""
        return [run for run in self.runs if run.outcome in NOT_COMPLETE]

    @property
    def failures(self) -> list[RunRecord]:
        """Runs whose tests failed: tolerated, their traces are used like any other."""
        return [run for run in self.runs if run.outcome == "failed"]

    @property
    def trace_files(self) -> list[str]:
        return [path for run in self.runs for path in run.traces]

    def to_json(self, identifier: str, repeat: int, timeout: float, python: str, options: TraceOptions, build: str | None) -> dict[str, Any]:
        return {
            "schemaVersion": SCHEMA_VERSION,
            "identifier": identifier,
            "traceFormat": FORMAT_VERSION,
            "traceOptions": options.to_json(),
            "repeat": repeat,
            "timeoutSeconds": timeout,
            "python": python,
            "build": build,
            "runs": [run.to_json() for run in self.runs],
        }


@dataclass(frozen=True)
class TraceOptions:
    """What the user chose about tracing; every run of a version records them."""

    values: str = "structural"
    repr_types: tuple[str, ...] = ()
    redact: tuple[str, ...] = DEFAULT_REDACT
    tracer: str = "auto"
    line_budget: int = 64

    def to_json(self) -> dict[str, Any]:
        return {"values": self.values, "reprTypes": list(self.repr_types), "redact": list(self.redact), "tracer": self.tracer,
                "lineBudget": self.line_budget}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TraceOptions:
        return cls(data["values"], tuple(data["reprTypes"]), tuple(data["redact"]), data["tracer"], data["lineBudget"])


def trace_config(
    root: Path, settings: VersionSettings, trace_dir: Path, options: TraceOptions = TraceOptions(), label: str | None = None,
    select: Path | None = None,
) -> TraceConfig:
    return TraceConfig(
        root=str(root.resolve()),
        sources=list(settings.sources),
        tests=list(settings.tests),
        trace_dir=str(trace_dir.resolve()),
        ignore_prefixes=list(settings.ignore.prefixes),
        ignore_suffixes=list(settings.ignore.suffixes),
        ignore_directories=list(settings.ignore.directories),
        ignore_functions=list(settings.ignore.functions),
        values=options.values,
        repr_types=list(options.repr_types),
        redact=list(options.redact),
        label=label,
        tracer=options.tracer,
        line_budget=options.line_budget,
        select=str(select.resolve()) if select is not None else None,
        select_parent=os.getpid() if select is not None else None,
    )


def version_settings(store: OutputStore, index: int) -> tuple[dict[str, Any], VersionSettings]:
    version = read_json(store.file(index, VERSION))
    return version, VersionSettings.from_json(version)


def write_trace_config(store: OutputStore, index: int, options: TraceOptions = TraceOptions()) -> Path:
    """``OUT/<index>/traceConfig.json``: any run with it in ``HISTEG_TRACE_CONFIG`` traces the version
    in its run directory ``OUT/<index>/.run`` (``histeg exec`` makes that fresh copy)."""
    _, settings = version_settings(store, index)
    path = store.file(index, TRACE_CONFIG)
    write_json(path, trace_config(store.version_dir(index) / RUN_DIR, settings, store.traces(index), options).to_json())
    return path


def run_traces(
    store: OutputStore,
    index: int,
    commands: Sequence[TraceCommand] | None = None,
    repeat: int = 1,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    *,
    python: str | None = None,
    options: TraceOptions = TraceOptions(),
    grace: float = DEFAULT_GRACE_SECONDS,
) -> RunsSummary:
    """Run every command ``repeat`` times under the tracer, each in a fresh copy of the snapshot;
    default: the version's pytest suite."""
    if repeat < 1:
        raise HistegError(f"repeat must be at least 1, not {repeat}")
    if timeout <= 0:
        raise HistegError(f"timeout must be positive, not {timeout}")
    version, settings = version_settings(store, index)
    runtime = runtime_of(store.version_dir(index))
    python = python or runtime.python
    commands = unique_labels(commands or [pytest_command(settings.tests)])
    snapshot = store.snapshot(index)
    if not snapshot.is_dir():
        raise HistegError(f"version {index} has no snapshot at {snapshot}")
    write_trace_config(store, index, options)
    store.file(index, RUNS).unlink(missing_ok=True)
    store.file(index, CONFIRMATIONS).unlink(missing_ok=True)
    shutil.rmtree(store.traces(index), ignore_errors=True)
    launch = Launch(store, index, settings, runtime, python, options, timeout, grace)
    summary = RunsSummary(index)
    for repetition in range(1, repeat + 1):
        run_dir = store.traces(index) / f"run-{repetition}"
        run_dir.mkdir(parents=True)
        for command in commands:
            summary.runs.append(launch.run(command, repetition, run_dir))
    write_json(store.file(index, RUNS), summary.to_json(version["identifier"], repeat, timeout, python, options, runtime.build))
    return summary


@dataclass
class Launch:
    """What every traced run of one version shares: it starts one command in a fresh copy of the
    snapshot, waits for it, checks and seals its traces, writes its log, and says how it went."""

    store: OutputStore
    index: int
    settings: VersionSettings
    runtime: Runtime
    python: str
    options: TraceOptions
    timeout: float
    grace: float = DEFAULT_GRACE_SECONDS

    def run(self, command: TraceCommand, repetition: int, run_dir: Path, select: Path | None = None, work_name: str = RUN_DIR) -> RunRecord:
        """``select``: a file of pytest node ids the run is limited to; ``work_name``: the folder of the
        version's fresh copy (runs at the same time need one each)."""
        store, index = self.store, self.index
        work = store.version_dir(index) / work_name
        snapshot = store.snapshot(index)
        config_path = run_dir / f"{command.label}.{TRACE_CONFIG}"
        write_json(config_path, trace_config(work, self.settings, run_dir, self.options, command.label, select).to_json())
        before = set(run_dir.glob(f"*{TRACE_SUFFIX}"))
        argv = command.argv(self.python, self.runtime.pytest_args)
        with fresh_copy(snapshot, work):
            self.runtime.prepare(work)
            env = traced_environment(config_path, base_environment(work, self.settings, self.runtime))
            result = run_process(argv, work, env, self.timeout, self.grace)
        verdict = judge(command, result)
        produced = sorted(set(run_dir.glob(f"*{TRACE_SUFFIX}")) - before)
        complete, incomplete, verdict = _check_traces(produced, verdict)
        for path in list(complete):
            try:
                seal(path)
            except ValueError as exc:  # the program wrote over it: keep it out of comparisons
                complete.remove(path)
                incomplete.append(path)
                if verdict.outcome not in NOT_COMPLETE:
                    verdict = Verdict("broken", f"trace {path.name} is damaged: {exc}", verdict.tests)
        log = run_dir / f"{command.label}.log"
        log.write_text(_log_text(argv, result.exit_code, verdict.outcome, result.stdout_tail, result.stderr_tail), encoding="utf-8")
        return RunRecord(
            repetition, command, argv, result.exit_code, verdict.outcome, verdict.message, result.duration,
            result.timed_out, verdict.tests, [_relative(store, index, p) for p in complete], _relative(store, index, log),
            [_relative(store, index, p) for p in incomplete],
        )


def _check_traces(produced: list[Path], verdict: Verdict) -> tuple[list[Path], list[Path], Verdict]:
    """Complete traces, incomplete ones of child processes, and the verdict: a run whose own
    (top-level) trace is truncated, or any of whose traces lost the tool id, is not complete."""
    status = {path: read_status(str(path)) for path in produced}
    broken = [path for path, state in status.items() if state == "broken"]
    if broken and verdict.outcome not in NOT_COMPLETE:
        return [], produced, Verdict("broken", f"the tracer lost its sys.monitoring tool id in {broken[0].name}: "
                                     "a program under test freed, cleared or took it over", verdict.tests)
    truncated = [path for path, state in status.items() if state == "truncated"]
    if not truncated:
        return produced, [], verdict
    pids = {read_meta(str(path)).get("pid") for path in produced}
    top = [path for path in truncated if read_meta(str(path)).get("ppid") not in pids]
    complete = [path for path in produced if status[path] == "complete"]
    if top and verdict.outcome not in NOT_COMPLETE:
        return complete, truncated, Verdict("truncated", f"the traced process ended without closing its trace {top[0].name} "
                                            "(os._exit or a signal)", verdict.tests)
    return complete, truncated, verdict


def base_environment(work: Path, settings: VersionSettings, runtime: Runtime) -> dict[str, str]:
    """The version's environment activated; its sources, then its installed project, on ``PYTHONPATH``."""
    env = dict(os.environ)
    roots = [str((work / source).resolve()) for source in settings.sources]
    existing = [part for part in env.get("PYTHONPATH", "").split(os.pathsep) if part]
    env["PYTHONPATH"] = os.pathsep.join([*roots, *existing])
    env.pop("PYTEST_ADDOPTS", None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # the snapshot stays as extracted
    return runtime.environment(env)


def _relative(store: OutputStore, index: int, path: Path) -> str:
    return path.relative_to(store.version_dir(index)).as_posix()


def _log_text(argv: list[str], exit_code: int | None, outcome: str, stdout: str, stderr: str) -> str:
    return f"$ {' '.join(argv)}\nexit code: {exit_code}, outcome: {outcome}\n--- stdout (tail) ---\n{stdout}\n--- stderr (tail) ---\n{stderr}"
