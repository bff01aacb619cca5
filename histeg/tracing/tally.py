"""pytest's own count of a traced session's tests, written beside the trace as ``<trace>.tests``.

The counts a run reports (``runs.json``) used to be read back from pytest's
final summary line, which a project can colour (``addopts = ["--color=yes"]``),
silence (``-qq``) or reword. The pytest plugin counts instead from the
reports pytest's terminal reporter collected, exactly the numbers that line
would show, and this sidecar carries them to histeg: the words stay pytest's
own (``passed``, ``error``, ``subtests passed``), histeg names them.

Standard library only: it runs inside the traced process.
"""

from __future__ import annotations

import json
import os

SUFFIX = ".tests"
"""Appended to the trace file's name."""
FORMAT = 1
"""``format`` of the sidecar JSON: ``{"format": 1, "counts": {pytest's word: count}}``."""


def write_tally(trace_path: str, counts: dict[str, int]) -> None:
    """``<trace_path>.tests``, renamed into place so a reader never sees half of it."""
    target = trace_path + SUFFIX
    partial = f"{target}.{os.getpid()}.tmp"
    with open(partial, "w", encoding="utf-8") as handle:
        json.dump({"format": FORMAT, "counts": counts}, handle, separators=(",", ":"))
    os.replace(partial, target)


def read_tally(trace_path: str | os.PathLike[str]) -> dict[str, int] | None:
    """The counts written beside ``trace_path``; None when there are none, or none this histeg reads
    (the process ended before pytest's summary, or pytest ran without its terminal reporter)."""
    try:
        with open(os.fspath(trace_path) + SUFFIX, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    counts = data.get("counts") if isinstance(data, dict) and data.get("format") == FORMAT else None
    if not isinstance(counts, dict) or not all(isinstance(k, str) and type(v) is int and v >= 0 for k, v in counts.items()):
        return None
    return counts
