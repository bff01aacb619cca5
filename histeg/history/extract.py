"""Pipeline step 1: ``history.json`` and the versions chosen (``plan_extraction``), then per version the extract step
(``extract_step``): its snapshot, ``version.json`` and ``fileChanges.json``, reused by the engine like any step's results;
``merge.json`` marks a version's part in merges."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from histeg.errors import HistegError
from histeg.history.commits import list_commits
from histeg.history.file_changes import file_changes
from histeg.history.git import GitRepository
from histeg.history.merges import MergeTriple, extra_commits, merge_sections, merge_triples
from histeg.history.request import ExtractRequest, Progress
from histeg.history.revisions import first_parent_chain, resolve, select_versions
from histeg.history.snapshot import write_snapshot
from histeg.history.source import MIRROR_DIR, Source, open_source
from histeg.history.version_settings import resolve_version_settings
from histeg.records.history import (
    Commit,
    FileChanges,
    History,
    MergeMarks,
    Repository,
    SkippedEntry,
    Version,
    VersionSettings,
)
from histeg.records.registry import Registry
from histeg.settings.files import read_toml_table
from histeg.settings.scope import Scope
from histeg.step import Step, StepContext, StepResult
from histeg.store import FILE_CHANGES, LOCK_FILE, SNAPSHOT_DIR, VERSION, OutputStore
from histeg.version import __version__


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


def check_output_directory(store: OutputStore) -> None:
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
        previous = History.read(store.history_path).repository
        if set(previous.root_commits).isdisjoint(mirror.root_commits):
            raise HistegError(
                f"output directory {store.root} holds results of another repository ({previous.location}); choose another --out"
            )

    return check


def _history_document(source: Source, branch: str, tip: str, commits: list[Commit]) -> History:
    repository = Repository(
        location=source.location,
        is_url=source.is_url,
        branch=branch,
        tip=tip,
        root_commits=source.mirror.root_commits,
        shallow=source.mirror.is_shallow(),
    )
    return History(histeg_version=__version__, repository=repository, commits=commits)


def _git_version(repo: GitRepository, identifier: str) -> dict[str, Any]:
    """What a git-derived version (setuptools-scm, hatch-vcs) is computed from; a snapshot has no ``.git``."""
    described = repo.run("describe", "--tags", "--long", identifier, check=False)
    describe = described.stdout.decode("utf-8", "replace").strip() if described.returncode == 0 else None
    return {"gitDescribe": describe or None, "gitCommits": int(repo.text("rev-list", "--count", identifier).strip() or 0)}


def _version_document(
    commit: Commit, predecessor: Commit | None, settings: VersionSettings, skipped: list[dict[str, str]], git_version: dict[str, Any]
) -> Version:
    return Version(
        index=commit.index,
        identifier=commit.identifier,
        short_identifier=commit.identifier[:12],
        author=commit.author,
        date=commit.date,
        msg=commit.msg,
        comparing_against_version=predecessor.identifier if predecessor else None,
        comparing_against_index=predecessor.index if predecessor else None,
        **settings.fields(),
        skipped_entries=[SkippedEntry(path=entry["path"], reason=entry["reason"]) for entry in skipped],
        git_describe=git_version["gitDescribe"],
        git_commits=git_version["gitCommits"],
    )


def _project_table(snapshot: Path, identifier: str) -> tuple[str, dict[str, Any]]:
    origin = f"pyproject.toml of {identifier[:12]}"
    pyproject = snapshot / "pyproject.toml"
    if not pyproject.is_file() or pyproject.is_symlink():
        return origin, {}
    try:
        return origin, read_toml_table(pyproject)
    except HistegError:
        return origin, {}  # a broken pyproject of an old version must not stop the analysis


def _stored(store: OutputStore, index: int) -> Version | None:
    if not store.has_version(index):
        return None
    try:
        return Version.read(store.file(index, VERSION))
    except HistegError:  # written by another histeg version, or damaged: extract it again
        return None


def _is_current(store: OutputStore, stored: Version | None, commit: Commit, given: Mapping[str, Any]) -> bool:
    """The snapshot and the version's settings are as this run would make them; what it is compared with may differ."""
    if stored is None or stored.identifier != commit.identifier or not store.file(commit.index, FILE_CHANGES).is_file():
        return False
    expected = resolve_version_settings(
        store.snapshot(commit.index), _project_table(store.snapshot(commit.index), commit.identifier), given
    )
    return stored.settings == expected


def _snapshot_to_share(store: OutputStore, commit: Commit, predecessor: Commit | None) -> tuple[str, Path] | None:
    """A snapshot this output directory holds that the commit's is likely to share most files with: its predecessor's,
    else its first parent's (a version compared with nothing, the first of a run's list, is often the child of one
    listed before)."""
    candidates = [(predecessor.identifier, predecessor.index)] if predecessor is not None else []
    if commit.parents:
        path = store.root / Registry.FILE
        number = Registry.read(path).commits.get(commit.parents[0]) if path.is_file() else None
        if number is not None:
            candidates.append((commit.parents[0], number))
    for identifier, index in candidates:
        stored = _stored(store, index)
        if stored is not None and stored.identifier == identifier:
            return identifier, store.snapshot(index)
    return None


