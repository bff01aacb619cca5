"""Running one command with a time limit, in its own process group.

Output is read through pipes as it comes, and of each stream only the
beginning and the end are kept (the bytes between are counted): a chatty
suite can fill neither memory nor the disk, and a pipe that is always
drained never blocks the command. On timeout the whole group gets SIGINT
(Python processes then exit through ``atexit`` and close their traces), and
SIGKILL after a grace period; the same happens when histeg is interrupted
(SIGINT, SIGTERM) while the command runs. Processes the command left behind
are killed when it exits, so runs never overlap. While the group runs it is
recorded on disk (``histeg.processes.groups``): a histeg killed outright leaves
the next run a way to end it.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Protocol

from histeg.processes import interrupt
from histeg.processes.groups import record, release

HEAD_BYTES = 8 * 1024
"""Kept from the start of each stream: what a command says first (a collection error, a bad option)."""
TAIL_BYTES = 32 * 1024
"""Kept from the end of each stream: pytest's summary, a traceback."""
DEFAULT_GRACE_SECONDS = 5.0
POLL_SECONDS = 0.1
"""How often a waiting run looks whether its command exited or histeg is stopping."""
DRAIN_SECONDS = 2.0
"""After the group is killed: how long the pipes are read to their end (a process that left the group may hold them)."""
_READ_BYTES = 1 << 16


def pinned_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of every process histeg starts: hash randomisation pinned."""
    env = dict(os.environ if base is None else base)
    env["PYTHONHASHSEED"] = "0"
    return env


@dataclass
class ProcessResult:
    exit_code: int | None
    """``None`` when the command could not be started; negative: killed by that signal."""
    duration: float
    timed_out: bool
    stdout_tail: str
    """What was kept of stdout: all of it, or its first ``HEAD_BYTES`` and last ``TAIL_BYTES`` around a line saying how much was cut."""
    stderr_tail: str
    start_error: str | None = None
    stdout_truncated_bytes: int = 0
    stderr_truncated_bytes: int = 0

    @property
    def output_truncated_bytes(self) -> int:
        """Bytes of output not kept, both streams."""
        return self.stdout_truncated_bytes + self.stderr_truncated_bytes


@dataclass
class _Kept:
    """One stream's first ``HEAD_BYTES`` and last ``TAIL_BYTES``; what lies between is only counted."""

    head: bytearray = field(default_factory=bytearray)
    tail: bytearray = field(default_factory=bytearray)
    total: int = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = HEAD_BYTES - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > TAIL_BYTES:
                del self.tail[: len(self.tail) - TAIL_BYTES]

    def text(self) -> tuple[str, int]:
        """The text kept and the number of bytes left out; the tail starts at a line when it was cut."""
        cut = self.total - len(self.head) - len(self.tail)
        if not cut:
            return (self.head + self.tail).decode("utf-8", errors="replace"), 0
        tail = bytes(self.tail)
        newline = tail.find(b"\n")
        if newline >= 0:
            cut += newline + 1
            tail = tail[newline + 1 :]
        head = self.head.decode("utf-8", errors="replace")
        separator = "" if head.endswith("\n") else "\n"
        return f"{head}{separator}[... {cut} bytes cut ...]\n{tail.decode('utf-8', errors='replace')}", cut


