"""Pipeline entry: run a version's trace commands, ``repeat`` times, and record every run.

Repetition ``k`` writes its traces, logs and per-command configs into
``OUT/<index>/traces/run-<k>/``; ``OUT/<index>/runs.json`` lists each run.
The runs are made in a scratch folder beside ``traces/``, which replaces the
earlier traces (and re-runs) only once every run is done: an interrupted or
failed re-trace leaves the earlier traces and ``runs.json`` as they were, and
runs of different invocations never mix. Every command of every repetition
runs in a fresh copy of the snapshot (``OUT/<index>/.run``, removed
afterwards), so a test that writes files changes neither the snapshot nor the
next run; the copy's source directories come right after the tracer's hook on
``PYTHONPATH``, so the version is imported from it even when another copy of
the project is installed. A run whose trace was not closed (``os._exit``, a
signal) or lost the tracer's tool id is not taken as complete.
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec

from histeg.envs.runtime import Runtime, runtime_of
from histeg.errors import HistegError
from histeg.processes import interrupt
from histeg.processes.groups import records_folder
from histeg.processes.process import (
    DEFAULT_GRACE_SECONDS,
    ProcessResult,
    Refused,
    output_text,
    run_process,
)
from histeg.processes.workdir import RUN_DIR, TRACES_SCRATCH, fresh_copy
from histeg.processes.zygote import POOL, Zygote
from histeg.records.base import convert
from histeg.records.history import Version, VersionSettings
from histeg.records.runs import (
    Confirmations,
    Run,
    Runs,
    TraceCommand,
    TraceConfig,
    TraceHeader,
    TraceOptions,
)
from histeg.runs.bytecode import BYTECODE, harvest, overlay, rewrites_move
from histeg.runs.commands import command_line, pytest_command, unique_labels
from histeg.runs.outcome import NOT_COMPLETE, Verdict, judge
from histeg.settings.model import Settings
from histeg.store import TRACES_DIR, OutputStore, force_rmtree
from histeg.traces.seal import seal
from histeg.tracing.activation import TraceConfig as TracerConfig
from histeg.tracing.activation import traced_environment
from histeg.tracing.format import FORMAT_VERSION, read_meta, read_status
from histeg.tracing.tally import read_tally

__all__ = [
    "CONFIRMATIONS",
    "RUNS",
    "RUN_DIR",
    "TRACE_CONFIG",
    "Launch",
    "TraceOptions",
    "base_environment",
    "run_traces",
    "trace_config",
    "version_settings",
    "write_trace_config",
]

RUNS = Runs.FILE
CONFIRMATIONS = Confirmations.FILE
"""The targeted re-runs of a version (``histeg.runs.confirm``): they live and die with its traces."""
TRACE_CONFIG = TraceConfig.FILE
TRACE_SUFFIX = ".htrace"
DEFAULT_TIMEOUT_SECONDS = 600.0


def trace_config(
    root: Path,
    settings: VersionSettings,
    trace_dir: Path,
    options: TraceOptions = TraceOptions(),
    label: str | None = None,
    select: Path | None = None,
    redaction_key: Path | None = None,
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
        redaction_key=str(redaction_key.resolve()) if redaction_key is not None else None,
        value_budget=TracerConfig.value_budget,
        line_budget=options.line_budget,
        line_cap=options.line_cap,
        label=label,
        tracer=options.tracer,
        select=str(select.resolve()) if select is not None else None,
        select_parent=os.getpid() if select is not None else None,
    )


def version_settings(store: OutputStore, index: int) -> tuple[Version, VersionSettings]:
    version = store.version(index)
    return version, version.settings


def trace_options(settings: Settings) -> TraceOptions:
    """The tracing choices in the settings: the record's fields are named as the options they hold."""
    return TraceOptions(**{name: getattr(settings, name) for name in TraceOptions.__struct_fields__})


def write_trace_config(store: OutputStore, index: int, options: TraceOptions = TraceOptions()) -> Path:
    """``OUT/<index>/traceConfig.json``: any run with it in ``HISTEG_TRACE_CONFIG`` traces the version
    in its run directory ``OUT/<index>/.run`` (``histeg exec`` makes that fresh copy)."""
    _, settings = version_settings(store, index)
    path = store.file(index, TRACE_CONFIG)
    trace_config(store.version_dir(index) / RUN_DIR, settings, store.traces(index), options, redaction_key=store.redaction_key()).write(
        path
    )
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
    scratch = Path(tempfile.mkdtemp(prefix=f"{TRACES_SCRATCH}new-", dir=store.version_dir(index)))
    try:
        launch = Launch(store, index, settings, runtime, python, options, timeout, grace, scratch=scratch)
        runs = []
        for repetition in range(1, repeat + 1):
            run_dir = scratch / f"run-{repetition}"
            run_dir.mkdir()
            runs += [launch.run(Run, command, repetition, run_dir) for command in commands]
        record = Runs(
            identifier=version.identifier,
            trace_format=FORMAT_VERSION,
            trace_options=options,
            repeat=repeat,
            timeout_seconds=timeout,
            python=python,
            build=runtime.build,
            runs=runs,
        )
        publish(store, index, scratch, record)
    finally:
        if scratch.exists():
            force_rmtree(scratch)
    return record


