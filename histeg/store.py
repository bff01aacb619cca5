"""The output directory: the contract between pipeline steps.

Every file is written atomically (temporary file, then rename) so an
interrupted run never leaves a half-written result; a version directory is
built under a temporary name and renamed into place once complete.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from histeg.errors import HistegError
from histeg.records.history import Version

HISTORY = "history.json"
VERSION = "version.json"
FILE_CHANGES = "fileChanges.json"
SYNTAX_CHANGES = "syntaxChanges.json"
FUNCTIONS = "functions.json"
CALL_GRAPH = "callGraph.json"
TRACE_DIVERGENCES = "traceDivergences.json"
TESTING_TARGETS = "testingTargets.json"
SNAPSHOT_DIR = "snapshot"
TRACES_DIR = "traces"
LOCK_FILE = ".histeg.lock"
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

    def prepare(self) -> None:
        """Create the directory or fail with one line saying why not."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise HistegError(f"cannot create output directory {self.root}: {exc.strerror}") from None
        if not os.access(self.root, os.W_OK | os.X_OK):
            raise HistegError(f"output directory {self.root} is not writable")
        for stale in self.root.glob(".building-*"):
            shutil.rmtree(stale, ignore_errors=True)

    @contextlib.contextmanager
    def building_version(self, index: int, replace: bool) -> Iterator[Path]:
        """Yield a scratch directory that becomes ``OUT/<index>`` only on success."""
        scratch = Path(tempfile.mkdtemp(prefix=f".building-{index}-", dir=self.root))
        try:
            yield scratch
            final = self.version_dir(index)
            if final.exists():
                if not replace:
                    raise HistegError(f"version directory {final} already exists")
                for name in USER_FILES:
                    if (final / name).is_file():
                        shutil.copy2(final / name, scratch / name)
                trash = self.root / f".building-old-{index}"
                shutil.rmtree(trash, ignore_errors=True)
                os.replace(final, trash)
                shutil.rmtree(trash, ignore_errors=True)
            os.replace(scratch, final)
        finally:
            if scratch.exists():
                force_rmtree(scratch)

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """One histeg run per output directory at a time."""
        self.prepare()
        path = self.root / LOCK_FILE
        handle = open(path, "a+")
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
