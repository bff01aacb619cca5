"""Pipeline step 4 for one version: ``OUT/<index>/syntaxChanges.json``.

Every added, removed, modified or renamed Python file listed in the
version's ``fileChanges.json`` is compared between the predecessor's
snapshot and this one; a version without predecessor has every Python file
of its snapshot as an addition (its file list is against the empty tree). Definitions that moved between files are
paired into moves once all files are compared.

A file that is not source text is listed with a message and no changes
rather than compared: binary, a Git LFS pointer, a name that is not UTF-8,
a link that leaves the snapshot or loops (files are read only through
``read_snapshot_file``, which never follows a link out of the snapshot).
"""

from __future__ import annotations

from pathlib import Path

from histeg.errors import HistegError
from histeg.history.snapshot import Unreadable, read_snapshot_file
from histeg.naming import module_name
from histeg.records.history import FileChanges, Version
from histeg.records.syntax import ChangeSummary, SyntaxChanges
from histeg.store import FILE_CHANGES, SYNTAX_CHANGES, OutputStore
from histeg.syntax.changes import FileStatus, FileSyntaxChanges
from histeg.syntax.classify import FileContext
from histeg.syntax.diff import FileDiff, diff_sources
from histeg.syntax.moves import pair_moved_definitions
from histeg.syntax.options import SyntaxOptions


def _python(path: str | None) -> str | None:
    return path if path is not None and path.endswith(".py") else None


def _read(root: Path, path: str, skipped: dict[str, str]) -> bytes:
    """A snapshot file's bytes; ``Unreadable`` when extraction skipped it or it is not source text."""
    if path in skipped:
        raise Unreadable(skipped[path])
    try:
        return read_snapshot_file(root, path)
    except OSError as exc:
        raise HistegError(f"cannot read {root / path}: {exc.strerror}") from None


def _skipped(version: Version) -> dict[str, str]:
    return {entry.path: entry.reason for entry in version.skipped_entries}


def _file_pairs(store: OutputStore, index: int, against: int | None) -> list[tuple[str | None, str | None, bool]]:
    """Old path, new path and whether git found the file binary, for each changed Python file."""
    pairs = []
    for change in FileChanges.read(store.file(index, FILE_CHANGES)).changes:
        if not change.python:
            continue
        old, new = _python(change.old_path), _python(change.new_path)
        if against is None:  # no predecessor: everything in this version is new
            old = None
        if old is not None or new is not None:
            pairs.append((old, new, change.binary))
    return pairs


def _not_compared(context: FileContext, reason: str) -> FileDiff:
    status: FileStatus
    if context.old_path is None:
        status = "added"
    elif context.new_path is None:
        status = "removed"
    else:
        status = "renamed" if context.old_path != context.new_path else "modified"
    result = FileSyntaxChanges(
        status, context.old_path, context.new_path, context.old_module, context.new_module, message=f"not compared: {reason}"
    )
    return FileDiff(result)


def analyze_version(store: OutputStore, index: int, options: SyntaxOptions | None = None) -> Path:
    """Compute and write the version's syntax changes; returns the file written."""
    options = options or SyntaxOptions()
    version = store.version(index)
    settings = version.settings
    against = version.comparing_against_index
    old_version = store.version(against) if against is not None else None
    old_settings = old_version.settings if old_version is not None else settings
    old_skipped, new_skipped = _skipped(old_version) if old_version is not None else {}, _skipped(version)
    diffs: list[FileDiff] = []
    for old_path, new_path, binary in _file_pairs(store, index, against):
        old_module = module_name(old_path, old_settings.sources) if old_path else None
        new_module = module_name(new_path, settings.sources) if new_path else None
        if (new_path and settings.ignore.ignores(new_path, new_module)) or (old_path and old_settings.ignore.ignores(old_path, old_module)):
            continue
        context = FileContext(old_path, new_path, old_module, new_module)
        if binary:
            diffs.append(_not_compared(context, "binary file"))
            continue
        try:
            old = _read(store.snapshot(against), old_path, old_skipped) if old_path and against is not None else None
        except Unreadable as exc:
            diffs.append(_not_compared(context, f"{exc} (old version)"))
            continue
        try:
            new = _read(store.snapshot(index), new_path, new_skipped) if new_path else None
        except Unreadable as exc:
            diffs.append(_not_compared(context, str(exc)))
            continue
        diffs.append(diff_sources(old, new, context, options))
    pair_moved_definitions(diffs)
    files = [diff.result.record() for diff in diffs]
    summary = ChangeSummary(files=len(files), changes=sum(len(file.changes) for file in files))
    path = store.file(index, SYNTAX_CHANGES)
    SyntaxChanges(
        identifier=version.identifier,
        comparing_against_version=version.comparing_against_version,
        options=options.record(),
        files=files,
        summary=summary,
    ).write(path)
    return path
