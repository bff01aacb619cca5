"""What a run was asked to do: the repository, the versions and the output directory, resolved from the settings."""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from histeg.errors import HistegError
from histeg.settings.load import default_settings
from histeg.settings.model import Settings

SCOPE_FLAGS = "--versions REV..., --all, --since DATE or --last N"


@dataclass(frozen=True)
class Scope:
    """Which first-parent versions a run covers; exactly one way of choosing them is set."""

    versions: tuple[str, ...] = ()
    all: bool = False
    since: str | None = None
    last: int | None = None

    @classmethod
    def of(cls, settings: Settings) -> Scope:
        chosen = [name for name, given in (("--versions", bool(settings.versions)), ("--all", settings.all),
                                           ("--since", settings.since is not None), ("--last", settings.last is not None)) if given]
        if not chosen:
            raise HistegError(f"no versions chosen: give {SCOPE_FLAGS}")
        if len(chosen) > 1:
            raise HistegError(f"choose the versions one way: {' and '.join(chosen)} were both given")
        return cls(tuple(settings.versions), settings.all, settings.since, settings.last)


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base and Path(base).is_absolute() else Path.home() / ".cache") / "histeg" / "results"


def default_out(repo: str) -> Path:
    """A folder per repository in the user's cache: never inside the working tree, where the project's own
    pytest would collect the snapshots. Named after the repository, and told apart by a hash of where it is."""
    from histeg.locations import is_url, redact

    location = redact(repo) if is_url(repo) else str(Path(repo).expanduser().resolve())  # credentials are no part of its identity
    name = re.sub(r"[^\w.-]", "_", location.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1].removesuffix(".git")) or "repository"
    return cache_root() / f"{name}-{hashlib.sha256(location.encode()).hexdigest()[:12]}"


@dataclass
class RunOptions:
    repo: str
    out: Path
    scope: Scope = field(default_factory=lambda: Scope(all=True))
    branch: str | None = None
    override: bool = False
    verbosity: int = 1  # 0 quiet, 1 normal, 2 verbose
    json_output: bool = False
    out_chosen: bool = True
    """False when ``out`` is the default folder in the cache: it is then said where results go."""
    settings: Settings = field(default_factory=default_settings)
    """Every setting, checked, with its origin; the fields above are resolved from it."""

    @classmethod
    def of(cls, settings: Settings) -> RunOptions:
        if not settings.repo:
            raise HistegError("no repository given: use --repo PATH|URL or 'repo' in [tool.histeg]")
        return cls(
            repo=settings.repo, out=settings.out if settings.out is not None else default_out(settings.repo), scope=Scope.of(settings),
            branch=settings.branch, override=settings.override, verbosity=settings.verbosity, json_output=settings.json,
            out_chosen=settings.out is not None, settings=settings,
        )