def publish(store: OutputStore, index: int, scratch: Path, record: Runs) -> None:
    """Put the new runs in place of the earlier ones, which are moved aside first and back if that fails;
    signals wait for the end. Until the last rename the version has no ``traces/``, so even a histeg
    killed meanwhile leaves nothing a later run takes as a result."""
    traces = store.traces(index)
    for config in scratch.glob(f"run-*/*.{TRACE_CONFIG}"):  # the runs' configs name the folder their traces are in now
        made = TraceConfig.read(config)
        made.trace_dir = str((traces / config.parent.name).resolve())
        made.write(config)
    with interrupt.deferred():
        earlier = Path(tempfile.mkdtemp(prefix=f"{TRACES_SCRATCH}old-", dir=store.version_dir(index)))
        moved = [
            (path, earlier / path.name) for path in (traces, store.file(index, RUNS), store.file(index, CONFIRMATIONS)) if path.exists()
        ]
        replacing = False
        try:
            for path, aside in moved:
                os.replace(path, aside)
            replacing = True  # from here runs.json may be the new one
            record.write(store.file(index, RUNS))
            os.replace(scratch, traces)
        except BaseException:
            if replacing:
                store.file(index, RUNS).unlink(missing_ok=True)
            for path, aside in moved:
                if aside.exists():
                    os.replace(aside, path)
            raise
    force_rmtree(earlier)


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
    scratch: Path | None = None
    """The folder the runs are made in when it is to become ``traces/``: records name their files as under ``traces/``."""
    stop: threading.Event | None = None
    """Set by another thread to stop the runs under way (``run_process``)."""
    zygote_log: Path | None = None
    """Set: pytest re-runs are forked from one zygote (``histeg.processes.zygote``), which writes its failures there."""

    def run[R: Run](
        self, kind: type[R], command: TraceCommand, repetition: int, run_dir: Path, select: Path | None = None, work_name: str = RUN_DIR
    ) -> R:
        """``kind``: the record, ``Rerun`` for re-runs; ``select``: a file of pytest node ids the run is limited to;
        ``work_name``: the folder of the version's fresh copy (runs at the same time need one each)."""
        store, index = self.store, self.index
        work = store.version_dir(index) / work_name
        snapshot = store.snapshot(index)
        config_path = run_dir / f"{command.label}.{TRACE_CONFIG}"
        argv = command_line(command, self.python, self.runtime.pytest_args)
        full = kind is Run
        env = traced_environment(config_path, base_environment(work, self.settings, self.runtime))
        zygote = self._forking(env) if not full and command.kind == "pytest" else None
        config = trace_config(work, self.settings, run_dir, self.options, command.label, select, store.redaction_key())
        if zygote is not None and select is not None:  # the selection holds in the zygote's children
            config.select_parent = zygote.pid
        config.write(config_path)
        before = set(run_dir.glob(f"*{TRACE_SUFFIX}"))
        forked: str | None = None
        with fresh_copy(snapshot, work):
            self.runtime.prepare(work)
            self._place_bytecode(work, full)
            if full:  # it compiles what the later runs take (``histeg.runs.bytecode``)
                env.pop("PYTHONDONTWRITEBYTECODE", None)
            groups = records_folder(store.root)
            result = None
            if zygote is not None:
                try:
                    result = run_process(argv, work, env, self.timeout, self.grace, groups=groups, stop=self.stop, start=zygote.start)
                    forked = f"forked from zygote {zygote.pid}"
                except Refused as exc:
                    forked = f"a fresh process: the zygote refused ({exc})"
                    if select is not None:
                        config.select_parent = os.getpid()
                        config.write(config_path)
            if result is None:
                result = run_process(argv, work, env, self.timeout, self.grace, groups=groups, stop=self.stop)
            if full:
                harvest(work, snapshot, self.bytecode())
        produced = sorted(set(run_dir.glob(f"*{TRACE_SUFFIX}")) - before)
        verdict = judge(command, result, _tally(produced) if command.kind == "pytest" else None)
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
        log.write_text(_log_text(argv, verdict.outcome, result, forked), encoding="utf-8")
        return kind(
            repetition=repetition,
            command=command,
            argv=argv,
            exit_code=result.exit_code,
            outcome=verdict.outcome,
            message=verdict.message,
            duration_seconds=round(result.duration, 3),
            timed_out=result.timed_out,
            tests=verdict.tests,
            traces=[self.relative(p) for p in complete],
            incomplete_traces=[self.relative(p) for p in incomplete],
            log=self.relative(log),
            output_truncated_bytes=result.output_truncated_bytes,
        )

    def _forking(self, env: dict[str, str]) -> Zygote | None:
        """The zygote re-runs are forked from (None: not asked for); the pool's, started by the first run that needs it."""
        if self.zygote_log is None:
            return None
        log = self.zygote_log
        private = self.store.version_dir(self.index).resolve()
        shared = {
            **env,
            "PYTHONPATH": os.pathsep.join(
                part for part in env.get("PYTHONPATH", "").split(os.pathsep) if not Path(part).resolve().is_relative_to(private)
            ),
        }
        return POOL.get(self.python, shared, lambda: Zygote(self.python, shared, log.parent, log))

    def bytecode(self) -> Path:
        """Where this version's kept bytecode is: beside the runs being made, or in ``traces/``."""
        return (self.scratch if self.scratch is not None else self.store.traces(self.index)) / BYTECODE

    def _place_bytecode(self, work: Path, full: bool) -> None:
        """A full run starts with what the pytest of the version it is compared with rewrote (checked by content), then
        this version's own."""
        rewritten = rewrites_move(self.python)
        against = self.store.version(self.index).comparing_against_index if full and rewritten else None
        if against is not None:
            overlay(self.store.traces(against) / BYTECODE, work, rewritten=True, only_rewritten=True)
        overlay(self.bytecode(), work, rewritten=rewritten)

    def relative(self, path: Path) -> str:
        """``path`` relative to the version directory, where it will be once the runs are in place."""
        if self.scratch is not None and path.is_relative_to(self.scratch):
            return (Path(TRACES_DIR) / path.relative_to(self.scratch)).as_posix()
        return path.relative_to(self.store.version_dir(self.index)).as_posix()