class Output:
    """The command's stdout and stderr, read as they come, and a descriptor readable once it exits."""

    def __init__(self, fds: tuple[int, int], exit_fd: int | None, on_exit: Callable[[], None] = lambda: None) -> None:
        """``fds``: the read ends of its stdout and stderr; ``exit_fd``: readable once it exits, when ``on_exit`` is
        called. All three are closed with it."""
        self.fds = fds
        self.kept = {fd: _Kept() for fd in self.fds}
        self.selector = selectors.DefaultSelector()
        for fd in self.kept:
            os.set_blocking(fd, False)
            self.selector.register(fd, selectors.EVENT_READ)
        self.exit_fd = exit_fd
        self.on_exit = on_exit
        if exit_fd is not None:
            self.selector.register(exit_fd, selectors.EVENT_READ)

    def read(self, timeout: float) -> None:
        """Read what is there, waiting at most ``timeout`` seconds for something to come or the process to exit."""
        if not self.selector.get_map():
            time.sleep(timeout)
            return
        for key, _ in self.selector.select(timeout):
            if key.fd == self.exit_fd:
                self.selector.unregister(key.fd)  # exited: the caller's next look sees it
                self.on_exit()
                continue
            try:
                data = os.read(key.fd, _READ_BYTES)
            except BlockingIOError:
                continue
            if data:
                self.kept[key.fd].feed(data)
            else:
                self.selector.unregister(key.fd)

    def wait(self, exited: Callable[[], bool], until: float, stop: Callable[[], bool]) -> bool:
        """Read until ``exited()`` (True), or ``until`` (monotonic) passes or ``stop()`` holds (False)."""
        while not exited():
            left = until - time.monotonic()
            if left <= 0 or stop():
                return False
            self.read(min(left, POLL_SECONDS))
        return True

    def drain(self, seconds: float) -> None:
        until = time.monotonic() + seconds
        if self.exit_fd is not None and self.exit_fd in self.selector.get_map():
            self.selector.unregister(self.exit_fd)  # the process was reaped: only its pipes are left to read
        while self.selector.get_map() and (left := until - time.monotonic()) > 0:
            self.read(left)

    def close(self) -> None:
        self.selector.close()
        for fd in self.fds if self.exit_fd is None else (*self.fds, self.exit_fd):
            os.close(fd)

    def texts(self) -> tuple[tuple[str, int], tuple[str, int]]:
        out, err = (self.kept[fd] for fd in self.fds)
        return out.text(), err.text()


class Child(Protocol):
    """A started command: its process group, its output, how to tell it exited and how to end what it leaves."""

    pid: int
    """Its process id, which is also its group's."""
    output: Output

    def exited(self) -> bool: ...

    def reap(self) -> int | None:
        """Kills what is left in its group and waits for it: its exit code (negative: a signal), None when unknown."""
        ...


class Refused(Exception):
    """A starter could not make the run as asked (``histeg.processes.zygote``): nothing was started."""


def start_in_session(argv: list[str], cwd: Path, env: Mapping[str, str], stdin: int, stderr: int | IO[bytes]) -> subprocess.Popen[bytes]:
    """``argv`` in a session (a process group) of its own, SIGINT at its default, its stdout piped."""
    return subprocess.Popen(
        argv,
        cwd=cwd,
        env=dict(env),
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=stderr,
        start_new_session=True,
        preexec_fn=_default_interrupt,  # noqa: PLW1509  it only resets a signal handler: no lock, no import
    )


class _Spawned:
    """A command histeg started itself (``subprocess.Popen``)."""

    def __init__(self, argv: list[str], cwd: Path, env: Mapping[str, str]) -> None:
        """No input, its output piped."""
        self.process = start_in_session(argv, cwd, env, subprocess.DEVNULL, subprocess.PIPE)
        self.pid = self.process.pid
        assert self.process.stdout is not None and self.process.stderr is not None
        pidfd: int | None = None  # readable once the process exits (Linux 5.3 and later): a wait ends then, not at its next poll
        with contextlib.suppress(AttributeError, OSError):
            pidfd = os.pidfd_open(self.pid)
        fds = (os.dup(self.process.stdout.fileno()), os.dup(self.process.stderr.fileno()))
        self.process.stdout.close()
        self.process.stderr.close()
        self.output = Output(fds, pidfd)

    def exited(self) -> bool:
        return _exited(self.pid)

    def reap(self) -> int | None:
        _signal_group(self.pid, signal.SIGKILL)
        self.process.wait()
        return self.process.returncode


Starter = Callable[[list[str], Path, Mapping[str, str]], Child]
"""Starts a command (argv, working directory, environment); raises ``OSError`` when it cannot, ``Refused`` when a
starter declines and another should."""


