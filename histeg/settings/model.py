"""``Settings``: every option's typed value and where it came from, frozen once checked."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any

from histeg.settings.scaling import Scaling

DEFAULT = "default"
"""The origin of a value nobody set."""


@dataclass(frozen=True)
class Settings:
    """One field per option of ``histeg.settings.table`` (its key with ``_``), no defaults here: the table has them.

    Per-version options (sources, tests, build, ignore-*) hold what the user
    gave; each version's own ``pyproject.toml`` fills in what they did not
    (``histeg.config.resolve_version_settings``). ``sources``/``tests`` are
    None until then: they are detected per version.
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
    metric: tuple[str, ...]
    restrict_syntax_mapping: bool
    evidence_first: tuple[str, ...]
    export_flat: bool
    generate_for_syntax: bool
    generate_for_divergence: bool
    confirm: int
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


FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Settings) if f.name != "origins")
