"""SIGINT and SIGTERM as exceptions, so that every ``finally`` on the way out stops what histeg started.

Python turns SIGINT into ``KeyboardInterrupt``; SIGTERM, by default, ends the process on the spot and
leaves its traced process groups running and its run folders behind. ``handling_signals`` makes SIGTERM
raise ``Terminated``, a ``KeyboardInterrupt``, so both take the same path; the command line exits 130 or
143 from it. Both also set a flag that threads other than the main one (the re-runs of
``histeg.runs.confirm``) watch, since only the main thread receives the exception. A few steps must not
be cut in two (starting a process and recording its group, swapping a result folder into place):
``deferred`` holds a signal back until they are done.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

EXIT_INTERRUPTED = 130
"""128 + SIGINT, as a shell reports a process that SIGINT ended."""
EXIT_TERMINATED = 143
"""128 + SIGTERM."""


class Terminated(KeyboardInterrupt):
    """SIGTERM: a ``KeyboardInterrupt``, so whatever cleans up after Ctrl-C cleans up after it too."""


class Stopped(KeyboardInterrupt):
    """Raised in a thread that finds histeg stopping: its process group is stopped, its work given up."""


_stopping = threading.Event()
_depth = 0
_pending: int | None = None


def stopping() -> bool:
    """A handled signal arrived: start nothing new, stop what runs."""
    return _stopping.is_set()


def _raise(signum: int) -> None:
    if signum == signal.SIGTERM:
        raise Terminated("terminated")
    raise KeyboardInterrupt


def _handle(signum: int, _frame: FrameType | None) -> None:
    global _pending
    _stopping.set()
    if _depth:
        _pending = signum
        return
    _raise(signum)


@contextmanager
def handling_signals() -> Iterator[None]:
    """SIGTERM (and SIGINT, unless it was ignored when histeg started, as in a background job) raise in the main thread."""
    handled = [signal.SIGTERM]
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        handled.append(signal.SIGINT)
    previous = {signum: signal.signal(signum, _handle) for signum in handled}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@contextmanager
def deferred() -> Iterator[None]:
    """A signal that arrives inside is raised when the block is done (main thread; elsewhere nothing is raised anyway)."""
    global _depth, _pending
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if not _depth and _pending is not None:
            signum, _pending = _pending, None
            _raise(signum)


__all__ = ["EXIT_INTERRUPTED", "EXIT_TERMINATED", "Stopped", "Terminated", "deferred", "handling_signals", "stopping"]
