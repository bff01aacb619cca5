"""Which Python files of a version are analysed, and under which module names.

The same rules decide what the tracer instruments: files under the sources
and tests directories, minus modules ignored by prefix, suffix or directory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from histeg.config import IgnoreSettings, VersionSettings
from histeg.naming import module_name

SKIPPED_DIRECTORY_NAMES = frozenset({"__pycache__", "node_modules", "site-packages"})


@dataclass(frozen=True)
class SourceFile:
    path: Path
    relpath: str
    """POSIX path relative to the snapshot."""
    module: str
    is_package: bool
    """An ``__init__.py``: relative imports start from the module itself."""


def is_ignored_module(relpath: str, module: str, ignore: IgnoreSettings) -> bool:
    if any(module.startswith(prefix) for prefix in ignore.prefixes):
        return True
    if any(module.endswith(suffix) for suffix in ignore.suffixes):
        return True
    path = PurePosixPath(relpath)
    return any(_is_under(path, directory) for directory in ignore.directories)


def is_ignored_function(name: str, ignore: IgnoreSettings) -> bool:
    """Functions are ignored by their own name (``co_name``), wherever they are defined."""
    return name in ignore.functions


def _is_under(path: PurePosixPath, directory: str) -> bool:
    root = PurePosixPath(directory.strip("/"))
    return str(root) not in ("", ".") and path.is_relative_to(root)


def source_files(snapshot: Path, settings: VersionSettings) -> list[SourceFile]:
    """Every analysed ``.py`` file, each once, sorted by relative path.

    Hidden directories and caches are not walked; a file under both a sources
    and a tests directory (sources ``.``) is listed once.
    """
    seen: dict[str, SourceFile] = {}
    for directory in [*settings.sources, *settings.tests]:
        top = snapshot / directory
        if not top.is_dir():
            continue
        for current, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIPPED_DIRECTORY_NAMES)
            for name in filenames:
                if not name.endswith(".py"):
                    continue
                path = Path(current) / name
                relpath = path.relative_to(snapshot).as_posix()
                if relpath in seen:
                    continue
                module = module_name(relpath, settings.sources)
                if not module or is_ignored_module(relpath, module, settings.ignore):
                    continue
                seen[relpath] = SourceFile(path, relpath, module, name == "__init__.py")
    return [seen[key] for key in sorted(seen)]
