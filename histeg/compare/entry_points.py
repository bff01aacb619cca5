"""Which traces of two versions correspond: matching by entry point (thesis 4.5.2).

An entry point is a root call. Its key is the trace command, the pytest node
id and phase it ran under, the root function, and the occurrence (the k-th
root call with the same key), so a test that calls two roots, or a command
run twice, still pairs one-to-one. A manual matching file overrides pairs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from histeg.errors import HistegError
from histeg.store import read_json
from histeg.traces import TraceFile


@dataclass(frozen=True, order=True)
class EntryKey:
    command: str
    label: str
    phase: str
    root: str
    occurrence: int

    def to_json(self) -> dict[str, Any]:
        return {"command": self.command, "label": self.label, "phase": self.phase, "root": self.root, "occurrence": self.occurrence}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EntryKey:
        try:
            return cls(data["command"], data.get("label", ""), data.get("phase", ""), data["root"], int(data.get("occurrence", 0)))
        except (KeyError, TypeError, ValueError) as exc:
            raise HistegError(f"malformed entry point in a trace matching file: {exc}") from None


@dataclass(frozen=True)
class EntryRef:
    """Where an entry point is: its trace file and its position in the file's index."""

    file: TraceFile
    index: int

    @property
    def digest(self) -> bytes:
        return self.file.entries[self.index].digest


def entry_points(files: Iterable[TraceFile]) -> dict[EntryKey, EntryRef]:
    """Root calls of one run of a version, keyed for matching (read from the files' indexes alone)."""
    seen: Counter[tuple[str, str, str, str]] = Counter()
    keyed: dict[EntryKey, EntryRef] = {}
    for trace in files:
        command = str(trace.meta.get("label") or "")
        functions = trace.definitions.functions
        for index, entry in enumerate(trace.entries):
            label, phase = trace.label(index)
            base = (command, label or "", phase or "", functions[entry.function].ident)
            keyed[EntryKey(*base, seen[base])] = EntryRef(trace, index)
            seen[base] += 1
    return keyed


@dataclass
class EntryMatching:
    pairs: list[tuple[EntryKey, EntryKey]]
    only_old: list[EntryKey]
    only_new: list[EntryKey]


def match_entry_points(old: Iterable[EntryKey], new: Iterable[EntryKey], manual: list[tuple[EntryKey, EntryKey]] | None = None) -> EntryMatching:
    """Pair equal keys; manual pairs come first and take their keys out of automatic matching."""
    old_keys, new_keys = sorted(old), sorted(new)
    pairs = [(a, b) for a, b in manual or [] if a in set(old_keys) and b in set(new_keys)]
    taken_old, taken_new = {a for a, _ in pairs}, {b for _, b in pairs}
    new_free = set(new_keys) - taken_new
    for key in old_keys:
        if key not in taken_old and key in new_free:
            pairs.append((key, key))
            taken_old.add(key)
            new_free.discard(key)
    return EntryMatching(
        pairs=pairs,
        only_old=[k for k in old_keys if k not in taken_old],
        only_new=sorted(new_free),
    )


def read_manual_matching(path: Path) -> list[tuple[EntryKey, EntryKey]]:
    """``traceMatching.json``: ``{"pairs": [{"old": key, "new": key}, ...]}``."""
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("pairs"), list):
        raise HistegError(f"{path} must hold an object with a 'pairs' list")
    return [(EntryKey.from_json(pair["old"]), EntryKey.from_json(pair["new"])) for pair in data["pairs"]]
