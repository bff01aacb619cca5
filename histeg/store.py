"""The output directory: the contract between pipeline steps.

Every file is written atomically (temporary file, then rename) so an
interrupted run never leaves a half-written result; a version directory is
built under a temporary name and renamed into place once complete.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from histeg.atomic import WRITE_FAILURES, write_error
from histeg.errors import HistegError, WriteError
from histeg.records.history import Version

HISTORY = "history.json"
VERSION = "version.json"
FILE_CHANGES = "fileChanges.json"
SYNTAX_CHANGES = "syntaxChanges.json"
FUNCTIONS = "functions.json"
CALL_GRAPH = "callGraph.json"
TRACE_DIVERGENCES = "traceDivergences.json"
TESTING_TARGETS = "testingTargets.json"
COMPARISON = "comparison.msgpack"
"""The compare step's whole comparison, read by the targets step (histeg's own, not a document for people)."""
SNAPSHOT_DIR = "snapshot"
TRACES_DIR = "traces"
LOCK_FILE = ".histeg.lock"
REDACTION_KEY = ".redaction.key"
"""The key of the secrets' digests in traces: made once per output directory, readable by its owner alone,
named by path in trace configs and never copied into a trace, record or report."""
REPORT_DIR = "report"
"""The reports of the output folder (``histeg report``): index.html, a page per version, report.md."""
TRACE_MATCHING = "traceMatching.json"
USER_FILES = (TRACE_MATCHING,)
"""Files a user puts into a version directory; they survive the directory being rebuilt."""


@dataclass(frozen=True)
class OutputStore:
    root: Path

    @property
    def history_path(self) -> Path:
        return self.root / HISTORY

    def version_dir(self, index: int) -> Path:
        return self.root / str(index)

    def file(self, index: int, name: str) -> Path:
        return self.version_dir(index) / name

    def snapshot(self, index: int) -> Path:
        return self.version_dir(index) / SNAPSHOT_DIR

    def traces(self, index: int) -> Path:
        return self.version_dir(index) / TRACES_DIR

    def version(self, index: int) -> Version:
        """The version's ``version.json``; a missing, damaged or older file is a one-line error."""
        return Version.read(self.file(index, VERSION))

    def has_version(self, index: int) -> bool:
        return (self.version_dir(index) / VERSION).is_file()

    def extracted_indices(self) -> list[int]:
        if not self.root.is_dir():
            return []
        return sorted(int(p.name) for p in self.root.iterdir() if p.name.isdigit() and self.has_version(int(p.name)))

    def redaction_key(self) -> Path:
        """The directory's redaction key, made on first use (0600): equal secrets get equal digests in
        every run and version compared here, and nobody without the key can test a guess against them."""
        path = self.root / REDACTION_KEY
        if path.is_file():
            return path
        self.prepare()
        made = path.with_name(f"{REDACTION_KEY}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        try:
            descriptor = os.open(made, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                os.write(descriptor, os.urandom(32).hex().encode("ascii"))
            finally:
                os.close(descriptor)
            os.link(made, path)  # whole or not there: a worker making it at the same moment never reads it half written
        except FileExistsError:  # made meanwhile by another process
            pass
        except OSError as exc:
            raise write_error(path, exc) from None
        finally:
            made.unlink(missing_ok=True)
        return path

    def prepare(self) -> None:
        """Create the directory or fail with one line saying why not."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise HistegError(f"cannot create output directory {self.root}: {exc.strerror}") from None
        if not os.access(self.root, os.W_OK | os.X_OK):
            raise HistegError(f"output directory {self.root} is not writable")

    @contextlib.contextmanager
    def building_version(self, index: int, replace: bool) -> Iterator[Path]:
        """Yield a private scratch directory that becomes ``OUT/<index>`` only on success.

        A write that fails inside it (disk full, file too large, no permission, a file where a folder should be)
        is one line naming the file where it was to be, not in the scratch directory; the scratch directory is
        removed and the version's earlier directory stays as it was."""
        final = self.version_dir(index)
        try:
            scratch = Path(tempfile.mkdtemp(prefix=f".building-{index}-", dir=self.root))
        except OSError as exc:
            raise write_error(final, exc) from None
        try:
            try:
                yield scratch
                self._put_in_place(scratch, final, replace)
            except WriteError as exc:
                raise _in_place(exc, scratch, final) from None
            except OSError as exc:
                if exc.errno not in WRITE_FAILURES:
                    raise
                where = scratch if exc.filename is None else Path(os.fsdecode(exc.filename))
                raise _in_place(write_error(where, exc), scratch, final) from None
        finally:
            if os.path.lexists(scratch):
                with contextlib.suppress(OSError):
                    force_rmtree(scratch)

    def _put_in_place(self, scratch: Path, final: Path, replace: bool) -> None:
        """Rename ``scratch`` to ``final``; an earlier ``final`` is only deleted once the new one is in place."""
        trash: Path | None = None
        if final.exists():
            if not replace:
                raise HistegError(f"version directory {final} already exists")
            for name in USER_FILES:
                if (final / name).is_file():
                    shutil.copy2(final / name, scratch / name)
            trash = self.root / f".building-old-{final.name}"
            if os.path.lexists(trash):
                force_rmtree(trash)
            os.replace(final, trash)
        try:
            os.replace(scratch, final)
        except OSError:
            if trash is not None:
                os.replace(trash, final)
            raise
        if trash is not None:
            with contextlib.suppress(OSError):  # a leftover is removed by the next run
                force_rmtree(trash)

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """One histeg run per output directory at a time, for the whole run: a refused run changes nothing.
        What an interrupted run left (folders being built) is removed only once the lock is held."""
        self.prepare()
        path = self.root / LOCK_FILE
        try:
            handle = open(path, "a+")  # noqa: SIM115  held open, and so locked, for the whole run: closed below
        except OSError as exc:
            raise HistegError(f"cannot open the lock file {path}: {exc.strerror}") from None
        try:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.seek(0)
                owner = handle.read().strip() or "unknown"
                raise HistegError(f"output directory {self.root} is in use by another histeg run (pid {owner})") from None
            handle.seek(0)
            handle.truncate()
            handle.write(str(os.getpid()))
            handle.flush()
            for stale in self.root.glob(".building-*"):
                force_rmtree(stale)
            yield
        finally:
            handle.close()


def force_rmtree(path: Path) -> None:
    """Remove a tree even where a snapshot or a test run made files or folders read-only."""

    def make_writable(func: Any, target: str, _exc: Any) -> None:
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(target), 0o700)
            os.chmod(target, 0o700)
        with contextlib.suppress(FileNotFoundError):
            func(target)

    shutil.rmtree(path, onexc=make_writable)


def _in_place(error: WriteError, scratch: Path, final: Path) -> WriteError:
    """The error with the paths where the files were to end up, not in the scratch directory: names a user can look for."""
    try:
        path = final / Path(os.path.abspath(error.path)).relative_to(os.path.abspath(scratch))
    except ValueError:
        path = error.path
    return WriteError(path, error.reason.replace(str(scratch), str(final)))
