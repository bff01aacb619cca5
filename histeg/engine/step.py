"""A pipeline step as an object: its inputs, its outputs, how it runs.

The steps themselves know nothing of reuse; ``histeg.engine.runner`` compares
the fingerprint of what a step would read with the one stored when it last
ran, and runs it only when they differ, when its outputs are gone, or when it
failed last time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from histeg.records.history import Version
from histeg.store import OutputStore


class StepContext(Protocol):
    """What a step may look at: the output directory, the settings, its neighbours' results."""

    store: OutputStore
    override: bool

    def version(self, index: int) -> Version: ...

    def fingerprints(self, index: int) -> Mapping[str, str]: ...


@dataclass(frozen=True)
class StepResult:
    summary: dict[str, Any]
    failure: str | None = None
    """One line saying why the version cannot go on; ``None`` when the step succeeded."""


@dataclass(frozen=True)
class Step:
    """One per-version step of the pipeline."""

    name: str
    doing: str
    """Progress text, e.g. 'tracing versions'."""
    outputs: tuple[str, ...]
    """Files or folders the step writes in the version directory; reuse needs all of them."""
    upstream: tuple[str, ...]
    """Steps of the same version whose results it reads; their fingerprints are part of its inputs."""
    inputs: Callable[[Any, int], dict[str, Any]]
    """Everything else the result depends on: settings, files the user wrote, the predecessor's fingerprints."""
    run: Callable[[Any, int], StepResult]
    still_valid: Callable[[Any, int], bool] | None = None
    """A check of state outside the output directory (a shared environment may have been removed)."""
