"""Which versions and where results go are explicit: nothing silently means every version or the working tree."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CliResult, GitRepo

LIB = "def double(x):\n    return x + x\n"
TEST = "from lib import double\n\n\ndef test_double():\n    assert double(3) == 6\n"


def run(*args: str, cwd: Path, cache: Path) -> CliResult:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    done = subprocess.run([sys.executable, "-m", "histeg", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300,
                          check=False)
    return CliResult(done.returncode, done.stdout, done.stderr)


@pytest.fixture
def repo(make_repo) -> GitRepo:
    repo = make_repo()
    repo.commit("library", {"lib.py": LIB, "tests/test_lib.py": TEST})
    for number in range(1, 5):
        repo.commit(f"change {number}", {"lib.py": LIB + f"\n# change {number}\n"})
    return repo


@pytest.mark.parametrize(("args", "message"), [
    ((), "histeg: error: no versions chosen: give --versions REV..., --all, --since DATE or --last N"),
    (("--all", "--last", "2"), "histeg: error: choose the versions one way: --all and --last were both given"),
    (("--last", "0"), "histeg: error: --last: setting 'last' must be a whole number >= 1, not '0'"),
    (("--since", "yesterday"), "histeg: error: --since: setting 'since' must be a date such as 2024-05-01"),
])
def test_the_versions_must_be_chosen_one_way(repo: GitRepo, tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    result = run("extract", "--repo", str(repo.path), "--out", str(tmp_path / "out"), *args, cwd=tmp_path, cache=tmp_path / "cache")
    assert result.code == 2 and result.stderr.startswith(message) and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / "out").exists(), "nothing was started"


def test_last_and_since_choose_first_parent_versions(repo: GitRepo, tmp_path: Path) -> None:
    last = run("extract", "--repo", str(repo.path), "--out", str(tmp_path / "out"), "--last", "2", "--json", cwd=tmp_path,
               cache=tmp_path / "cache")
    assert last.code == 0, last.stderr
    assert [v["index"] for v in json.loads(last.stdout)["versions"]] == [3, 4]
    since = run("extract", "--repo", str(repo.path), "--out", str(tmp_path / "out"), "--since", "2000-01-01", "--json", cwd=tmp_path,
                cache=tmp_path / "cache")
    assert [v["index"] for v in json.loads(since.stdout)["versions"]] == [0, 1, 2, 3, 4]
    future = run("extract", "--repo", str(repo.path), "--out", str(tmp_path / "out"), "--since", "2999-01-01", cwd=tmp_path,
                 cache=tmp_path / "cache")
    assert future.code == 2 and "no version of" in future.stderr


def test_without_out_results_go_to_the_cache_never_into_the_working_tree(repo: GitRepo, tmp_path: Path) -> None:
    result = run("extract", "--repo", ".", "--last", "2", cwd=repo.path, cache=tmp_path / "cache")
    assert result.code == 0, result.stderr
    [folder] = (tmp_path / "cache" / "histeg" / "results").iterdir()
    assert folder.name.startswith(repo.path.name + "-") and f"results go to {folder}" in result.stderr
    assert (folder / "history.json").is_file()
    assert subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=repo.path, capture_output=True, text=True,
                          check=True).stdout == "", "the user's working tree is untouched"
    again = run("extract", "--repo", str(repo.path), "--last", "2", cwd=tmp_path, cache=tmp_path / "cache")
    assert again.code == 0 and list((tmp_path / "cache" / "histeg" / "results").iterdir()) == [folder], "one folder per repository"


def test_a_url_s_credentials_are_not_shown_by_config(tmp_path: Path) -> None:
    result = run("config", "--repo", "https://someone:s3cr3t@example.com/project.git", cwd=tmp_path, cache=tmp_path / "cache")
    assert result.code == 0 and "s3cr3t" not in result.stdout + result.stderr and "https://example.com/project.git" in result.stdout
