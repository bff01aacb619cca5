"""Version folders belong to commits: another branch, or a grown history, never overwrites or renumbers them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import GitRepo

LIB = "def double(x):\n    return x + x\n"
TEST = "from lib import double\n\n\ndef test_double():\n    assert double(3) == 6\n"


def contents(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


@pytest.mark.slow
def test_a_branch_switch_keeps_every_branch_s_results(make_repo, histeg, tmp_path: Path) -> None:
    repo: GitRepo = make_repo()
    base = repo.commit("library", {"lib.py": LIB, "tests/test_lib.py": TEST})
    main_tip = repo.commit("main's change", {"lib.py": LIB.replace("x + x", "2 * x")})
    repo.git("checkout", "-q", "-b", "feature", base)
    feature_tip = repo.commit("feature's change", {"lib.py": LIB.replace("x + x", "x * 2")})
    out = tmp_path / "out"
    args = ("analyze", "--repo", str(repo.path), "--out", str(out), "--no-tests", "--run", "python -c 'import lib; lib.double(2)'", "--json")

    on_main = json.loads(histeg(*args, "--branch", "main", "--all").stdout)
    assert [(v["index"], v["identifier"]) for v in on_main["versions"]] == [(0, base), (1, main_tip)]
    kept = contents(out / "1")

    on_feature = json.loads(histeg(*args, "--branch", "feature", "--all").stdout)
    assert [(v["index"], v["identifier"]) for v in on_feature["versions"]] == [(0, base), (2, feature_tip)], "a new commit, a new number"
    assert [v["extraction"] for v in on_feature["versions"]] == ["reused", "extracted"]
    assert contents(out / "1") == kept, "main's results are untouched"
    assert json.loads((out / "versions.json").read_text())["commits"] == {base: 0, main_tip: 1, feature_tip: 2}

    again = json.loads(histeg(*args, "--branch", "main", "--all").stdout)
    assert [v["extraction"] for v in again["versions"]] == ["reused", "reused"]
    assert all(step["status"] == "reused" for version in again["versions"] for step in version["steps"].values())


def test_history_growth_keeps_the_numbers(make_repo, histeg, tmp_path: Path) -> None:
    repo: GitRepo = make_repo()
    first = repo.commit("library", {"lib.py": LIB, "tests/test_lib.py": TEST})
    out = tmp_path / "out"
    assert histeg("extract", "--repo", str(repo.path), "--out", str(out), "--all").code == 0
    grown = [repo.commit(f"change {n}", {"lib.py": LIB + f"# {n}\n"}) for n in range(3)]
    result = json.loads(histeg("extract", "--repo", str(repo.path), "--out", str(out), "--all", "--json").stdout)
    assert [(v["index"], v["identifier"]) for v in result["versions"]] == list(enumerate([first, *grown]))
    assert result["versions"][0]["extraction"] == "reused"
