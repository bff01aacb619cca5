"""One version's results in an output directory, as typed records read when first asked for.

Below the API and the report, which both hand these out: reading results needs only the store and the records.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TypeVar

from histeg.records.base import Record
from histeg.records.build import Build
from histeg.records.divergences import TraceDivergences
from histeg.records.history import FileChanges, Version
from histeg.records.runs import Runs
from histeg.records.statics import CallGraph, Functions
from histeg.records.steps import StepStates
from histeg.records.syntax import SyntaxChanges
from histeg.records.targets import TestingTargets
from histeg.store import OutputStore

R = TypeVar("R", bound=Record)


@dataclass(frozen=True)
class VersionResults:
    """One version's results, each read (and checked against its schema version) when first asked for;
    ``None`` when the step that writes it has not run on this version."""

    store: OutputStore
    index: int

    @cached_property
    def version(self) -> Version:
        return self.store.version(self.index)

    @property
    def identifier(self) -> str:
        return self.version.identifier

    @property
    def directory(self) -> Path:
        return self.store.version_dir(self.index)

    @cached_property
    def file_changes(self) -> FileChanges | None:
        return self._read(FileChanges)

    @cached_property
    def build(self) -> Build | None:
        return self._read(Build)

    @cached_property
    def functions(self) -> Functions | None:
        return self._read(Functions)

    @cached_property
    def call_graph(self) -> CallGraph | None:
        return self._read(CallGraph)

    @cached_property
    def syntax_changes(self) -> SyntaxChanges | None:
        return self._read(SyntaxChanges)

    @cached_property
    def runs(self) -> Runs | None:
        return self._read(Runs)

    @cached_property
    def divergences(self) -> TraceDivergences | None:
        return self._read(TraceDivergences)

    @cached_property
    def testing_targets(self) -> TestingTargets | None:
        return self._read(TestingTargets)

    @cached_property
    def steps(self) -> StepStates | None:
        return self._read(StepStates)

    def _read(self, record: type[R]) -> R | None:
        path = self.store.file(self.index, record.FILE)
        return record.read(path) if path.is_file() else None
