"""A divergence no changed code explains gets a second round of re-runs before it can become a target.

The project's ``mood`` reads a counter kept outside the run folder: the first runs see it move in a
way that looks like a change of code (the old version always "calm", the new one always "cross"),
from the seventh traced run on it alternates. Version 1 adds a text file alone. A second round
of re-runs shows the divergence to be noise: no target. (A divergence that changed code explains gets
no second round: the clock test of ``test_noise_and_classes`` has one batch.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo, run_histeg, validate_output

pytestmark = pytest.mark.slow  # two rounds of re-runs on a computed history (16 s): run by make test-slow

LIB = '''import fcntl
import os


def _next():
    """The number of calls so far, over every process of the test run (a file outside the run folder)."""
    with open(os.environ["MOOD_COUNTER"], "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        count = len(handle.read())
        handle.write(".")
        return count


def mood():
    count = _next()
    if count < 6:  # traces of versions 0 and 1, then round 1 of their re-runs: old, new, new, old
        return "calm" if count in (0, 2, 5) else "cross"
    return "calm" if count % 2 else "cross"


def greet(name):
    return "hello " + name
'''
TESTS = '''from lib import greet, mood


def test_mood():
    assert mood() in ("calm", "cross", "CALM", "CROSS")


def test_greet():
    assert greet("ann").startswith("hello")
'''


@pytest.fixture(scope="module")
def computed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    base = tmp_path_factory.mktemp("unexplained")
    repo = GitRepo.create(base / "repo")
    repo.commit("base", {"lib.py": LIB, "tests/test_lib.py": TESTS, "README.md": "moods\n"})
    repo.commit("describe the moods", {"MOODS.md": "calm or cross\n"})  # added: traced anew, not its predecessor's traces
    out = base / "out"
    counter = base / "counter"
    counter.touch()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MOOD_COUNTER", str(counter))
        result = run_histeg("compute", "--repo", str(repo.path), "--all", "--out", str(out), "--json")
    assert result.code == 0, result.stderr
    return out, json.loads(result.stdout)


def test_an_unexplained_divergence_that_survives_round_one_is_re_run_again_and_found_noise(computed: tuple[Path, dict[str, Any]]) -> None:
    out, _ = computed
    divergences = validate_output(out / "1" / "traceDivergences.json")
    confirmation = divergences["confirmation"]
    assert confirmation["runs"] == 2 and confirmation["entryPoints"] == 1
    assert confirmation["unexplainedEntryPoints"] == 1 and confirmation["unexplainedRuns"] == 4
    assert confirmation["unexplainedCompleteRuns"] == {"old": 4, "new": 4}
    assert divergences["divergences"] == []
    assert {(item["function"], item["entryPoint"]["label"]) for item in divergences["noise"]} == {
        ("lib:mood", "tests/test_lib.py::test_mood"),
        ("lib:_next", "tests/test_lib.py::test_mood"),
    }
    assert validate_output(out / "1" / "testingTargets.json")["targets"] == []
    batches = validate_output(out / "1" / "confirmations.json")["batches"]
    assert [(batch["round"], batch["selection"]["pytest"], len(batch["runs"])) for batch in batches] == [
        (1, ["tests/test_lib.py::test_mood"], 2),
        (2, ["tests/test_lib.py::test_mood"], 4),
    ]
    assert [batch["round"] for batch in validate_output(out / "0" / "confirmations.json")["batches"]] == [1, 2]


def test_a_comparison_made_again_reuses_both_rounds(computed: tuple[Path, dict[str, Any]]) -> None:
    out, _ = computed
    repo = out.parent / "repo"
    before = (out / "1" / "confirmations.json").read_bytes()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MOOD_COUNTER", str(out.parent / "counter"))
        result = run_histeg("compute", "--repo", str(repo), "--all", "--out", str(out), "--json", "--export-flat")  # a compare setting
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["steps"]["compare"]
    assert (out / "1" / "confirmations.json").read_bytes() == before
    assert validate_output(out / "1" / "testingTargets.json")["targets"] == []


CASES_LIB = "def case(n):\n    return n * 2\n\n\ndef show(value):\n    return f'<{value}>'\n"
CASES_TESTS = '''import pytest

from lib import case, show

CASES = [case(1), case(2)]  # built while the module is collected, by the project's code


@pytest.mark.parametrize("value", CASES, ids=["one", "two"])
def test_show(value):
    assert show(value).startswith("<")
'''


def test_a_divergence_fed_by_changed_code_run_at_collection_is_explained_without_a_second_round(tmp_path: Path) -> None:
    """``test_show`` never calls ``case``, but its arguments were made by it while its module was collected:
    the change of ``case`` explains what the test is given, and no second round is spent on it."""
    repo = GitRepo.create(tmp_path / "repo")
    repo.commit("base", {"lib.py": CASES_LIB, "tests/test_lib.py": CASES_TESTS})
    repo.commit("triple", {"lib.py": CASES_LIB.replace("n * 2", "n * 3")})
    out = tmp_path / "out"
    result = run_histeg("compute", "--repo", str(repo.path), "--all", "--out", str(out), "--json")
    assert result.code == 0, result.stderr
    divergences = validate_output(out / "1" / "traceDivergences.json")
    shown = {(item["function"], item["entryPoint"]["label"]) for item in divergences["divergences"]}
    assert ("tests.test_lib:test_show", "tests/test_lib.py::test_show[one]") in shown
    assert divergences["confirmation"]["unexplainedEntryPoints"] == 0
    assert {batch["round"] for batch in validate_output(out / "1" / "confirmations.json")["batches"]} == {1}
    assert "lib:case" in [target["identifier"] for target in validate_output(out / "1" / "testingTargets.json")["targets"]]
