"""A version whose changes no test read takes its predecessor's traces (``histeg.runs.reuse``); any other is traced."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from histeg.tracing.seen_files import read_seen_files
from tests.conftest import GitRepo, validate_output

LIB = "def double(x):\n    return x + x\n"
TEST = """import os
from pathlib import Path

from lib import double

HERE = Path(__file__).resolve().parent.parent


def test_double():
    assert double(int((HERE / "data" / "table.txt").read_text())) == 6


def test_listing():
    assert "table.txt" in os.listdir(HERE / "data")
"""


def _compute(histeg, repo: GitRepo, out: Path, *options: str) -> dict:
    result = histeg("compute", "--repo", str(repo.path), "--all", "--out", str(out), "--json", "-v", *options)
    assert result.code == 0, result.stderr
    return {"summary": json.loads(result.stdout), "stderr": result.stderr}


def _traces(out: Path, index: int) -> list[Path]:
    return sorted((out / str(index) / "traces" / "run-1").glob("*.htrace"))


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])  # with -j 2, such a version's traces wait for its predecessor's
def test_only_changes_no_test_read_reuse_the_predecessors_traces(make_repo, histeg, tmp_path: Path, jobs: str) -> None:
    repo = make_repo()
    repo.commit(
        "library",
        {"lib.py": LIB, "tests/test_lib.py": TEST, "data/table.txt": "3", "CHANGELOG": "- first\n", "docs/guide.md": "# Guide\n"},
    )
    repo.commit("changelog", {"CHANGELOG": "- first\n- second\n"})
    repo.commit("guide", {"docs/guide.md": "# Guide\n\nMore.\n"})
    repo.commit("data read by a test", {"data/table.txt": "4"})
    repo.commit("a new file in a folder a test lists", {"data/other.txt": "x"})
    out = tmp_path / "out"
    computed = _compute(histeg, repo, out, "-j", jobs)
    runs = [validate_output(out / str(index) / "runs.json") for index in range(5)]
    commits = [run["identifier"] for run in runs]
    assert [run.get("reusedFrom") for run in runs] == [None, commits[0], commits[1], None, None]
    # the same files, not copies: a reused version costs no disk for its traces
    assert [path.stat().st_ino for path in _traces(out, 2)] == [path.stat().st_ino for path in _traces(out, 0)]
    seen = read_seen_files(_traces(out, 0)[0])
    assert seen is not None and {"data/table.txt", "tests/test_lib.py"} <= set(seen["opened"]) and "data" in seen["listed"]
    assert "CHANGELOG" not in seen["opened"] and seen["blind"] == [] and seen["children"] == 0
    steps = computed["summary"]["steps"]
    (why,) = steps["traces"][3]["notReusedBecause"]
    assert why.endswith(".htrace read data/table.txt")
    if jobs == "1":  # a worker's details stay in the worker: the summary says it
        assert f"version 3: traced, not reused from version 2: {why}" in computed["stderr"]
    assert [step.get("reusedFrom") for step in steps["traces"]] == [None, commits[0], commits[1], None, None]
    divergences = [len(validate_output(out / str(index) / "traceDivergences.json")["divergences"]) for index in range(1, 5)]
    assert divergences[:2] == [0, 0] and divergences[2] > 0  # the data a test reads changed what it computes
    # a rerun reuses every step, the reused traces included
    again = json.loads(histeg("compute", "--repo", str(repo.path), "--all", "--out", str(out), "--json").stdout)
    assert all(step["reused"] for step in again["steps"]["traces"])


CHILD_TEST = """import subprocess
import sys


def test_child():
    subprocess.run(COMMAND, check=True)
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("command", "reused"),
    [
        ("[sys.executable, '-c', 'import lib']", True),  # a traced child, with a record of its own
        ("['sh', '-c', 'cat CHANGELOG']", False),  # a program no tracer hears: it could read anything
    ],
)
def test_a_child_process_nobody_traced_rules_reuse_out(make_repo, histeg, tmp_path: Path, command: str, reused: bool) -> None:
    repo = make_repo()
    test = CHILD_TEST.replace("COMMAND", command)
    repo.commit("library", {"lib.py": LIB, "tests/test_lib.py": test, "CHANGELOG": "- first\n"})
    repo.commit("changelog", {"CHANGELOG": "- first\n- second\n"})
    out = tmp_path / "out"
    computed = _compute(histeg, repo, out)
    run = validate_output(out / "1" / "runs.json")
    assert (run.get("reusedFrom") is not None) is reused, computed["stderr"]
    if not reused:
        (why,) = computed["summary"]["steps"]["traces"][1]["notReusedBecause"]
        assert why.endswith("started 1 process(es), 0 of them traced") and why in computed["stderr"]
