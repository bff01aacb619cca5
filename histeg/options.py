"""What a run was asked to do, whatever the source (flags, config files)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class RunOptions:
    repo: str
    out: Path
    versions: list[str] = field(default_factory=list)
    all_versions: bool = False
    branch: str | None = None
    override: bool = False
    verbosity: int = 1  # 0 quiet, 1 normal, 2 verbose
    json_output: bool = False
    config: dict[str, Any] = field(default_factory=dict)
    """The user's ``[tool.histeg]`` table merged with flags that override it."""
