"""Settings: defaults, then ``[tool.histeg]`` tables, then command-line flags.

Order of precedence, weakest first: built-in defaults, the analysed
version's own ``pyproject.toml``, a ``histeg.toml`` given by the user (or
found in the working directory), flags. Keys are spelled as in TOML
(``ignore-prefixes``); flags use the same names.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from histeg.errors import HistegError

DEFAULT_IGNORED_FUNCTIONS = ("__repr__", "__str__", "__hash__", "__eq__")
CONFIG_FILE = "histeg.toml"


def read_toml_table(path: Path, text: str | None = None) -> dict[str, Any]:
    """The ``[tool.histeg]`` table of a TOML file (``{}`` when absent)."""
    try:
        data = tomllib.loads(text if text is not None else path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise HistegError(f"invalid TOML in {path}: {exc}") from None
    except OSError as exc:
        raise HistegError(f"cannot read {path}: {exc.strerror}") from None
    table = data.get("tool", {}).get("histeg", {})
    if not isinstance(table, dict):
        raise HistegError(f"[tool.histeg] in {path} must be a table")
    return table


def user_config(explicit: Path | None) -> dict[str, Any]:
    """The user's histeg.toml: the one named on the command line, else ./histeg.toml."""
    if explicit is not None:
        if not explicit.is_file():
            raise HistegError(f"configuration file {explicit} does not exist")
        return read_toml_table(explicit)
    local = Path.cwd() / CONFIG_FILE
    return read_toml_table(local) if local.is_file() else {}


@dataclass
class IgnoreSettings:
    """What the tracer and the analyses leave out (thesis figure 4.3)."""

    prefixes: list[str] = field(default_factory=list)
    suffixes: list[str] = field(default_factory=list)
    directories: list[str] = field(default_factory=list)
    functions: list[str] = field(default_factory=lambda: list(DEFAULT_IGNORED_FUNCTIONS))


@dataclass
class VersionSettings:
    """Where a version keeps its code and how to build it; stored in version.json."""

    sources: list[str]
    tests: list[str]
    build_command: str | None = None
    ignore: IgnoreSettings = field(default_factory=IgnoreSettings)

    def to_json(self) -> dict[str, Any]:
        return {
            "sourcesIn": self.sources,
            "testsIn": self.tests,
            "commandToBuild": self.build_command,
            "ignoredModulesByPrefix": self.ignore.prefixes,
            "ignoredModulesBySuffix": self.ignore.suffixes,
            "ignoredDirectories": self.ignore.directories,
            "ignoredFunctionsByName": self.ignore.functions,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> VersionSettings:
        return cls(
            sources=list(data["sourcesIn"]),
            tests=list(data["testsIn"]),
            build_command=data.get("commandToBuild"),
            ignore=IgnoreSettings(
                prefixes=list(data["ignoredModulesByPrefix"]),
                suffixes=list(data["ignoredModulesBySuffix"]),
                directories=list(data["ignoredDirectories"]),
                functions=list(data["ignoredFunctionsByName"]),
            ),
        )


_LIST_KEYS = {
    "sources": "sources",
    "tests": "tests",
    "ignore-prefixes": "prefixes",
    "ignore-suffixes": "suffixes",
    "ignore-directories": "directories",
    "ignore-functions": "functions",
}


def _as_list(key: str, value: Any, origin: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(value)
    raise HistegError(f"'{key}' in {origin} must be a string or a list of strings")


def resolve_version_settings(snapshot: Path, *layers: tuple[str, Mapping[str, Any]]) -> VersionSettings:
    """Settings for one extracted version: detected defaults overlaid by ``layers``.

    Each layer is ``(origin, table)``; later layers win. Detection looks at the
    snapshot: ``src/`` if present else the root for sources, ``tests/`` or
    ``test/`` for tests.
    """
    sources = ["src"] if (snapshot / "src").is_dir() else ["."]
    tests = [name for name in ("tests", "test") if (snapshot / name).is_dir()][:1]
    settings = VersionSettings(sources=sources, tests=tests)
    ignore_values = asdict(settings.ignore)
    for origin, table in layers:
        for key, value in table.items():
            if value is None:
                continue
            if key == "build":
                if not isinstance(value, str):
                    raise HistegError(f"'build' in {origin} must be a string")
                settings.build_command = value
            elif key in ("sources", "tests"):
                setattr(settings, key, _as_list(key, value, origin))
            elif key in _LIST_KEYS:
                ignore_values[_LIST_KEYS[key]] = _as_list(key, value, origin)
    settings.ignore = IgnoreSettings(**ignore_values)
    for directory in [*settings.sources, *settings.tests]:
        if Path(directory).is_absolute() or ".." in Path(directory).parts:
            raise HistegError(f"directory '{directory}' must be relative to the repository root and stay inside it")
    return settings

