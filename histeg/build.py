"""Pipeline step 2: make each version runnable in its own environment.

In order: read what the version declares; pick the interpreter (the user's
``--python`` as it is, else histeg's own when it fits ``requires-python``,
else an installed one that does); get the shared environment for those
declarations (made with uv when missing); install the project itself into
the version's ``site`` folder, with the version string git would give when
the build derives it from git; run the user's build command with ``python``
and ``pip`` meaning that environment. Whatever fails is recorded in
``build.json`` with a one-line reason and the log, and the version is
skipped by later steps; the other versions go on. histeg's own environment
is never changed.
"""

from __future__ import annotations

import hashlib
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from histeg import __version__
from histeg.config import VersionSettings
from histeg.envs.declarations import DeclarationError, Declarations, read_declarations
from histeg.envs.environment import BuildFailure, Environment, activated, default_root, ensure_environment
from histeg.envs.interpreter import choose, user_interpreter
from histeg.envs.project import install_project
from histeg.envs.runtime import BUILD, SHIMS
from histeg.envs.scm import pretend_environment, scm_version
from histeg.errors import HistegError
from histeg.runs.process import pinned_environment, run_process
from histeg.store import VERSION, OutputStore, read_json, write_json

BUILD_LOG = "build.log"
DEFAULT_BUILD_TIMEOUT = 1800.0
SUCCEEDED, FAILED, TIMED_OUT = "succeeded", "failed", "timedOut"
SCHEMA_VERSION = 2


@dataclass(frozen=True)
class BuildRequest:
    """What the user chose about building; part of what decides reuse."""

    python: str | None = None
    """``--python``: an interpreter or environment used as it is."""
    environments: Path = field(default_factory=default_root)
    timeout: float = DEFAULT_BUILD_TIMEOUT


@dataclass
class BuildResult:
    index: int
    status: str
    reason: str | None
    command: str | None
    exit_code: int | None
    seconds: float
    environment: Environment | None = None
    declarations: Declarations | None = None
    project: dict[str, Any] | None = None
    neutralised: list[dict[str, str]] = field(default_factory=list)
    pytest_args: list[str] = field(default_factory=list)
    inputs: str = ""
    reused: bool = False

    @property
    def usable(self) -> bool:
        return self.status == SUCCEEDED

    def to_json(self) -> dict[str, Any]:
        return {
            "schemaVersion": SCHEMA_VERSION, "index": self.index, "status": self.status, "reason": self.reason,
            "command": self.command, "exitCode": self.exit_code, "seconds": round(self.seconds, 3), "log": BUILD_LOG,
            "environment": self.environment.to_json() if self.environment else None,
            "declarations": self.declarations.to_json() if self.declarations else None,
            "project": self.project, "neutralised": self.neutralised, "pytestArgs": self.pytest_args, "inputs": self.inputs,
        }


def _inputs(settings: VersionSettings, request: BuildRequest, declarations: Declarations | None, describe: str | None) -> str:
    """A fingerprint of everything a build depends on: equal fingerprints, same build."""
    text = "\n".join(map(str, (__version__, SCHEMA_VERSION, settings.build_command, request.python, request.environments,
                               declarations and declarations.to_json(), describe)))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _reusable(record: Path, inputs: str) -> dict[str, Any] | None:
    if not record.is_file():
        return None
    previous = read_json(record)
    environment = previous.get("environment") or {}
    if previous.get("schemaVersion") != SCHEMA_VERSION or previous.get("inputs") != inputs or previous.get("status") != SUCCEEDED:
        return None
    if not Path(environment.get("python", "")).exists():
        return None  # the shared environment was removed since: make it again
    return previous


