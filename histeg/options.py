"""What a run was asked to do: the repository, versions and output resolved from the settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from histeg.errors import HistegError
from histeg.settings.load import default_settings
from histeg.settings.model import Settings


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
    settings: Settings = field(default_factory=default_settings)
    """Every setting, checked, with its origin; the fields above are resolved from it."""

    @classmethod
    def of(cls, settings: Settings) -> RunOptions:
        """No versions named (flags, arguments or file): every version."""
        if not settings.repo:
            raise HistegError("no repository given: use --repo PATH|URL or 'repo' in [tool.histeg]")
        return cls(
            repo=settings.repo, out=settings.out, versions=list(settings.versions), all_versions=settings.all or not settings.versions,
            branch=settings.branch, override=settings.override, verbosity=settings.verbosity, json_output=settings.json,
            settings=settings,
        )
