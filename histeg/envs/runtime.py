"""What a traced run of a version takes from its build: the interpreter, the installed project, options."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from histeg.envs.environment import activated
from histeg.envs.project import overlay_generated
from histeg.records.build import Build

BUILD = Build.FILE
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
        env = activated(self.python, base, self.version_dir / SHIMS)
        if self.site is not None:
            parts = [part for part in env.get("PYTHONPATH", "").split(os.pathsep) if part]
            env["PYTHONPATH"] = os.pathsep.join([*parts, str(self.site)])
        return env

    def prepare(self, run_copy: Path) -> None:
        overlay_generated(self.version_dir, self.generated, run_copy)


def runtime_of(version_dir: Path) -> Runtime:
    """The version's runtime from its build record; histeg's own interpreter when it was never built
    (``histeg exec`` on an output folder made by an older histeg, library callers). A damaged or older
    build record is a one-line error."""
    record = version_dir / BUILD
    if not record.is_file():
        return Runtime(sys.executable, version_dir)
    build = Build.read(record)
    if build.environment is None:
        return Runtime(sys.executable, version_dir)
    project = build.project
    site = version_dir / "site" if project is not None and project.installed else None
    return Runtime(
        build.environment.python, version_dir, site, list(project.generated) if project else [], tuple(build.pytest_args), build.inputs
    )
