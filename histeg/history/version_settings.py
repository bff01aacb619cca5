"""A version's own settings, resolved at extraction: where its code is, how to build it, what to ignore.

Weakest first: the table's defaults and what the snapshot shows (``src/``,
``tests/``), the ``[tool.histeg]`` table of the version's own
``pyproject.toml``, then what the user set in a file or with flags
(``histeg.settings``). They are stored in ``version.json``
(``Version.settings`` reads them back).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from histeg.records.history import VersionSettings
from histeg.settings.load import convert, option_for
from histeg.settings.table import PER_VERSION
from histeg.tracing.selection import IgnoreRule


def resolve_version_settings(snapshot: Path, project: tuple[str, Mapping[str, Any]], given: Mapping[str, Any]) -> VersionSettings:
    """Settings of one extracted version: ``project`` is ``(origin, [tool.histeg] of its pyproject.toml)``.

    The project's table is checked against the same option table as the
    user's: an unknown key or a bad value is an error naming the key and the
    version's file. Run-wide keys there (``timeout``, ...) are the user's
    settings when they name that file with ``--config``, and are skipped here.
    ``given``: the per-version settings the user set, by key (``ExtractRequest.per_version``).
    """
    values = {option.key: option.default for option in PER_VERSION}
    origin, table = project
    for key, raw in table.items():
        option = option_for(key, origin)
        if option.per_version:
            values[key] = convert(option, raw, origin)
    values.update(given)
    sources = values["sources"] if values["sources"] is not None else ["src"] if (snapshot / "src").is_dir() else ["."]
    tests = values["tests"] if values["tests"] is not None else [name for name in ("tests", "test") if (snapshot / name).is_dir()][:1]
    return VersionSettings(
        sources=list(sources),
        tests=list(tests),
        build_command=values["build"],
        ignore=IgnoreRule(values["ignore-prefixes"], values["ignore-suffixes"], values["ignore-directories"], values["ignore-functions"]),
    )
