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
from dataclasses import dataclass
from pathlib import Path

import msgspec

from histeg.config import VersionSettings
from histeg.envs.runtime import Runtime, runtime_of
from histeg.errors import HistegError
from histeg.records.history import Version
from histeg.records.runs import (
    Confirmations,
    Run,
    Runs,
    TraceCommand,
    TraceConfig,
    TraceHeader,
    TraceOptions,
)
from histeg.runs.commands import command_line, pytest_command, unique_labels
from histeg.runs.outcome import NOT_COMPLETE, Verdict, judge
from histeg.runs.process import DEFAULT_GRACE_SECONDS, run_process
from histeg.runs.workdir import fresh_copy
from histeg.store import OutputStore
from histeg.tracing.activation import TraceConfig as TracerConfig
from histeg.tracing.activation import traced_environment
from histeg.tracing.format import FORMAT_VERSION, read_meta, read_status
from histeg.tracing.seal import seal

__all__ = ["CONFIRMATIONS", "RUNS", "RUN_DIR", "TRACE_CONFIG", "Launch", "TraceOptions", "base_environment", "run_traces", "trace_config",
           "version_settings", "write_trace_config"]

RUNS = Runs.FILE
CONFIRMATIONS = Confirmations.FILE
"""The targeted re-runs of a version (``histeg.runs.confirm``): they live and die with its traces."""
TRACE_CONFIG = TraceConfig.FILE
TRACE_SUFFIX = ".htrace"
RUN_DIR = ".run"
"""The fresh copy of the snapshot a run works in, inside the version directory."""
DEFAULT_TIMEOUT_SECONDS = 600.0


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
        value_budget=TracerConfig.value_budget,
        line_budget=options.line_budget,
        label=label,
        tracer=options.tracer,
        select=str(select.resolve()) if select is not None else None,
        select_parent=os.getpid() if select is not None else None,
    )


def version_settings(store: OutputStore, index: int) -> tuple[Version, VersionSettings]:
    version = store.version(index)
    return version, VersionSettings.of(version)


def write_trace_config(store: OutputStore, index: int, options: TraceOptions = TraceOptions()) -> Path:
    """``OUT/<index>/traceConfig.json``: any run with it in ``HISTEG_TRACE_CONFIG`` traces the version
    in its run directory ``OUT/<index>/.run`` (``histeg exec`` makes that fresh copy)."""
    _, settings = version_settings(store, index)
    path = store.file(index, TRACE_CONFIG)
    trace_config(store.version_dir(index) / RUN_DIR, settings, store.traces(index), options).write(path)
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
) -> Runs:
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
    runs = []
    for repetition in range(1, repeat + 1):
        run_dir = store.traces(index) / f"run-{repetition}"
        run_dir.mkdir(parents=True)
        runs += [launch.run(Run, command, repetition, run_dir) for command in commands]
    record = Runs(identifier=version.identifier, trace_format=FORMAT_VERSION, trace_options=options, repeat=repeat, timeout_seconds=timeout,
                  python=python, build=runtime.build, runs=runs)
    record.write(store.file(index, RUNS))
    return record


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

    def run[R: Run](self, kind: type[R], command: TraceCommand, repetition: int, run_dir: Path, select: Path | None = None,
                    work_name: str = RUN_DIR) -> R:
        """``kind``: the record, ``Rerun`` for re-runs; ``select``: a file of pytest node ids the run is limited to;
        ``work_name``: the folder of the version's fresh copy (runs at the same time need one each)."""
        store, index = self.store, self.index
        work = store.version_dir(index) / work_name
        snapshot = store.snapshot(index)
        config_path = run_dir / f"{command.label}.{TRACE_CONFIG}"
        trace_config(work, self.settings, run_dir, self.options, command.label, select).write(config_path)
        before = set(run_dir.glob(f"*{TRACE_SUFFIX}"))
        argv = command_line(command, self.python, self.runtime.pytest_args)
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
        return kind(
            repetition=repetition, command=command, argv=argv, exit_code=result.exit_code, outcome=verdict.outcome, message=verdict.message,
            duration_seconds=round(result.duration, 3), timed_out=result.timed_out, tests=verdict.tests,
            traces=[_relative(store, index, p) for p in complete], incomplete_traces=[_relative(store, index, p) for p in incomplete],
            log=_relative(store, index, log),
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
    headers = {path: _header(path) for path in produced}
    pids = {header.pid for header in headers.values() if header is not None}
    top = [path for path in truncated if (header := headers[path]) is None or header.ppid not in pids]
    complete = [path for path in produced if status[path] == "complete"]
    if top and verdict.outcome not in NOT_COMPLETE:
        return complete, truncated, Verdict("truncated", f"the traced process ended without closing its trace {top[0].name} "
                                            "(os._exit or a signal)", verdict.tests)
    return complete, truncated, verdict


def _header(path: Path) -> TraceHeader | None:
    """The trace's header; None when the file is cut before its end (the process died at its start)."""
    meta = read_meta(str(path))
    if not meta:
        return None
    try:
        return msgspec.convert(meta, TraceHeader)
    except msgspec.ValidationError as exc:
        raise HistegError(f"trace {path} has a header this histeg does not know: {exc}") from None


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
