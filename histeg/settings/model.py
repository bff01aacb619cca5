"""``Settings``: every option's typed value and where it came from, frozen once checked."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any

from histeg.errors import HistegError
from histeg.settings.places import default_environments, default_out
from histeg.settings.scaling import Scaling
from histeg.settings.scope import SCOPE_FLAGS, Scope

DEFAULT = "default"
"""The origin of a value nobody set."""


@dataclass(frozen=True)
class Settings:
    """One field per option of ``histeg.settings.table`` (its key with ``_``), no defaults here: the table has them.

    Per-version options (sources, tests, build, ignore-*) hold what the user
    gave; each version's own ``pyproject.toml`` fills in what they did not
    (``histeg.history.version_settings``). ``sources``/``tests`` are
    None until then: they are detected per version. The one shape of the
    settings: every step reads what it needs from here.
    """

    repo: str | None
    versions: tuple[str, ...]
    all: bool
    since: str | None
    last: int | None
    branch: str | None
    out: Path | None
    override: bool
    config: Path | None
    sources: tuple[str, ...] | None
    tests: tuple[str, ...] | None
    build: str | None
    build_timeout: float
    python: Path | None
    environments: Path | None
    ignore_prefixes: tuple[str, ...]
    ignore_suffixes: tuple[str, ...]
    ignore_directories: tuple[str, ...]
    ignore_functions: tuple[str, ...]
    verbosity: int
    json: bool
    jobs: int
    scheduler: str | None
    repeat: int
    timeout: float
    run_main: tuple[str, ...]
    run: tuple[str, ...]
    run_tests: bool
    pytest_args: tuple[str, ...]
    values: str
    tracer: str
    repr_types: tuple[str, ...]
    redact: tuple[str, ...]
    line_budget: int
    line_cap: int
    metric: tuple[str, ...]
    restrict_syntax_mapping: bool
    evidence_first: tuple[str, ...]
    export_flat: bool
    generate_for_syntax: bool
    generate_for_divergence: bool
    confirm: int
    confirm_sample: int
    merges: bool
    merge_distance: int
    compare_jobs: int
    scaling: Scaling
    origins: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    """Key -> ``default``, the file it was read from, or the flag that gave it."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "origins", MappingProxyType(dict(self.origins)))

    def value(self, key: str) -> Any:
        return getattr(self, key.replace("-", "_"))

    def origin(self, key: str) -> str:
        return self.origins.get(key, DEFAULT)

    def given(self, key: str) -> bool:
        """Set by the user (a file or a flag), not the table's default."""
        return self.origin(key) != DEFAULT

    def repository(self) -> str:
        if not self.repo:
            raise HistegError("no repository given: use --repo PATH|URL or 'repo' in [tool.histeg]")
        return self.repo

    def scope(self) -> Scope:
        """Which versions: exactly one of ``versions``, ``all``, ``since`` and ``last`` is set."""
        chosen = [
            name
            for name, given in (
                ("--versions", bool(self.versions)),
                ("--all", self.all),
                ("--since", self.since is not None),
                ("--last", self.last is not None),
            )
            if given
        ]
        if not chosen:
            raise HistegError(f"no versions chosen: give {SCOPE_FLAGS}")
        if len(chosen) > 1:
            raise HistegError(f"choose the versions one way: {' and '.join(chosen)} were both given")
        return Scope(tuple(self.versions), self.all, self.since, self.last)

    def output(self) -> Path:
        """``out``, else the repository's folder in the user's cache."""
        return self.out if self.out is not None else default_out(self.repo or ".")

    @property
    def out_chosen(self) -> bool:
        """False when results go to the default folder in the cache: it is then said where they go."""
        return self.out is not None

    def environments_root(self) -> Path:
        """Where the shared version environments are kept, absolute: part of what a build depends on."""
        return self.environments.expanduser().absolute() if self.environments is not None else default_environments()

    def to_state(self) -> dict[str, Any]:
        """Plain data for another process (a Dask worker): ``origins`` is a mapping proxy, which does not pickle."""
        return {name: getattr(self, name) for name in FIELDS} | {"origins": dict(self.origins)}

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> Settings:
        return cls(**state)


FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Settings) if f.name != "origins")
