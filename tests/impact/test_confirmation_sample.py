"""Confirmation re-runs a sample of each (function, kind) of divergence and widens a group whose sample shows noise.

One project, two versions: version 1 changes a core function that twenty tests reach, and six other tests
read an unseeded random number through a function that did not change. The core function's sample is stable,
so fifteen of its tests are never re-run and keep their divergences; the random reader's sample is noise, so
its group is widened to all six tests, each of which is then found to be noise. The targets are those of
re-running every divergent entry point, at a fraction of the re-runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo, run_histeg, validate_output

pytestmark = pytest.mark.slow  # two versions traced and re-run twice over (about 40 s): run by make test-slow

LIB = '''import random


def norm(value):
    return value * 2


def roll():
    return random.random()


def spread(value):
    return norm(value) + 1
'''
TESTS = '''import pytest

from lib import roll, spread


@pytest.mark.parametrize("value", range(20))
def test_spread(value):
    assert spread(value) >= 1


@pytest.mark.parametrize("seed", range(6))
def test_roll(seed):
    assert 0 <= roll() < 1
'''
CORE_CHANGE = LIB.replace("return value * 2", "return value * 3")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    repo = GitRepo.create(tmp_path_factory.mktemp("sample") / "repo")
    repo.commit("base", {"lib.py": LIB, "tests/test_lib.py": TESTS})
    repo.commit("norm triples", {"lib.py": CORE_CHANGE})
    return repo


def compute(project: GitRepo, out: Path, *more: str) -> dict[str, Any]:
    result = run_histeg("compute", "--repo", str(project.path), "--all", "--out", str(out), *more)
    assert result.code == 0, result.stderr
    return validate_output(out / "1" / "testingTargets.json")


def entry_points(document: dict[str, Any]) -> dict[str, set[str]]:
    return {target["identifier"]: set(target["entryPoints"]) for target in document["targets"]}


def test_a_stable_sample_stands_for_its_group_and_a_noisy_one_is_widened(project: GitRepo, tmp_path: Path) -> None:
    sampled = compute(project, tmp_path / "sampled")
    everyone = compute(project, tmp_path / "all", "--confirm-sample", "0")
    assert entry_points(sampled) == entry_points(everyone)
    assert set(entry_points(sampled)) == {"lib:norm"}, "a random reader that did not change is noise, not a target"
    assert entry_points(sampled)["lib:norm"] == {f"tests/test_lib.py::test_spread[{value}]" for value in range(1, 20)}
    noisy = {item["entryPoint"] for item in sampled["noise"]["unstable"] if item["function"] == "lib:roll"}
    assert noisy == {f"tests/test_lib.py::test_roll[{seed}]" for seed in range(6)}, "widened: every one of them is noise"

    divergences = validate_output(tmp_path / "sampled" / "1" / "traceDivergences.json")
    sample = divergences["confirmation"]["sample"]
    assert sample["perGroup"] == 4 and sample["widenedGroups"] == ["lib:roll return"]
    assert sample["widenedEntryPoints"] == 2 and sample["sampledEntryPoints"] < divergences["confirmation"]["entryPoints"]
    batches = validate_output(tmp_path / "sampled" / "1" / "confirmations.json")["batches"]
    assert [batch["purpose"] for batch in batches] == ["sample", "widened"]
    rerun = {nodeid for batch in batches for nodeid in batch["selection"]["pytest"]}
    assert len(rerun) == sample["sampledEntryPoints"] + 2 < 25
    assert len({nodeid for nodeid in rerun if "test_spread" in nodeid}) == 4
    assert validate_output(tmp_path / "all" / "1" / "traceDivergences.json")["confirmation"].get("sample") is None
    assert [batch["purpose"] for batch in validate_output(tmp_path / "all" / "1" / "confirmations.json")["batches"]] == ["all"]


def test_a_rerun_reuses_the_sample_and_its_widening(project: GitRepo, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = compute(project, out)
    before = (out / "1" / "confirmations.json").read_bytes()
    again = compute(project, out, "--export-flat")  # a compare setting: the step runs again
    assert (out / "1" / "confirmations.json").read_bytes() == before, "the same divergences, the same batches: nothing re-run"
    assert entry_points(again) == entry_points(first)
