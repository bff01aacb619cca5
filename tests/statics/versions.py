"""A hand-made output directory with one extracted version, as the extraction step leaves it."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from histeg.records.history import Version
from histeg.store import VERSION, OutputStore
from histeg.tracing.selection import DEFAULT_IGNORED_FUNCTIONS


def make_version(
    out: Path,
    files: dict[str, str | bytes],
    *,
    index: int = 0,
    against: int | None = None,
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
        if isinstance(text, bytes):
            target.write_bytes(text)
        else:
            target.write_text(dedent(text).lstrip("\n"), encoding="utf-8")
    sha = version_sha(index)
    base = version_sha(against) if against is not None else None
    Version(
        index=index, identifier=sha, short_identifier=sha[:12], author="Ada Tester", date="2024-01-01T00:00:00+00:00",
        msg="version under test", comparing_against_version=base, comparing_against_index=against,
        sources_in=list(sources), tests_in=list(tests), command_to_build=None,
        ignored_modules_by_prefix=list(ignore_prefixes), ignored_modules_by_suffix=list(ignore_suffixes),
        ignored_directories=list(ignore_directories), ignored_functions_by_name=list(ignore_functions),
        skipped_entries=[], git_describe=None, git_commits=index + 1,
    ).write(store.file(index, VERSION))
    return store


def version_sha(index: int) -> str:
    """The made-up commit of version ``index``: distinct per index, a valid object name."""
    return f"{index + 1:040x}"
