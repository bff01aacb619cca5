"""What a traced run of a version takes from its build: the interpreter, the installed project, options."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from histeg.envs.environment import Environment, activated
from histeg.envs.project import overlay_generated
from histeg.store import read_json

BUILD = "build.json"
SHIMS = ".bin"
"""In the version folder: ``python``/``pip`` links when the interpreter is not a virtual environment's."""


@dataclass(frozen=True)
class Runtime:
    python: str
    version_dir: Path
    site: Path | None = None
    generated: list[str] = field(default_factory=list)
    pytest_args: tuple[str, ...] = ()
    build: str | None = None
    """The build's inputs fingerprint: traces made with another build are not reused."""

    def environment(self, base: dict[str, str]) -> dict[str, str]:
        """``base`` with the environment activated and the installed project after the sources on ``PYTHONPATH``."""
        env = activated(Environment(self.python, ""), base, self.version_dir / SHIMS)
        if self.site is not None:
            parts = [part for part in env.get("PYTHONPATH", "").split(os.pathsep) if part]
            env["PYTHONPATH"] = os.pathsep.join([*parts, str(self.site)])
        return env

    def prepare(self, run_copy: Path) -> None:
        overlay_generated(self.version_dir, self.generated, run_copy)


def runtime_of(version_dir: Path) -> Runtime:
    """The version's runtime from its build record; histeg's own interpreter when it was never built
    (``histeg exec`` on an output folder made by an older histeg, library callers)."""
    record = version_dir / BUILD
    data = read_json(record) if record.is_file() else {}
    environment = data.get("environment") or {}
    project = data.get("project") or {}
    if not environment.get("python"):
        return Runtime(sys.executable, version_dir)
    site = version_dir / "site" if project.get("installed") else None
    return Runtime(environment["python"], version_dir, site, list(project.get("generated", [])), tuple(data.get("pytestArgs", [])),
                   data.get("inputs"))
