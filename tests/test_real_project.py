"""Opt-in checks of ``histeg compute`` on a real project's history (minutes, not seconds).

Skipped unless ``HISTEG_REAL_REPO`` names a repository (path or URL; it is only
read). Optional: ``HISTEG_REAL_BASE`` (base of the mutants, default HEAD),
``HISTEG_REAL_END`` (newest of the 30 versions checked, default HEAD),
``HISTEG_REAL_SOURCES`` / ``HISTEG_REAL_TESTS`` (comma-separated directories
of the history check, default ``src`` / ``tests``; the mutants' layout is
histeg's own), ``HISTEG_REAL_MUTANTS`` (default 20) and
``HISTEG_REAL_VERSIONS`` (default 30). The figures and the code that produces them are
in ``bench/ground_truth.py`` and ``bench/real_history_bench.py``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, validate_output

REPO = os.environ.get("HISTEG_REAL_REPO", "")
pytestmark = pytest.mark.skipif(not REPO, reason="set HISTEG_REAL_REPO to a repository to run the real-project checks")

sys.path.insert(0, str(ROOT / "bench"))

import ground_truth  # noqa: E402
import real_history_bench  # noqa: E402

MUTANTS = int(os.environ.get("HISTEG_REAL_MUTANTS", "20"))
VERSIONS = int(os.environ.get("HISTEG_REAL_VERSIONS", "30"))


def _directories(variable: str, default: str) -> list[str]:
    return [part for part in os.environ.get(variable, default).split(",") if part]


SOURCES = _directories("HISTEG_REAL_SOURCES", "src")
TESTS = _directories("HISTEG_REAL_TESTS", "tests")


def _row(mutant: ground_truth.Seeded) -> str:
    return f"{mutant.description}: rank {mutant.rank} of {mutant.targets}, top {mutant.top}, {mutant.failed or 'histeg finished'}"


def test_mutants_rank_first(tmp_path: Path) -> None:
    """Each seeded single-function mutant's own function is the top target (90 %), and always in the top three."""
    options = ground_truth.Options(mutants=MUTANTS, base=os.environ.get("HISTEG_REAL_BASE", "HEAD"), max_trials=10 * MUTANTS,
                                   work=tmp_path, keep=True)
    figures = ground_truth.measure(Path(REPO.rstrip("/")).name, REPO, options, log=lambda message: None)
    assert len(figures.seeded("mutant")) == MUTANTS, f"only {len(figures.seeded('mutant'))} observable mutants could be made"
    for document in Path(figures.output).glob("*/testingTargets.json"):
        validate_output(document)
    missed_top1 = "\n".join(_row(m) for m in figures.misses(1))
    assert figures.top(1) >= 0.9, f"top-1 rate {figures.top(1):.0%}; not ranked first:\n{missed_top1}"
    missed_top3 = "\n".join(_row(m) for m in figures.misses(3))
    assert figures.top(3) == 1.0, f"top-3 rate {figures.top(3):.0%}; not in the top three:\n{missed_top3}"


def test_commits_without_python_changes_give_no_targets(tmp_path: Path) -> None:
    """A version whose file changes hold no Python file gets no testing target, over 30 consecutive versions."""
    report = real_history_bench.history_check(REPO, VERSIONS, 0, os.environ.get("HISTEG_REAL_END", "HEAD"), SOURCES, TESTS,
                                              work=tmp_path, keep=True, log=lambda message: None)
    assert report.failed == [], f"histeg could not finish these versions: {report.failed}"
    assert len(report.versions) == VERSIONS
    for document in Path(report.output).glob("*/testingTargets.json"):
        validate_output(document)
    quiet = report.without_python()
    assert quiet, f"no version of {report.versions_range} is without a Python change: the check says nothing"
    with_targets = [f"{v.index} {v.short} {v.message!r}: {v.targets} target(s) {v.top}" for v in quiet if v.targets]
    assert not with_targets, "versions without a Python change got targets:\n" + "\n".join(with_targets)
