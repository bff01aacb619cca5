"""Which Python runs a version: the user's, histeg's own when it fits ``requires-python``, else an installed one that does.

Installed interpreters are found by asking each candidate for its version
(pyenv shims of versions that are not selected fail and are skipped):
histeg's own, ``python3.N`` on ``PATH``, pyenv's versions and uv's managed
ones. Nothing is downloaded.
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from histeg.errors import HistegError

_PROBE = "import sys; print('.'.join(map(str, sys.version_info[:3])))"
MINIMUM = (3, 12)
"""sys.monitoring: the tracer needs it in the traced interpreter."""


@dataclass(frozen=True)
class Interpreter:
    path: str
    version: str

    @property
    def minor(self) -> str:
        return ".".join(self.version.split(".")[:2])

    @property
    def release(self) -> tuple[int, ...]:
        return tuple(int(part) for part in self.version.split("."))


@functools.cache
def probe(path: str) -> Interpreter | None:
    """The interpreter at ``path`` (None when it does not run)."""
    try:
        done = subprocess.run([path, "-I", "-c", _PROBE], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    version = done.stdout.strip()
    if done.returncode != 0 or not version:
        return None
    return Interpreter(path, version)


def own() -> Interpreter:
    return Interpreter(sys.executable, ".".join(map(str, sys.version_info[:3])))


def _candidates() -> list[str]:
    names = [f"python3.{minor}" for minor in range(MINIMUM[1], 20)]
    found = [path for name in names if (path := shutil.which(name))]
    pyenv_root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    found += sorted(glob.glob(os.path.join(pyenv_root, "versions", "3.*", "bin", "python3")))
    uv_dir = os.environ.get("UV_PYTHON_INSTALL_DIR") or os.path.join(
        os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share"), "uv", "python"
    )
    found += sorted(glob.glob(os.path.join(uv_dir, "cpython-3.*", "bin", "python3")))
    return found


def installed() -> list[Interpreter]:
    """Every interpreter found, newest first, one per version."""
    seen: dict[str, Interpreter] = {}
    for path in [sys.executable, *_candidates()]:
        found = probe(path)
        if found is not None and found.version not in seen and found.release[:2] >= MINIMUM:
            seen[found.version] = found
    return sorted(seen.values(), key=lambda i: i.release, reverse=True)


def fits(interpreter: Interpreter, requires_python: str | None) -> bool:
    if not requires_python:
        return True
    try:
        return SpecifierSet(requires_python).contains(Version(interpreter.version), prereleases=True)
    except InvalidSpecifier:
        return True  # a malformed range is the build's problem, not a reason to refuse every interpreter


def choose(requires_python: str | None) -> Interpreter:
    """histeg's own interpreter when it fits, else the newest installed one that does."""
    current = own()
    if fits(current, requires_python):
        return current
    for candidate in installed():
        if fits(candidate, requires_python):
            return candidate
    have = ", ".join(i.version for i in installed()) or current.version
    raise HistegError(
        f"requires-python {requires_python!r}: no installed interpreter fits (found {have}); "
        "install one (e.g. 'uv python install') or pass --python PATH"
    )


def user_interpreter(path: str, needs_pytest: bool) -> Interpreter:
    """``--python PATH``: an interpreter or a virtual environment's folder, used as it is."""
    candidate = Path(path).expanduser()
    if candidate.is_dir():
        candidate = candidate / "bin" / "python"
    found = probe(str(candidate.absolute()))
    if found is None:
        raise HistegError(f"--python {path}: not a Python interpreter or virtual environment")
    if found.release[:2] < MINIMUM:
        raise HistegError(f"--python {path}: Python {found.version} has no sys.monitoring; histeg needs 3.12 or newer")
    if needs_pytest and not _has_pytest(found.path):
        raise HistegError(f"--python {path}: pytest is not installed there; install it ('{found.path} -m pip install pytest')")
    return Interpreter(str(candidate.absolute()), found.version)


@functools.cache
def _has_pytest(python: str) -> bool:
    """Found, not imported (an import costs 0.3 s to 0.5 s, on every ``histeg`` command): this says early that pytest
    is missing; a pytest that is there but broken fails the first run, which says why."""
    done = subprocess.run(
        [python, "-c", "import importlib.util, sys; sys.exit(importlib.util.find_spec('pytest') is None)"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    return done.returncode == 0
