"""Running one command with a time limit, in its own process group.

Output goes to files, not pipes, so a chatty or hanging process can neither
fill memory nor block the runner; only the tails are kept. On timeout the
whole group gets SIGINT (Python processes then exit through ``atexit`` and
close their traces), and SIGKILL after a grace period. Processes the command
left behind are killed when it exits, so runs never overlap.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

TAIL_BYTES = 32 * 1024
DEFAULT_GRACE_SECONDS = 5.0


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
    stderr_tail: str
    start_error: str | None = None


def run_process(
    argv: list[str],
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    grace: float = DEFAULT_GRACE_SECONDS,
) -> ProcessResult:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        try:
            process = subprocess.Popen(
                argv, cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True,
                preexec_fn=_default_interrupt,
            )
        except OSError as exc:
            return ProcessResult(None, 0.0, False, "", "", f"cannot start {argv[0]}: {exc.strerror or exc}")
        timed_out = False
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _signal_group(process.pid, signal.SIGINT)
            try:
                process.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                _signal_group(process.pid, signal.SIGKILL)
                process.wait()
        duration = time.monotonic() - started
        _signal_group(process.pid, signal.SIGKILL)  # whatever the command left running
        return ProcessResult(process.returncode, duration, timed_out, _tail(out), _tail(err))


def _default_interrupt() -> None:
    """In the child: SIGINT acts again. A histeg started in the background by a non-interactive
    shell (a nightly job) inherits SIGINT ignored, and Python then installs no KeyboardInterrupt
    handler: a timed-out run would only end by SIGKILL, with its trace never closed."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _signal_group(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _tail(handle: BinaryIO) -> str:
    size = handle.seek(0, os.SEEK_END)
    handle.seek(max(0, size - TAIL_BYTES))
    data = handle.read()
    text = data.decode("utf-8", errors="replace")
    if size > TAIL_BYTES:
        text = "[...]" + text[text.find("\n") + 1 :] if "\n" in text else text
    return text
