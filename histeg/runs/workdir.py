"""A fresh copy of a snapshot for each traced run.

The snapshot is read-only input: a test that writes into its working
directory must not change what the next repetition, the next command or the
next comparison sees. Files are cloned copy-on-write where the file system
can (``FICLONE``: btrfs, XFS, overlay on them), copied otherwise. Hard links
are never used: a test writing into a linked file would write into the
snapshot.
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
    copy_snapshot(snapshot, destination)
    try:
        yield destination
    finally:
        force_rmtree(destination)
