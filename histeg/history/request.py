"""What extraction needs to know of a run, and how it reports progress: nothing more of the settings or the console."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from histeg.settings.model import Settings
from histeg.settings.scope import Scope
from histeg.settings.table import PER_VERSION

T = TypeVar("T")


class Progress(Protocol):
    """Where extraction says what it does (``histeg.console.Console`` is one)."""

    def detail(self, message: str) -> None: ...

    def progress(self, items: Iterable[T], total: int, description: str) -> Iterator[T]: ...


@dataclass(frozen=True)
class ExtractRequest:
    """Which versions of which repository go where, and the per-version settings the user gave."""

    repository: str
    output: Path
    scope: Scope
    branch: str | None = None
    merges: bool = False
    override: bool = False
    per_version: Mapping[str, Any] = field(default_factory=dict)
    """The per-version settings the user set (file or flags), by key: they win over each version's own ``[tool.histeg]``."""

    @classmethod
    def of(cls, settings: Settings) -> ExtractRequest:
        given = {option.key: settings.value(option.key) for option in PER_VERSION if settings.given(option.key)}
        return cls(
            repository=settings.repository(),
            output=settings.output(),
            scope=settings.scope(),
            branch=settings.branch,
            merges=settings.merges,
            override=settings.override,
            per_version=given,
        )
