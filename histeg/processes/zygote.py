"""Re-runs forked from a pytest process that imported pytest once (``histeg_zygote`` is the other side).

A targeted re-run of one test spends a third to a half of its CPU importing pytest (sqlparse: 0.63 G of 1.03 G
instructions; isodate: 0.21 s of 0.41 s). Re-runs in one interpreter and environment differ only in the folder each
runs in, so a zygote imports pytest once and forks every re-run from there (``start`` is a ``Starter`` for
``run_process``); ``POOL`` keeps zygotes by interpreter and environment, so that a version's re-runs in its two
comparisons and in every batch of each come from one. What a forked run is, and when it is refused and made by a
fresh process instead, is said in ``histeg_zygote``. What it shares with the other runs of its zygote is the heap the
zygote left (pytest's objects); the order in which a set of objects hashed by identity iterates still differs from
one forked run to the next, as between fresh processes (``tests/reliability/test_zygote.py``).
"""

from __future__ import annotations

import atexit
import os
import select
import subprocess
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path

from histeg.processes.process import Child, Output, Refused, start_in_session
from histeg.tracing.hook import histeg_zygote as protocol

READY_SECONDS = 60.0
"""How long a zygote may take to import pytest and say it is ready."""
ANSWER_SECONDS = 30.0
"""How long it may take to fork a run or refuse it."""


class _Forked:
    """A run forked by the zygote: not histeg's child, so its exit comes as the zygote's message (``Child``)."""

    def __init__(self, pid: int, reply: int, fds: tuple[int, int]) -> None:
        self.pid = pid
        self.status: int | None = None
        self.ended = False
        self.reply = reply
        self.output = Output(fds, reply, self._receive)

    def _receive(self) -> None:
        os.set_blocking(self.reply, True)
        message = protocol.receive(self.reply)
        self.ended = True
        if isinstance(message, tuple) and message[0] == "exit":
            self.status = message[1]

    def exited(self) -> bool:
        return self.ended

    def reap(self) -> int | None:
        """The zygote kills what the run left in its group and reaps it; this waits for its word."""
        if not self.ended:
            self._receive()
        return None if self.status is None else os.waitstatus_to_exitcode(self.status)


class Zygote:
    """One zygote process; ``start`` forks runs from it, from several threads at once. Closed, it exits."""

    def __init__(self, python: str, env: Mapping[str, str], cwd: Path, log: Path) -> None:
        """``env``: the environment its runs have but for ``histeg_zygote.PER_RUN``; ``log``: where it writes
        why it failed, if it does."""
        zygote_env = {key: value for key, value in env.items() if key != protocol.CONFIG_ENV}
        zygote_env[protocol.ZYGOTE_ENV] = protocol.TRACED if protocol.CONFIG_ENV in env else "1"
        self.lock = threading.Lock()
        self.why_not: str | None = None
        with open(log, "wb") as errors:
            self.process = start_in_session([python, "-m", "pytest"], cwd, zygote_env, subprocess.PIPE, errors)
        self.pid = self.process.pid
        assert self.process.stdout is not None and self.process.stdin is not None
        answer = _answer(self.process.stdout.fileno(), READY_SECONDS)
        if not (isinstance(answer, tuple) and answer[0] == "ready"):
            self.why_not = str(answer[1]) if isinstance(answer, tuple) else f"it did not start (see {log.name})"
            self.close()

    def start(self, argv: list[str], cwd: Path, env: Mapping[str, str]) -> Child:
        """Forks ``argv`` (``python -m pytest ARGS``); ``Refused`` when the run must be a fresh process."""
        if self.why_not is not None:
            raise Refused(self.why_not)
        reply_read, reply_write = os.pipe()
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        request = {
            "parent": os.getpid(),
            "reply": reply_write,
            "stdout": out_write,
            "stderr": err_write,
            "cwd": str(cwd),
            "env": dict(env),
            "args": argv[3:],
            "orig_argv": argv,
        }
        try:
            with self.lock:
                assert self.process.stdin is not None
                protocol.send(self.process.stdin.fileno(), request)
            answer = _answer(reply_read, ANSWER_SECONDS)
        except OSError as exc:
            answer = ("refused", f"the zygote is gone: {exc}")
        finally:
            for fd in (reply_write, out_write, err_write):  # the zygote opened its own, the run has them
                os.close(fd)
        if isinstance(answer, tuple) and answer[0] == "pid":
            return _Forked(answer[1], reply_read, (out_read, err_read))
        for fd in (reply_read, out_read, err_read):
            os.close(fd)
        if not isinstance(answer, tuple):  # no later run waits for it again
            self.why_not = "it did not answer"
        raise Refused(str(answer[1]) if isinstance(answer, tuple) else self.why_not)

    def close(self, wait: float = 5.0) -> None:
        """Its input ends: it exits once the runs forked from it have ended, or after ``wait`` seconds, killed (0: not
        waited for, it ends on its own)."""
        if self.process.stdin is not None:
            self.process.stdin.close()
        if self.process.stdout is not None:
            self.process.stdout.close()
        if wait:
            try:
                self.process.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class ZygotePool:
    """Zygotes kept for the runs to come, by interpreter and environment: a version's re-runs in its comparison with
    the version before and with the one after, and in every batch of each, come from one. The least recently used
    beyond ``limit`` are closed; the rest at exit (a histeg that dies closes their input too, and they exit)."""

    def __init__(self, limit: int = 4) -> None:
        self.limit = limit
        self.lock = threading.Lock()
        self.kept: OrderedDict[tuple[str, frozenset[tuple[str, str]]], Zygote] = OrderedDict()

    def get(self, python: str, env: Mapping[str, str], make: Callable[[], Zygote]) -> Zygote:
        """The zygote for runs of ``python`` in ``env`` (its own ``PYTHONPATH`` included, the trace config aside), made
        by ``make`` when none is alive."""
        key = (python, frozenset((name, value) for name, value in env.items() if name != protocol.CONFIG_ENV))
        with self.lock:
            found = self.kept.pop(key, None)
            if found is not None and found.process.poll() is not None:
                found.close()
                found = None
            if found is None:
                found = make()
            self.kept[key] = found
            while len(self.kept) > self.limit:  # one may still have runs under way: it exits after them
                self.kept.popitem(last=False)[1].close(wait=0)
            return found

    def close(self) -> None:
        with self.lock:
            while self.kept:
                self.kept.popitem()[1].close()


POOL = ZygotePool()
atexit.register(POOL.close)


def _answer(fd: int, seconds: float) -> object:
    """The next message on ``fd``, None when none came within ``seconds``, the stream ended or it was not a message
    (a pytest that ran for real, its start-up hook not found, says something else)."""
    ready, _, _ = select.select([fd], [], [], seconds)
    try:
        return protocol.receive(fd) if ready else None
    except (ValueError, EOFError, TypeError):
        return None