def _check_traces(produced: list[Path], verdict: Verdict) -> tuple[list[Path], list[Path], Verdict]:
    """Complete traces, incomplete ones of child processes, and the verdict: a run whose own
    (top-level) trace is truncated, or any of whose traces lost the tool id, is not complete."""
    status = {path: read_status(str(path)) for path in produced}
    broken = [path for path, state in status.items() if state == "broken"]
    if broken and verdict.outcome not in NOT_COMPLETE:
        return (
            [],
            produced,
            Verdict(
                "broken",
                f"the tracer lost its sys.monitoring tool id in {broken[0].name}: a program under test freed, cleared or took it over",
                verdict.tests,
            ),
        )
    truncated = [path for path, state in status.items() if state == "truncated"]
    if not truncated:
        return produced, [], verdict
    top = [path for path in _top_level(produced) if path in truncated]
    complete = [path for path in produced if status[path] == "complete"]
    if top and verdict.outcome not in NOT_COMPLETE:
        return (
            complete,
            truncated,
            Verdict("truncated", f"the traced process ended without closing its trace {top[0].name} (os._exit or a signal)", verdict.tests),
        )
    return complete, truncated, verdict


def _top_level(produced: list[Path]) -> list[Path]:
    """The traces of the processes the command started itself: those whose parent wrote none of the others
    (and those cut before their header, whose parent is unknown)."""
    headers = {path: _header(path) for path in produced}
    pids = {header.pid for header in headers.values() if header is not None}
    return [path for path, header in headers.items() if header is None or header.ppid not in pids]


def _tally(produced: list[Path]) -> dict[str, int] | None:
    """pytest's own counts of the run's tests, left by the plugin beside the trace of the pytest process the
    run started; None without exactly one (pytest ran without the plugin, or ended before its summary)."""
    tallies = [found for path in _top_level(produced) if (found := read_tally(path)) is not None]
    return tallies[0] if len(tallies) == 1 else None


def _header(path: Path) -> TraceHeader | None:
    """The trace's header; None when the file is cut before its end (the process died at its start)."""
    meta = read_meta(str(path))
    if not meta:
        return None
    try:
        return convert(meta, TraceHeader)
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


def _log_text(argv: list[str], outcome: str, result: ProcessResult, forked: str | None = None) -> str:
    started = "" if forked is None else f"started as {forked}\n"
    return f"$ {' '.join(argv)}\n{started}exit code: {result.exit_code}, outcome: {outcome}\n{output_text(result)}"
