"""Errors a user can act on: one line, what and where; exit code 2 for bad input, 3 for a result that could not be written."""

from __future__ import annotations

from pathlib import Path

EXIT_OK = 0
EXIT_SOME_VERSIONS_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_CANNOT_WRITE = 3
"""A result could not be written (disk full, file too large, no permission, read-only file system, a file
where a folder should be): a code of its own, so a script can tell "free some space and run again" from "fix
the command"."""


class HistegError(Exception):
    """A problem with the user's input or environment, reported as one line."""

    exit_code = EXIT_BAD_INPUT

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))


class WriteError(HistegError):
    """A file histeg writes could not be written; what was there before is left as it was."""

    exit_code = EXIT_CANNOT_WRITE

    def __init__(self, path: Path | str, reason: str) -> None:
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"cannot write {path}: {reason}")

    def __reduce__(self) -> tuple[type[WriteError], tuple[Path, str]]:
        """Rebuilt from path and reason, so it crosses a process pool intact."""
        return WriteError, (self.path, self.reason)
