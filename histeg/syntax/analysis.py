"""Pipeline step 4 for one version: ``OUT/<index>/syntaxChanges.json``.

Every added, removed, modified or renamed Python file listed in the
version's ``fileChanges.json`` is compared between the predecessor's
snapshot and this one; a version without predecessor has every Python file
of its snapshot as an addition (its file list is against the empty tree). Definitions that moved between files are
paired into moves once all files are compared.
"""

from __future__ import annotations

from pathlib import Path

from histeg.config import VersionSettings
from histeg.errors import HistegError
from histeg.naming import module_name
from histeg.records.history import FileChanges
from histeg.records.syntax import ChangeSummary, SyntaxChanges
from histeg.store import FILE_CHANGES, SYNTAX_CHANGES, OutputStore
from histeg.syntax.classify import FileContext
from histeg.syntax.diff import FileDiff, diff_sources
from histeg.syntax.moves import pair_moved_definitions
from histeg.syntax.options import SyntaxOptions


def _python(path: str | None) -> str | None:
    return path if path is not None and path.endswith(".py") else None


def _read(root: Path, path: str) -> bytes:
    try:
        return (root / path).read_bytes()
    except OSError as exc:
        raise HistegError(f"cannot read {root / path}: {exc.strerror}") from None


def _file_pairs(store: OutputStore, index: int, against: int | None) -> list[tuple[str | None, str | None]]:
    pairs = []
    for change in FileChanges.read(store.file(index, FILE_CHANGES)).changes:
        if not change.python or change.binary:
            continue
        old, new = _python(change.old_path), _python(change.new_path)
        if against is None:  # no predecessor: everything in this version is new
            old = None
        if old is not None or new is not None:
            pairs.append((old, new))
    return pairs


def analyze_version(store: OutputStore, index: int, options: SyntaxOptions | None = None) -> Path:
    """Compute and write the version's syntax changes; returns the file written."""
    options = options or SyntaxOptions()
    version = store.version(index)
    settings = VersionSettings.of(version)
    against = version.comparing_against_index
    old_settings = VersionSettings.of(store.version(against)) if against is not None else settings
    diffs: list[FileDiff] = []
    for old_path, new_path in _file_pairs(store, index, against):
        old_module = module_name(old_path, old_settings.sources) if old_path else None
        new_module = module_name(new_path, settings.sources) if new_path else None
        if (new_path and settings.ignore.ignores(new_path, new_module)) or (old_path and old_settings.ignore.ignores(old_path, old_module)):
            continue
        old = _read(store.snapshot(against), old_path) if old_path and against is not None else None
        new = _read(store.snapshot(index), new_path) if new_path else None
        context = FileContext(old_path, new_path, old_module, new_module)
        diffs.append(diff_sources(old, new, context, options))
    pair_moved_definitions(diffs)
    files = [diff.result.record() for diff in diffs]
    summary = ChangeSummary(files=len(files), changes=sum(len(file.changes) for file in files))
    path = store.file(index, SYNTAX_CHANGES)
    SyntaxChanges(identifier=version.identifier, comparing_against_version=version.comparing_against_version,
                  options=options.record(), files=files, summary=summary).write(path)
    return path
