"""Files written whole or not at all: a private temporary file renamed into place, so an interrupted run never
leaves half a result, a failed write is one line naming the file, and the earlier file stays as it was."""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from histeg.errors import HistegError, WriteError

PRIVATE_FILE = 0o600
PRIVATE_FOLDER = 0o700

WRITE_FAILURES = frozenset(
    {
        errno.ENOSPC,
        errno.EDQUOT,
        errno.EFBIG,
        errno.EACCES,
        errno.EPERM,
        errno.EROFS,
        errno.ENOTDIR,
        errno.EEXIST,
        errno.EISDIR,
    }
)
"""Errors that mean "this cannot be written here", as opposed to a defect: what ``writing`` callers may turn into one line."""


def dump_json(data: Any) -> bytes:
    return orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as indented JSON, atomically."""
    write_bytes(path, dump_json(data))


def write_bytes(path: Path, payload: bytes) -> None:
    """Atomic write; an identical existing file that is private already is left untouched so reruns are no-ops.

    Any OSError becomes a ``WriteError`` naming ``path``: every step of this function writes."""
    try:
        existing = path.stat()
        if existing.st_size == len(payload) and not existing.st_mode & 0o077 and path.read_bytes() == payload:
            return
    except OSError:
        pass
    try:
        make_folders(path.parent)
        fd, temporary = _create_temporary(path)
    except OSError as exc:
        raise write_error(path, exc) from None
    try:
        try:
            _write_all(fd, payload)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(exc, OSError):
            raise write_error(path, exc) from None
        raise


def make_folders(folder: Path) -> None:
    """``mkdir -p`` with every folder it creates private: ``Path.mkdir(parents=True)`` gives the parents the umask's mode."""
    missing: list[Path] = []
    current = folder
    while not os.path.lexists(current) and current != current.parent:
        missing.append(current)
        current = current.parent
    for item in reversed(missing):
        try:
            item.mkdir(mode=PRIVATE_FOLDER)
        except FileExistsError:
            if not item.is_dir():
                raise


@contextlib.contextmanager
def writing(path: Path) -> Iterator[None]:
    """Turn the ``WRITE_FAILURES`` of the enclosed writes into one line naming ``path``: for the files that cannot
    go through ``write_bytes`` (logs appended to, streams written as they are produced)."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in WRITE_FAILURES:
            raise
        raise write_error(path, exc) from None


def write_error(path: Path, exc: OSError) -> WriteError:
    """The one line for ``exc``; a file standing where a folder should be is named, since "File exists" says neither."""
    if exc.errno in (errno.ENOTDIR, errno.EEXIST):
        blocker = _not_a_folder(Path(path).parent)
        if blocker is not None:
            return WriteError(path, f"{blocker} is not a folder")
    return WriteError(path, exc.strerror or str(exc))


def _not_a_folder(folder: Path) -> Path | None:
    for candidate in (folder, *folder.parents):
        if candidate.is_dir():
            return None
        if os.path.lexists(candidate):
            return candidate
    return None


def _create_temporary(path: Path) -> tuple[int, Path]:
    """A new file beside ``path``, created 0o600 with O_EXCL: private whatever the umask, and never someone else's file."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW
    for _ in range(100):
        temporary = path.with_name(f".{path.name}.{os.urandom(4).hex()}.tmp")
        try:
            return os.open(temporary, flags, PRIVATE_FILE), temporary
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(path.parent))


def _write_all(fd: int, payload: bytes) -> None:
    """``os.write`` may write less than asked (a file size limit is reached part way): loop until it raises or is done."""
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view) :]


def read_json(path: Path) -> Any:
    try:
        return orjson.loads(path.read_bytes())
    except FileNotFoundError:
        raise HistegError(f"missing result file {path}") from None
    except orjson.JSONDecodeError as exc:
        raise HistegError(f"corrupt JSON in {path}: {exc}") from None


__all__ = [
    "PRIVATE_FILE",
    "PRIVATE_FOLDER",
    "WRITE_FAILURES",
    "dump_json",
    "make_folders",
    "read_json",
    "write_bytes",
    "write_error",
    "write_json",
    "writing",
]
