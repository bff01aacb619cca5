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
from pathlib import Path
from typing import Any, Final

import msgspec

from histeg.engine.inputs import version_inputs
from histeg.envs.builder import build_environment
from histeg.envs.declarations import DeclarationError, read_declarations
from histeg.envs.environment import (
    BuildFailure,
    activated,
    ensure_environment,
)
from histeg.envs.install_reuse import copy_install, earlier_install, install_key
from histeg.envs.interpreter import Interpreter, choose, user_interpreter
from histeg.envs.project import GENERATED_BY_BUILD, install_project
from histeg.envs.runtime import BUILD, SHIMS
from histeg.envs.scm import pretend_environment, scm_version
from histeg.errors import HistegError
from histeg.processes.groups import records_folder
from histeg.processes.process import output_text, pinned_environment, run_process
from histeg.records.build import (
    Build,
    BuildStatus,
    Declarations,
    Environment,
    Neutralised,
    Project,
)
from histeg.records.history import Version, VersionSettings
from histeg.settings.model import Settings
from histeg.step import Step, StepContext, StepResult
from histeg.store import OutputStore, force_rmtree
from histeg.version import __version__

BUILD_LOG: Final = "build.log"
SUCCEEDED: BuildStatus = "succeeded"
FAILED: BuildStatus = "failed"
TIMED_OUT: BuildStatus = "timedOut"


def user_python(settings: Settings) -> str | None:
    """``--python``: an interpreter or environment used as it is; ``None``: an environment made per declarations."""
    return str(settings.python) if settings.python is not None else None


