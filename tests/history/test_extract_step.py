"""Extraction is a step like the others: the engine reuses a version's snapshot while what it was made from holds,
an output folder made before the step had a state is taken as it is, and merges are marked beside version.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo, run_histeg, validate_output

LIB = "def double(x):\n    return 2 * x\n"
TESTS = "from lib import double\n\n\ndef test_double():\n    assert double(2) == 4\n"


def _compute(repo: GitRepo, out: Path, *extra: str) -> dict[str, Any]:
    result = run_histeg("compute", "--repo", str(repo.path), "--all", "--out", str(out), "--json", "--confirm", "0", *extra)
    assert result.code == 0, result.stderr
    return json.loads(result.stdout)


def _states(out: Path, index: int) -> dict[str, Any]:
    return json.loads((out / str(index) / "steps.json").read_text())["steps"]


def _step_status(summary: dict[str, Any]) -> set[tuple[int, str, str]]:
    return {(version["index"], name, state["status"]) for version in summary["versions"] for name, state in version["steps"].items()}


@pytest.fixture(scope="module")
def computed(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitRepo, Path]:
    base = tmp_path_factory.mktemp("extract-step")
    repo = GitRepo.create(base / "repo")
    repo.commit("double", {"lib.py": LIB, "tests/test_lib.py": TESTS})
    repo.commit("double by adding", {"lib.py": LIB.replace("2 * x", "x + x")})
    out = base / "out"
    first = _compute(repo, out)
    assert [version["extraction"] for version in first["versions"]] == ["extracted", "extracted"]
    return repo, out


def test_an_unchanged_rerun_reuses_each_extraction_by_its_fingerprint(computed: tuple[GitRepo, Path]) -> None:
    repo, out = computed
    before = [_states(out, index)["extract"] for index in (0, 1)]
    assert before[1]["inputs"]["commit"] == repo.git("rev-parse", "HEAD").strip() and before[1]["inputs"]["against"]
    again = _compute(repo, out)
    assert [version["extraction"] for version in again["versions"]] == ["reused", "reused"]
    assert [_states(out, index)["extract"] for index in (0, 1)] == before  # not run: the same result id
    assert {status for _, _, status in _step_status(again)} <= {"reused", "skipped"}


def test_a_folder_made_before_extraction_had_a_state_is_adopted_without_recomputing_anything(computed: tuple[GitRepo, Path]) -> None:
    repo, out = computed
    written = {}
    for index in (0, 1):
        path = out / str(index) / "steps.json"
        document = json.loads(path.read_text())
        del document["steps"]["extract"]
        path.write_text(json.dumps(document))
        written[index] = {name: (out / str(index) / name).stat().st_mtime_ns for name in ("version.json", "fileChanges.json")}
    adopted = _compute(repo, out)
    assert [version["extraction"] for version in adopted["versions"]] == ["reused", "reused"]
    assert {status for _, _, status in _step_status(adopted)} <= {"reused", "skipped"}, [s for s in _step_status(adopted) if s[2] == "ran"]
    for index in (0, 1):
        assert _states(out, index)["extract"]["status"] == "ok"
        assert {name: (out / str(index) / name).stat().st_mtime_ns for name in written[index]} == written[index]


def test_a_per_version_setting_given_extracts_again_and_recomputes_what_follows(computed: tuple[GitRepo, Path]) -> None:
    repo, out = computed
    changed = _compute(repo, out, "--ignore-functions", "nothing_here")
    assert [version["extraction"] for version in changed["versions"]] == ["extracted", "extracted"]
    assert validate_output(out / "1" / "version.json")["ignoredFunctionsByName"][-1] == "nothing_here"
    assert (1, "traces", "ran") in _step_status(changed)
    assert not (out / "1" / "merge.json").exists(), "no merge mode, no marks"
