"""The project itself, installed per version beside the shared environment.

It is built from a throw-away copy of the snapshot (builds write ``build/``,
``*.egg-info`` and version files into their source tree), into a wheel by the
backend of a kept build environment (``builder``) where it can be, and installed
without dependencies into the version's own ``site`` folder, which runs put
on ``PYTHONPATH`` after the source directories: the code is imported from the
run's copy of the snapshot, so it is traced there, while the installed
metadata gives entry points, plugins and ``importlib.metadata.version``.
Files the build generated inside the source directories (``_version.py``
from hatch-vcs or setuptools-scm) are kept and copied into every run's copy,
as an editable install would have left them.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from histeg.envs.environment import BuildFailure
from histeg.envs.uv import last_error, run_uv
from histeg.processes.workdir import copy_snapshot
from histeg.store import force_rmtree

BUILD_LEFTOVERS = {"build", "dist", ".eggs", "__pycache__"}
GENERATED_BY_BUILD = "build-generated"
"""The version folder's copy of the files the build generated in the sources (``generated/`` is ``histeg generate``'s)."""


@dataclass(frozen=True)
class ProjectInstall:
    site: Path
    generated: list[str]
    """Files (snapshot-relative) the build generated in the source directories."""
    seconds: float


def install_project(
    snapshot: Path,
    version_dir: Path,
    python: str,
    sources: list[str],
    log: Path,
    environment: dict[str, str] | None = None,
    groups: Path | None = None,
    builder: str | None = None,
) -> ProjectInstall:
    """``builder``: the interpreter of a build environment (``builder.build_environment``) that builds the wheel without
    isolation; without one, or when that fails, the project is installed from its source."""
    site, generated_dir = version_dir / "site", version_dir / GENERATED_BY_BUILD
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=".install-", dir=version_dir) as scratch:
        copy, target = Path(scratch) / "source", Path(scratch) / "site"
        copy_snapshot(snapshot, copy)
        if builder is None or not _install_wheel(copy, target, python, builder, Path(scratch) / "dist", log, environment, groups):
            done = run_uv(
                ["pip", "install", "--python", python, "--no-deps", "--target", str(target), str(copy)], log, env=environment, groups=groups
            )
            if not done.ok:
                raise BuildFailure(f"cannot build and install the project: {last_error(done.output)}")
        generated = _generated(snapshot, copy, sources)
        for directory in (site, generated_dir):
            if directory.exists():
                force_rmtree(directory)
        shutil.move(target, site)
        for relative in generated:
            destination = generated_dir / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(copy / relative, destination)
    return ProjectInstall(site, generated, time.monotonic() - started)


def _install_wheel(
    copy: Path, target: Path, python: str, builder: str, dist: Path, log: Path, environment: dict[str, str] | None, groups: Path | None
) -> bool:
    """The wheel built by the backend in ``builder`` without isolation, then installed into ``target``; False (and no
    ``target``) when either fails."""
    built = run_uv(
        ["build", "--wheel", "--no-build-isolation", "--python", builder, "--out-dir", str(dist), str(copy)],
        log,
        env=environment,
        groups=groups,
    )
    wheels = sorted(dist.glob("*.whl")) if built.ok else []
    install = ["pip", "install", "--python", python, "--no-deps", "--target", str(target), *map(str, wheels)]
    if len(wheels) == 1 and run_uv(install, log, env=environment, groups=groups).ok:
        return True
    force_rmtree(target)
    with log.open("a", encoding="utf-8") as handle:
        handle.write("the wheel could not be built without isolation: the project is installed from its source\n")
    return False


def _generated(snapshot: Path, copy: Path, sources: list[str]) -> list[str]:
    found = []
    for source in sources:
        base = copy / source
        if not base.is_dir():
            continue
        for path in base.rglob("*"):
            relative = path.relative_to(copy)
            parts = set(relative.parts)
            if (
                not path.is_file()
                or parts & BUILD_LEFTOVERS
                or any(part.endswith((".egg-info", ".dist-info")) for part in relative.parts)
                or (snapshot / relative).exists()
                or (snapshot / relative).is_symlink()
            ):
                continue
            found.append(relative.as_posix())
    return sorted(set(found))


def overlay_generated(version_dir: Path, generated: list[str], run_copy: Path) -> None:
    """Put the build's generated files into a run's fresh copy of the snapshot."""
    for relative in generated:
        source = version_dir / GENERATED_BY_BUILD / relative
        if source.is_file():
            destination = run_copy / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination)
