"""Step 2: build commands run in the snapshot; failures and hangs skip the version, not the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import validate_output

from histeg.envs.environment import MARK
from histeg.records.build import Build, EnvironmentMark


@pytest.mark.slow
def test_build_success_failure_and_timeout(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    script = "import sys, time\nmode = open('MODE').read().strip()\nprint('building', mode)\nif mode == 'hang':\n    time.sleep(60)\nsys.exit(0 if mode == 'ok' else 3)\n"
    repo.commit("ok", {"build.py": script, "MODE": "ok\n"})
    repo.commit("broken", {"MODE": "broken\n"})
    repo.commit("hangs", {"MODE": "hang\n"})
    repo.commit("ok again", {"MODE": "ok\n"})
    out = tmp_path / "out"
    config = tmp_path / "histeg.toml"
    config.write_text("[tool.histeg]\nbuild-timeout = 2\n")
    result = histeg("build", "--repo", str(repo.path), "--all", "--out", str(out), "--build", "python3 build.py > built.txt",
                    "--config", str(config), "--json")
    assert result.code == 1, result.stderr
    summary = json.loads(result.stdout)
    assert [b["status"] for b in summary["steps"]["build"]] == ["succeeded", "failed", "timedOut", "succeeded"]
    assert [f["index"] for f in summary["failedVersions"]] == [1, 2]
    assert "version 1: build failed" in result.stderr
    for index in range(4):
        validate_output(out / str(index) / "build.json")
    assert (out / "0" / "snapshot" / "built.txt").read_text() == "building ok\n"
    assert validate_output(out / "1" / "build.json")["exitCode"] == 3
    again = histeg("build", "--repo", str(repo.path), "--all", "--out", str(out), "--build", "python3 build.py > built.txt",
                   "--config", str(config), "--json")
    # what succeeded is reused; what failed or timed out is tried again
    assert [b["reused"] for b in json.loads(again.stdout)["steps"]["build"]] == [True, False, False, True]


def test_without_a_build_command_the_environment_is_still_made(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    repo.commit("one", {"a.py": "A = 1\n"})
    result = histeg("build", "--repo", str(repo.path), "--all", "--out", str(tmp_path / "out"), "--json")
    assert result.code == 0, result.stderr
    step = json.loads(result.stdout)["steps"]["build"][0]
    assert step["status"] == "succeeded" and step["environment"]
    record = validate_output(tmp_path / "out" / "0" / "build.json")
    assert record["command"] is None and record["declarations"]["requirements"] == ["pytest"]
    assert Path(record["environment"]["python"]).exists()


def test_a_build_record_is_reused_while_readable_and_made_again_when_written_by_another_version(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    repo.commit("one", {"a.py": "A = 1\n"})
    out = tmp_path / "out"
    build = ("build", "--repo", str(repo.path), "--all", "--out", str(out), "--json")
    assert histeg(*build).code == 0
    record = Build.read(out / "0" / "build.json")
    assert record.status == "succeeded" and record.environment is not None and record.environment.shared
    mark = EnvironmentMark.read(Path(record.environment.python).parent.parent / MARK)
    # the environment is shared by every version (of any project) that declares the same requirements: the mark keeps the
    # declarations of the one that made it, which are equal in what the key is made of
    assert mark.key == record.environment.key and mark.declarations.requirements == record.declarations.requirements
    again = histeg(*build)
    assert json.loads(again.stdout)["steps"]["build"][0]["reused"] is True
    path = out / "0" / "build.json"
    path.write_bytes(path.read_bytes().replace(b'"schemaVersion": 2', b'"schemaVersion": 1'))
    rebuilt = histeg(*build)
    assert rebuilt.code == 0, rebuilt.stderr
    assert json.loads(rebuilt.stdout)["steps"]["build"][0]["reused"] is False
    assert Build.read(path).inputs == record.inputs


@pytest.mark.slow  # a version computed twice with its environment made (a minute)
def test_builds_and_traces_are_made_again_when_histeg_passes_other_plugin_options(make_repo, tmp_path: Path, monkeypatch) -> None:
    """The options histeg passes for the plugins it neutralises are part of what a version's traces are: an output
    directory made by a histeg that passed others (before it turned pytest-benchmark's rounds off) is not reused."""
    import histeg
    from histeg import build

    repo = make_repo()
    repo.commit("one", {"lib.py": "def f():\n    return 1\n", "tests/test_lib.py": "from lib import f\n\n\ndef test_f():\n    assert f() == 1\n"})
    project = histeg.Project(repo.path, out=tmp_path / "out", repeat=1, confirm=0, verbosity=0, read_config=False)
    assert project.compute(["HEAD..HEAD"]).exit_code == 0
    monkeypatch.setattr(build, "PLUGIN_OPTIONS", (*build.PLUGIN_OPTIONS, ("pluggy", "-pno:doctest", "pytest's doctest collection")))
    again = project.compute(["HEAD..HEAD"])
    assert again.exit_code == 0
    assert [item["reused"] for item in again.steps["build"]] == [False]
    assert [item["reused"] for item in again.steps["traces"]] == [False]
    assert "-pno:doctest" in validate_output(tmp_path / "out" / "0" / "runs.json")["runs"][0]["argv"]
