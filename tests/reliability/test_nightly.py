"""A nightly job on one output directory: a base is never recomputed, an unchanged rerun is nearly free and writes
nothing, one new commit costs one traced run and one comparison."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

import histeg
from histeg.pipeline import PipelineRun
from tests.conftest import GitRepo

LIB = "def total(prices):\n    result = 0\n    for price in prices:\n        result += price\n    return result\n"
TEST = ("import pytest\n\nfrom shop import total\n\n\ndef test_total():\n    assert total([1, 2, 3]) == 6\n\n\n"
        "def test_empty():\n    assert total([]) == 0\n\n\n"
        "@pytest.mark.parametrize('size', range(60))\ndef test_many(size):\n    assert total(range(size * 50)) == sum(range(size * 50))\n")
"""A suite of some size, as a nightly job has: a run's cost is mostly tracing and comparing it."""


def history(repo: GitRepo, commits: int) -> list[str]:
    made = [repo.commit("shop", {"shop.py": LIB, "tests/test_shop.py": TEST})]
    for number in range(1, commits):
        made.append(repo.commit(f"change {number}", {"shop.py": LIB.replace("result = 0", f"result = {number} - {number}")}))
    return made


def files(out: Path) -> dict[str, int]:
    """Every file of the results and when it was last written; the lock file holds the pid of the run that holds it."""
    return {str(path.relative_to(out)): path.stat().st_mtime_ns for path in out.rglob("*")
            if path.is_file() and path.name != ".histeg.lock"}


def ran(run: PipelineRun, step: str) -> list[int]:
    return [item["index"] for item in run.steps[step] if not item.get("reused") and "skipped" not in item]


@pytest.mark.slow
def test_a_nightly_job_keeps_its_base_and_redoes_nothing(make_repo, tmp_path: Path) -> None:
    repo = make_repo()
    c1, _, _, c4, _, c6 = history(repo, 6)
    project = histeg.Project(repo.path, out=tmp_path / "out", verbosity=0, read_config=False)
    started = time.perf_counter()
    first = project.compute([f"{c1}..{c4}"])
    first_seconds = time.perf_counter() - started
    assert first.exit_code == 0 and ran(first, "targets") == [1, 2, 3]
    base = project.version(3)
    kept = {name: (base.directory / name).read_bytes() for name in ("testingTargets.json", "traceDivergences.json", "version.json")}
    kept_times = {name: (base.directory / name).stat().st_mtime_ns for name in kept}

    started = time.perf_counter()
    second = project.compute([f"{c4}..{c6}"])
    second_seconds = time.perf_counter() - started
    assert second.exit_code == 0
    assert ran(second, "traces") == [4, 5] and ran(second, "targets") == [4, 5], "only the new versions are traced and compared"
    assert all(ran(second, step) == [4, 5] for step in ("build", "statics", "syntax")), second.steps
    assert {name: (base.directory / name).read_bytes() for name in kept} == kept, "the base keeps its comparison with version 2"
    assert {name: (base.directory / name).stat().st_mtime_ns for name in kept} == kept_times
    assert project.version(3).version.comparing_against_index == 2 and project.version(4).version.comparing_against_index == 3

    before = files(tmp_path / "out")
    started = time.perf_counter()
    third = project.compute([f"{c4}..{c6}"])
    third_seconds = time.perf_counter() - started
    assert third.exit_code == 0 and all(ran(third, step) == [] for step in third.steps if step != "extract")
    assert files(tmp_path / "out") == before, "an unchanged rerun writes no file"
    print(f"nightly: first run {first_seconds:.2f} s, second {second_seconds:.2f} s, "
          f"unchanged rerun {third_seconds:.3f} s ({third_seconds / first_seconds:.1%} of the first)")
    assert third_seconds <= 0.05 * first_seconds, f"unchanged rerun {third_seconds:.2f} s, against a first run of {first_seconds:.2f} s"

    c7 = repo.commit("change 7", {"shop.py": LIB.replace("result += price", "result = result + price")})
    fourth = project.compute([f"{c6}..{c7}"])
    assert [ran(fourth, step) for step in ("traces", "compare", "targets")] == [[6], [6], [6]], "one traced run and one comparison"
    assert os.path.samefile(project.store.version_dir(6).parent, tmp_path / "out")
