"""Two output folders of the same run compared file by file: what a change of histeg's code changed in its outputs.

    python bench/output_diff.py BEFORE AFTER

Every JSON file (snapshots, installed sites and generated tests aside) is
compared byte for byte once each folder's own path is named alike; a file that
still differs is compared again without what changes on every run (times,
process ids, trace file names, step fingerprints and result ids). Printed: the
files that differ even so, the files only one side has, and the counts of
identical files and of files differing only in what changes on every run.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

SKIPPED_FOLDERS = frozenset({"snapshot", "site", "generated"})
VOLATILE = frozenset({"durationSeconds", "seconds", "selectParent", "createdAt", "started", "finished", "duration", "fingerprint", "result"})
TRACE_NAME = re.compile(r"\d+-[0-9a-f]{8}\.htrace")


def scrub(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: scrub(item) for key, item in value.items() if key not in VOLATILE}
    if isinstance(value, list):
        return [scrub(item) for item in value]
    if isinstance(value, str):
        return TRACE_NAME.sub("PID.htrace", value)
    return value


def json_files(root: Path) -> set[Path]:
    return {path.relative_to(root) for path in root.rglob("*.json") if not SKIPPED_FOLDERS & set(path.relative_to(root).parts)}


def compare(before: Path, after: Path) -> tuple[list[str], int, int]:
    """Lines to print, identical files, files differing only in what changes on every run."""
    lines, identical, volatile = [], 0, 0
    old, new = json_files(before), json_files(after)
    for relative in sorted(old & new):
        x = (before / relative).read_bytes().replace(str(before).encode(), b"ROOT")
        y = (after / relative).read_bytes().replace(str(after).encode(), b"ROOT")
        if x == y:
            identical += 1
        elif scrub(json.loads(x)) == scrub(json.loads(y)):
            volatile += 1
        else:
            lines.append(f"differs: {relative}")
    lines += [f"only before: {relative}" for relative in sorted(old - new)]
    lines += [f"only after: {relative}" for relative in sorted(new - old)]
    return lines, identical, volatile


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    arguments = parser.parse_args(argv)
    lines, identical, volatile = compare(arguments.before.resolve(), arguments.after.resolve())
    print("\n".join(lines))
    print(f"{identical} identical, {volatile} differing only in times, pids, trace file names and fingerprints")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
