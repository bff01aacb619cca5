"""The ``[tool.histeg]`` table of a TOML file: the user's ``histeg.toml`` (or a ``pyproject.toml``), or a version's."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from histeg.errors import HistegError

CONFIG_FILE = "histeg.toml"
PYPROJECT = "pyproject.toml"


def read_toml_table(path: Path, text: str | None = None) -> dict[str, Any]:
    """The ``[tool.histeg]`` table of a TOML file (``{}`` when absent)."""
    try:
        data = tomllib.loads(text if text is not None else path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise HistegError(f"invalid TOML in {path}: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise HistegError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    tool = data.get("tool", {})
    table = tool.get("histeg", {}) if isinstance(tool, dict) else {}
    if not isinstance(table, dict):
        raise HistegError(f"[tool.histeg] in {path} must be a table")
    if path.name != PYPROJECT:  # a histeg.toml holds nothing else: a key beside the table is a mistake, not another tool's
        for key in data:
            if key != "tool":
                raise HistegError(f"{path}: '{key}' is outside [tool.histeg]; histeg reads that table only")
    return table


def user_file(explicit: Path | None, cwd: Path | None = None) -> Path | None:
    """The user's settings file: the one named with ``--config``, else ``./histeg.toml`` when there is one."""
    if explicit is not None:
        if not explicit.is_file():
            raise HistegError(f"configuration file {explicit} does not exist")
        return explicit
    local = (cwd or Path.cwd()) / CONFIG_FILE
    return local if local.is_file() else None
