"""The tracing session of this process: one collector, one file, closed at exit.

Imported by the start-up hook of every traced process, so it only needs the
standard library modules that start-up loads anyway (``activation`` holds the
dataclass-based API for histeg's own side).
"""

from __future__ import annotations

import atexit
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only the annotations name them: importing them starts the tracer's imports
    from histeg.tracing.coverage import LineCoverage
    from histeg.tracing.format import TraceWriter
    from histeg.tracing.monitor import Collector
    from histeg.tracing.seen_files import SeenFiles
    from histeg.tracing.selection import Selector
    from histeg.tracing.values import Abstraction

CONFIG_ENV = "HISTEG_TRACE_CONFIG"
CONFIG_VERSION = 3
"""The ``schemaVersion`` of the trace config this tracer reads: another histeg's keys may differ."""

_collector: Collector | None = None
_coverage: LineCoverage | None = None
_seen: SeenFiles | None = None
_selection: str | None = None


def trace_file_name(directory: str) -> str:
    """``<pid>-<random>.htrace``: one file per process, never overwritten."""
    return os.path.join(directory, f"{os.getpid()}-{os.urandom(4).hex()}.htrace")


def begin(settings: dict) -> Collector:
    """Start tracing with a ``TraceConfig.to_json()`` mapping (idempotent)."""
    global _collector, _coverage, _seen, _selection
    if _collector is not None:
        return _collector
    if settings.get("schemaVersion") != CONFIG_VERSION:
        raise ValueError(f"trace config has schema version {settings.get('schemaVersion')}, this tracer reads version {CONFIG_VERSION}")
    if settings.get("select") and settings.get("selectParent") in (None, os.getppid()):
        _selection = settings["select"]
    from histeg.tracing.coverage import LineCoverage
    from histeg.tracing.monitor import TOOL_IDS, free_tool_id
    from histeg.tracing.native import make_collector, resolve
    from histeg.tracing.tracers import LINE_BUDGET, LINE_CAP, VALUE_BUDGET

    selector = _selector(settings)
    trace_dir = settings["traceDir"]
    mode = settings.get("values", "structural")
    abstraction = _abstraction(settings, mode)
    implementation = resolve(settings.get("tracer", "auto"))
    os.makedirs(trace_dir, exist_ok=True)
    tool = free_tool_id()

    def new_writer() -> TraceWriter:
        return _writer(settings, trace_dir, mode, implementation, tool)

    collector = make_collector(
        implementation,
        selector,
        new_writer(),
        abstraction,
        int(settings.get("valueBudget", VALUE_BUDGET)),
        tool,
        int(settings.get("lineBudget", LINE_BUDGET)),
        int(settings.get("lineCap", LINE_CAP)),
    )
    collector.start()
    _collector = collector
    if not settings.get("select"):  # a targeted re-run tells noise from a change: the version's executed lines are its full runs'
        coverage = LineCoverage(selector, native=implementation == "c")
        _coverage = coverage if coverage.start(TOOL_IDS) else None
        from histeg.tracing.seen_files import SeenFiles

        seen = SeenFiles(settings["root"])
        try:
            _seen = seen if seen.start() else None
        except RuntimeError:  # the program's own audit hook refused another one: no record, the successor is traced anew
            _seen = None
    atexit.register(end)

    def in_child() -> None:
        if _collector is collector:
            collector.after_fork_in_child(new_writer())

    os.register_at_fork(after_in_child=in_child)
    return collector


def _selector(settings: dict) -> Selector:
    from histeg.tracing.selection import Selector

    return Selector(
        settings["root"],
        settings["sources"],
        settings["tests"],
        settings.get("ignorePrefixes", ()),
        settings.get("ignoreSuffixes", ()),
        settings.get("ignoreDirectories", ()),
        settings.get("ignoreFunctions", ()),
    )


def _abstraction(settings: dict, mode: str) -> Abstraction | None:
    """How values are recorded; none at all with values off."""
    if mode == "off":
        return None
    from histeg.tracing.values import DEFAULT_REDACT, Abstraction

    return Abstraction(
        mode,
        settings.get("reprTypes", ()),
        settings.get("redact", DEFAULT_REDACT),
        settings["root"],
        _redaction_key(settings.get("redactionKey")),
    )


def _writer(settings: dict, trace_dir: str, mode: str, implementation: str, tool: int) -> TraceWriter:
    """A trace file of this process (one more after a fork: the child writes its own)."""
    from histeg.tracing.format import TraceWriter

    meta = {
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "python": sys.version.split()[0],
        "root": settings["root"],
        "label": settings.get("label"),
        "argv": list(getattr(sys, "argv", [])),
        "values": mode,
        "tracer": implementation,
        "toolId": tool,
    }
    return TraceWriter(trace_file_name(trace_dir), meta)


def _redaction_key(path: str | None) -> bytes | None:
    """The key of the secrets' digests; unreadable, secrets are written alike (and said so once)."""
    if not path:
        return None
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        sys.stderr.write(f"histeg: redaction key {path} unreadable ({exc.strerror}): secrets recorded as <redacted>\n")
        return None


def end() -> str | None:
    """Stop tracing and close the file; returns its path (None when not tracing)."""
    global _collector, _coverage, _seen
    collector, _collector = _collector, None
    coverage, _coverage = _coverage, None
    seen, _seen = _seen, None
    if collector is None:
        return None
    collector.stop()
    if seen is not None:
        try:
            seen.write(collector.writer.path)
        except OSError as exc:  # the trace stands without it; the version's successor is then traced anew
            sys.stderr.write(f"histeg: files read not written: {exc}\n")
    if coverage is not None:
        coverage.stop()
        try:
            coverage.write(collector.writer.path)
        except OSError as exc:  # the trace stands without it; the analysis then lacks this process's line coverage
            sys.stderr.write(f"histeg: line coverage not written: {exc}\n")
    return collector.writer.path


COLLECT_ALL = "# every test file"
"""A selection file's line asking pytest to collect every test file, not only those of the node ids it names: the
re-runs of a test module's import-time code, which runs only where that module is collected."""


def selection() -> str | None:
    """The file of pytest node ids this run is limited to, or None (the whole suite)."""
    return _selection


def active() -> Collector | None:
    """The running collector, or None: the pytest plugin stays inert without one."""
    return _collector


def begin_from_environment() -> None:
    """The start-up hook's entry: a broken config is reported once on stderr, never fatal."""
    path = os.environ.get(CONFIG_ENV)
    if not path:
        return
    try:
        import json

        with open(path, encoding="utf-8") as handle:
            settings = json.load(handle)
        begin(settings)
    except Exception as exc:  # noqa: BLE001  whatever the config's fault, never break the traced program
        sys.stderr.write(f"histeg: tracing disabled: {type(exc).__name__}: {exc} (config {path})\n")
