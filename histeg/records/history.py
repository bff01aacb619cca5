"""What extraction writes: ``history.json``, and per version ``version.json`` and ``fileChanges.json``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import msgspec

from histeg.records.base import Part, Record
from histeg.records.types import (
    CommitId,
    Count,
    DateTime,
    Index,
    RelativeDir,
    RelativePath,
)
from histeg.tracing.selection import IgnoreRule


class Repository(Part, kw_only=True):
    location: Annotated[str, msgspec.Meta(description="The path or URL given by the user.")]
    is_url: bool
    branch: Annotated[str, msgspec.Meta(description="The analysed branch, or HEAD when detached.")]
    tip: CommitId
    root_commits: Annotated[list[CommitId], msgspec.Meta(description="Identify the repository: an output directory serves one repository.")]
    shallow: Annotated[bool, msgspec.Meta(description="True when history before some commits is missing (shallow clone).")]


class Commit(Part, kw_only=True):
    index: Index
    identifier: CommitId
    author: str
    author_email: str
    date: Annotated[DateTime, msgspec.Meta(description="Author date, ISO 8601 with offset.")]
    committer_date: DateTime
    msg: str
    parents: list[CommitId]
    merge: bool


class History(Record, kw_only=True):
    """Every commit reachable from the analysed branch, parents before children; index 0 is the oldest."""

    FILE = "history.json"
    TITLE = "history.json"
    schema_version: Literal[1] = 1
    histeg_version: str
    repository: Repository
    commits: list[Commit]


class SkippedEntry(Part, kw_only=True):
    """A tree entry not written to the snapshot: a submodule, a symbolic link leaving it."""

    path: str
    reason: str


class MergeVersion(Part, kw_only=True):
    """A version in the output directory, by number and commit."""

    index: Index
    identifier: CommitId


class MergeParents(Part, kw_only=True):
    """What a merge is compared with in merge mode (--merges): both parents and their merge base."""

    first_parent: MergeVersion
    second_parent: MergeVersion
    base: Annotated[MergeVersion | None, msgspec.Meta(description="`git merge-base` of the parents; null when they share no history.")]

    def members(self) -> dict[str, int]:
        """Role -> version number of the versions the merge is compared with."""
        found = {"firstParent": self.first_parent.index, "secondParent": self.second_parent.index}
        return found | ({"base": self.base.index} if self.base is not None else {})


MergeRoleName = Literal["firstParent", "secondParent", "base"]


class MergeRole(Part, kw_only=True):
    """This version's part in a merge analysed in merge mode."""

    role: MergeRoleName
    merge: MergeVersion


class MergeMarks(Record, kw_only=True):
    """A version's part in merge mode (--merges), as the last extraction saw it. Extraction writes it beside
    ``version.json`` instead of rewriting that file, so that marking merges recomputes nothing; absent: no part."""

    FILE = "merge.json"
    TITLE = "<index>/merge.json"
    schema_version: Literal[1] = 1
    identifier: CommitId
    merge: Annotated[
        MergeParents | None,
        msgspec.Meta(description="Set on a merge: its parents and base, compared with it in mergeDivergences.json."),
    ] = None
    merge_roles: Annotated[
        list[MergeRole],
        msgspec.Meta(description="The merges this version is a parent or the base of; such a version is extracted even when not selected."),
    ] = msgspec.field(default_factory=list)


@dataclass(frozen=True)
class VersionSettings:
    """Where a version keeps its code, how to build it and what its traces ignore: ``Version.settings``, the record's own
    fields seen together (extraction resolves them, ``histeg.history.version_settings``; the later steps read them)."""

    sources: list[str]
    tests: list[str]
    build_command: str | None = None
    ignore: IgnoreRule = field(default_factory=IgnoreRule)

    def fields(self) -> dict[str, Any]:
        """The ``Version`` fields holding them: the way back of ``Version.settings``."""
        return {
            "sources_in": list(self.sources),
            "tests_in": list(self.tests),
            "command_to_build": self.build_command,
            "ignored_modules_by_prefix": list(self.ignore.prefixes),
            "ignored_modules_by_suffix": list(self.ignore.suffixes),
            "ignored_directories": list(self.ignore.directories),
            "ignored_functions_by_name": list(self.ignore.functions),
        }


class Version(Record, kw_only=True):
    """One extracted version and the settings later steps use for it (thesis figure 4.3)."""

    FILE = "version.json"
    TITLE = "<index>/version.json"
    schema_version: Literal[1] = 1
    index: Index
    identifier: CommitId
    short_identifier: Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{12}$")]
    author: str
    date: DateTime
    msg: str
    comparing_against_version: Annotated[
        CommitId | None, msgspec.Meta(description="The previous version in the user's list; null for the first.")
    ]
    comparing_against_index: Index | None
    snapshot: Literal["snapshot"] = "snapshot"
    sources_in: list[RelativeDir]
    tests_in: list[RelativeDir]
    command_to_build: str | None
    ignored_modules_by_prefix: list[str]
    ignored_modules_by_suffix: list[str]
    ignored_directories: list[str]
    ignored_functions_by_name: list[str]
    skipped_entries: list[SkippedEntry]
    git_describe: Annotated[
        str | None,
        msgspec.Meta(
            description=(
                "`git describe --tags --long` of the version (null when no tag is reachable): "
                "the version string of builds that derive it from git is computed from it."
            )
        ),
    ]
    git_commits: Annotated[
        int, msgspec.Meta(ge=1, description="Commits reachable from the version (setuptools-scm's distance when no tag is reachable).")
    ]
    merge: Annotated[
        MergeParents | None,
        msgspec.Meta(
            description=(
                "Read from files of earlier histeg versions only, null in new ones: a merge's parents and base are in its merge.json."
            )
        ),
    ] = None
    merge_roles: Annotated[
        list[MergeRole],
        msgspec.Meta(
            description=(
                "Read from files of earlier histeg versions only, empty in new ones: a version's merge roles are in its merge.json."
            )
        ),
    ] = msgspec.field(default_factory=list)

    @property
    def settings(self) -> VersionSettings:
        return VersionSettings(
            sources=list(self.sources_in),
            tests=list(self.tests_in),
            build_command=self.command_to_build,
            ignore=IgnoreRule(
                tuple(self.ignored_modules_by_prefix),
                tuple(self.ignored_modules_by_suffix),
                tuple(self.ignored_directories),
                tuple(self.ignored_functions_by_name),
            ),
        )


FileChangeType = Literal["added", "removed", "modified", "renamed"]


class FileChange(Part, kw_only=True):
    type: FileChangeType
    old_path: RelativePath | None
    new_path: RelativePath | None
    python: Annotated[bool, msgspec.Meta(description="Either path ends in .py.")]
    binary: bool
    similarity: Annotated[Annotated[int, msgspec.Meta(ge=0, le=100)] | None, msgspec.Meta(description="Rename similarity in percent.")]


class FileChanges(Record, kw_only=True):
    """File-level changes of a version against its predecessor in the user's list (against the empty tree for the first)."""

    FILE = "fileChanges.json"
    TITLE = "<index>/fileChanges.json"
    schema_version: Literal[1] = 1
    identifier: CommitId
    comparing_against_version: CommitId | None
    changes: list[FileChange]


__all__ = [
    "Commit",
    "Count",
    "FileChange",
    "FileChangeType",
    "FileChanges",
    "History",
    "MergeMarks",
    "MergeParents",
    "MergeRole",
    "MergeRoleName",
    "MergeVersion",
    "Repository",
    "SkippedEntry",
    "Version",
    "VersionSettings",
]
