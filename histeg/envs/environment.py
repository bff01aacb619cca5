"""Virtual environments shared by versions with equal declarations, made with uv and never changed after.

An environment's folder is named by the key of what went into it (the
declared requirements, the interpreter's version, the build command), so
consecutive versions with the same declarations share one, and a folder that
exists complete is right by construction. It is made under a lock (another
histeg process waits, then reuses it) and marked complete last; a folder
without the mark was left by a run that died and is made again. uv first
tries its cache alone (offline), then the index.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from histeg.envs.declarations import environment_key
from histeg.envs.interpreter import Interpreter
from histeg.envs.uv import last_error, run_uv
from histeg.errors import HistegError
from histeg.processes.process import pinned_environment, run_process
from histeg.records.build import Declarations, Environment, EnvironmentMark
from histeg.store import force_rmtree

MARK = EnvironmentMark.FILE
REQUIREMENTS = "histeg-requirements.txt"
COMPILED = "histeg-compiled"
"""Marks an environment whose installed modules have their bytecode written (``compile_installed``)."""
COMPILE_TIMEOUT_SECONDS = 600.0
NOT_COMPILED = r"/site-packages/pip/"
"""Left uncompiled: pip (seeded into every environment, a third of its size) serves build commands, not test runs."""


class BuildFailure(HistegError):
    """A version cannot be made to run: recorded in its build record, the version is skipped."""


@contextmanager
def locked_file(path: Path) -> Iterator[None]:
    """One process at a time makes what ``path`` guards (an environment, a tool's environment); the others wait."""
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ensure_environment(
    root: Path,
    declarations: Declarations,
    interpreter: Interpreter,
    log: Path,
    build_command: str | None = None,
    groups: Path | None = None,
) -> Environment:
    """The environment for ``declarations`` on ``interpreter``, made when missing; uv's output goes to ``log``,
    and its process groups are recorded in ``groups`` while they run."""
    key = environment_key(declarations, interpreter.version, extra=build_command or "")
    path = root / key
    python = path / "bin" / "python"
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HistegError(f"cannot create the environments folder {root}: {exc.strerror}") from None
    with locked_file(root / f"{key}.lock"):
        if (path / MARK).is_file() and python.exists():
            with log.open("a", encoding="utf-8") as handle:
                handle.write(f"reusing environment {path}\n")
            compile_installed(path, log, groups)  # made by a histeg that did not compile it
            return Environment(python=str(python), version=interpreter.version, key=key, shared=True, created=False, seconds=0.0)
        if path.exists():
            force_rmtree(path)  # left half-made by a run that died
        started = time.monotonic()
        made = run_uv(["venv", "--seed", "--quiet", "--python", interpreter.path, str(path)], log, groups=groups)
        if not made.ok:
            force_rmtree(path)
            raise BuildFailure(f"cannot create a virtual environment with Python {interpreter.version}: {last_error(made.output)}")
        (path / REQUIREMENTS).write_text("".join(f"{line}\n" for line in declarations.requirements), encoding="utf-8")
        install = ["pip", "install", "--python", str(python), "-r", str(path / REQUIREMENTS)]
        done = run_uv([*install, "--offline"], log, groups=groups)
        if not done.ok:
            done = run_uv(install, log, groups=groups)
        if not done.ok:
            force_rmtree(path)
            raise BuildFailure(f"cannot install the declared requirements: {last_error(done.output)}")
        compile_installed(path, log, groups)
        seconds = round(time.monotonic() - started, 3)
        EnvironmentMark(
            key=key,
            python=interpreter.path,
            python_version=interpreter.version,
            declarations=declarations,
            build_command=build_command,
            seconds=seconds,
        ).write(path / MARK)
        return Environment(python=str(python), version=interpreter.version, key=key, shared=True, created=True, seconds=seconds)


def compile_installed(path: Path, log: Path, groups: Path | None = None) -> None:
    """Write the bytecode of every module installed in the environment at ``path``, once. uv installs without it, and
    traced runs never write any (the snapshot stays as extracted): without it every traced run and every re-run
    compiled pytest and the project's dependencies again (0.6 s of CPU per process on a date library's environment).
    Bytecode changes no module's behaviour. A file that does not compile (a package's test data) is left as it is."""
    if (path / COMPILED).is_file():
        return
    folders = sorted(str(folder) for folder in path.glob("lib*/python*/site-packages") if not folder.parent.parent.is_symlink())
    if folders:
        python = path / "bin" / "python"
        done = run_process(
            [str(python), "-m", "compileall", "-q", "-j", "0", "-x", NOT_COMPILED, *folders],
            path,
            pinned_environment(),
            COMPILE_TIMEOUT_SECONDS,
            groups=groups,
        )
        with log.open("a", encoding="utf-8") as handle:
            handle.write(f"compiled the installed modules of {path}: exit {done.exit_code}\n")
        if done.timed_out or done.start_error:
            return  # the environment works without it; the next use tries again
    (path / COMPILED).touch()


def activated(python: str, base: dict[str, str], shims: Path) -> dict[str, str]:
    """``base`` with ``python``, ``python3`` and ``pip`` meaning the interpreter ``python``
    (through links in ``shims`` when it is not a virtual environment's)."""
    env = dict(base)
    bin_dir = Path(python).parent
    entries = [str(bin_dir)]
    venv = bin_dir.parent
    if (venv / "pyvenv.cfg").is_file():
        env["VIRTUAL_ENV"] = str(venv)
    else:
        env.pop("VIRTUAL_ENV", None)
    if not (bin_dir / "python").exists() or (bin_dir / "python").resolve() != Path(python).resolve():
        _write_shims(shims, python)
        entries.insert(0, str(shims))
    env.pop("PYTHONHOME", None)
    rest = [part for part in env.get("PATH", os.defpath).split(os.pathsep) if part and part not in entries]
    env["PATH"] = os.pathsep.join([*entries, *rest])
    return env


def _write_shims(folder: Path, python: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("python", "python3"):
        link = folder / name
        if not (link.is_symlink() and os.readlink(link) == python):
            link.unlink(missing_ok=True)
            link.symlink_to(python)
    pip = folder / "pip"
    pip.write_text(f'#!/bin/sh\nexec "{python}" -m pip "$@"\n', encoding="utf-8")
    pip.chmod(0o755)
