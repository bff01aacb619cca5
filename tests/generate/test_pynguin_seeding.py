"""Pynguin after carving: a target whose carved test is no witness (its call depends on state the test built before it)
is handed to Pynguin, which starts its population from that carved file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import GitRepo, run_histeg, validate_output

pytestmark = pytest.mark.slow  # a compute of two versions, carving, then Pynguin

COUNTER = """class Counter:
    FACTOR = 2
    count = 0

    @classmethod
    def bump(cls) -> int:
        cls.count += 1
        return cls.count

    @classmethod
    def total(cls) -> int:
        return cls.count * cls.FACTOR
"""
TEST = """from pkg.counter import Counter


def test_total_after_two_bumps():
    Counter.bump()
    Counter.bump()
    assert Counter.total() > 0
"""


def test_a_target_without_a_carved_witness_goes_to_pynguin_seeded_with_its_carved_file(tmp_path: Path) -> None:
    repo = GitRepo.with_history(
        tmp_path / "repo",
        ("counter", {"pkg/__init__.py": "", "pkg/counter.py": COUNTER, "tests/__init__.py": "", "tests/test_counter.py": TEST}),
        ("a larger factor", {"pkg/counter.py": COUNTER.replace("FACTOR = 2", "FACTOR = 3")}),
    )
    out = tmp_path / "out"
    computed = run_histeg("compute", "--repo", str(repo.path), "--all", "--out", str(out), "--python", sys.executable, "-q")
    assert computed.code == 0, computed.stderr
    result = run_histeg("generate", "1", "--out", str(out), "--budget", "4", "--top", "1", "--seed", "3", "--json", "-q")
    assert result.code == 0, result.stderr
    document = validate_output(out / "1" / "generation.json")
    assert document["targets"][0]["identifier"] == "pkg.counter:Counter.FACTOR"
    carved = document["carved"]["tests"]
    assert [t["function"] for t in carved] == ["pkg.counter:Counter.total"]
    assert carved[0]["outcome"] == "fails on both"  # total() alone runs on a counter no test bumped
    assert document["settings"]["stages"] == ["carve", "pynguin"]
    [module] = document["modules"]
    assert module["module"] == "pkg.counter" and module["onlyCover"] == ["Counter"]
    assert module["seededWith"] == carved[0]["id"].partition("::")[0]
    log = (out / "1" / module["log"]).read_text()
    assert "--initial_population_seeding True --initial_population_data" in log
