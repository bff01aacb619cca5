"""Impact mapping and ranking on a purpose-built project: every mapping rule, options, matching."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from histeg.records import targets as records
from tests.conftest import GitRepo, run_histeg, validate_output

pytestmark = pytest.mark.slow  # each test computes a small history end to end (about 10 s each, 100 s in all): run by make test-slow

LIB = '''LIMIT = 10


def helper(x):
    if x > 5:
        return "big"
    return "small"


def compute(x):
    return helper(x * 2)


def report(x):
    result = compute(x)
    if result == "big":
        return "B"
    return "S"


def summary(x):
    if compute(x) == "big":
        return "big!"
    return "small!"


def threshold(x):
    return x > LIMIT
'''
TESTS = '''from lib import report, summary, threshold


def test_summary():
    assert summary(2) in ("big!", "small!")


def test_report():
    assert report(2) in ("B", "S")


def test_threshold():
    assert threshold(8) in (True, False)
'''
CHANGED = LIB.replace("LIMIT = 10", "LIMIT = 7").replace("helper(x * 2)", "helper(x * 3)").replace(
    '    result = compute(x)\n', '    result = compute(x)\n    checked = True\n')


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    repo = GitRepo.create(tmp_path_factory.mktemp("impact") / "repo")
    repo.commit("base", {"lib.py": LIB, "tests/test_lib.py": TESTS})
    repo.commit("change", {"lib.py": CHANGED, "tests/test_lib.py": TESTS.replace("def test_threshold", "def test_limit")})
    return repo


def compute(repo: GitRepo, out: Path, *extra: str) -> dict[str, Any]:
    result = run_histeg("compute", "--repo", str(repo.path), "--all", "--out", str(out), "--repeat", "1", "--override", *extra)
    assert result.code == 0, result.stderr
    records.TestingTargets.read(out / "1" / "testingTargets.json")  # its own record reads what was written
    return validate_output(out / "1" / "testingTargets.json")


def by_id(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["identifier"]: t for t in document["targets"]}


def test_mapping_rules(project: GitRepo, tmp_path: Path) -> None:
    out = tmp_path / "out"
    document = compute(project, out)
    targets = by_id(document)
    compute_target = targets["lib:compute"]
    non_local = {(d["function"], d["callDistance"]) for d in compute_target["nonLocalDivergences"]}
    assert ("lib:helper", 1) in non_local  # unchanged callee, one call away
    assert ("lib:summary", 1) in non_local  # unchanged caller of compute, diverging through its return value
    assert {(d["function"], d["callDistance"]) for d in targets["lib:report"]["nonLocalDivergences"]} >= {("lib:helper", 2)}
    # its test was renamed (test_threshold -> test_limit): matched through the syntax changes
    assert [(d["function"], d["callDistance"]) for d in targets["lib:LIMIT"]["nonLocalDivergences"]] == [("lib:threshold", 0)]
    assert document["targets"][0]["identifier"] == "lib:compute"
    assert document["unmatchedEntryPoints"] == {"onlyInOld": [], "onlyInNew": []}
    assert "lib:helper" not in targets and "lib:summary" not in targets and "lib:report" in targets


def test_manual_matching_is_the_last_word(project: GitRepo, tmp_path: Path) -> None:
    """The renamed test is matched automatically; a manual pair that says otherwise wins."""
    out = tmp_path / "out"
    compute(project, out)
    entry = {"command": "pytest", "phase": "call", "root": "tests.test_lib:test_threshold", "occurrence": 0,
             "label": "tests/test_lib.py::test_threshold"}
    other = entry | {"root": "tests.test_lib:test_summary", "label": "tests/test_lib.py::test_summary"}
    (out / "1" / "traceMatching.json").write_text(json.dumps({"pairs": [{"old": entry, "new": other}]}))
    document = compute(project, out)
    assert [k["label"] for k in document["unmatchedEntryPoints"]["onlyInNew"]] == ["tests/test_lib.py::test_limit"]
    assert [k["label"] for k in document["unmatchedEntryPoints"]["onlyInOld"]] == ["tests/test_lib.py::test_summary"]


def test_restricted_mapping_charges_only_the_closest_changed_caller(project: GitRepo, tmp_path: Path) -> None:
    targets = by_id(compute(project, tmp_path / "out", "--restrict-syntax-mapping"))
    assert "lib:helper" in {d["function"] for d in targets["lib:compute"]["nonLocalDivergences"]}
    assert "lib:helper" not in {d["function"] for d in targets["lib:report"]["nonLocalDivergences"]}


def test_alternative_metrics_and_single_source_lists(project: GitRepo, tmp_path: Path) -> None:
    out = tmp_path / "out"
    default = compute(project, out)
    combined = compute(project, out, "--metric", "coverage", "--metric", "distance", "--generate-for-syntax", "--generate-for-divergence", "--export-flat")
    assert combined["options"]["metrics"] == ["coverage", "distance"]
    assert by_id(combined)["lib:compute"]["parts"]["nonLocal"].keys() >= {"coverage", "distance"}
    assert "sections" not in by_id(combined)["lib:compute"]["parts"]["nonLocal"]
    assert by_id(default)["lib:compute"]["value"] != by_id(combined)["lib:compute"]["value"]
    syntax = validate_output(out / "1" / "syntaxTargets.json")
    assert {t["identifier"] for t in syntax["targets"]} == {"lib:compute", "lib:report", "lib:LIMIT"}
    divergence = validate_output(out / "1" / "divergenceTargets.json")
    assert {t["identifier"] for t in divergence["targets"]} == {"lib:compute", "lib:report", "lib:LIMIT"}
    read_back = records.SyntaxTargets.read(out / "1" / "syntaxTargets.json")
    assert [t.identifier for t in read_back.targets] == [t["identifier"] for t in syntax["targets"]]
    assert records.DivergenceTargets.read(out / "1" / "divergenceTargets.json").options.metrics == ["coverage", "distance"]
    flat = validate_output(out / "1" / "traceDivergences.json")
    assert flat["layout"] == "flat" and all("callPath" in d for d in flat["divergences"])


def test_scaling_from_configuration(project: GitRepo, tmp_path: Path) -> None:
    out = tmp_path / "out"
    config = tmp_path / "histeg.toml"
    config.write_text("[tool.histeg.scaling]\nnon-local-sections = 0\nnon-local-distance = 0\nnon-local-returns = 0\n"
                      "non-local-parameters = 0\nnon-local-calls = 0\ncall-distance = 0\naffected-functions = 0\n")
    targets = by_id(compute(project, out, "--config", str(config)))
    assert targets["lib:compute"]["value"] == targets["lib:compute"]["parts"]["syntaxChanges"] + sum(targets["lib:compute"]["parts"]["local"].values())
    config.write_text("[tool.histeg.scaling]\nno-such-weight = 1\n")
    result = run_histeg("compute", "--repo", str(project.path), "--all", "--out", str(out), "--config", str(config))
    assert result.code == 2 and "unknown scaling 'no-such-weight'" in result.stderr


def test_code_outside_sources_and_tests_is_reported_but_not_ranked(make_repo, tmp_path: Path) -> None:
    repo = make_repo("scoped")
    repo.commit("base", {"src/lib.py": LIB, "tests/test_lib.py": TESTS, "bench/run.py": "def run():\n    return 1\n"})
    repo.commit("bench only", {"bench/run.py": "def run():\n    return 2\n"})
    result = run_histeg("compute", "--repo", str(repo.path), "--all", "--out", str(tmp_path / "out"), "--repeat", "1")
    assert result.code == 0, result.stderr
    document = validate_output(tmp_path / "out" / "1" / "testingTargets.json")
    assert document["targets"] == []
    assert [t["identifier"] for t in document["otherCode"]] == ["bench.run:run"]


STATEFUL = '''class Counter:
    def __init__(self, start):
        self.start = start

    def describe(self):
        if self.start > 0:
            return "positive"
        return "zero"


def unrelated(x):
    return x + 1
'''
STATEFUL_TESTS = '''from lib import Counter, unrelated


def test_counter():
    counter = Counter(0)
    assert unrelated(1) == 2
    assert counter.describe() in ("positive", "zero")
'''


def test_divergence_through_state_is_charged_to_the_changed_function_before_it(make_repo, tmp_path: Path) -> None:
    """``__init__`` writes an attribute that ``describe`` reads: neither calls the other, yet the change explains it."""
    repo = make_repo("stateful")
    repo.commit("base", {"lib.py": STATEFUL, "tests/test_lib.py": STATEFUL_TESTS})
    repo.commit("count from one", {"lib.py": STATEFUL.replace("        self.start = start\n", "        if start == 0:\n            start = 1\n        self.start = start\n")})
    targets = by_id(compute(repo, tmp_path / "out"))
    assert list(targets) == ["lib:Counter.__init__"]
    charged = {(d["function"], d["callDistance"]) for d in targets["lib:Counter.__init__"]["nonLocalDivergences"]}
    assert charged == {("lib:Counter.describe", 2)}  # siblings under the test: up one call, down one


DATA_TESTS = '''from pathlib import Path

from lib import report


def test_report_on_data():
    value = int((Path(__file__).parent / "data" / "input.txt").read_text())
    assert report(value) in ("B", "S")
'''


def test_divergences_from_changed_test_data_are_no_code_targets(make_repo, tmp_path: Path) -> None:
    """Only a data file of the tests changed: the code behaves otherwise on new inputs, but has nothing new to test."""
    repo = make_repo("data")
    repo.commit("base", {"lib.py": LIB, "tests/test_lib.py": DATA_TESTS, "tests/data/input.txt": "2\n"})
    repo.commit("new input", {"tests/data/input.txt": "9\n"})
    document = compute(repo, tmp_path / "out")
    assert document["targets"] == [] and document["summary"]["unmapped"] == 0
    data = document["testData"]
    assert data["files"] == ["tests/data/input.txt"] and data["divergences"] > 0
    assert {"lib:helper", "lib:report"} <= set(data["functions"])
    divergences = validate_output(tmp_path / "out" / "1" / "traceDivergences.json")
    assert divergences["summary"]["divergences"] == document["summary"]["divergences"] > 0


DOCUMENTED = LIB.replace('def compute(x):\n', 'def compute(x):\n    """Twice the input, judged by the helper."""\n').replace(
    'def report(x):\n', 'def report(x):\n    """B or S."""\n')


def test_docstrings_are_no_targets_and_absorb_no_divergence(tmp_path: Path) -> None:
    repo = GitRepo.create(tmp_path / "repo")
    repo.commit("base", {"lib.py": LIB, "tests/test_lib.py": TESTS})
    repo.commit("document", {"lib.py": DOCUMENTED, "tests/test_lib.py": TESTS})
    repo.commit("change", {"lib.py": DOCUMENTED.replace('if x > 5:', 'if x >= 4:').replace('"""B or S."""', '"""B or S, reworded."""'),
                           "tests/test_lib.py": TESTS})
    out = tmp_path / "out"
    result = run_histeg("compute", "--repo", str(repo.path), "--all", "--out", str(out), "--repeat", "1")
    assert result.code == 0, result.stderr
    syntax = validate_output(out / "1" / "syntaxChanges.json")
    kinds = {(c["entity"], c["codeType"], c["significance"]) for f in syntax["files"] for c in f["changes"]}
    assert kinds == {("lib:compute", "docstring", "none"), ("lib:report", "docstring", "none")}, "reported as such"
    assert validate_output(out / "1" / "testingTargets.json")["targets"] == []
    targets = validate_output(out / "2" / "testingTargets.json")["targets"]
    assert [t["identifier"] for t in targets] == ["lib:helper"], "report's reworded docstring absorbs nothing"
