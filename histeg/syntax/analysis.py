"""Pipeline step 4 for one version: ``OUT/<index>/syntaxChanges.json``.

Every added, removed, modified or renamed Python file listed in the
version's ``fileChanges.json`` is compared between the predecessor's
snapshot and this one; a version without predecessor has every Python file
of its snapshot as an addition (its file list is against the empty tree). Definitions that moved between files are
paired into moves once all files are compared.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

from histeg.config import VersionSettings
from histeg.errors import HistegError
from histeg.naming import module_name
from histeg.store import FILE_CHANGES, SYNTAX_CHANGES, VERSION, OutputStore, read_json, write_json
from histeg.syntax.classify import FileContext
from histeg.syntax.diff import FileDiff, diff_sources
from histeg.syntax.moves import pair_moved_definitions
from histeg.syntax.options import SyntaxOptions

SCHEMA_VERSION = 1


def _python(path: str | None) -> str | None:
    return path if path is not None and path.endswith(".py") else None


def _ignored(path: str, module: str, settings: VersionSettings) -> bool:
    parts = PurePosixPath(path).parts
    for directory in settings.ignore.directories:
        prefix = PurePosixPath(directory).parts
        if prefix and parts[: len(prefix)] == prefix:
            return True
    return any(module.startswith(p) for p in settings.ignore.prefixes) or any(module.endswith(s) for s in settings.ignore.suffixes)


def _read(root: Path, path: str) -> bytes:
    try:
        return (root / path).read_bytes()
    except OSError as exc:
        raise HistegError(f"cannot read {root / path}: {exc.strerror}") from None


def _file_pairs(store: OutputStore, index: int, against: int | None) -> list[tuple[str | None, str | None]]:
    data = read_json(store.file(index, FILE_CHANGES))
    pairs = []
    try:
        for entry in data["changes"]:
            if not entry["python"] or entry["binary"]:
                continue
            old, new = _python(entry["oldPath"]), _python(entry["newPath"])
            if against is None:  # no predecessor: everything in this version is new
                old = None
            if old is not None or new is not None:
                pairs.append((old, new))
    except (KeyError, TypeError) as exc:
        raise HistegError(f"malformed {store.file(index, FILE_CHANGES)}: missing {exc}") from None
    return pairs


def analyze_version(store: OutputStore, index: int, options: SyntaxOptions | None = None) -> Path:
    """Compute and write the version's syntax changes; returns the file written."""
    options = options or SyntaxOptions()
    version = read_json(store.file(index, VERSION))
    try:
        settings = VersionSettings.from_json(version)
        against = version["comparingAgainstIndex"]
        old_settings = VersionSettings.from_json(read_json(store.file(against, VERSION))) if against is not None else settings
    except (KeyError, TypeError) as exc:
        raise HistegError(f"malformed {store.file(index, VERSION)}: missing {exc}") from None
    diffs: list[FileDiff] = []
    for old_path, new_path in _file_pairs(store, index, against):
        old_module = module_name(old_path, old_settings.sources) if old_path else None
        new_module = module_name(new_path, settings.sources) if new_path else None
        if (new_path and _ignored(new_path, new_module or "", settings)) or (old_path and _ignored(old_path, old_module or "", old_settings)):
            continue
        old = _read(store.snapshot(against), old_path) if old_path and against is not None else None
        new = _read(store.snapshot(index), new_path) if new_path else None
        context = FileContext(old_path, new_path, old_module, new_module)
        diffs.append(diff_sources(old, new, context, options))
    pair_moved_definitions(diffs)
    files = [diff.result.to_json() for diff in diffs]
    data: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "identifier": version.get("identifier"),
        "comparingAgainstVersion": version.get("comparingAgainstVersion"),
        "options": options.to_json(),
        "files": files,
        "summary": {"files": len(files), "changes": sum(len(f["changes"]) for f in files)},
    }
    path = store.file(index, SYNTAX_CHANGES)
    write_json(path, data)
    return path