def _extract_version(
    store: OutputStore, repo: GitRepository, commit: Commit, predecessor: Commit | None, given: Mapping[str, Any], replace: bool
) -> None:
    with store.building_version(commit.index, replace=replace) as scratch:
        snapshot = scratch / "snapshot"
        snapshot.mkdir()
        report = write_snapshot(repo, commit.identifier, snapshot, like=_snapshot_to_share(store, commit, predecessor))
        settings = resolve_version_settings(snapshot, _project_table(snapshot, commit.identifier), given)
        _file_changes(repo, commit, predecessor).write(scratch / FILE_CHANGES)
        _version_document(commit, predecessor, settings, report.skipped, _git_version(repo, commit.identifier)).write(scratch / VERSION)


def _file_changes(repo: GitRepository, commit: Commit, predecessor: Commit | None) -> FileChanges:
    base = predecessor.identifier if predecessor else repo.empty_tree()
    return FileChanges(
        identifier=commit.identifier,
        comparing_against_version=predecessor.identifier if predecessor else None,
        changes=file_changes(repo, base, commit.identifier),
    )


def _compare_with(store: OutputStore, stored: Version, repo: GitRepository, commit: Commit, predecessor: Commit | None) -> None:
    """The same snapshot compared with another version: only what depends on the predecessor is written again;
    the steps that read it see their inputs changed, the others keep their results."""
    _file_changes(repo, commit, predecessor).write(store.file(commit.index, FILE_CHANGES))
    stored.comparing_against_version = predecessor.identifier if predecessor else None
    stored.comparing_against_index = predecessor.index if predecessor else None
    stored.write(store.file(commit.index, VERSION))


def _read_history(store: OutputStore, branch: str) -> History | None:
    """``history.json`` as this histeg wrote it for this branch; None when there is none, or another one."""
    try:
        known = History.read(store.history_path) if store.history_path.is_file() else None
    except HistegError:
        return None
    if known is None or known.repository.branch != branch or known.histeg_version != __version__ or not known.commits:
        return None
    return known


def _known_history(store: OutputStore, branch: str, tip: str) -> list[Commit] | None:
    """The commits of ``history.json`` when it was read at this very tip: a rerun on an unchanged branch neither reads
    the history again nor opens the mirror with pydriller (which rewrites its config on every open)."""
    known = _read_history(store, branch)
    return known.commits if known is not None and known.repository.tip == tip else None


def _extended_history(store: OutputStore, repo: GitRepository, branch: str, tip: str) -> list[Commit] | None:
    """The commits of ``history.json`` read at an earlier tip, then those made since, in git's topological order: a
    nightly run lists what is new, not the whole history again (pygments: 7,268 commits, 0.9 s at every run). Taken
    where the earlier tip is an ancestor of this one, so that the commits it listed are exactly those this one reaches
    through it; a rewritten branch has the whole history listed. Each new commit's parents come before it, as in a
    whole listing; on sqlparse, pygments and humanize the list was the whole listing's, commit for commit, for the
    last 1, 3, 12 and 40 commits of each (merges among them)."""
    known = _read_history(store, branch)
    if known is None or repo.run("merge-base", "--is-ancestor", known.repository.tip, tip, check=False).returncode != 0:
        return None
    added = list_commits(repo, tip, since=known.repository.tip)
    listed = {commit.identifier for commit in known.commits}
    for commit in added:
        if not all(parent in listed for parent in commit.parents):
            return None
        listed.add(commit.identifier)
    return [*known.commits, *added] if tip in listed else None


def _numbered(store: OutputStore, commits: list[Commit]) -> list[Commit]:
    """Each commit gets its number in this output directory (versions.json), written only when a number is new."""
    path = store.root / Registry.FILE
    registry = Registry.read(path) if path.is_file() else Registry(commits={})
    known = len(registry.commits)
    for commit in commits:
        commit.index = registry.number(commit.identifier)
    if len(registry.commits) != known:
        registry.write(path)
    return commits


def _chosen(repo: GitRepository, scope: Scope, tip: str, by_id: dict[str, Commit]) -> list[str]:
    if scope.versions:
        return select_versions(repo, scope.versions, tip)
    chain = first_parent_chain(repo, tip)
    if scope.last is not None:
        return chain[-scope.last :]
    if scope.since is not None:
        since = _moment(scope.since)
        recent = [i for i, identifier in enumerate(chain) if _moment(by_id[identifier].committer_date) >= since]
        return chain[max(recent[0] - 1, 0) :] if recent else []
    return chain


def _moment(text: str) -> datetime.datetime:
    moment = datetime.datetime.fromisoformat(text)
    return moment if moment.tzinfo is not None else moment.astimezone()


@dataclass(frozen=True)
class Planned:
    """A version to extract and the one it is compared with (None: the first of the list, or a merge's extra part)."""

    commit: Commit
    predecessor: Commit | None


