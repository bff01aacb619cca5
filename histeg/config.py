"""A version's own settings: where its code is, how to build it, what to ignore; stored in version.json.

Weakest first: the table's defaults and what the snapshot shows (``src/``,
``tests/``), the ``[tool.histeg]`` table of the version's own
``pyproject.toml``, then what the user set in a file or with flags
(``histeg.settings``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from histeg.records.history import Version
from histeg.settings.files import CONFIG_FILE, read_toml_table
from histeg.settings.load import convert, option_for
from histeg.settings.model import Settings
from histeg.settings.table import PER_VERSION
from histeg.tracing.selection import DEFAULT_IGNORED_FUNCTIONS, IgnoreRule

__all__ = ["CONFIG_FILE", "DEFAULT_IGNORED_FUNCTIONS", "VersionSettings", "read_toml_table", "resolve_version_settings"]


@dataclass
class VersionSettings:
    """Where a version keeps its code and how to build it; stored in version.json."""

    sources: list[str]
    tests: list[str]
    build_command: str | None = None
    ignore: IgnoreRule = field(default_factory=IgnoreRule)

    def to_json(self) -> dict[str, Any]:
        return {
            "sourcesIn": self.sources,
            "testsIn": self.tests,
            "commandToBuild": self.build_command,
            "ignoredModulesByPrefix": list(self.ignore.prefixes),
            "ignoredModulesBySuffix": list(self.ignore.suffixes),
            "ignoredDirectories": list(self.ignore.directories),
            "ignoredFunctionsByName": list(self.ignore.functions),
        }

    @classmethod
    def of(cls, version: Version) -> VersionSettings:
        """The settings a version was extracted with."""
        return cls.from_json(version.to_builtins())

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> VersionSettings:
        return cls(
            sources=list(data["sourcesIn"]),
            tests=list(data["testsIn"]),
            build_command=data.get("commandToBuild"),
            ignore=IgnoreRule(
                prefixes=tuple(data["ignoredModulesByPrefix"]),
                suffixes=tuple(data["ignoredModulesBySuffix"]),
                directories=tuple(data["ignoredDirectories"]),
                functions=tuple(data["ignoredFunctionsByName"]),
            ),
        )


def resolve_version_settings(snapshot: Path, project: tuple[str, Mapping[str, Any]], settings: Settings) -> VersionSettings:
    """Settings of one extracted version: ``project`` is ``(origin, [tool.histeg] of its pyproject.toml)``.

    The project's table is checked against the same option table as the
    user's: an unknown key or a bad value is an error naming the key and the
    version's file. Run-wide keys there (``timeout``, ...) are the user's
    settings when they name that file with ``--config``, and are skipped here.
    """
    values = {option.key: option.default for option in PER_VERSION}
    origin, table = project
    for key, raw in table.items():
        option = option_for(key, origin)
        if option.per_version:
            values[key] = convert(option, raw, origin)
    for option in PER_VERSION:
        if settings.given(option.key):
            values[option.key] = settings.value(option.key)
    sources = values["sources"] if values["sources"] is not None else ["src"] if (snapshot / "src").is_dir() else ["."]
    tests = values["tests"] if values["tests"] is not None else [name for name in ("tests", "test") if (snapshot / name).is_dir()][:1]
    return VersionSettings(
        sources=list(sources),
        tests=list(tests),
        build_command=values["build"],
        ignore=IgnoreRule(values["ignore-prefixes"], values["ignore-suffixes"], values["ignore-directories"], values["ignore-functions"]),
    )
