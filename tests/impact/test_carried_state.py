"""A test that fails only after the tests before it: the state a changed function left in the process reaches it.

One real history, computed by the real command line under the real tracer. ``add`` stores another number in a module's
list and returns what it returned before, so no trace of the test that calls it diverges; the next test reads the list
and fails. Re-run alone, that test finds the list empty on both versions and fails on both: the re-runs do not show the
divergence again. That is not noise: nothing differs between runs of one version, and changed code ran before the test
in its process. The failure is charged to ``add``, not set aside.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo, run_histeg, validate_output

REGISTRY = '''_items = []


def add(x):
    _items.append(x)
    return None


def first():
    return _items[0]


def twice(x):
    return 2 * x
'''
TESTS = '''from reg import add, first, twice


def test_a_adds():
    add(1)


def test_b_reads_what_a_added():
    assert first() == 1


def test_c_alone():
    assert twice(2) == 4
'''


@pytest.fixture(scope="module")
def computed(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, Any], Path]:
    root = tmp_path_factory.mktemp("carried")
    repo = GitRepo.create(root / "repo")
    repo.commit("base", {"reg.py": REGISTRY, "tests/test_reg.py": TESTS})
    repo.commit("add stores x + 1", {"reg.py": REGISTRY.replace("_items.append(x)", "_items.append(x + 1)")})
    result = run_histeg("compute", "--repo", str(repo.path), "--all", "--out", str(root / "out"), "--repeat", "1")
    assert result.code == 0, result.stderr
    out = root / "out"
    return validate_output(out / "1" / "testingTargets.json"), validate_output(out / "1" / "traceDivergences.json"), out


def test_a_failure_after_changed_code_ran_in_its_process_is_charged_to_that_code(computed: tuple[dict[str, Any], dict[str, Any], Path]) -> None:
    targets = {target["identifier"]: target for target in computed[0]["targets"]}
    add = targets["reg:add"]
    charged = [*add["localDivergences"], *add["nonLocalDivergences"]]
    assert {d["function"] for d in charged} >= {"reg:first"}, add
    assert all("test_b_reads_what_a_added" in d["entryPoint"] for d in charged), charged
    assert "reg:first" not in targets, "first did not change: the divergence is add's"


def test_it_is_not_set_aside_as_noise(computed: tuple[dict[str, Any], dict[str, Any], Path]) -> None:
    divergences = computed[1]
    assert divergences["noise"] == [], divergences["noise"]
    failing = [d for d in divergences["divergences"] if d["entryPoint"]["label"].endswith("test_b_reads_what_a_added")]
    assert failing and all("outcomeChanged" in d["classes"] for d in failing), failing
    assert not any(d["entryPoint"]["label"].endswith("test_c_alone") for d in divergences["divergences"])


def test_re_runs_write_no_failure_reports_and_keep_the_outcome(computed: tuple[dict[str, Any], dict[str, Any], Path]) -> None:
    """Re-runs are read for their traces and outcomes: pytest writes no failure report there (``--tb=no``), which is most
    of a re-run's time when a change fails many tests. The full run keeps its reports for people to read."""
    out = computed[2]
    runs = [run for batch in validate_output(out / "1" / "confirmations.json")["batches"] for run in batch["runs"]]
    assert runs and all("--tb=no" in run["argv"] for run in runs)
    failing = [run for run in runs if run["outcome"] == "failed"]
    assert failing, "test_b fails when re-run alone, on both versions"
    for run in failing:
        assert "def test_b_reads_what_a_added" not in (out / "1" / run["log"]).read_text(encoding="utf-8")
    full = validate_output(out / "1" / "runs.json")["runs"][0]
    assert "--tb=no" not in full["argv"]
    assert "def test_b_reads_what_a_added" in (out / "1" / full["log"]).read_text(encoding="utf-8")
