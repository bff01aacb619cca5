"""Running uv, the installer every version environment is made with (the ``uv`` package ships its binary)."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from histeg.errors import HistegError
from histeg.processes.process import run_process


def uv_binary() -> str:
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        found = shutil.which("uv")
        if found:
            return found
    raise HistegError("uv is not installed in histeg's environment (it is a dependency: reinstall histeg)")


def uv_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """uv never downloads an interpreter, and never takes a project or an active environment of the caller."""
    env = {key: value for key, value in os.environ.items() if key not in ("VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH", "PYTHONHOME")}
    env.update({"UV_PYTHON_DOWNLOADS": "never", "UV_NO_PROGRESS": "1", "NO_COLOR": "1"})
    env.update(extra or {})
    return env


@dataclass
class UvResult:
    ok: bool
    output: str


def run_uv(
    args: list[str],
    log: Path,
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 1800.0,
    groups: Path | None = None,
) -> UvResult:
    """Run ``uv ARGS``; its output is appended to ``log``. uv and the builds it starts (a project's setup.py)
    run in a process group of their own, as traced runs do: a time limit or an interrupt ends all of them, and
    ``groups`` (the output directory's records folder) lets the next run end what a killed histeg left."""
    done = run_process([uv_binary(), *args], cwd or Path.cwd(), uv_environment(env), timeout, groups=groups)
    output = done.stdout_tail + done.stderr_tail
    if done.start_error:
        output += f"\n{done.start_error}"
    if done.timed_out:
        output += f"\ntimed out after {timeout:.0f} s"
    with log.open("a", encoding="utf-8") as handle:
        handle.write(f"$ uv {' '.join(args)}\n{output}\n")
    return UvResult(done.exit_code == 0 and not done.timed_out, output)


def last_error(output: str) -> str:
    """The line of uv's output that says what went wrong."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for position, line in enumerate(lines):
        if line.startswith(("error:", "×")):
            cause = next(
                (rest.removeprefix("cause:").strip() for rest in lines[position + 1 : position + 3] if rest.startswith(("cause:", "╰─▶"))),
                "",
            )
            return line.lstrip("× ").strip() + (f": {cause.lstrip('╰─▶ ')}" if cause else "")
    return lines[-1] if lines else "no output"
