"""File-level changes between two versions (thesis section 4.1, end).

Paths are read from ``-z`` output as bytes; a name that is not UTF-8 is
recorded with its odd bytes as ``\\xNN``, the same text the version's
``skippedEntries`` give it (such a file is not in the snapshot).
"""

from __future__ import annotations

from histeg.history.git import GitRepository, display_path
from histeg.records.history import FileChange, FileChangeType

_STATUS: dict[str, FileChangeType] = {"A": "added", "D": "removed", "M": "modified", "T": "modified", "R": "renamed", "C": "added"}


def _fields(raw: bytes) -> list[str]:
    return raw.decode("utf-8", "surrogateescape").split("\0")


def _binary_paths(repo: GitRepository, old: str, new: str) -> set[str]:
    """Paths git considers binary (numstat reports ``-`` for their line counts)."""
    items = _fields(repo.run("diff", "-z", "--numstat", "-M", "--no-ext-diff", "--no-textconv", old, new).stdout)
    binary: set[str] = set()
    position = 0
    while position < len(items) and items[position]:
        added, deleted, path = items[position].split("\t", 2)
        if path:
            names = [path]
            position += 1
        else:  # rename: the two paths follow as separate fields
            names = items[position + 1 : position + 3]
            position += 3
        if added == "-" and deleted == "-":
            binary.update(names)
    return binary


def file_changes(repo: GitRepository, old: str, new: str) -> list[FileChange]:
    """Changes from tree-ish ``old`` to ``new``, renames detected, sorted by path."""
    items = _fields(repo.run("diff", "-z", "--name-status", "-M", "--no-ext-diff", "--no-textconv", old, new).stdout)
    binary = _binary_paths(repo, old, new)
    changes: list[FileChange] = []
    position = 0
    while position < len(items) and items[position]:
        status = items[position]
        kind = _STATUS.get(status[0], "modified")
        old_path: str | None
        new_path: str | None
        similarity: int | None
        if status[0] in "RC":
            old_path, new_path = items[position + 1], items[position + 2]
            position += 3
            similarity = int(status[1:] or 100)
            if kind == "added":
                old_path, similarity = None, None
        else:
            path = items[position + 1]
            position += 2
            old_path = None if kind == "added" else path
            new_path = None if kind == "removed" else path
            similarity = None
        python = any(path is not None and path.endswith(".py") for path in (old_path, new_path))
        changes.append(
            FileChange(
                type=kind,
                old_path=_shown(old_path),
                new_path=_shown(new_path),
                python=python,
                binary=(new_path or old_path) in binary or old_path in binary,
                similarity=similarity,
            )
        )
    return sorted(changes, key=lambda change: change.new_path or change.old_path or "")


def _shown(path: str | None) -> str | None:
    return None if path is None else display_path(path)
