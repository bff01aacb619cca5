"""The environment that builds a project's wheels: its declared build requirements, made once and kept.

Installing a project from its source (``uv pip install DIR``) resolves it first,
which runs the build backend in an isolated environment made for that build,
then builds the wheel in another: on a setuptools-scm project that was 6 s of a
new version's 9 s of build. A build environment made once per set of build
requirements and interpreter version (beside the versions' environments, under
the same lock and completion mark) lets the backend build the wheel without
isolation: one run of the backend, about 1 s. Where it cannot be made, or the
build needs what it lacks (requirements a backend asks for at build time), the
caller installs from the source as before.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from histeg.envs.environment import ensure_environment
from histeg.envs.interpreter import Interpreter
from histeg.errors import HistegError
from histeg.records.build import Declarations

DEFAULT_REQUIRES = ("setuptools>=40.8.0", "wheel")
"""PEP 517's requirements for a project that declares none (a ``setup.py`` alone)."""
KEY_EXTRA = "[build-system]"
"""Keeps a build environment apart from a versions' environment with the same requirements."""


def build_requires(snapshot: Path) -> tuple[str, ...] | None:
    """``[build-system] requires`` of the snapshot's pyproject.toml (the PEP 517 default without one); None when it
    cannot be read (the caller builds in isolation, which reports the problem)."""
    path = snapshot / "pyproject.toml"
    if not path.is_file():
        return DEFAULT_REQUIRES
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8")).get("build-system")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    if table is None:
        return DEFAULT_REQUIRES
    requires = table.get("requires") if isinstance(table, dict) else None
    if not isinstance(requires, list) or not all(isinstance(item, str) for item in requires):
        return None
    return tuple(sorted(requires))


def build_environment(root: Path, snapshot: Path, interpreter: Interpreter, log: Path, groups: Path | None = None) -> str | None:
    """The interpreter of the environment that builds the snapshot's wheel, made when missing; None when it cannot be."""
    requires = build_requires(snapshot)
    if requires is None:
        return None
    declarations = Declarations(
        requirements=requires, requires_python=None, name=None, installable=False, scm=None, sources=("pyproject.toml",)
    )
    try:
        return ensure_environment(root, declarations, interpreter, log, KEY_EXTRA, groups=groups).python
    except HistegError as exc:
        with log.open("a", encoding="utf-8") as handle:
            handle.write(f"no build environment ({exc}): the project is built in isolation\n")
        return None
