"""Materialising one version's tree as plain files, straight from git objects.

Blobs are read with ``git cat-file --batch`` rather than ``git archive`` so
that ``export-ignore``/``export-subst`` attributes cannot alter the snapshot.
Symbolic links are kept only when they resolve inside the snapshot, so later
steps never read outside it; submodules are listed, not fetched.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from histeg.errors import HistegError
from histeg.history.git import GitRepository

_MODE_SYMLINK = "120000"
_MODE_EXECUTABLE = "100755"
_MODE_SUBMODULE = "160000"


@dataclass
class SnapshotReport:
    files: int = 0
    skipped: list[dict[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class _Entry:
    mode: str
    object_id: str
    path: str


def _tree_entries(repo: GitRepository, commit: str) -> list[_Entry]:
    raw = repo.run("ls-tree", "-r", "-z", "--full-tree", commit).stdout
    entries = []
    for record in raw.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, _kind, object_id = meta.decode().split(" ")
        entries.append(_Entry(mode, object_id, path.decode("utf-8", "surrogateescape")))
    return entries


def _read_blobs(repo: GitRepository, object_ids: list[str]) -> dict[str, bytes]:
    unique = list(dict.fromkeys(object_ids))
    if not unique:
        return {}
    payload = repo.run("cat-file", "--batch", stdin=("\n".join(unique) + "\n").encode()).stdout
    blobs: dict[str, bytes] = {}
    position = 0
    for object_id in unique:
        header_end = payload.index(b"\n", position)
        header = payload[position:header_end].decode().split(" ")
        if len(header) != 3:
            raise HistegError(f"git object {object_id} is missing in {repo.path}")
        size = int(header[2])
        start = header_end + 1
        blobs[object_id] = payload[start:start + size]
        position = start + size + 1
    return blobs


def _safe_relative(path: str) -> PurePosixPath:
    relative = PurePosixPath(path)
    if relative.is_absolute() or ".." in relative.parts:
        raise HistegError(f"tree entry '{path}' would be written outside the snapshot")
    return relative


def write_snapshot(repo: GitRepository, commit: str, destination: Path) -> SnapshotReport:
    """Write the tree of ``commit`` under ``destination`` (an empty directory)."""
    entries = _tree_entries(repo, commit)
    blobs = _read_blobs(repo, [e.object_id for e in entries if e.mode != _MODE_SUBMODULE])
    report = SnapshotReport()
    root = destination.resolve()
    links: list[_Entry] = []
    for entry in entries:
        target = root / _safe_relative(entry.path)
        if entry.mode == _MODE_SUBMODULE:
            report.skipped.append({"path": entry.path, "reason": "submodule"})
            continue
        if entry.mode == _MODE_SYMLINK:
            links.append(entry)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blobs[entry.object_id])
        os.chmod(target, 0o755 if entry.mode == _MODE_EXECUTABLE else 0o644)
        report.files += 1
    for entry in links:  # after the files, so that links to them can be checked
        link_target = blobs[entry.object_id].decode("utf-8", "surrogateescape")
        location = root / _safe_relative(entry.path)
        resolved = Path(os.path.normpath(location.parent / link_target))
        if os.path.isabs(link_target) or not resolved.is_relative_to(root):
            report.skipped.append({"path": entry.path, "reason": f"symbolic link to {link_target} leaves the snapshot"})
            continue
        location.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(link_target, location)
        report.files += 1
    for entry in links:  # links through other links can still escape: check what the OS resolves
        location = root / entry.path
        if location.is_symlink() and not Path(os.path.realpath(location)).is_relative_to(root):
            location.unlink()
            report.files -= 1
            report.skipped.append({"path": entry.path, "reason": "symbolic link resolves outside the snapshot"})
    return report
