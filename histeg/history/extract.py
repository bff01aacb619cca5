"""Pipeline step 1: history.json, one snapshot and version.json per selected version, fileChanges.json."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from histeg import __version__
from histeg.config import VersionSettings, read_toml_table, resolve_version_settings
from histeg.errors import HistegError
from histeg.history.commits import CommitRecord, list_commits
from histeg.history.file_changes import file_changes
from histeg.history.git import GitRepository
from histeg.history.revisions import first_parent_chain, resolve, select_versions
from histeg.history.snapshot import write_snapshot
from histeg.history.source import MIRROR_DIR, Source, open_source, root_commits
from histeg.options import RunOptions
from histeg.report.console import Console
from histeg.store import FILE_CHANGES, LOCK_FILE, VERSION, OutputStore, read_json, write_json

SCHEMA_VERSION = 1


@dataclass
class ExtractedVersion:
    index: int
    identifier: str
    predecessor: int | None
    status: str  # "extracted" or "reused"

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "identifier": self.identifier, "comparingAgainstIndex": self.predecessor, "status": self.status}


@dataclass
class ExtractResult:
    out: Path
    repository: str
    branch: str
    commits: int
    versions: list[ExtractedVersion] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "step": "extract",
            "out": str(self.out),
            "repository": self.repository,
            "branch": self.branch,
            "commits": self.commits,
            "versions": [version.to_json() for version in self.versions],
        }


def _check_output_directory(store: OutputStore) -> None:
    """Refuse a non-empty directory that holds no histeg results."""
    if not store.root.exists():
        return
    if not store.root.is_dir():
        raise HistegError(f"output directory {store.root} is not a directory")
    ours = {LOCK_FILE, MIRROR_DIR, "history.json"}
    foreign = [p.name for p in store.root.iterdir() if p.name not in ours and not p.name.isdigit() and not p.name.startswith(".")]
    if foreign and not store.history_path.exists():
        raise HistegError(f"output directory {store.root} is not empty and holds no histeg results (found '{foreign[0]}')")


def _ownership_check(store: OutputStore) -> Callable[[GitRepository], None]:
    """Refuse a repository that shares no root commit with the one analysed here before."""

    def check(mirror: GitRepository) -> None:
        if not store.history_path.exists():
            return
        previous = read_json(store.history_path).get("repository", {})
        if set(previous.get("rootCommits", [])).isdisjoint(root_commits(mirror)):
            raise HistegError(
                f"output directory {store.root} holds results of another repository ({previous.get('location', 'unknown')}); "
                "choose another --out"
            )

    return check


def _history_document(source: Source, branch: str, tip: str, commits: list[CommitRecord]) -> dict[str, Any]:
    roots = root_commits(source.mirror)
    shallow = source.mirror.is_shallow()
    return {
        "schemaVersion": SCHEMA_VERSION,
        "histegVersion": __version__,
        "repository": {"location": source.location, "isUrl": source.is_url, "branch": branch, "tip": tip, "rootCommits": roots, "shallow": shallow},
        "commits": [commit.to_json() for commit in commits],
    }


def _git_version(repo: GitRepository, identifier: str) -> dict[str, Any]:
    """What a git-derived version (setuptools-scm, hatch-vcs) is computed from; a snapshot has no ``.git``."""
    described = repo.run("describe", "--tags", "--long", identifier, check=False)
    describe = described.stdout.decode("utf-8", "replace").strip() if described.returncode == 0 else None
    return {"gitDescribe": describe or None, "gitCommits": int(repo.text("rev-list", "--count", identifier).strip() or 0)}


def _version_document(commit: CommitRecord, predecessor: CommitRecord | None, settings: VersionSettings, skipped: list[dict[str, str]],
                      git_version: dict[str, Any]) -> dict[str, Any]:
    return {
        "schemaVersion": SCHEMA_VERSION,
        "index": commit.index,
        "identifier": commit.identifier,
        "shortIdentifier": commit.identifier[:12],
        "author": commit.author,
        "date": commit.date,
        "msg": commit.message,
        "comparingAgainstVersion": predecessor.identifier if predecessor else None,
        "comparingAgainstIndex": predecessor.index if predecessor else None,
        "snapshot": "snapshot",
        **settings.to_json(),
        "skippedEntries": skipped,
        **git_version,
    }


def _project_table(snapshot: Path, identifier: str) -> tuple[str, dict[str, Any]]:
    origin = f"pyproject.toml of {identifier[:12]}"
    pyproject = snapshot / "pyproject.toml"
    if not pyproject.is_file() or pyproject.is_symlink():
        return origin, {}
    try:
        return origin, read_toml_table(pyproject)
    except HistegError:
        return origin, {}  # a broken pyproject of an old version must not stop the analysis


def _is_current(store: OutputStore, commit: CommitRecord, predecessor: CommitRecord | None, config: dict[str, Any]) -> bool:
    if not store.has_version(commit.index):
        return False
    stored = read_json(store.file(commit.index, VERSION))
    expected_settings = resolve_version_settings(store.snapshot(commit.index), _project_table(store.snapshot(commit.index), commit.identifier), ("configuration", config))
    return (
        stored.get("identifier") == commit.identifier
        and stored.get("comparingAgainstVersion") == (predecessor.identifier if predecessor else None)
        and VersionSettings.from_json(stored) == expected_settings
        and "gitCommits" in stored
        and store.file(commit.index, FILE_CHANGES).is_file()
    )


def _extract_version(store: OutputStore, repo: GitRepository, commit: CommitRecord, predecessor: CommitRecord | None, config: dict[str, Any], replace: bool) -> None:
    with store.building_version(commit.index, replace=replace) as scratch:
        snapshot = scratch / "snapshot"
        snapshot.mkdir()
        report = write_snapshot(repo, commit.identifier, snapshot)
        settings = resolve_version_settings(snapshot, _project_table(snapshot, commit.identifier), ("configuration", config))
        base = predecessor.identifier if predecessor else repo.empty_tree()
        changes = file_changes(repo, base, commit.identifier)
        write_json(scratch / FILE_CHANGES, {
            "schemaVersion": SCHEMA_VERSION,
            "identifier": commit.identifier,
            "comparingAgainstVersion": predecessor.identifier if predecessor else None,
            "changes": [change.to_json() for change in changes],
        })
        write_json(scratch / VERSION, _version_document(commit, predecessor, settings, report.skipped, _git_version(repo, commit.identifier)))


def extract(options: RunOptions, console: Console) -> ExtractResult:
    store = OutputStore(options.out)
    _check_output_directory(store)
    with store.locked():
        source = open_source(options.repo, store.root, accept=_ownership_check(store))
        repo = source.mirror
        branch = options.branch or repo.current_branch()
        tip = resolve(repo, branch)
        console.detail(f"reading the history of {branch} in {source.location}")
        commits = list_commits(repo, tip)
        write_json(store.history_path, _history_document(source, branch, tip, commits))
        by_id = {commit.identifier: commit for commit in commits}
        identifiers = first_parent_chain(repo, tip) if options.all_versions else select_versions(repo, options.versions, tip)
        for identifier in identifiers:
            if identifier not in by_id:
                raise HistegError(f"revision {identifier[:12]} is not in the history of '{branch}'; choose the branch with --branch")
        result = ExtractResult(store.root, source.location, branch, len(commits))
        previous: CommitRecord | None = None
        for identifier in console.progress(identifiers, len(identifiers), "extracting versions"):
            commit = by_id[identifier]
            if not options.override and _is_current(store, commit, previous, options.config):
                status = "reused"
            else:
                _extract_version(store, repo, commit, previous, options.config, replace=True)
                status = "extracted"
            console.detail(f"{status} version {commit.index} ({commit.identifier[:12]})")
            result.versions.append(ExtractedVersion(commit.index, identifier, previous.index if previous else None, status))
            previous = commit
        return result
