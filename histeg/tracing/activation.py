"""Switching the tracer on: a config file, an environment, and start/stop.

Contract: with ``hook_dir()`` first on ``PYTHONPATH`` and ``HISTEG_TRACE_CONFIG``
naming a JSON ``TraceConfig`` (camelCase keys, like every file histeg writes),
every Python process (subprocesses included, they inherit the environment)
traces from start-up and writes ``<traceDir>/<pid>-<random>.htrace``.
``start``/``stop`` do the same in-process.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from histeg.tracing.session import CONFIG_ENV, CONFIG_VERSION
from histeg.tracing.tracers import LINE_BUDGET, LINE_CAP, VALUE_BUDGET
from histeg.tracing.values import DEFAULT_REDACT, MODES

HASH_SEED = "0"


def hook_dir() -> Path:
    """The directory to put first on ``PYTHONPATH``: it holds the ``sitecustomize`` hook."""
    return Path(__file__).resolve().parent / "hook"


@dataclass
class TraceConfig:
    """What to trace in a run and where the trace goes."""

    root: str
    """Absolute path of the version snapshot; sources and tests are relative to it."""
    sources: list[str]
    tests: list[str]
    trace_dir: str
    ignore_prefixes: list[str] = field(default_factory=list)
    ignore_suffixes: list[str] = field(default_factory=list)
    ignore_directories: list[str] = field(default_factory=list)
    ignore_functions: list[str] = field(default_factory=lambda: ["__repr__", "__str__", "__hash__", "__eq__"])
    values: str = "structural"
    """``structural`` (no project code runs), ``repr`` (``repr()`` for ``repr_types`` only) or ``off``."""
    repr_types: list[str] = field(default_factory=list)
    """Qualified type names (``pkg.mod.Class``) shown by their own ``repr`` in ``repr`` mode."""
    redact: list[str] = field(default_factory=lambda: list(DEFAULT_REDACT))
    """Names (dict keys, attributes, parameters, functions for their return value) of secrets, matched by
    words (``api_key`` matches ``x-api-key`` and ``apiKey``; ``=token`` the name ``token`` alone)."""
    redaction_key: str | None = None
    """The file holding the key of the secrets' digests (the output directory's); none: every secret
    is written alike, as ``<redacted>``."""
    value_budget: int = VALUE_BUDGET
    """Values are recorded for the first N calls of each function per entry point (0: every call):
    hot functions called millions of times then cost little more than their lines."""
    line_budget: int = LINE_BUDGET
    """Lines are recorded for the first N calls of each function per entry point (0: every call):
    beyond it a call keeps its calls, returns and nesting, and its lines are "not recorded", which
    comparisons treat as unknown. A loop-heavy function called millions of times then costs little
    more than its calls (sys.monitoring dispatches every line event, whatever the callback does)."""
    line_cap: int = LINE_CAP
    """Lines are also recorded for the first N line events of each function per entry point (0: no bound): one
    call looping over a long input then costs what its first N lines cost, and its lines are "not recorded"."""
    label: str | None = None
    """An optional name of the run, stored in every trace file's header."""
    tracer: str = "auto"
    """Collector implementation: ``c`` (callbacks in C), ``python`` (the reference), ``auto`` (C when built)."""
    select: str | None = None
    """A file of pytest node ids, one per line: a pytest run then runs those tests alone, in their
    collection order (the targeted re-runs that tell noise from a change)."""
    select_parent: int | None = None
    """The selection holds only in processes this process id started: a test that runs pytest
    in a subprocess (``pytester``) runs its inner session whole, as it does without histeg."""

    def __post_init__(self) -> None:
        if self.values not in MODES:
            raise ValueError(f"values must be one of {', '.join(MODES)}, not {self.values!r}")
        if self.repr_types and self.values != "repr":
            raise ValueError("repr_types needs values = 'repr'")

    def to_json(self) -> dict[str, Any]:
        return {"schemaVersion": CONFIG_VERSION, **{_camel(name): value for name, value in asdict(self).items()}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TraceConfig:
        """Refuses another version's config outright: its keys may mean something else, so none is read."""
        version = data.get("schemaVersion")
        if version != CONFIG_VERSION:
            raise ValueError(f"trace config has schema version {version}, this histeg reads version {CONFIG_VERSION}")
        by_key = {_camel(f.name): f.name for f in fields(cls)}
        missing = [key for key in ("root", "sources", "tests", "traceDir") if key not in data]
        if missing:
            raise ValueError(f"trace config lacks {', '.join(missing)}")
        return cls(**{by_key[key]: value for key, value in data.items() if key in by_key})

    def write(self, path: Path) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, path)

    @classmethod
    def read(cls, path: Path) -> TraceConfig:
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))


def _camel(name: str) -> str:
    """``trace_dir`` -> ``traceDir``: the keys histeg's records write (msgspec's camel rename), without msgspec."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


PYTEST_PLUGIN_MODULE = "histeg_pytest"
"""The label plugin as pytest loads it through ``PYTEST_PLUGINS`` (from the hook directory), so
that test labels work in any environment, histeg installed there or not."""


def tracer_path() -> Path:
    """A directory holding nothing but a link to the ``histeg`` package: on ``PYTHONPATH`` it makes
    the tracer importable in any interpreter's environment without exposing histeg's source tree
    (its ``tests`` package would shadow the project's) or its dependencies."""
    package = Path(__file__).resolve().parent.parent
    import hashlib
    import tempfile

    digest = hashlib.sha256(str(package).encode()).hexdigest()[:12]
    directory = Path(tempfile.gettempdir()) / f"histeg-tracer-{os.getuid()}-{digest}"
    link = directory / "histeg"
    if not (link.is_symlink() and link.resolve() == package):
        directory.mkdir(mode=0o700, exist_ok=True)
        temporary = directory / f".histeg.{os.getpid()}"
        temporary.unlink(missing_ok=True)
        temporary.symlink_to(package, target_is_directory=True)
        os.replace(temporary, link)
    return directory


def traced_environment(config_path: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a traced run: hook and tracer first on PYTHONPATH, the label plugin
    named for pytest, config named, hash seed pinned."""
    env = dict(os.environ if base is None else base)
    first = [str(hook_dir()), str(tracer_path())]
    rest = [part for part in env.get("PYTHONPATH", "").split(os.pathsep) if part and part not in first]
    env["PYTHONPATH"] = os.pathsep.join([*first, *rest])
    plugins = [name for name in env.get("PYTEST_PLUGINS", "").split(",") if name.strip() and name.strip() != PYTEST_PLUGIN_MODULE]
    env["PYTEST_PLUGINS"] = ",".join([*plugins, PYTEST_PLUGIN_MODULE])
    env[CONFIG_ENV] = str(Path(config_path).resolve())
    env["PYTHONHASHSEED"] = HASH_SEED
    return env


def start(config: TraceConfig) -> Any:
    """Trace this process from now on; returns the collector (``stop()`` ends it)."""
    from histeg.tracing import session

    return session.begin(config.to_json())


def stop() -> str | None:
    """Stop tracing and close the file; returns its path (None when not tracing)."""
    from histeg.tracing import session

    return session.end()


def active() -> Any:
    """The running collector, or None."""
    from histeg.tracing import session

    return session.active()
