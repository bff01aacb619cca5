"""Which Python files of a version are analysed, and under which module names.

The tracer's own selection decides, so that the function table lists exactly
the code the tracer may report: files under the sources and tests
directories, minus modules ignored by prefix, suffix or directory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from histeg.records.history import VersionSettings
from histeg.tracing.selection import Selector


@dataclass(frozen=True)
class SourceFile:
    path: Path
    relpath: str
    """POSIX path relative to the snapshot."""
    module: str
    is_package: bool
    """An ``__init__.py``: relative imports start from the module itself."""


def source_files(snapshot: Path, settings: VersionSettings) -> list[SourceFile]:
    """Every analysed ``.py`` file, each once, sorted by relative path."""
    ignore = settings.ignore
    selector = Selector(str(snapshot), settings.sources, settings.tests, ignore.prefixes, ignore.suffixes, ignore.directories)
    seen: dict[str, SourceFile] = {}
    for directory in [*settings.sources, *settings.tests]:
        top = snapshot / directory
        if not top.is_dir():
            continue
        for current, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
            for name in filenames:
                found = selector.module_of(os.path.join(current, name)) if name.endswith(".py") else None
                if found is None or found[0] in seen or not found[1]:
                    continue
                relpath, module = found
                seen[relpath] = SourceFile(snapshot / relpath, relpath, module, name == "__init__.py")
    return [seen[key] for key in sorted(seen)]