def _reap(child: Child, recorded: Path | None) -> int | None:
    """Whatever the command left running killed, its output drained, its group's record released (signals deferred)."""
    try:
        return child.reap()
    finally:
        child.output.drain(DRAIN_SECONDS)
        child.output.close()
        release(recorded)


def run_process(
    argv: list[str],
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    grace: float = DEFAULT_GRACE_SECONDS,
    *,
    groups: Path | None = None,
    stop: threading.Event | None = None,
    start: Starter = _Spawned,
) -> ProcessResult:
    """Run ``argv`` in ``cwd``, in a process group of its own, until it exits or ``timeout`` seconds pass.

    ``groups``: the folder the group is recorded in while it runs (``histeg.processes.groups.records_folder``).
    ``stop``: when another thread sets it, the group is stopped as on timeout and ``interrupt.Stopped`` is
    raised, as a signal does in the main thread (which raises its own exception wherever it waits).
    ``start``: what starts it (``Refused`` goes to the caller)."""

    def halted() -> bool:
        return interrupt.stopping() or (stop is not None and stop.is_set())

    if halted():
        raise interrupt.Stopped("histeg is stopping")
    child: Child | None = None
    recorded: Path | None = None
    ending = False
    exit_code: int | None = None
    started = time.monotonic()
    try:
        with interrupt.deferred():  # a signal between the start and the record would leave a group nothing knows of
            try:
                child = start(argv, cwd, env)
            except OSError as exc:
                return ProcessResult(None, 0.0, False, "", "", f"cannot start {argv[0]}: {exc.strerror or exc}")
            if groups is not None:
                recorded = record(groups, child.pid, argv)
        exited = child.output.wait(child.exited, started + timeout, halted)
        if not exited:
            ending = True
            _end(child, grace)
            if halted():
                raise interrupt.Stopped("histeg is stopping")
        duration = time.monotonic() - started
    except BaseException:
        if child is not None and not child.exited():
            try:
                if not ending:  # interrupted while waiting: stopped as on timeout
                    ending = True
                    _end(child, grace)
            finally:  # interrupted again while it was being stopped: no more grace
                _signal_group(child.pid, signal.SIGKILL)
        raise
    finally:
        with interrupt.deferred():
            if child is not None:
                exit_code = _reap(child, recorded)
    (stdout, stdout_cut), (stderr, stderr_cut) = child.output.texts()
    return ProcessResult(exit_code, duration, not exited, stdout, stderr, None, stdout_cut, stderr_cut)


def output_text(result: ProcessResult) -> str:
    """What a log shows of a command's output: the tails, and how much was cut when it was too long to keep."""
    cut = ""
    if result.output_truncated_bytes:
        cut = (
            f"output cut: {result.stdout_truncated_bytes} bytes of stdout, {result.stderr_truncated_bytes} bytes of stderr "
            f"(the first {HEAD_BYTES // 1024} KiB and the last {TAIL_BYTES // 1024} KiB of each are kept)\n"
        )
    return f"{cut}--- stdout (tail) ---\n{result.stdout_tail}\n--- stderr (tail) ---\n{result.stderr_tail}"


def _end(child: Child, grace: float) -> None:
    """SIGINT to the group, SIGKILL when its leader has not exited after ``grace`` seconds; output is read meanwhile."""
    _signal_group(child.pid, signal.SIGINT)
    if not child.output.wait(child.exited, time.monotonic() + grace, lambda: False):
        _signal_group(child.pid, signal.SIGKILL)


def _exited(pid: int) -> bool:
    """The process exited. It is not reaped, so its pid, the group's id, cannot be given to another process meanwhile."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _default_interrupt() -> None:
    """In the child: SIGINT acts again. A histeg started in the background by a non-interactive
    shell (a nightly job) inherits SIGINT ignored, and Python then installs no KeyboardInterrupt
    handler: a timed-out run would only end by SIGKILL, with its trace never closed."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)
