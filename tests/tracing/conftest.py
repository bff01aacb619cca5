"""Run small purpose-built projects under the real tracer, in child processes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from histeg.compare.entry_points import EntryRef
from histeg.traces import seal
from histeg.traces.call_tree import Call, Trace
from histeg.traces.reader import TraceFile, read_trace, trace_files
from histeg.tracing.activation import TraceConfig, traced_environment


@dataclass
class TracedRun:
    project: Path
    proc: subprocess.CompletedProcess
    traces: list[Trace]

    @property
    def roots(self) -> list[Call]:
        return [call for trace in self.traces for call in trace.entry_points]

    def entry(self, test: str, phase: str = "call") -> Call:
        """The root call of the test function ``test`` (node id suffix) in ``phase``; exactly one expected."""
        name = test.rsplit("::", 1)[-1]
        found = [
            c for c in self.roots
            if c.label is not None and c.label.endswith(test) and c.phase == phase and c.function.ident.endswith(":" + name)
        ]
        assert len(found) == 1, f"{len(found)} entry points for {test} {phase}: {[c.function.ident for c in found]}"
        return found[0]

    def entry_ref(self, test: str, phase: str = "call") -> EntryRef:
        """Where ``entry(test, phase)`` is in its trace file, for the comparator."""
        name = test.rsplit("::", 1)[-1]
        found = []
        for trace in self.traces:
            loaded = TraceFile(trace.path)
            for index, info in enumerate(loaded.entries):
                label, where = loaded.label(index)
                ident = loaded.definitions.functions[info.function].ident
                if label is not None and label.endswith(test) and where == phase and ident.endswith(":" + name):
                    found.append(EntryRef(loaded, index))
        assert len(found) == 1, f"{len(found)} entry points for {test} {phase}"
        return found[0]

    def calls(self, ident: str) -> list[Call]:
        return [call for root in self.roots for call in root.walk() if call.function.ident == ident]


def write_project(root: Path, files: dict[str, str]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(content).lstrip("\n"), encoding="utf-8")


def project_config(project: Path, **overrides: object) -> Path:
    config = TraceConfig(root=str(project), sources=["src"], tests=["tests"], trace_dir=str(project / "traces"), **overrides)
    path = project / "trace-config.json"
    config.write(path)
    return path


def base_environment(project: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTEST_", "HISTEG_", "COV_"))}
    env["PYTHONPATH"] = str(project / "src")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run_project(
    project: Path, files: dict[str, str], *argv: str, timeout: float = 120, trace: bool = True, **config: object
) -> TracedRun:
    """Write the project and run ``python -m pytest`` (or ``argv``) in it, traced unless ``trace=False``."""
    write_project(project, files)
    env = base_environment(project)
    if trace:
        env = traced_environment(project_config(project, **config), env)
    command = list(argv) if argv else [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA", "tests"]
    proc = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    written = trace_files(project / "traces") if (project / "traces").is_dir() else []
    return TracedRun(project, proc, [read_trace(path) for path in written])


TRACERS = ("c", "python")
"""Both collectors run every traced test: the C one is the default, the Python one its reference."""


@pytest.fixture(scope="session")
def project_runner() -> Callable[..., TracedRun]:
    return run_project


@pytest.fixture(params=TRACERS)
def traced(tmp_path: Path, request: pytest.FixtureRequest) -> Callable[..., TracedRun]:
    """``traced(files, *argv, name="project")``: ``run_project`` in ``tmp_path / name``, once per collector."""

    def run(files: dict[str, str], *argv: str, name: str = "project", **options: object) -> TracedRun:
        options.setdefault("tracer", request.param)
        return run_project(tmp_path / name, files, *argv, **options)

    return run


@pytest.fixture
def python_reference(monkeypatch: pytest.MonkeyPatch) -> Callable[[], Any]:
    """``with python_reference():`` runs histeg with the Python splitter and decoder."""

    @contextmanager
    def forced() -> Iterator[None]:
        with monkeypatch.context() as patch:
            patch.setattr(seal, "_decode", None)
            assert not seal.native()
            yield

    return forced


def keyed_tracer(ids: Any) -> Any:
    """A C tracer bound to ``ids`` (a ``ValueIds``) that answers keyed values itself, outside any traced run."""
    from histeg.tracing import native

    if not native.available():
        pytest.skip("the C collector is not built here")
    tracer = native._ctracer.Tracer(
        lambda code: None, lambda: 0, lambda index, data: None, ids.by_type, ids.by_value, ids.id_of, True, 64, lambda code, on: None, 64
    )
    tracer.keyed(ids.native_tables())
    return tracer


@pytest.fixture
def pair() -> tuple[Any, Any]:
    """(C tracer, ValueIds) over one value table."""
    from histeg.tracing.value_ids import ValueIds
    from histeg.tracing.values import Abstraction

    ids = ValueIds(lambda *record: None, Abstraction())
    return keyed_tracer(ids), ids


def seen(ids: Any, value: Any) -> int:
    """The id of ``value`` once ``id_of`` has met its class (the first value of a class is abstracted the long way)."""
    ids.id_of(value)
    return ids.id_of(value)
