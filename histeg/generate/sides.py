"""The two versions a generation compares, each as its build made it runnable; what makes one unusable is one line."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from histeg.envs.runtime import Runtime, runtime_of
from histeg.errors import HistegError
from histeg.processes.groups import records_folder
from histeg.processes.process import pinned_environment, run_process
from histeg.records.build import Build
from histeg.records.history import Version, VersionSettings
from histeg.store import OutputStore

SITE_SECONDS = 60.0
"""How long the version's interpreter may take to say where its packages are."""


@dataclass(frozen=True)
class VersionSide:
    """One version: where its code is and the environment its tests run in."""

    store: OutputStore
    index: int
    version: Version
    settings: VersionSettings
    runtime: Runtime

    @property
    def directory(self) -> Path:
        return self.store.version_dir(self.index)

    @property
    def snapshot(self) -> Path:
        return self.store.snapshot(self.index)

    def source_file(self, module: str) -> Path | None:
        """The module's file in the snapshot's sources directories (a package's ``__init__.py``), if any."""
        parts = module.split(".")
        if not all(part.isidentifier() for part in parts):
            return None
        for source in self.settings.sources:
            base = self.snapshot / source
            for candidate in (base.joinpath(*parts).with_suffix(".py"), base.joinpath(*parts, "__init__.py")):
                if candidate.is_file():
                    return candidate
        return None

    def site_packages(self) -> list[str]:
        """The folders the version's interpreter takes its installed packages from, asked of the interpreter itself."""
        code = "import json, site, sys; print(json.dumps([*site.getsitepackages(), site.getusersitepackages()]))"
        result = run_process(
            [self.runtime.python, "-I", "-c", code],
            self.directory,
            pinned_environment(),
            SITE_SECONDS,
            groups=records_folder(self.store.root),
        )
        if result.exit_code != 0:
            raise HistegError(
                f"version {self.index}: its interpreter {self.runtime.python} does not run: "
                f"{(result.start_error or result.stderr_tail or 'exit code ' + str(result.exit_code)).strip().splitlines()[-1]}"
            )
        try:
            folders = json.loads(result.stdout_tail.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise HistegError(f"version {self.index}: cannot tell where {self.runtime.python} keeps its packages") from None
        return [folder for folder in folders if Path(folder).is_dir()]


def built_side(store: OutputStore, index: int, role: str) -> VersionSide:
    """Version ``index`` when its build succeeded; ``role`` (the version, its predecessor) names it in the error."""
    if not store.has_version(index):
        raise HistegError(f"{role} {index} is not in {store.root}")
    version = store.version(index)
    build_path = store.file(index, Build.FILE)
    if not build_path.is_file():
        raise HistegError(f"{role} {index} was never built: run histeg compute on it first")
    build = Build.read(build_path)
    if build.status != "succeeded":
        raise HistegError(f"{role} {index} cannot be run: its build {build.status}" + (f" ({build.reason})" if build.reason else ""))
    return VersionSide(store, index, version, version.settings, runtime_of(store.version_dir(index)))


__all__ = ["VersionSide", "built_side"]
