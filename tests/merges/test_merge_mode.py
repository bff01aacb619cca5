"""Merge mode on a real merge: a feature's behaviour lost in a conflict resolution, a behaviour the merge alone brings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from histeg.records.merges import MergeDivergences
from histeg.records.targets import TestingTargets
from tests.conftest import GitRepo, run_histeg, validate_output
from tests.merges.histories import branched, commit_merge, version_index

BASE = '''def discount(total): return 0
def tax(total): return total // 10


def fee(total):
    return 1


def checkout(total):
    return total - discount(total) + tax(total) + fee(total)
'''
FEATURE = BASE.replace("def discount(total): return 0", "def discount(total): return total // 10 if total > 100 else 0")
MAIN = BASE.replace("def tax(total): return total // 10", "def tax(total): return total // 5")
MERGED = MAIN.replace("    return 1\n", "    return 2\n")  # main's side of the conflict, and a merge-time edit of fee
TESTS = '''from shop import checkout, discount, fee, tax


def test_checkout():
    assert checkout(200) > 0


def test_discount():
    assert discount(200) >= 0


def test_tax():
    assert tax(200) >= 0


def test_fee():
    assert fee(200) >= 0
'''


@pytest.fixture(scope="module")
def merged(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitRepo, dict[str, str]]:
    repo = GitRepo.create(tmp_path_factory.mktemp("merges") / "repo")
    commits = branched(repo, "shop.py", {"shop.py": BASE, "tests/test_shop.py": TESTS}, ("feature", "feature: a discount above 100", FEATURE),
                       ("main: a higher tax", MAIN))
    repo.git("merge", "--no-ff", "--no-commit", "feature", check=False)
    assert "<<<<<<<" in (repo.path / "shop.py").read_text()  # both sides changed the same lines: resolved by hand
    commits["merge"] = commit_merge(repo, {"shop.py": MERGED}, "merge feature, keeping main's pricing", commits["feature"])
    return repo, commits


def _by_function(document: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for divergence in document["divergences"]:
        found.setdefault(divergence["function"], []).append(divergence)
    return found


@pytest.mark.slow
def test_lost_and_introduced_behaviour_rank_first(merged: tuple[GitRepo, dict[str, str]], tmp_path: Path) -> None:
    repo, commits = merged
    before = repo.git("status", "--porcelain"), repo.git("rev-parse", "HEAD"), (repo.path / ".git" / "config").read_bytes()
    out = tmp_path / "out"
    result = run_histeg("compute", "--repo", str(repo.path), "--all", "--merges", "--out", str(out), "--json")
    assert result.code == 0, result.stderr
    assert (repo.git("status", "--porcelain"), repo.git("rev-parse", "HEAD"), (repo.path / ".git" / "config").read_bytes()) == before

    merge, second, base, first = (version_index(out, commits[name]) for name in ("merge", "feature", "base", "main"))
    summary = json.loads(result.stdout)
    assert {v["index"] for v in summary["versions"]} == {base, first, second, merge}  # the feature commit is off the first-parent line
    version = validate_output(out / str(merge) / "merge.json")
    assert validate_output(out / str(merge) / "version.json")["merge"] is None  # extraction marks merges beside it, never in it
    assert version["merge"] == {"firstParent": {"index": first, "identifier": commits["main"]},
                                "secondParent": {"index": second, "identifier": commits["feature"]},
                                "base": {"index": base, "identifier": commits["base"]}}
    roles = validate_output(out / str(second) / "merge.json")
    assert roles["mergeRoles"] == [{"role": "secondParent", "merge": {"index": merge, "identifier": commits["merge"]}}]
    assert validate_output(out / str(second) / "version.json")["comparingAgainstIndex"] is None and not (out / str(second) / "testingTargets.json").exists()

    document = validate_output(out / str(merge) / "mergeDivergences.json")
    MergeDivergences.read(out / str(merge) / "mergeDivergences.json")
    assert [c["name"] for c in document["comparisons"]] == ["mergeVsFirstParent", "mergeVsSecondParent", "firstParentVsBase",
                                                             "secondParentVsBase"]
    against_second = document["comparisons"][1]["confirmation"]  # divergent entry points re-run on both sides, as for any comparison
    assert against_second["entryPoints"] > 0 and against_second["completeRuns"] == {"old": 2, "new": 2}
    found = _by_function(document)
    lost = [d for d in found["shop:discount"] if "lost" in d["classes"]]
    assert lost and all(d["lostFrom"] == ["secondParent"] and d["target"] == "shop:discount" for d in lost)
    assert lost[0]["relations"] == {"mergeVsFirstParent": "equal", "mergeVsSecondParent": "differs",
                                    "firstParentVsBase": "equal", "secondParentVsBase": "differs"}
    introduced = [d for d in found["shop:fee"] if "introduced" in d["classes"]]
    assert introduced and all(d["target"] == "shop:fee" and not d["lostFrom"] for d in introduced)
    assert "shop:tax" not in found  # main's change, kept by the merge: neither lost nor introduced
    assert {"shop:discount", "shop:fee"} <= set(document["impactSet"])

    targets = validate_output(out / str(merge) / "testingTargets.json")
    TestingTargets.read(out / str(merge) / "testingTargets.json")
    ranked = targets["targets"]
    marked = [t["identifier"] for t in ranked if t["mergeClasses"]]
    assert marked == [t["identifier"] for t in ranked[:len(marked)]]  # merge classes first
    classes = {t["identifier"]: t["mergeClasses"] for t in ranked}
    assert classes["shop:discount"] == ["lost"] and classes["shop:fee"] == ["introduced"]
    assert [t["rank"] for t in ranked] == list(range(1, len(ranked) + 1))

    again = run_histeg("compute", "--repo", str(repo.path), "--all", "--merges", "--out", str(out), "--json")
    assert again.code == 0, again.stderr
    step = next(s for s in json.loads(again.stdout)["versions"] if s["index"] == merge)["steps"]["merges"]
    assert step["status"] == "reused"
    assert validate_output(out / str(merge) / "testingTargets.json") == targets
