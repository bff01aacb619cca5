"""The CI recipe in examples/ runs as written: its histeg steps, in order, on a real repository, twice with a new commit
in between (the output folder kept between the runs, as the CI cache keeps it), and the second run reuses the first."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import GitRepo, validate_output

pytestmark = pytest.mark.slow  # two computes of a small repository through the recipe's shell steps

RECIPE = Path(__file__).parent.parent / "examples" / "histeg-workflow.yml"
LIB = "def area(width, height):\n    return width * height\n"
TEST = "from lib import area\n\n\ndef test_area():\n    assert area(2, 3) == 6\n"


def histeg_steps() -> list[dict]:
    """The steps histeg's own shell runs (``id: histeg-*``); the others are GitHub's (checkout, cache, comment)."""
    job = next(iter(yaml.safe_load(RECIPE.read_text())["jobs"].values()))
    steps = [step for step in job["steps"] if str(step.get("id", "")).startswith("histeg-")]
    assert [step["id"] for step in steps] == ["histeg-compute", "histeg-report", "histeg-gate"]
    return steps


def run_steps(checkout: Path, base: str, work: Path, fail_on: str) -> list[subprocess.CompletedProcess[str]]:
    """The histeg steps in order, with the environment GitHub would give them (a runner's temporary folder, a summary)."""
    runner = work / "runner"
    runner.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "HISTEG_OUT": str(work / "histeg-out"),
        "HISTEG_BASE": base,
        "HISTEG_FAIL_ON": fail_on,
        "RUNNER_TEMP": str(runner),
        "GITHUB_STEP_SUMMARY": str(runner / "summary.md"),
    }
    return [
        subprocess.run(["bash", "-e", "-c", step["run"]], cwd=checkout, env=env, capture_output=True, text=True, check=False)
        for step in histeg_steps()
    ]


def run_recipe(checkout: Path, base: str, work: Path) -> list[subprocess.CompletedProcess[str]]:
    done = run_steps(checkout, base, work, "targets>5")
    assert [result.returncode for result in done] == [0, 0, 0], [result.stderr for result in done]
    return done


def test_the_recipe_computes_only_what_is_new_and_reports_it(tmp_path: Path) -> None:
    repo = GitRepo.with_history(
        tmp_path / "repo",
        ("area", {"lib.py": LIB, "tests/test_area.py": TEST}),
        ("a wider area", {"lib.py": LIB.replace("width * height", "width * height + 0 * width")}),
    )
    first, second = repo.git("rev-list", "--reverse", "main").split()
    checkout = tmp_path / "checkout"
    subprocess.run(["git", "clone", "-q", str(repo.path), str(checkout)], check=True)
    run_recipe(checkout, first, tmp_path)
    out = tmp_path / "histeg-out"
    markdown = (tmp_path / "runner" / "histeg-report.md").read_text()
    assert "### histeg: version 1" in markdown and markdown in (tmp_path / "runner" / "summary.md").read_text()
    kept = {path: path.stat().st_mtime_ns for path in (out / "1").rglob("*") if path.is_file()}
    validate_output(out / "1" / "testingTargets.json")

    third = repo.commit("a taller area", {"lib.py": LIB.replace("width * height", "height * width * 1")})
    subprocess.run(["git", "-C", str(checkout), "pull", "-q"], check=True)
    compute, _, gate = run_recipe(checkout, second, tmp_path)  # a push: the base is the commit before it
    assert "reused" in compute.stderr and "extracted 1" in compute.stderr, compute.stderr
    assert {path: path.stat().st_mtime_ns for path in kept} == kept, "the earlier versions' results are reused, not remade"
    assert validate_output(out / "2" / "version.json")["identifier"] == third
    markdown = (tmp_path / "runner" / "histeg-report.md").read_text()
    assert "### histeg: version 2" in markdown and "### histeg: version 0" not in markdown
    assert gate.returncode == 0


def test_the_gate_step_fails_the_job_when_its_condition_holds(tmp_path: Path) -> None:
    repo = GitRepo.with_history(
        tmp_path / "repo",
        ("area", {"lib.py": LIB, "tests/test_area.py": TEST}),
        ("an untested helper", {"lib.py": LIB + "\n\ndef perimeter(width, height):\n    return 2 * (width + height)\n"}),
    )
    first = repo.git("rev-list", "--reverse", "main").split()[0]
    checkout = tmp_path / "checkout"
    subprocess.run(["git", "clone", "-q", str(repo.path), str(checkout)], check=True)
    codes = run_steps(checkout, first, tmp_path, "untested")
    assert [c.returncode for c in codes] == [0, 0, 4], codes[-1].stderr
    assert "untested" in codes[-1].stdout + codes[-1].stderr
