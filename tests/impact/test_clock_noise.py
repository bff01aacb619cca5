"""A clock read at any resolution never makes a target.

One project, two versions: a test reads the clock to the second, to two seconds and to the minute and
hands the readings to a function; elsewhere, a real change (a mutant) that other tests run. The clock
test diverges between the versions' first runs whenever a tick falls between them, and its re-runs
are made in an order (the old version's first re-run, then the new version's, then the old
version's others) in which no tick can make the old version agree with itself and disagree with the
new one: the change is the one target, the clock test makes none.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from histeg.runs.confirm import schedule
from tests.conftest import GitRepo, run_histeg, validate_output

LIB = '''def describe(second, two_seconds, minute):
    return f"second {second}, pair {two_seconds % 1000}, minute {minute % 1000}"


def area(width, height):
    return width * height
'''
MUTANT = LIB.replace("return width * height", "return width * height + 1")
TESTS = '''import os
import time

from lib import area, describe


def test_reads_the_clock():
    now = time.time()
    log = os.environ.get("HISTEG_TEST_CLOCK_LOG")
    if log:  # when the reading was made and in which copy of which version: the order the test checks
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"{time.time_ns()} {os.getcwd()}\\n")
    assert describe(time.gmtime(now).tm_sec, int(now) // 2, int(now) // 60)


def test_area():
    assert area(2, 3) > 0


def test_square():
    assert area(4, 4) > 0
'''
CLOCK = "tests/test_lib.py::test_reads_the_clock"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    return GitRepo.with_history(tmp_path_factory.mktemp("clock") / "repo", ("base", {"lib.py": LIB, "tests/test_lib.py": TESTS}),
                                ("area off by one", {"lib.py": MUTANT}))


def compute(project: GitRepo, out: Path) -> dict[str, Any]:
    result = run_histeg("compute", "--repo", str(project.path), "--all", "--out", str(out), "--override")
    assert result.code == 0, result.stderr
    return validate_output(out / "1" / "testingTargets.json")


def clock_targets(document: dict[str, Any]) -> list[str]:
    """Targets the clock test's divergences reached."""
    return [t["identifier"] for t in [*document["targets"], *document["testCode"]] if CLOCK in t["entryPoints"]]


def test_the_schedule_puts_every_re_run_of_the_new_version_between_two_of_the_old() -> None:
    assert schedule(2) == [[("old", 1)], [("new", 1), ("new", 2)], [("old", 2)]]
    assert schedule(3) == [[("old", 1)], [("new", 1), ("new", 2), ("new", 3)], [("old", 2), ("old", 3)]]
    assert schedule(1) == [[("old", 1)], [("new", 1)]]
    assert schedule(0) == []


@pytest.mark.slow  # traces and re-runs a history (5 s)
def test_a_clock_test_makes_no_target_and_the_change_stays(project: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "clock.log"
    monkeypatch.setenv("HISTEG_TEST_CLOCK_LOG", str(log))
    document = compute(project, tmp_path / "out")
    assert [t["identifier"] for t in document["targets"]] == ["lib:area"]
    assert clock_targets(document) == []
    readings = sorted((int(stamp), Path(folder)) for stamp, folder in (line.split(" ", 1) for line in log.read_text().splitlines()))
    first_runs = [folder.parent.name for _, folder in readings if folder.name == ".run"]
    assert first_runs == ["0", "1"], readings
    re_runs = [(folder.parent.name, folder.name) for _, folder in readings if folder.name != ".run"]
    if re_runs:  # the clock test diverged between the first runs (a tick between them): it was re-run as scheduled
        assert re_runs[0] == ("0", ".run-confirm-1") and re_runs[-1][0] == "0", re_runs
        assert sorted(re_runs[1:-1]) == [("1", ".run-confirm-1"), ("1", ".run-confirm-2")], re_runs
        unstable = {(item["entryPoint"], item["function"]) for item in document["noise"]["unstable"]}
        assert (CLOCK, "lib:describe") in unstable
        assert all(entry == CLOCK for entry, _ in unstable)


@pytest.mark.slow
def test_twenty_runs_make_no_false_target(project: GitRepo, tmp_path: Path) -> None:
    """The criterion as measured: the same comparison computed 20 times, traces and re-runs made anew each time."""
    false_targets, diverged = 0, 0
    for attempt in range(20):
        document = compute(project, tmp_path / "out")
        false_targets += len([t for t in document["targets"] if t["identifier"] != "lib:area"]) + len(clock_targets(document))
        selection = json.loads((tmp_path / "out" / "1" / "confirmations.json").read_text())["batches"][0]["selection"]["pytest"]
        diverged += CLOCK in selection
        assert document["targets"][0]["identifier"] == "lib:area", attempt
    assert false_targets == 0
    assert diverged > 0, "the clock test never diverged between the first runs: nothing was tested"
