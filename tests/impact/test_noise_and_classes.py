"""Noise per entry point confirmed by targeted re-runs, divergence classes, behaviour only new tests observe.

One project, three versions: version 1 makes an off-by-one change in a formatting function that a
clock-reading test and many deterministic tests run; version 2 makes a function raise where it did
not (a regression a caller swallows, and one a test sees) and fixes a bug that only a test added
with the fix observes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo, run_histeg, validate_output

pytestmark = pytest.mark.slow  # histories traced with re-runs (40 s in all): run by make test-slow

LIB = '''import time


def label(seconds):
    minutes = seconds // 60
    if minutes > 1:
        return f"{minutes} minutes"
    return "a moment"


def stamp():
    return label(int(time.time() * 1000) % 7200)


def parse(text):
    return int(text)


def safe_parse(text):
    try:
        return parse(text)
    except ValueError:
        return -1


def clamp(value, low, high):
    if value < low:
        return low
    if value > high:
        return value
    return value
'''
TESTS = '''import pytest

from lib import clamp, label, safe_parse, stamp


def test_stamp_reads_the_clock():
    assert stamp()


@pytest.mark.parametrize("seconds", list(range(0, 1200, 60)))
def test_label(seconds):
    assert label(seconds)


def test_safe_parse():
    assert safe_parse("12") in (12, -1)


def test_parse_strictly():
    from lib import parse
    assert parse("12") == 12


def test_clamp_inside():
    assert clamp(5, 0, 10) == 5
'''
OFF_BY_ONE = LIB.replace("if minutes > 1:", "if minutes >= 1:")
RAISES = OFF_BY_ONE.replace("    return int(text)\n", "    if len(text) > 1:\n        raise ValueError(text)\n    return int(text)\n").replace(
    "    if value > high:\n        return value\n", "    if value > high:\n        return high\n")
NEW_TEST = '''from lib import clamp


def test_clamp_above():
    assert clamp(50, 0, 10) == 10
'''


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    repo = GitRepo.create(tmp_path_factory.mktemp("noise") / "repo")
    repo.commit("base", {"lib.py": LIB, "tests/test_lib.py": TESTS})
    repo.commit("off by one", {"lib.py": OFF_BY_ONE})
    repo.commit("parse raises on long text; clamp fixed, with its test", {"lib.py": RAISES, "tests/test_clamp.py": NEW_TEST})
    return repo


@pytest.fixture(scope="module")
def computed(project: GitRepo, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    repo = project
    out = tmp_path_factory.mktemp("noise-out") / "out"
    result = run_histeg("compute", "--repo", str(repo.path), "--all", "--out", str(out), "--json")
    assert result.code == 0, result.stderr
    return out, json.loads(result.stdout)


def targets(out: Path, index: int) -> dict[str, dict[str, Any]]:
    return {t["identifier"]: t for t in validate_output(out / str(index) / "testingTargets.json")["targets"]}


def test_a_clock_reading_test_does_not_hide_a_change_other_tests_see(computed: tuple[Path, dict[str, Any]]) -> None:
    out, _ = computed
    document = validate_output(out / "1" / "testingTargets.json")
    found = {t["identifier"]: t for t in document["targets"]}
    assert document["targets"][0]["identifier"] == "lib:label"
    label = found["lib:label"]
    seen_by = set(label["entryPoints"])
    assert "tests/test_lib.py::test_label[60]" in seen_by  # one minute: "a moment" before, "1 minutes" now
    assert not any("test_stamp_reads_the_clock" in entry for entry in seen_by)
    unstable = {(item["entryPoint"], item["function"]): item["natures"] for item in document["noise"]["unstable"]}
    clock = "tests/test_lib.py::test_stamp_reads_the_clock"
    assert "values" in unstable[(clock, "lib:label")]
    assert all(entry == clock for entry, _ in unstable), "only the clock-reading test is noise"


def test_only_divergent_entry_points_are_re_run_on_both_versions(computed: tuple[Path, dict[str, Any]]) -> None:
    out, summary = computed
    document = validate_output(out / "1" / "traceDivergences.json")
    confirmation = document["confirmation"]
    assert confirmation["runs"] == 2 and confirmation["completeRuns"] == {"old": 2, "new": 2}
    runs = json.loads((out / "1" / "runs.json").read_text())
    assert runs["repeat"] == 1 and len(runs["runs"]) == 1
    confirmations = validate_output(out / "1" / "confirmations.json")
    selected = set(confirmations["batches"][0]["selection"]["pytest"])
    assert "tests/test_lib.py::test_stamp_reads_the_clock" in selected
    assert "tests/test_lib.py::test_label[0]" not in selected  # zero seconds: the same label before and after
    total = runs["runs"][0]["tests"]["passed"]
    for run in confirmations["batches"][0]["runs"]:
        assert run["outcome"] == "passed" and run["tests"]["passed"] == len(selected) < total
    # version 0 was re-run as the old side of the comparison, with the same selection
    old = validate_output(out / "0" / "confirmations.json")
    assert set(old["batches"][0]["selection"]["pytest"]) == selected
    timing = next(item for item in summary["steps"]["compare"] if item["index"] == 1)["seconds"]
    assert timing["confirm"] > 0 and timing["compare"] >= 0


def test_no_re_runs_means_noise_counts_as_change(project: GitRepo, tmp_path: Path) -> None:
    result = run_histeg("compute", "--repo", str(project.path), "--versions", "HEAD~1", "--out", str(tmp_path / "out"), "--confirm", "0")
    assert result.code == 0, result.stderr
    document = validate_output(tmp_path / "out" / "1" / "testingTargets.json")
    assert document["noise"]["unstable"] == [] and document["noise"]["confirmation"]["runs"] == 0
    assert not (tmp_path / "out" / "1" / "confirmations.json").exists()
    seen_by = {entry for t in document["targets"] for entry in t["entryPoints"]}
    assert "tests/test_lib.py::test_stamp_reads_the_clock" in seen_by


def test_divergence_classes(computed: tuple[Path, dict[str, Any]]) -> None:
    out, _ = computed
    found = targets(out, 2)
    parse = found["lib:parse"]
    classes = parse["divergenceClasses"]
    assert classes["exceptionOnlyInNew"] >= 2  # under test_safe_parse (swallowed) and test_parse_strictly (fails)
    assert classes["outcomeChanged"] >= 1  # test_parse_strictly now fails
    assert any("regression candidate" in note for note in parse["notes"])
    swallowed = [d for d in parse["localDivergences"] if d["entryPoint"] == "tests/test_lib.py::test_safe_parse"]
    assert swallowed and swallowed[0]["classes"] == ["exceptionOnlyInNew"]
    visible = [d for d in parse["localDivergences"] if d["entryPoint"] == "tests/test_lib.py::test_parse_strictly"]
    assert visible and visible[0]["classes"] == ["exceptionOnlyInNew", "outcomeChanged"]
    divergences = validate_output(out / "2" / "traceDivergences.json")
    assert divergences["schemaVersion"] == 3


def test_behaviour_only_new_tests_observe_is_said(computed: tuple[Path, dict[str, Any]]) -> None:
    out, _ = computed
    clamp = targets(out, 2)["lib:clamp"]
    assert clamp["localDivergenceCount"] == 0
    assert clamp["newTestEntryPoints"] == ["tests/test_clamp.py::test_clamp_above"]
    assert any("observed only by tests this version adds" in note for note in clamp["notes"])
    assert not any("equivalent" in note for note in clamp["notes"])


def test_the_users_pytest_options_reach_every_run(project: GitRepo, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run_histeg("compute", "--repo", str(project.path), "--versions", "HEAD~1", "--out", str(out),
                        "--pytest-arg=--deselect=tests/test_lib.py::test_stamp_reads_the_clock", "--json")
    assert result.code == 0, result.stderr
    runs = validate_output(out / "1" / "runs.json")["runs"]
    assert "--deselect=tests/test_lib.py::test_stamp_reads_the_clock" in runs[0]["argv"]
    assert runs[0]["tests"]["deselected"] == 1
    document = validate_output(out / "1" / "testingTargets.json")
    assert document["noise"]["unstable"] == []  # the clock-reading test did not run
    confirmations = validate_output(out / "1" / "confirmations.json")
    assert all("--deselect=tests/test_lib.py::test_stamp_reads_the_clock" in run["argv"] for run in confirmations["batches"][0]["runs"])
    bad = run_histeg("compute", "--repo", str(project.path), "--versions", "HEAD~1", "--out", str(tmp_path / "bad"), "--config", str(_bad_config(tmp_path)))
    assert bad.code == 2 and "setting 'pytest-args' must be a list of strings" in bad.stderr


def _bad_config(tmp_path: Path) -> Path:
    path = tmp_path / "histeg.toml"
    path.write_text('[tool.histeg]\npytest-args = ["--ignore=tests", 1]\n')
    return path


SETTING = '''import os


def greeting(name):
    with open(os.environ["GREETING_FILE"], encoding="utf-8") as handle:
        word = handle.read().strip()
    return f"{word}, {name}"


def shout(text):
    return text.upper()
'''
SETTING_TESTS = '''from lib import greeting, shout


def test_greeting():
    assert greeting("ada")


def test_shout():
    assert shout("hi") == "HI"
'''


def test_what_differed_only_between_the_first_runs_is_noise(make_repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The world changed between the two versions' first runs (here a file the test reads; in life a clock
    read to the minute): re-runs made side by side agree, so the divergence is noise, while the real
    change in ``shout``, seen in the re-runs too, stays."""
    repo = make_repo()
    repo.commit("base", {"lib.py": SETTING, "tests/test_lib.py": SETTING_TESTS})
    repo.commit("shout louder", {"lib.py": SETTING.replace("text.upper()", "text.upper() + '!'")})
    setting = tmp_path / "greeting.txt"
    monkeypatch.setenv("GREETING_FILE", str(setting))
    out = tmp_path / "out"
    setting.write_text("hello")
    assert run_histeg("analyze", "--repo", str(repo.path), "--versions", "HEAD~1..HEAD~1", "--out", str(out)).code == 0
    setting.write_text("good morning")
    result = run_histeg("compute", "--repo", str(repo.path), "--versions", "HEAD~1..HEAD", "--out", str(out))
    assert result.code == 0, result.stderr
    document = validate_output(out / "1" / "testingTargets.json")
    assert [t["identifier"] for t in document["targets"]] == ["lib:shout"]
    unstable = {(item["entryPoint"], item["function"]): item["natures"] for item in document["noise"]["unstable"]}
    assert unstable == {("tests/test_lib.py::test_greeting", "lib:greeting"): ["values"]}
    assert validate_output(out / "0" / "confirmations.json")["batches"][0]["pairedWith"] == document["identifier"]