@dataclass
class ExtractPlan:
    """The history read and the versions chosen: what the extract step of each version needs."""

    request: ExtractRequest
    store: OutputStore
    repo: GitRepository
    location: str
    branch: str
    commits: int
    versions: dict[int, Planned]
    """By version number, selected versions first (in history order), then the extra parts of merges."""
    triples: list[MergeTriple]

    def result(self) -> ExtractResult:
        return ExtractResult(self.store.root, self.location, self.branch, self.commits)


def plan_extraction(request: ExtractRequest, progress: Progress) -> ExtractPlan:
    """Read the history (``history.json``) and choose the versions; the caller holds the output directory's lock."""
    store = OutputStore(request.output)
    store.prepare()
    source = open_source(request.repository, store.root, accept=_ownership_check(store))
    repo = source.mirror
    scope = request.scope
    branch = request.branch or repo.current_branch()
    tip = resolve(repo, branch)
    progress.detail(f"reading the history of {branch} in {source.location}")
    listed = _known_history(store, branch, tip) or _extended_history(store, repo, branch, tip) or list_commits(repo, tip)
    commits = _numbered(store, listed)
    _history_document(source, branch, tip, commits).write(store.history_path)
    by_id = {commit.identifier: commit for commit in commits}
    identifiers = _chosen(repo, scope, tip, by_id)
    if not identifiers:
        raise HistegError(f"no version of '{branch}' was committed since {scope.since}")
    for identifier in identifiers:
        if identifier not in by_id:
            raise HistegError(f"revision {identifier[:12]} is not in the history of '{branch}'; choose the branch with --branch")
    versions: dict[int, Planned] = {}
    previous: Commit | None = None
    for identifier in identifiers:
        commit = by_id[identifier]
        predecessor = previous
        stored = None if request.override or previous is not None else _stored(store, commit.index)
        if (
            stored is not None
            and stored.comparing_against_version in by_id
            and store.has_version(by_id[stored.comparing_against_version].index)
        ):
            predecessor = by_id[stored.comparing_against_version]  # a base keeps its own comparison, and its results
        versions[commit.index] = Planned(commit, predecessor)
        previous = commit
    triples = merge_triples(repo, identifiers, by_id) if request.merges else []
    for commit in extra_commits(triples, identifiers):
        versions[commit.index] = Planned(commit, None)  # traced as a part of the merge, not ranked itself
    return ExtractPlan(request, store, repo, source.location, branch, len(commits), versions, triples)


def extract_step(plan: ExtractPlan) -> Step:
    """The extract step of the planned versions: the engine reuses a version's snapshot, ``version.json`` and
    ``fileChanges.json`` while the commit, its predecessor, the per-version settings the user gave and histeg are the
    ones they were made from. Run, it takes what is still valid of what it finds: an output folder made before this step
    had a state, or a version now compared with another, keeps its snapshot and the results of every later step."""

    def inputs(context: StepContext, index: int) -> dict[str, Any]:
        planned = plan.versions[index]
        return {
            "commit": planned.commit.identifier,
            "against": planned.predecessor.identifier if planned.predecessor is not None else None,
            "perVersion": {
                key: list(value) if isinstance(value, tuple) else value for key, value in sorted(plan.request.per_version.items())
            },
        }

    def run(context: StepContext, index: int) -> StepResult:
        planned = plan.versions[index]
        store, commit, predecessor = plan.store, planned.commit, planned.predecessor
        stored = None if context.override else _stored(store, index)
        if stored is not None and _is_current(store, stored, commit, plan.request.per_version):
            if stored.comparing_against_version != (predecessor.identifier if predecessor else None):
                _compare_with(store, stored, plan.repo, commit, predecessor)
            return StepResult({"status": "reused"})
        _extract_version(store, plan.repo, commit, predecessor, plan.request.per_version, replace=True)
        return StepResult({"status": "extracted"})

    return Step(name="extract", doing="extracting versions", outputs=(SNAPSHOT_DIR, VERSION, FILE_CHANGES), inputs=inputs, run=run)


def record_merges(plan: ExtractPlan) -> None:
    """Each planned version's ``merge.json`` as this run sees its part in merges (none without --merges): written when
    it changed, never ``version.json``. The merge step reads it; no other step does, so marking merges recomputes nothing."""
    parents, roles = merge_sections(plan.triples)
    for index, planned in plan.versions.items():
        identifier = planned.commit.identifier
        marks = MergeMarks(identifier=identifier, merge=parents.get(identifier), merge_roles=roles.get(identifier, []))
        path = plan.store.file(index, MergeMarks.FILE)
        if path.is_file():
            if read_merge_marks(plan.store, index) != marks:
                marks.write(path)
        elif marks.merge is not None or marks.merge_roles:
            marks.write(path)


def read_merge_marks(store: OutputStore, index: int) -> MergeMarks:
    """A version's ``merge.json``; no part in any merge when it is absent or was written for another commit."""
    identifier = store.version(index).identifier
    path = store.file(index, MergeMarks.FILE)
    if path.is_file():
        marks = MergeMarks.read(path)
        if marks.identifier == identifier:
            return marks
    return MergeMarks(identifier=identifier)