def _inputs(version: VersionSettings, settings: Settings, declarations: Declarations | None, describe: str | None) -> str:
    """A fingerprint of everything a build depends on: equal fingerprints, same build."""
    text = "\n".join(
        map(
            str,
            (
                __version__,
                Build.schema_version_expected(),
                GENERATED_BY_BUILD,  # where the generated files are kept: a build that kept them elsewhere is made again
                version.build_command,
                user_python(settings),
                settings.environments_root(),
                declarations and msgspec.to_builtins(declarations),
                describe,
            ),
        )
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def environment_exists(store: OutputStore, index: int) -> bool:
    """A successful build stays valid while its interpreter is there (shared environments may be removed by the user)
    and every file it generated is kept where runs copy it from (a build made before ``build-generated/`` is made again)."""
    try:
        record = Build.read(store.file(index, BUILD))
    except HistegError:
        return False
    kept = store.version_dir(index) / GENERATED_BY_BUILD
    generated = record.project.generated if record.project is not None else []
    return (
        record.environment is not None
        and Path(record.environment.python).exists()
        and all((kept / relative).is_file() for relative in generated)
    )


def build_version(store: OutputStore, index: int, user: Settings) -> Build:
    """Build the version and write ``build.json``; whether an earlier build is still good is the engine's decision.
    ``user``: the run's settings (``--python``, the environments folder, the build's time limit)."""
    version = store.version(index)
    settings = version.settings
    snapshot, log, path = store.snapshot(index), store.file(index, BUILD_LOG), store.file(index, BUILD)
    try:
        declarations: Declarations | None = read_declarations(snapshot)
        error = None
    except DeclarationError as exc:
        declarations, error = None, f"cannot read the version's declarations: {exc}"
    inputs = _inputs(settings, user, declarations, version.git_describe)
    log.write_text("", encoding="utf-8")
    started = time.monotonic()
    record = Build(
        index=index,
        status=FAILED,
        reason=error,
        command=settings.build_command,
        exit_code=None,
        seconds=0.0,
        log=BUILD_LOG,
        environment=None,
        declarations=declarations,
        project=None,
        neutralised=[],
        pytest_args=[],
        inputs=inputs,
    )
    if declarations is not None:
        try:
            _build(store, index, version, settings, declarations, user, record)
            record.status = record.status if record.reason else SUCCEEDED
        except BuildFailure as exc:
            record.status, record.reason = FAILED, str(exc)
    record.seconds = round(time.monotonic() - started, 3)
    record.write(path)
    return record


def _build(
    store: OutputStore, index: int, version: Version, settings: VersionSettings, declarations: Declarations, user: Settings, record: Build
) -> None:
    log, snapshot = store.file(index, BUILD_LOG), store.snapshot(index)
    try:
        python = user_python(user)
        if python:
            interpreter = user_interpreter(python, needs_pytest=True)
            environment = Environment(
                python=interpreter.path, version=interpreter.version, key=None, shared=False, created=False, seconds=0.0
            )
        else:
            interpreter = choose(declarations.requires_python)
            environment = ensure_environment(
                user.environments_root(), declarations, interpreter, log, settings.build_command, groups=records_folder(store.root)
            )
    except HistegError as exc:  # an interpreter that does not fit fails this version, not the run
        raise exc if isinstance(exc, BuildFailure) else BuildFailure(str(exc)) from None
    record.environment = environment
    record.project = Project(installed=False, version=None, generated=[], seconds=0.0)
    if declarations.installable:
        record.project = _install(store, index, version, settings, declarations, environment.python, interpreter, user)
    record.pytest_args, record.neutralised = _neutralised(environment.python)
    if settings.build_command:
        env = activated(environment.python, pinned_environment(), store.version_dir(index) / SHIMS)
        process = run_process(
            ["/bin/sh", "-c", settings.build_command], snapshot, env, user.build_timeout, groups=records_folder(store.root)
        )
        with log.open("a", encoding="utf-8") as handle:
            handle.write(f"$ {settings.build_command}\n{output_text(process)}\n")
        record.exit_code = None if process.timed_out else process.exit_code
        if process.timed_out:
            record.status, record.reason = TIMED_OUT, f"the build command timed out after {user.build_timeout:g} s"
        elif process.exit_code != 0:
            record.status, record.reason = FAILED, process.start_error or f"the build command exited with {process.exit_code}"


def _install(
    store: OutputStore,
    index: int,
    version: Version,
    settings: VersionSettings,
    declarations: Declarations,
    python: str,
    interpreter: Interpreter,
    user: Settings,
) -> Project:
    """The project installed into the version's ``site``: an earlier version's install when it cannot differ
    (``install_reuse``), else built from a copy of the snapshot."""
    snapshot, log = store.snapshot(index), store.file(index, BUILD_LOG)
    key = install_key(snapshot, python, declarations)
    earlier = earlier_install(store, index, key) if key is not None else None
    if earlier is not None:
        started = time.monotonic()
        copy_install(store.version_dir(earlier) / "site", store.version_dir(index))
        force_rmtree(store.version_dir(index) / GENERATED_BY_BUILD)
        with log.open("a", encoding="utf-8") as handle:
            handle.write(f"the project's install is version {earlier}'s: the same root files and interpreter (key {key})\n")
        seconds = round(time.monotonic() - started, 3)
        return Project(installed=True, version=None, generated=[], seconds=seconds, key=key, reused_from=earlier)
    pretend = scm_version(version.git_describe, version.git_commits, version.identifier) if declarations.scm else None
    groups = records_folder(store.root)
    installed = install_project(
        snapshot,
        store.version_dir(index),
        python,
        settings.sources,
        log,
        pretend_environment(pretend) if pretend else None,
        groups=groups,
        builder=build_environment(user.environments_root(), snapshot, interpreter, log, groups),
    )
    return Project(installed=True, version=pretend, generated=installed.generated, seconds=round(installed.seconds, 3), key=key)


PLUGIN_OPTIONS: tuple[tuple[str, str, str], ...] = (
    ("pytest_cov", "--no-cov", "coverage data and reports of pytest-cov (.coverage, coverage.xml, htmlcov)"),
    (
        "pytest_benchmark",
        "--benchmark-disable",
        (
            "pytest-benchmark's timed rounds: each benchmark calls its function once, so how often it runs no longer "
            "depends on how fast the run is (traced or not, on a busy machine or not)"
        ),
    ),
)
"""(module of a pytest plugin, the option histeg passes when it is installed, what that neutralises). Part of the build
step's inputs: a histeg that passes other options makes other traces, so builds made before are made again."""


def _neutralised(python: str) -> tuple[list[str], list[Neutralised]]:
    """pytest options that keep the project's test configuration from writing reports into the run folder or from
    timing its own work, with what each neutralises; none changes a test's outcome."""
    args = []
    neutralised = [
        Neutralised(what="pytest's cache folder", how="-p no:cacheprovider"),
        Neutralised(
            what="bytecode files written by re-runs (they start with the full run's: traces/bytecode.zst)", how="PYTHONDONTWRITEBYTECODE=1"
        ),
    ]
    probe = f"import importlib.util as u; print(*(u.find_spec(name) is not None for name in {[m for m, _, _ in PLUGIN_OPTIONS]!r}))"
    done = subprocess.run([python, "-c", probe], capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False)
    found = done.stdout.split() if done.returncode == 0 else []
    for (_, option, what), installed in zip(PLUGIN_OPTIONS, found, strict=False):
        if installed == "True":
            args.append(option)
            neutralised.append(Neutralised(what=what, how=option))
    return args, neutralised


def _build_inputs(context: StepContext, index: int) -> dict[str, Any]:
    settings = context.settings
    return {
        **version_inputs(context, index),
        "python": user_python(settings),
        "environments": settings.environments_root(),
        "pluginOptions": [option for _, option, _ in PLUGIN_OPTIONS],
    }


def _build_step(context: StepContext, index: int) -> StepResult:
    record = build_version(context.store, index, context.settings)
    summary: dict[str, Any] = {"status": record.status}
    if record.environment is not None:
        environment = record.environment
        summary |= {"environment": environment.key, "python": environment.version, "created": environment.created}
    if record.status != "succeeded":
        return StepResult(summary, f"build {record.status}: {record.reason} (see {context.store.file(index, BUILD_LOG)})")
    return StepResult(summary)


BUILD_STEP = Step(
    name="build",
    doing="building versions",
    outputs=(BUILD,),
    inputs=_build_inputs,
    run=_build_step,
    still_valid=lambda context, index: environment_exists(context.store, index),
)
