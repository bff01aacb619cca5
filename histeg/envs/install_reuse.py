"""An earlier version's install of the project, taken instead of building it again when it cannot differ.

Runs import the project's code from their copy of the snapshot; the install in
the version's ``site`` folder gives its metadata (version, entry points, pytest
plugins). That metadata is made by the build backend from the files at the
snapshot's root (``pyproject.toml``, ``setup.cfg``, a build hook's script, the readme and licence files)
and the files ``dynamic`` fields are read from (a version in the package's ``__init__.py``: ``dynamic_metadata``),
and by a ``setup.py`` that only declares (``setup_script``), unless the build can read more: another ``setup.py``
runs any code, a version derived from git changes with every commit, one computed by running the project's code
may depend on any file, and a backend that compiles builds from every source. Only when none of that holds
is an install keyed by those files (a changelog nothing names is not one) and the interpreter, and a version with
the key of a finished install (that generated no file in the sources) gets a
hard-linked copy of it: the same files, made in milliseconds.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import tomllib
from pathlib import Path

from histeg.envs.dynamic_metadata import dynamic_metadata_files
from histeg.envs.setup_script import setup_cfg_files, setup_script_files
from histeg.errors import HistegError
from histeg.records.build import Build, Declarations
from histeg.store import OutputStore, force_rmtree

KEY_FORMAT = 3
"""Part of every key: a change of what a key covers makes every earlier key another."""
PURE_PYTHON_BACKENDS = frozenset(
    {"hatchling.build", "flit_core.buildapi", "setuptools.build_meta", "poetry.core.masonry.api", "pdm.backend", "uv_build"}
)
"""Backends that copy Python files and write metadata; others (meson-python, scikit-build-core, maturin) compile."""
CONFIGURATION_FILES = frozenset({"pyproject.toml", "setup.cfg", "MANIFEST.in"})
NAMED_BY_BACKENDS = ("README", "LICENSE", "LICENCE", "COPYING", "NOTICE", "AUTHORS")
"""Root files backends take by their names alone (a readme, licence files), whether or not the configuration names them."""
URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"']*")


def install_key(snapshot: Path, python: str, declarations: Declarations) -> str | None:
    """What the install depends on, as a key; None when it may depend on more than the files it reads can say."""
    if declarations.scm is not None:
        return None
    try:
        pyproject = (
            tomllib.loads((snapshot / "pyproject.toml").read_text(encoding="utf-8")) if (snapshot / "pyproject.toml").exists() else {}
        )
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    if pyproject.get("build-system", {}).get("build-backend", "setuptools.build_meta") not in PURE_PYTHON_BACKENDS:
        return None  # no backend named: setuptools' legacy one
    if "ext-modules" in pyproject.get("tool", {}).get("setuptools", {}):
        return None
    read = [setup_script_files(snapshot), setup_cfg_files(snapshot), dynamic_metadata_files(snapshot, pyproject)]
    if any(files is None for files in read):
        return None
    files = {
        path.relative_to(snapshot).as_posix(): path for path in [*_read_by_the_build(snapshot), *(f for found in read for f in found or [])]
    }
    digest = hashlib.sha256(f"{KEY_FORMAT}\n{python}\n".encode())
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + files[name].read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _read_by_the_build(snapshot: Path) -> list[Path]:
    """The root files a pure-Python backend may read: its configuration, build hook scripts, the files backends take
    by their names (readme, licence, notice, authors) and every file the configuration names outside a URL. A changelog or a CI file
    nothing names is not one of them: a commit touching only those keeps the install."""
    files = [path for path in sorted(snapshot.iterdir()) if path.is_file() and not path.is_symlink()]
    configuration = " ".join(path.read_text(encoding="utf-8", errors="replace") for path in files if path.name in CONFIGURATION_FILES)
    configuration = URL.sub(" ", configuration)  # a changelog's address (``.../blob/main/CHANGES``) is not a file the build reads
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
