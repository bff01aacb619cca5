"""Step 1 on real repositories: outputs, schemas, reruns, merges, untouched user repository."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.conftest import GitRepo, validate_output


def three_commits(repo: GitRepo) -> list[str]:
    return [
        repo.commit("initial", {"pkg/__init__.py": "", "pkg/core.py": "LIMIT = 1\n\ndef f():\n    return LIMIT\n", "README.md": "hello\n"}),
        repo.commit("raise limit", {"pkg/core.py": "LIMIT = 2\n\ndef f():\n    return LIMIT\n"}),
        repo.commit("rename and docs", {"docs/notes.txt": "notes\n"}, remove=("README.md",)),
    ]


def fingerprint(repo: GitRepo) -> dict[str, str]:
    """Everything histeg promises not to touch, byte for byte."""
    git_dir = repo.path / ".git"
    state = {"status": repo.git("status", "--porcelain=v2", "--branch", "--untracked-files=all")}
    for path in sorted(git_dir.rglob("*")):
        if path.is_file() and "objects" not in path.relative_to(git_dir).parts[:1]:
            state[str(path.relative_to(git_dir))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return state


def test_extract_all_writes_schema_valid_outputs(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    ids = three_commits(repo)
    out = tmp_path / "out"
    result = histeg("extract", "--repo", str(repo.path), "--all", "--out", str(out), "--json")
    assert result.code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert [v["identifier"] for v in summary["steps"]["extract"]["versions"]] == ids
    history = validate_output(out / "history.json")
    assert [c["identifier"] for c in history["commits"]] == ids
    assert [c["index"] for c in history["commits"]] == [0, 1, 2]
    assert history["commits"][1]["msg"] == "raise limit"
    assert history["commits"][1]["parents"] == [ids[0]]
    assert history["commits"][0]["date"] == "2024-01-01T00:00:03+00:00"
    for index in range(3):
        version = validate_output(out / str(index) / "version.json")
        assert version["identifier"] == ids[index]
        assert version["comparingAgainstIndex"] == (index - 1 if index else None)
        assert version["sourcesIn"] == ["."]
        validate_output(out / str(index) / "fileChanges.json")
    assert (out / "1" / "snapshot" / "pkg" / "core.py").read_text() == "LIMIT = 2\n\ndef f():\n    return LIMIT\n"
    first = validate_output(out / "0" / "fileChanges.json")
    assert {c["newPath"] for c in first["changes"]} == {"pkg/__init__.py", "pkg/core.py", "README.md"}
    assert all(c["type"] == "added" for c in first["changes"])
    second = validate_output(out / "1" / "fileChanges.json")["changes"]
    assert second == [{"type": "modified", "oldPath": "pkg/core.py", "newPath": "pkg/core.py", "python": True, "binary": False, "similarity": None}]
    third = validate_output(out / "2" / "fileChanges.json")["changes"]
    assert {(c["type"], c["oldPath"], c["newPath"], c["python"]) for c in third} == {
        ("removed", "README.md", None, False), ("added", None, "docs/notes.txt", False)}


def test_second_run_is_a_no_op_and_user_repository_is_untouched(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    three_commits(repo)
    (repo.path / "untracked.txt").write_text("work in progress\n")
    (repo.path / "pkg" / "core.py").write_text("LIMIT = 99  # uncommitted edit\n")
    repo.git("add", "pkg/core.py")
    before = fingerprint(repo)
    out = tmp_path / "out"
    assert histeg("extract", "--repo", str(repo.path), "--all", "--out", str(out)).code == 0
    written = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in out.rglob("*") if p.is_file() and "repository.git" not in p.parts and p.name != ".histeg.lock"}
    again = histeg("extract", "--repo", str(repo.path), "--all", "--out", str(out), "--json")
    assert again.code == 0, again.stderr
    assert {v["status"] for v in json.loads(again.stdout)["steps"]["extract"]["versions"]} == {"reused"}
    assert {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in written} == written
    assert fingerprint(repo) == before


def test_override_rebuilds(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    three_commits(repo)
    out = tmp_path / "out"
    histeg("extract", "--repo", str(repo.path), "--all", "--out", str(out))
    result = histeg("extract", "--repo", str(repo.path), "--all", "--out", str(out), "--override", "--json")
    assert {v["status"] for v in json.loads(result.stdout)["steps"]["extract"]["versions"]} == {"extracted"}


def test_single_revision_means_itself_and_its_predecessor(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    ids = three_commits(repo)
    out = tmp_path / "out"
    result = histeg("extract", "--repo", str(repo.path), "--versions", "HEAD~1", "--out", str(out), "--json")
    assert [v["identifier"] for v in json.loads(result.stdout)["steps"]["extract"]["versions"]] == ids[:2]
    assert not (out / "2").exists()


def test_range_and_user_order(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    ids = three_commits(repo)
    ranged = json.loads(histeg("extract", "--repo", str(repo.path), "--versions", "HEAD~2..HEAD", "--out", str(tmp_path / "a"), "--json").stdout)
    assert [v["identifier"] for v in ranged["steps"]["extract"]["versions"]] == ids
    reverse = histeg("extract", "--repo", str(repo.path), "--versions", ids[2][:8], ids[1], ids[0][:10], "--out", str(tmp_path / "b"), "--json")
    versions = json.loads(reverse.stdout)["steps"]["extract"]["versions"]
    assert [v["index"] for v in versions] == [2, 1, 0]
    assert [v["comparingAgainstIndex"] for v in versions] == [None, 2, 1]
    changes = validate_output(tmp_path / "b" / "0" / "fileChanges.json")
    assert changes["comparingAgainstVersion"] == ids[1]
    assert changes["changes"][0]["oldPath"] == "pkg/core.py"


def test_merge_commits_keep_both_parents_and_diff_against_list_predecessor(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    base = repo.commit("base", {"app.py": "A = 1\n"})
    repo.git("checkout", "-q", "-b", "feature")
    side = repo.commit("feature work", {"feature.py": "def feature():\n    return 1\n"})
    repo.git("checkout", "-q", "main")
    repo.commit("main work", {"app.py": "A = 2\n"})
    repo.git("merge", "-q", "--no-ff", "-m", "merge feature", "feature")
    merge = repo.git("rev-parse", "HEAD")
    out = tmp_path / "out"
    result = histeg("extract", "--repo", str(repo.path), "--all", "--out", str(out), "--json")
    assert result.code == 0, result.stderr
    history = validate_output(out / "history.json")
    merge_record = next(c for c in history["commits"] if c["identifier"] == merge)
    assert merge_record["merge"] is True and len(merge_record["parents"]) == 2 and side in merge_record["parents"]
    assert side in [c["identifier"] for c in history["commits"]]
    versions = json.loads(result.stdout)["steps"]["extract"]["versions"]
    assert side not in [v["identifier"] for v in versions]  # --all follows first parents
    assert versions[0]["identifier"] == base
    changes = validate_output(out / str(merge_record["index"]) / "fileChanges.json")["changes"]
    assert [(c["type"], c["newPath"]) for c in changes] == [("added", "feature.py")]


def test_special_file_names_binary_files_and_symlinks(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    repo.commit("odd names", {
        "with space.py": "x = 1\n", "ünïcödé.py": "y = 2\n", "-dash.py": "z = 3\n", "blob.bin": bytes(range(256)),
        "dir/inside.txt": "inside\n",
    })
    (repo.path / "outside").symlink_to("../../etc/passwd")
    (repo.path / "absolute").symlink_to("/etc/hostname")
    (repo.path / "ok-link").symlink_to("dir/inside.txt")
    (repo.path / "chain").symlink_to("ok-link")
    repo.commit("links")
    out = tmp_path / "out"
    result = histeg("extract", "--repo", str(repo.path), "--all", "--out", str(out))
    assert result.code == 0, result.stderr
    snapshot = out / "1" / "snapshot"
    assert (snapshot / "with space.py").read_text() == "x = 1\n"
    assert (snapshot / "ünïcödé.py").read_text() == "y = 2\n"
    assert (snapshot / "-dash.py").read_text() == "z = 3\n"
    assert (snapshot / "blob.bin").read_bytes() == bytes(range(256))
    assert (snapshot / "chain").read_text() == "inside\n"
    assert not (snapshot / "outside").exists() and not (snapshot / "outside").is_symlink()
    assert not (snapshot / "absolute").is_symlink()
    version = validate_output(out / "1" / "version.json")
    assert {entry["path"] for entry in version["skippedEntries"]} == {"outside", "absolute"}
    first = validate_output(out / "0" / "fileChanges.json")["changes"]
    assert {c["newPath"]: c["binary"] for c in first}["blob.bin"] is True
    assert {c["newPath"]: c["python"] for c in first}["ünïcödé.py"] is True


def test_url_is_cloned_into_the_output_directory(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    ids = three_commits(repo)
    out = tmp_path / "out"
    url = repo.path.as_uri()
    result = histeg("extract", "--repo", url, "--versions", "HEAD", "--out", str(out), "--json")
    assert result.code == 0, result.stderr
    assert [v["identifier"] for v in json.loads(result.stdout)["steps"]["extract"]["versions"]] == ids[1:]
    assert validate_output(out / "history.json")["repository"]["isUrl"] is True
    new = repo.commit("later", {"pkg/new.py": "N = 1\n"})
    again = histeg("extract", "--repo", url, "--versions", "HEAD", "--out", str(out), "--json")
    assert [v["identifier"] for v in json.loads(again.stdout)["steps"]["extract"]["versions"]] == [ids[2], new]


def test_configuration_layers(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    repo.commit("project", {
        "src/lib/__init__.py": "", "tests/test_lib.py": "def test():\n    pass\n",
        "pyproject.toml": "[tool.histeg]\nignore-prefixes = ['lib.vendor']\nbuild = 'make'\n",
    })
    out = tmp_path / "out"
    config = tmp_path / "histeg.toml"
    config.write_text("[tool.histeg]\nbuild = 'pip install -e .'\nignore-functions = ['__repr__']\n")
    result = histeg("extract", "--repo", str(repo.path), "--all", "--out", str(out), "--config", str(config), "--ignore-suffixes", "_pb2")
    assert result.code == 0, result.stderr
    version = validate_output(out / "0" / "version.json")
    assert version["sourcesIn"] == ["src"] and version["testsIn"] == ["tests"]
    assert version["ignoredModulesByPrefix"] == ["lib.vendor"]
    assert version["commandToBuild"] == "pip install -e ."
    assert version["ignoredFunctionsByName"] == ["__repr__"]
    assert version["ignoredModulesBySuffix"] == ["_pb2"]
    changed = histeg("extract", "--repo", str(repo.path), "--all", "--out", str(out), "--json", "--build", "tox")
    assert json.loads(changed.stdout)["steps"]["extract"]["versions"][0]["status"] == "extracted"
    assert validate_output(out / "0" / "version.json")["commandToBuild"] == "tox"


@pytest.mark.parametrize("flag", ["--quiet", "--verbose"])
def test_verbosity_flags_keep_stdout_clean(make_repo, histeg, tmp_path: Path, flag: str) -> None:
    repo = make_repo()
    three_commits(repo)
    result = histeg("extract", "--repo", str(repo.path), "--all", "--out", str(tmp_path / "out"), flag)
    assert result.code == 0 and result.stdout == ""
    assert (result.stderr == "") == (flag == "--quiet")


def test_unchanged_files_share_the_predecessors_snapshot_file(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    repo.commit("initial", {"pkg/__init__.py": "", "pkg/core.py": "A = 1\n", "run.sh": "#!/bin/sh\necho hi\n", "data.txt": "same\n"})
    (repo.path / "run.sh").chmod(0o755)
    repo.commit("executable")
    repo.commit("change core", {"pkg/core.py": "A = 2\n"})
    (repo.path / "run.sh").chmod(0o644)
    repo.commit("not executable")
    out = tmp_path / "out"
    assert histeg("extract", "--repo", str(repo.path), "--all", "--out", str(out)).code == 0

    def file(index: int, name: str) -> Path:
        return out / str(index) / "snapshot" / name

    assert file(2, "data.txt").stat().st_ino == file(1, "data.txt").stat().st_ino == file(0, "data.txt").stat().st_ino
    assert file(2, "pkg/core.py").stat().st_ino != file(1, "pkg/core.py").stat().st_ino  # changed: written
    assert file(2, "pkg/core.py").read_text() == "A = 2\n" and file(1, "pkg/core.py").read_text() == "A = 1\n"
    assert file(2, "run.sh").stat().st_ino == file(1, "run.sh").stat().st_ino
    assert file(3, "run.sh").stat().st_ino != file(2, "run.sh").stat().st_ino  # same content, another mode: written
    assert file(1, "run.sh").stat().st_mode & 0o777 == 0o700 and file(3, "run.sh").stat().st_mode & 0o777 == 0o600
    for index in range(4):  # every file as git has it
        commit = repo.git("rev-list", "--reverse", "HEAD").split()[index]
        for name in ("pkg/core.py", "run.sh", "data.txt"):
            assert file(index, name).read_text() == repo.git("show", f"{commit}:{name}") + "\n"
    version = validate_output(out / "3" / "version.json")
    assert version["identifier"] == repo.git("rev-parse", "HEAD")
