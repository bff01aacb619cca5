"""The Python API: a repository, an output directory, and what histeg computed for each version, as typed records.

    import histeg
    project = histeg.Project("path/to/repo", out="results", repeat=1)
    run = project.compute(["v1.0..HEAD"])
    for version in project.versions():
        if version.testing_targets is not None:
            print(version.identifier, [t.identifier for t in version.testing_targets.targets[:3]])

Settings are the keyword arguments, by the names ``histeg config`` shows with
``-`` written ``_``; they are checked like the command line's, before any
work, and ``[tool.histeg]`` of ``config=`` (or ``./histeg.toml``) is read
under them. The command line is a thin layer over this module.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from histeg.console import Console
from histeg.errors import HistegError
from histeg.pipeline import COMMANDS, PipelineRun, run_pipeline
from histeg.records.history import History
from histeg.results import VersionResults
from histeg.settings.load import load_settings, python_arguments
from histeg.settings.model import Settings
from histeg.store import OutputStore

__all__ = ["Project", "VersionResults"]


class Project:
    """A repository analysed into an output directory."""

    def __init__(
        self,
        repo: str | Path,
        out: str | Path | None = None,
        *,
        config: str | Path | None = None,
        read_config: bool = True,
        **settings: Any,
    ) -> None:
        """``read_config=False``: the ``./histeg.toml`` where Python runs plays no part (``config=`` still does)."""
        given = {
            "repo": str(repo),
            **({"out": out} if out is not None else {}),
            **({"config": config} if config is not None else {}),
            **settings,
        }
        self.settings: Settings = load_settings(python_arguments(given), read_file=read_config)
        """Every setting in force, with where it came from (``settings.origin(key)``)."""

    @classmethod
    def of(cls, settings: Settings) -> Project:
        """A project from settings already checked (the command line's)."""
        project = cls.__new__(cls)
        project.settings = settings
        return project

    @property
    def store(self) -> OutputStore:
        """The output directory: ``out``, else the repository's folder in the user's cache."""
        return OutputStore(self.settings.output())

    def compute(self, versions: Iterable[str] | None = None, *, until: str = "compute", console: Console | None = None) -> PipelineRun:
        """Run the pipeline up to step command ``until`` on ``versions`` (revisions or ``A..B`` ranges; ``None``: as the
        settings choose them, ``all``, ``since`` or ``last``). What is still valid is reused."""
        if until not in COMMANDS:
            raise HistegError(f"unknown step '{until}': one of {', '.join(COMMANDS)}")
        settings = self.settings if versions is None else replace(self.settings, versions=tuple(versions), all=False)
        return run_pipeline(settings, console or Console(settings.verbosity), until)

    def history(self) -> History:
        """``history.json``: every commit of the analysed branch (after a first ``compute``)."""
        return History.read(self.store.history_path)

    def versions(self) -> list[VersionResults]:
        """Every extracted version, oldest first."""
        return [VersionResults(self.store, index) for index in self.store.extracted_indices()]

    def version(self, index: int) -> VersionResults:
        if not self.store.has_version(index):
            raise HistegError(f"no version {index} in {self.store.root}")
        return VersionResults(self.store, index)