def build_version(store: OutputStore, index: int, request: BuildRequest = BuildRequest(), override: bool = False) -> BuildResult:
    version = read_json(store.file(index, VERSION))
    settings = VersionSettings.from_json(version)
    snapshot, log, record = store.snapshot(index), store.file(index, BUILD_LOG), store.file(index, BUILD)
    try:
        declarations: Declarations | None = read_declarations(snapshot)
        error = None
    except DeclarationError as exc:
        declarations, error = None, f"cannot read the version's declarations: {exc}"
    inputs = _inputs(settings, request, declarations, version.get("gitDescribe"))
    previous = None if override else _reusable(record, inputs)
    if previous is not None:
        return BuildResult(index, previous["status"], previous.get("reason"), previous.get("command"), previous.get("exitCode"),
                           previous.get("seconds", 0.0), reused=True, inputs=inputs)
    log.write_text("", encoding="utf-8")
    started = time.monotonic()
    result = BuildResult(index, FAILED, error, settings.build_command, None, 0.0, declarations=declarations, inputs=inputs)
    if declarations is not None:
        try:
            _build(store, index, version, settings, declarations, request, result)
            result.status = result.status if result.reason else SUCCEEDED
        except BuildFailure as exc:
            result.status, result.reason = FAILED, str(exc)
    result.seconds = time.monotonic() - started
    write_json(record, result.to_json())
    return result


def _build(store: OutputStore, index: int, version: dict[str, Any], settings: VersionSettings, declarations: Declarations,
           request: BuildRequest, result: BuildResult) -> None:
    log, snapshot = store.file(index, BUILD_LOG), store.snapshot(index)
    try:
        if request.python:
            interpreter = user_interpreter(request.python, needs_pytest=True)
            environment = Environment(interpreter.path, interpreter.version)
        else:
            environment = ensure_environment(request.environments, declarations, choose(declarations.requires_python), log,
                                             settings.build_command)
    except HistegError as exc:  # an interpreter that does not fit fails this version, not the run
        raise exc if isinstance(exc, BuildFailure) else BuildFailure(str(exc)) from None
    result.environment = environment
    project: dict[str, Any] = {"installed": False, "version": None, "generated": [], "seconds": 0.0}
    if declarations.installable:
        pretend = scm_version(version.get("gitDescribe"), int(version.get("gitCommits") or 0), version["identifier"]) if declarations.scm else None
        installed = install_project(snapshot, store.version_dir(index), environment.python, settings.sources, log,
                                    pretend_environment(pretend) if pretend else None)
        project = {"installed": True, "version": pretend, "generated": installed.generated, "seconds": round(installed.seconds, 3)}
    result.project = project
    result.pytest_args, result.neutralised = _neutralised(environment.python)
    if settings.build_command:
        env = activated(environment, pinned_environment(), store.version_dir(index) / SHIMS)
        process = run_process(["/bin/sh", "-c", settings.build_command], snapshot, env, request.timeout)
        with log.open("a", encoding="utf-8") as handle:
            handle.write(f"$ {settings.build_command}\n--- stdout (tail) ---\n{process.stdout_tail}\n--- stderr (tail) ---\n{process.stderr_tail}\n")
        result.exit_code = None if process.timed_out else process.exit_code
        if process.timed_out:
            result.status, result.reason = TIMED_OUT, f"the build command timed out after {request.timeout:g} s"
        elif process.exit_code != 0:
            result.status, result.reason = FAILED, process.start_error or f"the build command exited with {process.exit_code}"


_PLUGINS = "import importlib.util as u; print(u.find_spec('pytest_cov') is not None)"


def _neutralised(python: str) -> tuple[list[str], list[dict[str, str]]]:
    """pytest options that keep the project's test configuration from writing reports into the run
    folder, with what each neutralises; none changes a test's outcome."""
    args = []
    neutralised = [
        {"what": "pytest's cache folder", "how": "-p no:cacheprovider"},
        {"what": "bytecode files", "how": "PYTHONDONTWRITEBYTECODE=1"},
    ]
    done = subprocess.run([python, "-c", _PLUGINS], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.stdout.strip() == "True":
        args.append("--no-cov")
        neutralised.append({"what": "coverage data and reports of pytest-cov (.coverage, coverage.xml, htmlcov)", "how": "--no-cov"})
    return args, neutralised
