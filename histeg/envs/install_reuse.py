"""An earlier version's install of the project, taken instead of building it again when it cannot differ.

Runs import the project's code from their copy of the snapshot; the install in
the version's ``site`` folder gives its metadata (version, entry points, pytest
plugins). That metadata is made by the build backend from the files at the
snapshot's root (``pyproject.toml``, ``setup.cfg``, a build hook's script, the readme and licence files),
unless the build can read more: a ``setup.py`` runs any code, a version derived
from git or read from the sources (``dynamic``) changes with every commit, and
a backend that compiles builds from every source. Only when none of that holds
is an install keyed by those root files (a changelog nothing names is not one) and the interpreter, and a version with
the key of a finished install (that generated no file in the sources) gets a
hard-linked copy of it: the same files, made in milliseconds.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import tomllib
from pathlib import Path

from histeg.errors import HistegError
from histeg.records.build import Build, Declarations
from histeg.store import OutputStore, force_rmtree

KEY_FORMAT = 2
"""Part of every key: a change of what a key covers makes every earlier key another."""
PURE_PYTHON_BACKENDS = frozenset(
    {"hatchling.build", "flit_core.buildapi", "setuptools.build_meta", "poetry.core.masonry.api", "pdm.backend", "uv_build"}
)
"""Backends that copy Python files and write metadata; others (meson-python, scikit-build-core, maturin) compile."""
CONFIGURATION_FILES = frozenset({"pyproject.toml", "setup.cfg", "MANIFEST.in"})
NAMED_BY_BACKENDS = ("README", "LICENSE", "LICENCE", "COPYING", "NOTICE", "AUTHORS")
"""Root files backends take by their names alone (a readme, licence files), whether or not the configuration names them."""


def install_key(snapshot: Path, python: str, declarations: Declarations) -> str | None:
    """What the install depends on, as a key; None when it may depend on more than the root files."""
    if declarations.scm is not None or (snapshot / "setup.py").exists():
        return None
    try:
        pyproject = tomllib.loads((snapshot / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    if pyproject.get("build-system", {}).get("build-backend") not in PURE_PYTHON_BACKENDS:
        return None
    if "ext-modules" in pyproject.get("tool", {}).get("setuptools", {}):
        return None
    project = pyproject.get("project", {})
    poetry = pyproject.get("tool", {}).get("poetry", {})
    static = "version" in project or ("version" in poetry and not project)
    if not static or "version" in project.get("dynamic", []):
        return None
    digest = hashlib.sha256(f"{KEY_FORMAT}\n{python}\n".encode())
    for path in _read_by_the_build(snapshot):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _read_by_the_build(snapshot: Path) -> list[Path]:
    """The root files a pure-Python backend may read: its configuration, build hook scripts, the files backends take
    by their names (readme, licence, notice, authors) and every file the configuration names. A changelog or a CI file
    nothing names is not one of them: a commit touching only those keeps the install."""
    files = [path for path in sorted(snapshot.iterdir()) if path.is_file() and not path.is_symlink()]
    configuration = " ".join(path.read_text(encoding="utf-8", errors="replace") for path in files if path.name in CONFIGURATION_FILES)
    return [
        path
        for path in files
        if path.name in CONFIGURATION_FILES
        or path.suffix == ".py"
        or path.name.upper().startswith(NAMED_BY_BACKENDS)
        or path.name in configuration
    ]


def earlier_install(store: OutputStore, index: int, key: str) -> int | None:
    """A version whose finished install has ``key`` and generated no file: the first found, its ``site`` present."""
    for other in store.extracted_indices():
        if other == index:
            continue
        try:
            build = Build.read(store.file(other, Build.FILE))
        except HistegError:
            continue
        project = build.project
        if (
            build.status == "succeeded"
            and project is not None
            and project.installed
            and project.key == key
            and not project.generated
            and (store.version_dir(other) / "site").is_dir()
        ):
            return other
    return None


def copy_install(source: Path, version_dir: Path) -> None:
    """``source`` (a ``site`` folder) as this version's ``site``, hard-linked where the file system allows; put in place
    whole, so an interrupted copy leaves no half install."""
    site = version_dir / "site"
    with tempfile.TemporaryDirectory(prefix=".install-", dir=version_dir) as scratch:
        target = Path(scratch) / "site"
        try:
            shutil.copytree(source, target, symlinks=True, copy_function=os.link)
        except OSError:  # another file system, or links not allowed: plain copies
            force_rmtree(target)
            shutil.copytree(source, target, symlinks=True)
        if site.exists():
            force_rmtree(site)
        os.replace(target, site)


__all__ = ["PURE_PYTHON_BACKENDS", "copy_install", "earlier_install", "install_key"]
