"""What a version declares it needs to run its tests, read from its own files.

Read, never executed: ``pyproject.toml`` (``[project]`` dependencies, optional
dependencies named like test or dev, PEP 735 dependency groups, Poetry's
tables) and ``requirements*.txt``. References to the project itself (``-e .``,
``pkg[test]`` inside ``pkg``'s own extras) are resolved here, because the
project is installed per version, apart from the shared environment.
"""

from __future__ import annotations

import configparser
import hashlib
import re
import tomllib
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from histeg.envs.poetry import poetry_requirement
from histeg.records.build import Declarations

TEST_EXTRAS = ("test", "tests", "testing", "dev")
"""Optional-dependency extras and dependency groups that hold what the tests need."""
REQUIREMENT_FILES = ("requirements*.txt", "*-requirements.txt", "requirements/*.txt")
SCM_BUILDERS = {
    "setuptools-scm": "setuptools-scm",
    "setuptools_scm": "setuptools-scm",
    "hatch-vcs": "hatch-vcs",
    "versioningit": "versioningit",
    "dunamai": "dunamai",
    "poetry-dynamic-versioning": "poetry-dynamic-versioning",
}
"""Build requirements that derive the version from git metadata, which a snapshot lacks."""
KEY_VERSION = 1
"""Part of every environment key: bump when what goes into an environment changes."""


def environment_key(declarations: Declarations, python_version: str, extra: str = "") -> str:
    """The environment's name: what goes into it and the interpreter's version."""
    text = "\n".join([str(KEY_VERSION), python_version, *declarations.requirements, "--", extra])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class DeclarationError(ValueError):
    """A declaration file that cannot be read: the message names the file."""


def read_declarations(snapshot: Path) -> Declarations:
    pyproject = _toml(snapshot / "pyproject.toml")
    project = _table(pyproject, "project")
    name = project.get("name") or _poetry(pyproject).get("name")
    own = canonicalize_name(name) if isinstance(name, str) else None
    sources: list[str] = ["pyproject.toml"] if pyproject else []
    wanted: list[str] = []
    wanted += _strings(project.get("dependencies", []), "project.dependencies")
    extras = project.get("optional-dependencies", {})
    wanted += [item for extra in TEST_EXTRAS for item in _strings(extras.get(extra, []), f"optional-dependencies.{extra}")]
    wanted += _groups(pyproject.get("dependency-groups", {}))
    wanted += _poetry_requirements(_poetry(pyproject))
    for path in _requirement_files(snapshot):
        sources.append(path.relative_to(snapshot).as_posix())
        wanted += _requirement_file(path, snapshot, set())
    requirements = _resolve_self(wanted, own, extras)
    for plugin in ("pytest", *_plugins_of_options(snapshot, pyproject)):
        if not any(_name(item) == plugin for item in requirements):
            requirements.add(plugin)
    build_requires = _table(pyproject, "build-system").get("requires", [])
    scm = next((SCM_BUILDERS[n] for item in build_requires if (n := _name(item) or "") in SCM_BUILDERS), None)
    if scm is None and "setuptools_scm" in _table(pyproject, "tool"):
        scm = "setuptools-scm"
    installable = "build-system" in pyproject or (snapshot / "setup.py").is_file() or (snapshot / "setup.cfg").is_file()
    requires_python = project.get("requires-python") or _poetry_python(_poetry(pyproject))
    return Declarations(
        requirements=tuple(sorted(requirements)),
        requires_python=requires_python if isinstance(requires_python, str) else None,
        name=name if isinstance(name, str) else None,
        installable=installable,
        scm=scm,
        sources=tuple(sources),
    )


