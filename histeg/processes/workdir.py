"""A fresh copy of a snapshot for each traced run.

The snapshot is read-only input: a test that writes into its working
directory must not change what the next repetition, the next command or the
next comparison sees. Files are cloned copy-on-write where the file system
can (``FICLONE``: btrfs, XFS, overlay on them), copied otherwise. Hard links
are never used: a test writing into a linked file would write into the
snapshot.

A histeg killed outright cannot remove the copies it was working in, nor the
scratch folders of results it had not yet put in place; the next run on the
output directory does (``remove_leftovers``).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import shutil
from collections.abc import Iterator
from pathlib import Path

from histeg.errors import HistegError
from histeg.store import force_rmtree

RUN_DIR = ".run"
"""The fresh copy of the snapshot a run works in, inside the version directory (``.run-<name>`` for runs made beside it)."""
TRACES_SCRATCH = ".traces-"
"""Prefix of the folders new traces are made in, beside ``traces/``, until they replace it."""
LEFTOVERS = (RUN_DIR, f"{RUN_DIR}-*", f"{TRACES_SCRATCH}*", ".install-*")
"""What runs make inside a version directory and remove when they end (``.install-*``: the project's build copy, ``histeg.envs.project``)."""
FICLONE = 0x40049409
"""``ioctl`` request that makes the destination share the source's blocks (Linux)."""
_clone_works = True


def _clone_file(source: str, destination: str) -> str:
    """Copy-on-write clone when the file system supports it, a plain copy (with metadata) otherwise."""
    global _clone_works
    if _clone_works:
        try:
            with open(source, "rb") as src, open(destination, "wb") as dst:
                fcntl.ioctl(dst.fileno(), FICLONE, src.fileno())
            shutil.copystat(source, destination)
            return destination
        except OSError as exc:
            if exc.errno not in (errno.EOPNOTSUPP, errno.ENOTTY, errno.EXDEV, errno.EINVAL, errno.ENOSYS, errno.EPERM):
                raise
            _clone_works = False
    return shutil.copy2(source, destination)


def copy_snapshot(snapshot: Path, destination: Path) -> None:
    """``destination`` becomes a copy of ``snapshot`` (symbolic links stay links)."""
    try:
        shutil.copytree(snapshot, destination, symlinks=True, copy_function=_clone_file)
    except (OSError, shutil.Error) as exc:
        shutil.rmtree(destination, ignore_errors=True)
        raise HistegError(f"cannot copy the snapshot {snapshot} to {destination}: {exc}") from None


@contextlib.contextmanager
def fresh_copy(snapshot: Path, destination: Path) -> Iterator[Path]:
    """A fresh copy of the snapshot for one run, removed afterwards whatever the run did to it."""
    if destination.exists():
        force_rmtree(destination)
    try:
        copy_snapshot(snapshot, destination)  # inside: an interrupted copy is removed too
        yield destination
    finally:
        if destination.exists():
            force_rmtree(destination)


def remove_leftovers(out: Path) -> list[Path]:
    """Remove, from every version directory of ``out``, the run folders a histeg that was killed left behind.
    Call it only while no other histeg works in ``out``. Returns what was removed."""
    removed = []
    for version in sorted(out.iterdir()) if out.is_dir() else []:
        if not (version.name.isdigit() and version.is_dir()):
            continue
        for pattern in LEFTOVERS:
            for path in sorted(version.glob(pattern)):
                if path.is_dir() and not path.is_symlink():
                    force_rmtree(path)
                    removed.append(path)
    return removed
