"""Starting the user's commands: pinned hashing, own process group, hard timeout."""

from __future__ import annotations

import os
import signal
import subprocess
import time


def pinned_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of every process histeg starts: hash randomisation pinned."""
    env = dict(os.environ if base is None else base)
    env["PYTHONHASHSEED"] = "0"
    return env


def run_with_timeout(argv: list[str] | str, cwd: str, env: dict[str, str], timeout: float, shell: bool = False) -> tuple[int | None, bytes, float]:
    """Run a command in its own process group; on timeout kill the whole group. Returns (exit code or None, output, seconds)."""
    started = time.monotonic()
    process = subprocess.Popen(argv, cwd=cwd, env=env, shell=shell, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
        return process.returncode, output, time.monotonic() - started
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        return None, output, time.monotonic() - started
