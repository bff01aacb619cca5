"""Testing targets of one version: what to test, why, and how important it is."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from histeg.compare.classes import CLASSES
from histeg.compare.divergences import Divergence, VersionComparison
from histeg.compare.entry_points import EntryKey
from histeg.impact.changes import ChangeIndex
from histeg.impact.mapping import Impact, ImpactMap
from histeg.impact.metrics import Value, target_value
from histeg.impact.notes import notes_on
from histeg.impact.scaling import Scaling
from histeg.naming import split_identifier

MAX_LISTED = 25


@dataclass
class FunctionInfo:
    kind: str
    file: str
    lines: tuple[int, int]


def function_table(*versions: Iterable[Mapping[str, Any]]) -> dict[str, FunctionInfo]:
    """``functions.json`` rows of each version, the new version first: its files and lines win over the old version's."""
    table: dict[str, FunctionInfo] = {}
    for rows in versions:
        for row in rows:
            table.setdefault(row["identifier"], FunctionInfo(row["kind"], row["file"], (row["firstLine"], row["lastLine"])))
    return table


@dataclass
class Target:
    identifier: str
    kind: str
    file: str | None
    lines: tuple[int, int] | None
    value: Value
    syntax_changes: list[dict[str, Any]]
    impact: Impact
    unmapped: bool
    new: bool
    notes: list[str] = field(default_factory=list)
    new_tests: list[EntryKey] = field(default_factory=list)
    """Entry points only the new version has (added or renamed tests) that run this target."""

    def divergences(self) -> list[Divergence]:
        return [*self.impact.local, *(d for d, _ in self.impact.non_local)]

    def entry_points(self) -> list[str]:
        return sorted({entry_label(d.entry) for d in self.divergences()})

    def classes(self) -> dict[str, int]:
        """How many of its divergences fall in each class (a divergence may be in two)."""
        counts = dict.fromkeys(CLASSES, 0)
        for divergence in self.divergences():
            for name in divergence.classes:
                counts[name] += 1
        return counts

    def to_json(self, rank: int | None) -> dict[str, Any]:
        module, qualname = split_identifier(self.identifier)
        entry_points = self.entry_points()
        return {
            "rank": rank,
            "identifier": self.identifier,
            "kind": self.kind,
            "module": module,
            "qualname": qualname,
            "file": self.file,
            "lines": list(self.lines) if self.lines else None,
            "value": self.value.total,
            "parts": self.value.parts,
            "origin": "unmapped divergence" if self.unmapped else "syntax change",
            "new": self.new,
            "syntaxChanges": [_change_summary(c) for c in self.syntax_changes[:MAX_LISTED]],
            "syntaxChangeCount": len(self.syntax_changes),
            "localDivergences": [_divergence_summary(d) for d in self.impact.local[:MAX_LISTED]],
            "localDivergenceCount": len(self.impact.local),
            "nonLocalDivergences": [_divergence_summary(d) | {"callDistance": h} for d, h in self.impact.non_local[:MAX_LISTED]],
            "nonLocalDivergenceCount": len(self.impact.non_local),
            "affectedFunctions": sorted({d.call.function for d, _ in self.impact.non_local}),
            "entryPoints": entry_points[:MAX_LISTED],
            "entryPointCount": len(entry_points),
            "divergenceClasses": self.classes(),
            "newTestEntryPoints": sorted({entry_label(key) for key in self.new_tests})[:MAX_LISTED],
            "newTestEntryPointCount": len({entry_label(key) for key in self.new_tests}),
            "notes": self.notes,
        }


def entry_label(entry: EntryKey) -> str:
    return entry.label or f"{entry.command}:{entry.root}#{entry.occurrence}"


def _change_summary(change: dict[str, Any]) -> dict[str, Any]:
    keys = ("id", "entity", "type", "codeType", "significance", "oldLines", "newLines", "oldPath", "newPath")
    return {key: change.get(key) for key in keys}


def _divergence_summary(divergence: Divergence) -> dict[str, Any]:
    return {"entryPoint": entry_label(divergence.entry), "function": divergence.call.function, "kinds": divergence.call.kinds,
            "classes": list(divergence.classes), "metrics": divergence.call.metrics()}


def _traces_of(identifier: str, impact: Impact, comparison: VersionComparison) -> int:
    appearing = sum(1 for functions in comparison.entry_functions.values() if identifier in functions)
    if appearing:
        return appearing
    return len({d.entry for d in [*impact.local, *(d for d, _ in impact.non_local)]})


def build_targets(
    changes: ChangeIndex,
    mapped: ImpactMap,
    comparison: VersionComparison,
    functions: Mapping[str, FunctionInfo],
    scaling: Scaling,
    metrics: tuple[str, ...],
) -> list[Target]:
    identifiers = set(changes.by_entity) | set(mapped.targets)
    targets = []
    for identifier in sorted(identifiers):
        impact = mapped.targets.get(identifier, Impact())
        syntax = changes.by_entity.get(identifier, [])
        info = functions.get(identifier)
        kind = info.kind if info else _kind_from_changes(identifier, syntax, changes)
        lines = info.lines if info else _lines_from_changes(syntax)
        file = info.file if info else changes.files.get(identifier)
        traces = _traces_of(identifier, impact, comparison)
        new_class = identifier in changes.new_classes
        value = target_value(impact, traces, len(syntax), new_class, scaling, metrics)
        target = Target(identifier, kind, file, lines, value, syntax, impact, identifier in mapped.unmapped, identifier in changes.new_entities)
        target.new_tests = sorted(key for key, called in comparison.new_entry_functions.items() if identifier in called)
        target.notes = notes_on(target, sum(1 for f in comparison.entry_functions.values() if identifier in f))
        targets.append(target)
    return targets


def _kind_from_changes(identifier: str, syntax: list[dict[str, Any]], changes: ChangeIndex) -> str:
    if identifier.endswith(":"):
        return "module"
    if identifier in changes.values:
        return "value"
    if identifier in changes.new_classes or any(c["codeType"] == "class" or c.get("class") == identifier for c in syntax):
        return "class"
    return "function"


def _lines_from_changes(syntax: Iterable[dict[str, Any]]) -> tuple[int, int] | None:
    spans = [c["newLines"] for c in syntax if c.get("newLines")]
    if not spans:
        return None
    return min(s[0] for s in spans), max(s[1] for s in spans)


def in_directories(file: str | None, directories: Iterable[str]) -> bool:
    """Whether a snapshot-relative file lies under one of the directories (the root counts for nothing)."""
    if not file:
        return False
    path = PurePosixPath(file)
    return any(str(d) not in ("", ".") and path.is_relative_to(d) for d in directories)
