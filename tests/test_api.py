"""The Python API on a real repository: settings checked like the command line's, results as typed records."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import histeg
from histeg.errors import HistegError
from histeg.records.targets import TestingTargets
from tests.conftest import GitRepo

LIB = "def double(x):\n    return x + x\n"
TEST = "from lib import double\n\n\ndef test_double():\n    assert double(3) == 6\n\n\ndef test_big():\n    assert double(20) == 40\n"


def two_versions(repo: GitRepo) -> None:
    repo.commit("library", {"lib.py": LIB, "tests/test_lib.py": TEST})
    repo.commit("double differently", {"lib.py": LIB.replace("x + x", "x * 2 if x > 10 else x + x + 1 - 1")})


def test_a_project_computes_and_gives_typed_results(make_repo, tmp_path: Path) -> None:
    repo = make_repo()
    two_versions(repo)
    project = histeg.Project(repo.path, out=tmp_path / "out", repeat=1, confirm=0, verbosity=0, read_config=False)
    assert project.settings.origin("repeat") == "argument repeat" and project.settings.origin("timeout") == "default"
    run = project.compute(["HEAD~1..HEAD"])
    assert run.exit_code == 0 and run.failed == {}
    assert [c.msg.strip() for c in project.history().commits] == ["library", "double differently"]
    first, second = project.versions()
    assert (first.index, second.index) == (0, 1) and second.version.comparing_against_index == 0
    assert first.testing_targets is None, "the first version has nothing to compare with"
    targets = second.testing_targets
    assert isinstance(targets, TestingTargets) and [t.identifier for t in targets.targets] == ["lib:double"]
    assert second.runs is not None and second.runs.repeat == 1
    assert second.steps is not None and set(second.steps.steps) == {"extract", "build", "statics", "traceConfig", "syntax", "traces", "compare", "targets"}
    again = project.compute(["HEAD~1..HEAD"])
    assert all(item["reused"] for name, items in again.steps.items() if name != "extract" for item in items if "skipped" not in item)
    assert project.version(1).identifier == second.identifier


@pytest.mark.parametrize(("arguments", "message"), [
    ({"repeats": 2}, "argument repeats: unknown setting; did you mean 'repeat'?"),
    ({"repeat": "2"}, "argument repeat: setting 'repeat' must be"),
    ({"values": "everything"}, "argument values: setting 'values' must be"),
    ({"timeout": -1}, "argument timeout: setting 'timeout' must be"),
])
def test_a_bad_argument_is_one_line_naming_it_before_any_work(tmp_path: Path, arguments: dict[str, object], message: str) -> None:
    with pytest.raises(HistegError) as raised:
        histeg.Project(tmp_path / "nowhere", out=tmp_path / "out", read_config=False, **arguments)
    assert str(raised.value).startswith(message) and "\n" not in str(raised.value)
    assert not (tmp_path / "out").exists()


def test_a_version_that_was_not_extracted_is_an_error(tmp_path: Path) -> None:
    project = histeg.Project(tmp_path, out=tmp_path / "out", read_config=False)
    with pytest.raises(HistegError, match="no version 3 in"):
        project.version(3)


def test_the_api_names_load_only_when_used() -> None:
    program = ("import sys, histeg\nbefore = {m for m in sys.modules if m.startswith('histeg')}\n"
               "histeg.Project\nafter = {m for m in sys.modules if m.startswith('histeg')}\n"
               "print(sorted(before), 'histeg.project' in after)")
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "['histeg'] True"
    assert "Project" in dir(histeg)
    with pytest.raises(AttributeError, match="no attribute 'Projekt'"):
        histeg.Projekt  # noqa: B018
