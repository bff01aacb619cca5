"""Bad input: one line naming the problem, exit code 2, nothing half-written."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from histeg.errors import HistegError
from histeg.store import OutputStore
from tests.conftest import CliResult, GitRepo, validate_output


def assert_error(result: CliResult, *fragments: str) -> None:
    assert result.code == 2, (result.code, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("histeg: error: ")
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def no_version_dirs(out: Path) -> bool:
    return not out.exists() or not [p for p in out.iterdir() if p.name.isdigit() or p.name.startswith(".building")]


def two_commits(repo: GitRepo) -> list[str]:
    return [repo.commit("one", {"a.py": "A = 1\n"}), repo.commit("two", {"a.py": "A = 2\n"})]


def test_not_a_git_repository(histeg, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    out = tmp_path / "out"
    assert_error(histeg("extract", "--repo", str(plain), "--all", "--out", str(out)), str(plain), "not a git repository")
    assert_error(histeg("extract", "--repo", str(tmp_path / "missing"), "--all", "--out", str(out)), "does not exist")
    assert no_version_dirs(out)


def test_unknown_revision(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    two_commits(repo)
    out = tmp_path / "out"
    assert_error(histeg("extract", "--repo", str(repo.path), "--versions", "nope", "--out", str(out)), "unknown revision 'nope'")
    assert_error(histeg("extract", "--repo", str(repo.path), "--versions", "nope..HEAD", "--out", str(out)), "unknown revision 'nope'")
    assert_error(histeg("extract", "--repo", str(repo.path), "--versions", "--weird", "--out", str(out)))
    assert no_version_dirs(out)


def test_ambiguous_revision(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    two_commits(repo)
    repo.git("tag", "twin", "HEAD~1")
    repo.git("branch", "twin", "HEAD")
    assert_error(histeg("extract", "--repo", str(repo.path), "--versions", "twin", "--out", str(tmp_path / "out")), "'twin' is ambiguous")


def test_ambiguous_short_identifier(make_repo, histeg, tmp_path: Path) -> None:
    """Commits are made with fixed dates, so the same two commits collide on every run."""
    repo = make_repo()
    head = repo.commit("root", {"a.py": "A = 1\n"})
    tree = repo.git("rev-parse", "HEAD^{tree}")
    seen: dict[str, str] = {}
    shared = None
    for number in range(5000):
        commit = repo.git("commit-tree", tree, "-p", head, "-m", f"sibling {number}")
        if commit[:4] in seen:
            shared = commit[:4]
            repo.git("branch", "first-twin", seen[shared])
            repo.git("branch", "second-twin", commit)
            break
        seen[commit[:4]] = commit
    assert shared is not None
    assert_error(histeg("extract", "--repo", str(repo.path), "--versions", shared, "--out", str(tmp_path / "out")), "ambiguous")


def test_empty_repository(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    out = tmp_path / "out"
    assert_error(histeg("extract", "--repo", str(repo.path), "--all", "--out", str(out)), "has no commits")
    assert no_version_dirs(out)


def test_repository_with_one_commit(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    only = repo.commit("only", {"a.py": "A = 1\n"})
    for args in (["--all"], ["--versions", "HEAD"]):
        out = tmp_path / args[0].strip("-")
        result = histeg("extract", "--repo", str(repo.path), *args, "--out", str(out), "--json")
        assert result.code == 0, result.stderr
        assert json.loads(result.stdout)["steps"]["extract"]["versions"] == [{"index": 0, "identifier": only, "comparingAgainstIndex": None, "status": "extracted"}]
        assert validate_output(out / "0" / "fileChanges.json")["changes"][0]["type"] == "added"


def test_shallow_clone(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    ids = [repo.commit(f"c{n}", {"a.py": f"A = {n}\n"}) for n in range(5)]
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "2", repo.path.as_uri(), str(shallow)], check=True)
    out = tmp_path / "out"
    result = histeg("extract", "--repo", str(shallow), "--all", "--out", str(out), "--json")
    assert result.code == 0, result.stderr
    assert [v["identifier"] for v in json.loads(result.stdout)["steps"]["extract"]["versions"]] == ids[3:]
    history = validate_output(out / "history.json")
    assert history["repository"]["shallow"] is True
    assert history["commits"][0]["parents"] == [ids[2]]  # recorded even though its history is missing
    assert_error(histeg("extract", "--repo", str(shallow), "--versions", "HEAD~1", "--out", str(tmp_path / "o2")), "shallow clone")
    assert no_version_dirs(tmp_path / "o2")


def test_output_directory_of_another_repository(make_repo, histeg, tmp_path: Path) -> None:
    first, second = make_repo("first"), make_repo("second")
    two_commits(first)
    second.commit("unrelated", {"b.py": "B = 1\n"})
    out = tmp_path / "out"
    assert histeg("extract", "--repo", str(first.path), "--all", "--out", str(out)).code == 0
    history_before = (out / "history.json").read_bytes()
    mirror_head = (out / "repository.git" / "packed-refs").read_bytes()
    assert_error(histeg("extract", "--repo", str(second.path), "--all", "--out", str(out)), "another repository", str(first.path))
    assert (out / "history.json").read_bytes() == history_before
    assert (out / "repository.git" / "packed-refs").read_bytes() == mirror_head


def test_output_directory_with_foreign_content(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    two_commits(repo)
    out = tmp_path / "out"
    out.mkdir()
    (out / "thesis.tex").write_text("precious\n")
    assert_error(histeg("extract", "--repo", str(repo.path), "--all", "--out", str(out)), "not empty", "thesis.tex")
    assert sorted(p.name for p in out.iterdir()) == ["thesis.tex"]


def test_unwritable_output_directory(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    two_commits(repo)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert_error(histeg("extract", "--repo", str(repo.path), "--all", "--out", str(blocker / "out")), "cannot create output directory")
    assert_error(histeg("extract", "--repo", str(repo.path), "--all", "--out", "/proc/histeg-out"), "output directory")


def test_locked_output_directory(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    two_commits(repo)
    store = OutputStore(tmp_path / "out")
    with store.locked():
        assert_error(histeg("extract", "--repo", str(repo.path), "--all", "--out", str(store.root)), "in use by another histeg run")
    assert histeg("extract", "--repo", str(repo.path), "--all", "--out", str(store.root)).code == 0


def test_failed_version_leaves_no_half_written_directory(tmp_path: Path) -> None:
    store = OutputStore(tmp_path / "out")
    store.prepare()
    with pytest.raises(HistegError), store.building_version(3, replace=True) as scratch:
        (scratch / "snapshot").mkdir()
        (scratch / "snapshot" / "file.py").write_text("x = 1\n")
        raise HistegError("simulated failure while writing version 3")
    assert no_version_dirs(store.root)


def test_revision_off_the_branch(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    two_commits(repo)
    repo.git("checkout", "-q", "-b", "side")
    side = repo.commit("side", {"s.py": "S = 1\n"})
    repo.git("checkout", "-q", "main")
    assert_error(histeg("extract", "--repo", str(repo.path), "--versions", side, "--out", str(tmp_path / "out")), "not in the history of 'main'")
    ok = histeg("extract", "--repo", str(repo.path), "--branch", "side", "--versions", side, "--out", str(tmp_path / "out2"))
    assert ok.code == 0, ok.stderr


def test_no_repository_and_bad_config(histeg, tmp_path: Path) -> None:
    assert_error(histeg("extract", "--all", cwd=tmp_path), "no repository given")
    (tmp_path / "histeg.toml").write_text("[tool.histeg\n")
    assert_error(histeg("extract", "--all", cwd=tmp_path), "invalid TOML", "histeg.toml")
