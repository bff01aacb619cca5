"""A pipeline step as an object: its inputs, its outputs, how it runs; and what a step may ask of the run.

Below the steps' own modules (build, statics, syntax, runs, compare, impact,
merges), which each declare theirs next to the work, and below the engine,
which runs them. The steps themselves know nothing of reuse;
``histeg.engine.runner`` compares the fingerprint of what a step would read
with the one stored when it last ran, and runs it only when they differ, when
its outputs are gone, or when it failed last time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from histeg.console import Console
from histeg.settings.model import Settings
from histeg.store import OutputStore


class StepContext(Protocol):
    """What a step reads of the run: where results live, the settings, where to warn, and which versions failed."""

    store: OutputStore
    settings: Settings
    console: Console

    @property
    def override(self) -> bool:
        """The user asked to recompute stored results."""

    def traces_failed(self, index: int | None) -> bool:
        """Version ``index`` failed before its traces were done: nothing can be compared with it."""


@dataclass(frozen=True)
class StepResult:
    summary: dict[str, Any]
    failure: str | None = None
    """One line saying why the version cannot go on; ``None`` when the step succeeded."""


@dataclass(frozen=True, kw_only=True)
class Step:
    """One per-version step of the pipeline."""

    name: str
    doing: str
    """Progress text, e.g. 'tracing versions'."""
    outputs: tuple[str, ...]
    """Files or folders the step writes in the version directory; reuse needs all of them."""
    upstream: tuple[str, ...] = ()
    """Steps of the same version whose results it reads; their result ids are part of its inputs."""
    inputs: Callable[[StepContext, int], dict[str, Any]]
    """Everything else the result depends on: the version, the settings, the predecessor's result ids, files the user wrote."""
    run: Callable[[StepContext, int], StepResult]
    still_valid: Callable[[StepContext, int], bool] | None = None
    """A check of state outside the output directory (a shared environment may have been removed)."""
    skip: Callable[[StepContext, int], str | None] | None = None
    """Why the step does not apply to a version (the first version has nothing to compare with), or ``None``."""
    rules: int | None = None
    """The version of the step's own rules, raised whenever its code would make another result from the same inputs
    (a comparison or ranking rule changed), so that a rerun makes exactly that step's results, and its readers', again;
    histeg's own version alone would keep them until a release. ``None``: a step whose results only its declared
    inputs decide (its format versions among them)."""
