"""pytest plugin: labels traced entry points with the running test's node id.

Loaded in every pytest run of the environment (``pytest11`` entry point, or
``pytest -p histeg``). Unless tracing is active in the process when pytest
configures itself, it registers nothing and does nothing. When active, every
root call started during a test's setup, call or teardown is labelled with
the node id and the phase, and each phase's outcome is recorded, so traces
of two versions can be matched test by test. A run given a selection file
runs only the tests it names (the others are deselected, the order kept), and
collects only the files that hold them: collecting a whole suite costs a
re-run as much as its tests (seconds on a suite whose test modules import
much), and a re-run is only ever compared with other re-runs of the same
selection. The file's ``COLLECT_ALL`` line asks for every file.
The process's outermost session also leaves pytest's own count of its tests
beside the trace (``histeg.tracing.tally``), whatever its output looks like.
"""

from __future__ import annotations

import sys
from collections.abc import Generator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from histeg.tracing import session
from histeg.tracing.tally import write_tally

if TYPE_CHECKING:
    from histeg.tracing.monitor import Collector

PLUGIN_NAME = "histeg-trace-labels"
_outermost: object | None = None
"""The plugin of the process's first session: sessions run inside it (pytester's inline runs) count their own tests, not the run's."""


def pytest_configure(config: pytest.Config) -> None:
    collector = session.active()
    if collector is not None and not config.pluginmanager.has_plugin(PLUGIN_NAME):
        labels = TestLabels(collector)
        config.pluginmanager.register(labels, PLUGIN_NAME)
        spec = config.pluginmanager.hook.pytest_ignore_collect.spec
        by_path = spec is not None and "collection_path" not in spec.argnames  # pytest before 7 names it ``path`` (py.path)
        config.pluginmanager.register(IgnoreByPyPath(labels) if by_path else IgnoreByPath(labels), f"{PLUGIN_NAME}-selection")


class IgnoreByPath:
    """``pytest_ignore_collect`` as pytest 7 and later call it. pluggy refuses a plugin whose hook names an argument the
    hook does not have: with the wrong name the whole run would stop with an internal error, only because it is traced."""

    def __init__(self, labels: TestLabels) -> None:
        self.labels = labels

    def pytest_ignore_collect(self, collection_path: Path, config: pytest.Config) -> bool | None:
        return self.labels.ignored(Path(collection_path), config)


class IgnoreByPyPath(IgnoreByPath):
    """``pytest_ignore_collect`` as pytest 6 calls it: with a ``py.path.local``."""

    def pytest_ignore_collect(self, path: object, config: pytest.Config) -> bool | None:
        return self.labels.ignored(Path(str(path)), config)


class TestLabels:
    """The hooks that exist only while tracing."""

    __test__ = False  # not a test class, despite the name

    def __init__(self, collector: Collector) -> None:
        global _outermost
        self.collector = collector
        self.reporter: pytest.TerminalReporter | None = None
        self._files: set[Path] | None = None
        """The files holding the selected tests, once worked out from the selection."""
        self._wanted: set[str] | None = None
        if _outermost is None:
            _outermost = self

    def _selected(self) -> set[str] | None:
        if self._wanted is None:
            path = session.selection()
            if path is None:
                return None
            with open(path, encoding="utf-8") as handle:
                self._wanted = {line.rstrip("\n") for line in handle if line.strip()}
        return self._wanted

    def ignored(self, collection_path: Path, config: pytest.Config) -> bool | None:
        """Outside the selected tests' files and the folders above them, nothing is collected (conftest files,
        package ``__init__`` modules and everything of a session run inside this one are left to pytest)."""
        wanted = self._selected()
        if wanted is None or session.COLLECT_ALL in wanted or _outermost is not self:
            return None
        if self._files is None:
            root = getattr(config, "rootpath", None) or Path(str(getattr(config, "rootdir", ".")))  # rootpath: pytest 6.1 and later
            self._files = {root / nodeid.split("::", 1)[0] for nodeid in wanted}
        if collection_path in self._files or collection_path.name in ("conftest.py", "__init__.py"):
            return None
        if collection_path.is_dir():
            return None if any(collection_path in file.parents for file in self._files) else True
        return True

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        wanted = self._selected()
        if wanted is None:
            return
        kept = [item for item in items if item.nodeid in wanted]
        dropped = [item for item in items if item.nodeid not in wanted]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept

    def _labelled(self, item: pytest.Item, phase: str) -> Generator[None, None, None]:
        self.collector.set_label(item.nodeid, phase)
        try:
            yield
        finally:
            self.collector.set_label(None)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        yield from self._labelled(item, "setup")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        yield from self._labelled(item, "call")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, None, None]:
        yield from self._labelled(item, "teardown")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        outcome = "xfailed" if getattr(report, "wasxfail", None) is not None and report.skipped else report.outcome
        self.collector.record_outcome(report.nodeid, report.when, outcome)

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        """Called exactly when pytest prints its summary: the counts are kept for those runs alone, as before."""
        self.reporter = terminalreporter

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """By now every report, warnings of the session's teardown included, is in the reporter's stats."""
        if self.reporter is None or _outermost is not self:
            return
        try:
            write_tally(self.collector.writer.path, summary_counts(self.reporter.stats))
        except OSError as exc:  # the run stands without it; histeg then reads the counts from pytest's output
            sys.stderr.write(f"histeg: test counts not written: {exc}\n")


def summary_counts(stats: Mapping[str, Sequence[object]]) -> dict[str, int]:
    """What pytest's summary line counts: each report kind (empty key: setup and teardown reports that count
    for nothing) with the reports that count towards the summary, as ``TerminalReporter`` does."""
    counts = {key: sum(1 for report in reports if getattr(report, "count_towards_summary", True)) for key, reports in stats.items() if key}
    return {key: count for key, count in counts.items() if count}
