"""Merge mode on a real merge that drops a side's change whole (``git merge -s ours``) and edits while merging.

The side branch changes ``g``; the first parent changes ``f``, far from ``g``
in the call graph, so the impact set (what lies near both sides' changes) holds
``h`` and ``k`` but not ``g``. The lost behaviour must still be charged to
``g`` and rank among the merge's first targets. The merge also changes what
``apply`` passes to a callback defined in the tests: the callback's introduced
divergence goes to ``apply``, its closest caller that is project code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from histeg.records.merges import MergeDivergences
from histeg.records.targets import TestingTargets
from tests.conftest import GitRepo, run_histeg, validate_output
from tests.merges.histories import branched, commit_merge, version_index

BASE = '''def f(x):
    return x + 1


def g(x):
    return x * 2


def k(x):
    return g(x) + 1


def h(x):
    return f(x) + k(x)


def apply(fn, x):
    return fn(x)
'''
MAIN = BASE.replace("    return x + 1\n", "    return x + 2\n")
SIDE = BASE.replace("    return x * 2\n", "    return x * 3\n")
MERGED = MAIN.replace("    return fn(x)\n", "    return fn(x + 1)\n")  # main's tree (-s ours), and a merge-time edit of apply
TESTS = '''from calc import apply, g, h


def double(x):
    return x * 2


def test_h():
    assert h(3) > 0


def test_g():
    assert g(3) > 0


def test_apply():
    assert apply(double, 3) > 0
'''


@pytest.fixture(scope="module")
def dropped(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitRepo, dict[str, str]]:
    repo = GitRepo.create(tmp_path_factory.mktemp("dropped") / "repo")
    commits = branched(repo, "calc.py", {"calc.py": BASE, "tests/test_calc.py": TESTS}, ("side", "side: g triples", SIDE),
                       ("main: f adds two", MAIN))
    repo.git("merge", "-q", "--no-ff", "--no-commit", "-s", "ours", "side")
    assert (repo.path / "calc.py").read_text() == MAIN  # the side's change to g is dropped
    commits["merge"] = commit_merge(repo, {"calc.py": MERGED}, "merge side, keeping main's code", commits["side"])
    return repo, commits


def _classed(document: dict[str, Any], function: str, merge_class: str) -> list[dict[str, Any]]:
    return [d for d in document["divergences"] if d["function"] == function and merge_class in d["classes"]]


@pytest.mark.slow
def test_a_dropped_side_change_is_charged_to_its_function_and_ranks_first(dropped: tuple[GitRepo, dict[str, str]], tmp_path: Path) -> None:
    repo, commits = dropped
    out = tmp_path / "out"
    result = run_histeg("compute", "--repo", str(repo.path), "--all", "--merges", "--out", str(out), "--json")
    assert result.code == 0, result.stderr
    merge = version_index(out, commits["merge"])

    path = out / str(merge) / "mergeDivergences.json"
    document = validate_output(path)
    MergeDivergences.read(path)
    assert "calc:g" not in document["impactSet"] and {"calc:h", "calc:k"} <= set(document["impactSet"])
    lost = _classed(document, "calc:g", "lost")
    assert lost and all(d["lostFrom"] == ["secondParent"] and d["target"] == "calc:g" for d in lost)
    assert {d["entryPoint"]["label"] for d in lost} >= {"tests/test_calc.py::test_g", "tests/test_calc.py::test_h"}
    assert all(d["target"] is not None for d in document["divergences"])

    callback = _classed(document, "tests.test_calc:double", "introduced")
    assert callback and all(d["target"] == "calc:apply" for d in callback)  # a test's callback: its closest project caller

    path = out / str(merge) / "testingTargets.json"
    targets = validate_output(path)
    TestingTargets.read(path)
    ranked = targets["targets"]
    marked = [t["identifier"] for t in ranked if t["mergeClasses"]]
    assert marked == [t["identifier"] for t in ranked[:len(marked)]]  # merge classes first
    assert "calc:g" in marked and "calc:apply" in marked
    classes = {t["identifier"]: t["mergeClasses"] for t in ranked}
    assert classes["calc:g"] == ["lost"] and "introduced" in classes["calc:apply"]
    assert not [t for t in (*ranked, *targets["testCode"]) if t["identifier"] == "tests.test_calc:double" and t["mergeClasses"]]
    assert document["summary"]["targets"] == len({d["target"] for d in document["divergences"]})
