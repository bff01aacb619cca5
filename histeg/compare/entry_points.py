"""Which traces of two versions correspond: matching by entry point (thesis 4.5.2).

An entry point is a root call. Its key is the trace command, the pytest node
id and phase it ran under, the root function, and the occurrence (the k-th
root call with the same key), so a test that calls two roots, or a command
run twice, still pairs one-to-one. Tests whose node ids changed (renumbered
parametrize cases, renamed or moved tests) are matched as cases first
(``test_matching``). A manual matching file overrides pairs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from histeg.compare.test_matching import cases_of, follow_cases, match_test_cases
from histeg.records.divergences import EntryKey, TraceMatching
from histeg.traces.reader import TraceFile


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


def match_entry_points(
    old: Mapping[EntryKey, EntryRef] | Iterable[EntryKey],
    new: Mapping[EntryKey, EntryRef] | Iterable[EntryKey],
    manual: list[tuple[EntryKey, EntryKey]] | None = None,
    renames: Mapping[str, str] | None = None,
) -> EntryMatching:
    """Pair the entry points of two runs.

    Manual pairs come first and take their keys out of automatic matching. Then tests are
    matched as cases (``test_matching``): parametrize cases by their parameter values, renamed
    and moved test functions through ``renames`` (old identifier -> new, ``read_renames``), and
    every entry point of a paired node id follows it. The rest pairs by equal keys. Given keys
    without their refs, no values can be read and cases pair by id alone."""
    old_keys, new_keys = list(old), list(new)
    old_set, new_set = set(old_keys), set(new_keys)
    pairs = [(a, b) for a, b in manual or [] if a in old_set and b in new_set]
    taken_old, taken_new = {a for a, _ in pairs}, {b for _, b in pairs}
    old_entries = old if isinstance(old, Mapping) else old_keys
    new_entries = new if isinstance(new, Mapping) else new_keys
    case_pairs = match_test_cases(cases_of(old_entries, taken_old), cases_of(new_entries, taken_new), renames)
    followed = follow_cases(case_pairs, old_keys, new_keys, taken_old, taken_new, renames)
    automatic = list(followed)
    taken_old.update(a for a, _ in followed)
    taken_new.update(b for _, b in followed)
    # a node id paired with another one is no longer the same test as its namesake on the other side
    mapped_old = {a.group for a, _ in case_pairs}
    mapped_new = {b.group for _, b in case_pairs}
    for key in old_keys:
        if key in taken_old or key not in new_set or key in taken_new:
            continue
        if (key.command, key.label) in mapped_old or (key.command, key.label) in mapped_new:
            continue
        automatic.append((key, key))
        taken_old.add(key)
        taken_new.add(key)
    pairs.extend(sorted(automatic))
    return EntryMatching(
        pairs=pairs,
        only_old=sorted(k for k in old_set if k not in taken_old),
        only_new=sorted(k for k in new_set if k not in taken_new),
    )


def read_manual_matching(path: Path) -> list[tuple[EntryKey, EntryKey]]:
    """``traceMatching.json``: ``{"pairs": [{"old": key, "new": key}, ...]}``."""
    return [(pair.old, pair.new) for pair in TraceMatching.read(path).pairs]
