"""A hand-made output directory with one extracted version, as the extraction step leaves it."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from histeg.config import DEFAULT_IGNORED_FUNCTIONS
from histeg.store import VERSION, OutputStore, write_json


def make_version(
    out: Path,
    files: dict[str, str],
    *,
    index: int = 0,
    sources: tuple[str, ...] = ("src",),
    tests: tuple[str, ...] = ("tests",),
    ignore_prefixes: tuple[str, ...] = (),
    ignore_suffixes: tuple[str, ...] = (),
    ignore_directories: tuple[str, ...] = (),
    ignore_functions: tuple[str, ...] = DEFAULT_IGNORED_FUNCTIONS,
) -> OutputStore:
    """Write ``OUT/<index>/version.json`` and the snapshot files (dedented)."""
    store = OutputStore(out)
    for name, text in files.items():
        target = store.snapshot(index) / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(dedent(text).lstrip("\n"), encoding="utf-8")
    sha = f"{index:040x}"
    write_json(
        store.file(index, VERSION),
        {
            "schemaVersion": 1,
            "index": index,
            "identifier": sha,
            "shortIdentifier": sha[:7],
            "author": "Ada Tester",
            "date": "2024-01-01T00:00:00+00:00",
            "msg": "version under test",
            "comparingAgainstVersion": None,
            "comparingAgainstIndex": None,
            "snapshot": "snapshot",
            "sourcesIn": list(sources),
            "testsIn": list(tests),
            "commandToBuild": None,
            "ignoredModulesByPrefix": list(ignore_prefixes),
            "ignoredModulesBySuffix": list(ignore_suffixes),
            "ignoredDirectories": list(ignore_directories),
            "ignoredFunctionsByName": list(ignore_functions),
            "skippedEntries": [],
        },
    )
    return store
