"""Pynguin's own environment, made once per interpreter with uv beside the versions' environments.

Pynguin pins its dependencies tightly (pytest, rich, setuptools, black); installed into histeg's environment
it would change the pytest histeg traces projects with, and installed into a version's environment it would
change what that version's tests run on. So it lives apart, on the version's own interpreter, and sees the
version's code and packages through ``histeg.generate.launcher``. Nothing the user has is changed.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from histeg.envs.environment import locked_file
from histeg.envs.interpreter import probe
from histeg.envs.uv import last_error, run_uv
from histeg.errors import HistegError
from histeg.settings.places import default_environments
from histeg.store import force_rmtree

PYNGUIN = "pynguin==0.48.0"
"""The Pynguin whose command line the hand-off speaks (``--only_cover``, ``--maximum-search-time``, ...)."""
TOOLS = "tools"
"""Under the environments root: one folder per tool and interpreter."""
COMPLETE = ".complete"
"""Written last: a folder without it is a make that was cut short, made again."""


@dataclass(frozen=True)
class Tool:
    python: str
    """The tool environment's interpreter."""
    requirement: str


def tool_folder(root: Path, requirement: str, interpreter: str, version: str) -> Path:
    """Keyed by what is installed and on which interpreter (its real file and version)."""
    key = hashlib.sha256(f"{requirement}\n{os.path.realpath(interpreter)}\n{version}".encode()).hexdigest()[:16]
    return root / TOOLS / f"{requirement.split('=')[0]}-{key}"


def pynguin_tool(interpreter: str, root: Path | None = None) -> Tool:
    """Pynguin's environment on ``interpreter`` (the version's), made with uv when missing; uv's output goes to a log
    beside it. What uv cannot do (offline, no such release for this Python) is one line naming that log."""
    found = probe(interpreter)
    if found is None:
        raise HistegError(f"cannot run the interpreter {interpreter} to make Pynguin's environment")
    folder = tool_folder(root or default_environments(), PYNGUIN, found.path, found.version)
    python = folder / "bin" / "python"
    log = folder.with_name(folder.name + ".log")
    folder.parent.mkdir(parents=True, exist_ok=True)
    with locked_file(folder.with_name(folder.name + ".lock")):
        if (folder / COMPLETE).is_file() and python.exists():
            return Tool(str(python), PYNGUIN)
        if folder.exists():
            force_rmtree(folder)
        for args in (["venv", "--quiet", "--python", found.path, str(folder)], ["pip", "install", "--python", str(python), PYNGUIN]):
            result = run_uv(args, log)
            if not result.ok:
                force_rmtree(folder)
                raise HistegError(f"cannot install {PYNGUIN} with uv: {last_error(result.output)} (see {log})")
        (folder / COMPLETE).write_text(PYNGUIN + "\n", encoding="utf-8")
    return Tool(str(python), PYNGUIN)


__all__ = ["PYNGUIN", "Tool", "pynguin_tool", "tool_folder"]
