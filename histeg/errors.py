"""Errors a user can act on: one line, what and where, exit code 2."""

from __future__ import annotations

EXIT_OK = 0
EXIT_SOME_VERSIONS_FAILED = 1
EXIT_BAD_INPUT = 2


class HistegError(Exception):
    """A problem with the user's input or environment, reported as one line."""

    exit_code = EXIT_BAD_INPUT

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))
