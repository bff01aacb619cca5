"""The report model on the computed casino sample: what it gathers agrees with the stored records and with git."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import orjson
import pytest

from histeg.errors import HistegError
from histeg.report.model import load_run, load_version

pytestmark = pytest.mark.slow  # the casino sample is traced and compared once per process


def stored(out: Path, index: int, name: str) -> dict:
    return orjson.loads((out / str(index) / name).read_bytes())


def changed_new_lines(repo: Path, old: str, new: str, path: str) -> list[int]:
    """New-side lines of ``git diff -U0``: what the model's diff must mark as added or changed."""
    text = subprocess.run(["git", "-C", str(repo), "diff", "-U0", "--no-color", old, new, "--", path],
                          capture_output=True, text=True, check=True).stdout
    lines: list[int] = []
    for header in (line for line in text.splitlines() if line.startswith("@@")):
        new_side = header.split()[2][1:]
        start, _, count = new_side.partition(",")
        lines.extend(range(int(start), int(start) + (int(count) if count else 1)))
    return lines


def test_the_run_lists_every_version_with_the_counts_its_targets_file_has(casino: tuple[Path, Path]) -> None:
    repo, out = casino
    run = load_run(out)
    subjects = subprocess.run(["git", "-C", str(repo), "log", "--reverse", "--format=%s"], capture_output=True, text=True,
                              check=True).stdout.splitlines()
    assert [v.subject for v in run.versions] == subjects
    assert [v.index for v in run.versions] == list(range(len(subjects)))
    assert not run.versions[0].compared and run.versions[0].against_index is None
    for summary in run.compared:
        expected = stored(out, summary.index, "testingTargets.json")["summary"]
        assert summary.counts is not None
        assert (summary.counts.targets, summary.counts.divergences, summary.counts.noise, summary.counts.untested) == (
            expected["targets"], expected["divergences"], expected["noise"], expected["untested"])
        assert summary.counts.diff_coverage == expected["diffCoverage"]["ratio"]
    assert [v.index for v in load_run(out, [5, 3]).versions] == [5, 3]


def test_targets_keep_their_order_and_the_first_divergence_shows_old_and_new_values(casino: tuple[Path, Path]) -> None:
    _, out = casino
    report = load_version(out, 5)
    assert [t.identifier for t in report.targets] == [t["identifier"] for t in stored(out, 5, "testingTargets.json")["targets"]]
    top = report.targets[0]
    assert top.identifier == "casino.casino:Casino.new_gambler" and top.rank == 1
    first = top.first_divergence
    assert first is not None and first.charged == "local" and first.function == top.identifier
    returned = next(row for row in first.values if row.label == "return")
    assert "limit=5000" in (returned.old or "") and "limit=10000" in (returned.new or "")
    assert first.new_source is not None and first.old_source is not None
    marked = [line.text.strip() for line in first.new_source.lines if line.changed]
    assert marked == ["gambler = Gambler(amount_of_money, 2 * how_much_to_save)"]
    assert {d.call_distance for d in top.non_local_divergences} == {1, 2}


def test_a_changed_constant_is_charged_with_the_call_distance_of_its_reader(casino: tuple[Path, Path]) -> None:
    _, out = casino
    top = load_version(out, 1).targets[0]
    assert top.identifier == "casino.casino:Casino.BET"
    distances = {d.function: d.call_distance for d in top.non_local_divergences}
    assert distances["casino.gambler:Gambler.gamble"] == 0
    assert distances["casino.conscience:Conscience.will_win_back"] == 1
    assert top.first_divergence is not None and top.first_divergence.charged == "non-local"


def test_untested_and_changed_code_come_from_the_targets_file(casino: tuple[Path, Path]) -> None:
    _, out = casino
    report = load_version(out, 8)
    document = stored(out, 8, "testingTargets.json")
    assert [u.identifier for u in report.untested] == [u["identifier"] for u in document["untestedChanges"]]
    assert "casino.__main__:main" in [u.identifier for u in report.untested]
    assert {c.identifier: c.state for c in report.changed_code}["casino.__main__:main"] == "unexecuted"


def test_the_source_diff_marks_the_lines_git_reports_changed(casino: tuple[Path, Path]) -> None:
    repo, out = casino
    for index in (4, 6, 8):
        report = load_version(out, index)
        old, new = report.summary.against_commit, report.summary.commit
        assert old is not None
        changes = stored(out, index, "fileChanges.json")["changes"]
        assert [f.path for f in report.files] == [c["newPath"] or c["oldPath"] for c in changes]
        for diff in report.files:
            assert diff.added_lines == changed_new_lines(repo, old, new, diff.path), diff.path
            added = {line.new_number: line.text for line in diff.lines if line.kind == "added"}
            source = (out / str(index) / "snapshot" / diff.path).read_text().splitlines()
            assert all(source[number - 1] == text for number, text in added.items())


def test_noise_lists_each_unstable_pair_with_its_kinds(casino: tuple[Path, Path]) -> None:
    _, out = casino
    noise = load_version(out, 6).noise
    assert "casino.croupier:Croupier.small_talk" in noise.functions
    assert noise.unstable
    for pair in noise.unstable:
        assert noise.kinds[(pair.entry_point, pair.function)]


def test_reading_writes_nothing(casino: tuple[Path, Path]) -> None:
    _, out = casino

    def listing() -> dict[str, float]:
        return {str(p): p.stat().st_mtime_ns for p in out.rglob("*") if "report" not in p.relative_to(out).parts}

    before = listing()
    for report in load_run(out).version_reports():
        assert report.summary.compared
    assert listing() == before


def test_missing_or_damaged_files_are_one_line_errors_naming_them(casino: tuple[Path, Path], tmp_path: Path) -> None:
    _, out = casino
    copy = tmp_path / "out"
    shutil.copytree(out, copy, ignore=shutil.ignore_patterns("traces", "repository.git", "site", ".*"), symlinks=True)
    with pytest.raises(HistegError, match=r"testingTargets\.json"):
        load_version(copy, 0)
    with pytest.raises(HistegError, match="no version 42"):
        load_run(copy, [1, 42])
    (copy / "5" / "traceDivergences.json").write_text("{not json")
    with pytest.raises(HistegError, match=r"5/traceDivergences\.json") as raised:
        load_version(copy, 5)
    assert "\n" not in str(raised.value)
    os.remove(copy / "4" / "fileChanges.json")
    with pytest.raises(HistegError, match=r"4/fileChanges\.json"):
        load_version(copy, 4)
    os.remove(copy / "history.json")
    with pytest.raises(HistegError, match=r"history\.json"):
        load_run(copy)