def _plugins_of_options(snapshot: Path, pyproject: dict[str, Any]) -> list[str]:
    """Plugins whose options the version's pytest configuration passes on every run (``addopts``): without them
    pytest stops with a usage error before any test. Only pytest-cov is added, because histeg then switches it off
    (``--no-cov``, see ``histeg.build``): its options are accepted and nothing is measured or written. Every
    configuration file pytest reads is looked at, whichever wins: a plugin too many is inert."""
    addopts = [_string(_table(pyproject, "tool", "pytest", "ini_options").get("addopts"))]
    for name, section in (("pytest.ini", "pytest"), (".pytest.ini", "pytest"), ("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        addopts.append(_ini_option(snapshot / name, section, "addopts"))
    options = " ".join(addopts).split()
    return ["pytest-cov"] if any(option.startswith("--cov") for option in options) else []


def _table(document: dict[str, Any], *keys: str) -> dict[str, Any]:
    """The table at ``keys`` of a TOML document; empty where a key is missing or names no table (old versions' files
    hold anything)."""
    for key in keys:
        value = document.get(key)
        document = value if isinstance(value, dict) else {}
    return document


def _string(value: Any) -> str:
    """An ``addopts`` value: a string, or a list of them in pyproject.toml."""
    if isinstance(value, list):
        return " ".join(item for item in value if isinstance(item, str))
    return value if isinstance(value, str) else ""


def _ini_option(path: Path, section: str, option: str) -> str:
    """An option of an INI file, or "" when the file, the section or the option is missing or unreadable:
    a broken file of an old version is pytest's to report, in the run's log."""
    if not path.is_file() or path.is_symlink():
        return ""
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(path.read_text(encoding="utf-8"))
        return parser.get(section, option, fallback="")
    except (OSError, UnicodeDecodeError, configparser.Error):
        return ""


def _toml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise DeclarationError(f"{path.name}: {exc}") from None


def _poetry(pyproject: dict[str, Any]) -> dict[str, Any]:
    return _table(pyproject, "tool", "poetry")


def _strings(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise DeclarationError(f"pyproject.toml: {where} must be a list of strings")
    return list(value)


def _groups(groups: Any, names: tuple[str, ...] = TEST_EXTRAS) -> list[str]:
    """PEP 735 groups, following ``{include-group = ...}`` (each group once)."""
    if not isinstance(groups, dict):
        return []
    result: list[str] = []
    seen: set[str] = set()
    pending = [name for name in names if name in groups]
    while pending:
        group = pending.pop()
        if group in seen:
            continue
        seen.add(group)
        for item in groups.get(group, []):
            if isinstance(item, str):
                result.append(item)
            elif isinstance(item, dict) and isinstance(item.get("include-group"), str):
                pending.append(item["include-group"])
    return result


def _poetry_requirements(poetry: dict[str, Any]) -> list[str]:
    tables = [poetry.get("dependencies", {}), poetry.get("dev-dependencies", {})]
    groups = poetry.get("group", {})
    if isinstance(groups, dict):
        tables += [groups[name].get("dependencies", {}) for name in TEST_EXTRAS if isinstance(groups.get(name), dict)]
    result = []
    for table in tables:
        if isinstance(table, dict):
            result += [req for name, spec in table.items() if name.lower() != "python" and (req := poetry_requirement(name, spec))]
    return result


def _poetry_python(poetry: dict[str, Any]) -> str | None:
    spec = poetry.get("dependencies", {}).get("python") if isinstance(poetry.get("dependencies"), dict) else None
    if not isinstance(spec, str):
        return None
    requirement = poetry_requirement("python", spec)
    return requirement.removeprefix("python") or None if requirement else None


def _requirement_files(snapshot: Path) -> list[Path]:
    found = {path for pattern in REQUIREMENT_FILES for path in snapshot.glob(pattern) if path.is_file()}
    return sorted(found)


def _requirement_file(path: Path, snapshot: Path, seen: set[Path]) -> list[str]:
    """Requirement lines, with ``-r`` includes followed inside the snapshot; options, local paths and
    editable installs (the project itself, mostly) are left out: the environment is shared."""
    resolved = path.resolve()
    if resolved in seen or not resolved.is_relative_to(snapshot.resolve()):
        return []
    seen.add(resolved)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise DeclarationError(f"{path.relative_to(snapshot)}: {exc}") from None
    result = []
    for raw in lines:
        line = re.sub(r"(^|\s)#.*$", "", raw).strip()
        if not line:
            continue
        include = re.match(r"^(-r|--requirement)\s*=?\s*(\S+)$", line)
        if include:
            result += _requirement_file(path.parent / include.group(2), snapshot, seen)
        elif not line.startswith(("-", ".", "/", "file:")) and _name(line):
            result.append(line)
    return result


def _name(requirement: str) -> str | None:
    try:
        return canonicalize_name(Requirement(requirement).name)
    except InvalidRequirement:
        return None


def _resolve_self(wanted: list[str], own: str | None, extras: Any) -> set[str]:
    """Requirements with references to the project itself replaced by the extras they name."""
    result: set[str] = set()
    pending = list(wanted)
    expanded: set[str] = set()
    while pending:
        item = pending.pop()
        try:
            requirement = Requirement(item)
        except InvalidRequirement as exc:
            raise DeclarationError(f"invalid requirement {item!r}: {exc}") from None
        if own is None or canonicalize_name(requirement.name) != own:
            result.add(str(requirement))
            continue
        for extra in sorted(requirement.extras - expanded):
            expanded.add(extra)
            if isinstance(extras, dict):
                pending += [entry for entry in extras.get(extra, []) if isinstance(entry, str)]
    return result
