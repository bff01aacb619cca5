"""The files a pure-Python build backend reads to fill a project's ``dynamic`` metadata, when they are all it reads.

A version read from a file (hatchling's ``[tool.hatch.version] path``, setuptools'
``attr``/``file``, flit's module, pdm's ``source = "file"``) changes only when that
file does: keyed by it, an install is reused across the commits that leave it alone.
Each backend's own rule is followed: setuptools and flit read an attribute without
running code only when it is assigned a literal (else they import the module, and
with it anything); hatchling's default source matches a regular expression in the
file. Anything else (a version from git or the environment, code run to compute it,
a metadata hook) may depend on more, and gives None.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

VERSION_NAME = "__version__"


def dynamic_metadata_files(snapshot: Path, pyproject: dict[str, Any]) -> list[Path] | None:
    """The files the backend reads for every ``dynamic`` field of ``[project]``; None when one may depend on more."""
    fields = pyproject.get("project", {}).get("dynamic", [])
    if not isinstance(fields, list) or not fields:
        return []
    backend = pyproject.get("build-system", {}).get("build-backend")
    tool = pyproject.get("tool", {})
    found: list[Path] = []
    for name in fields:
        if backend == "hatchling.build":
            files = _hatch(snapshot, tool.get("hatch", {}), name)
        elif backend == "setuptools.build_meta":
            files = _setuptools(snapshot, tool.get("setuptools", {}), name)
        elif backend == "flit_core.buildapi":
            files = _flit(snapshot, pyproject, name)
        elif backend == "pdm.backend":
            files = _pdm(snapshot, tool.get("pdm", {}), name)
        else:
            files = None
        if files is None:
            return None
        found += files
    return found


def _hatch(snapshot: Path, hatch: dict[str, Any], name: str) -> list[Path] | None:
    if name != "version" or hatch.get("metadata", {}).get("hooks"):
        return None
    version = hatch.get("version", {})
    if version.get("source", "regex") != "regex" or not isinstance(version.get("path"), str):
        return None
    return existing_files(snapshot, [version["path"]])


def _setuptools(snapshot: Path, setuptools: dict[str, Any], name: str) -> list[Path] | None:
    directive = setuptools.get("dynamic", {}).get(name.replace("-", "_"), setuptools.get("dynamic", {}).get(name))
    if not isinstance(directive, dict):
        return None  # a field only setup.py could fill, or a table per extra (optional-dependencies): not followed
    if "file" in directive:
        files = directive["file"]
        return existing_files(snapshot, [files] if isinstance(files, str) else files)
    target = directive.get("attr")
    if not isinstance(target, str) or "." not in target:
        return None
    module, attribute = target.rsplit(".", 1)
    package_dir = setuptools.get("package-dir", {})
    found = module_file(snapshot, module, package_dir) if isinstance(package_dir, dict) else None
    return [found] if found is not None and assigns_literal(found, attribute) else None


def _flit(snapshot: Path, pyproject: dict[str, Any], name: str) -> list[Path] | None:
    if name not in ("version", "description"):
        return None
    module = pyproject.get("tool", {}).get("flit", {}).get("module", {}).get("name") or str(pyproject["project"].get("name", ""))
    found = module_file(snapshot, module.replace("-", "_"), {}) if module else None
    if found is None or (name == "version" and not assigns_literal(found, VERSION_NAME)):
        return None
    return [found]


def _pdm(snapshot: Path, pdm: dict[str, Any], name: str) -> list[Path] | None:
    version = pdm.get("version", {})
    if name != "version" or version.get("source") != "file" or not isinstance(version.get("path"), str):
        return None
    return existing_files(snapshot, [version["path"]])


def existing_files(snapshot: Path, names: Any) -> list[Path] | None:
    """The named files, each a regular file inside the snapshot; None when one is not (the build would fail, or read
    something else)."""
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        return None
    root = snapshot.resolve()
    paths = [snapshot / name for name in names]
    if not all(path.is_file() and not path.is_symlink() and path.resolve().is_relative_to(root) for path in paths):
        return None
    return paths


def module_file(snapshot: Path, module: str, package_dir: dict[str, str]) -> Path | None:
    """The file of a dotted module as setuptools finds it: under ``package_dir``'s folder for its top package, or for
    every package (``""``), else in the flat or the ``src`` layout; a package's ``__init__.py``, else a ``.py`` file."""
    top, *rest = module.split(".")
    if isinstance(package_dir.get(top), str):
        bases = [snapshot.joinpath(package_dir[top], *rest)]
    elif isinstance(package_dir.get(""), str):
        bases = [snapshot.joinpath(package_dir[""], top, *rest)]
    else:
        bases = [snapshot.joinpath(top, *rest), snapshot.joinpath("src", top, *rest)]
    for base in bases:
        for candidate in (base / "__init__.py", base.with_name(base.name + ".py")):
            found = existing_files(snapshot, [candidate.relative_to(snapshot).as_posix()])
            if found:
                return found[0]
    return None


def assigns_literal(path: Path, attribute: str) -> bool:
    """Whether the module assigns ``attribute`` a literal at its top level, as a backend reads it without importing."""
    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return False
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if any(isinstance(target, ast.Name) and target.id == attribute for target in targets):
            try:
                ast.literal_eval(value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                return False
            return True
    return False
