"""Testing targets of one version: what to test, why, and how important it is."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

import msgspec

from histeg.compare.divergences import Divergence, VersionComparison
from histeg.compare.entry_points import EntryKey
from histeg.impact.changes import ChangeIndex
from histeg.impact.mapping import Impact, ImpactMap
from histeg.impact.metrics import Value, target_value
from histeg.impact.notes import notes_on
from histeg.naming import split_identifier
from histeg.records.base import convert
from histeg.records.statics import FunctionRecord
from histeg.records.targets import (
    DivergenceCounts,
    LocalDivergence,
    NonLocalDivergence,
    RankedTarget,
    TargetChange,
)
from histeg.settings.evidence import CLASSES, OUTCOME_CHANGED
from histeg.settings.scaling import Scaling

MAX_LISTED = 25


@dataclass
class FunctionInfo:
    kind: str
    file: str
    lines: tuple[int, int]


def function_table(*versions: Iterable[FunctionRecord]) -> dict[str, FunctionInfo]:
    """``functions.json`` rows of each version, the new version first: its files and lines win over the old version's."""
    table: dict[str, FunctionInfo] = {}
    for rows in versions:
        for row in rows:
            table.setdefault(row.identifier, FunctionInfo(row.kind, row.file, (row.first_line, row.last_line)))
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
    evidence: list[str] = field(default_factory=list)
    """The classes of its divergences that rank it above targets without any (``ranking.rank_version``'s ``evidence_first``)."""

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

    def record(self, rank: int | None) -> RankedTarget:
        """``rank``: its place among the ranked targets; ``None`` for test and other code, which is never ranked."""
        module, qualname = split_identifier(self.identifier)
        entry_points = self.entry_points()
        new_tests = sorted({entry_label(key) for key in self.new_tests})
        return RankedTarget(
            rank=rank,
            identifier=self.identifier,
            kind=self.kind,  # type: ignore[arg-type]  # one of TargetKind, as the table and the changes name kinds
            module=module,
            qualname=qualname,
            file=self.file,
            lines=self.lines,
            value=self.value.total,
            parts=self.value.parts,
            origin="unmapped divergence" if self.unmapped else "syntax change",
            new=self.new,
            syntax_changes=[change_summary(c) for c in self.syntax_changes[:MAX_LISTED]],
            syntax_change_count=len(self.syntax_changes),
            local_divergences=[_local(d) for d in self.impact.local[:MAX_LISTED]],
            local_divergence_count=len(self.impact.local),
            non_local_divergences=[_non_local(d, hops) for d, hops in self.impact.non_local[:MAX_LISTED]],
            non_local_divergence_count=len(self.impact.non_local),
            affected_functions=sorted({d.call.function for d, _ in self.impact.non_local}),
            entry_points=entry_points[:MAX_LISTED],
            entry_point_count=len(entry_points),
            divergence_classes=convert(self.classes(), DivergenceCounts),
            evidence=self.evidence,  # type: ignore[arg-type]  # names of CLASSES
            new_test_entry_points=new_tests[:MAX_LISTED],
            new_test_entry_point_count=len(new_tests),
            notes=self.notes,
        )


def entry_label(entry: EntryKey) -> str:
    return entry.label or f"{entry.command}:{entry.root}#{entry.occurrence}"


def change_summary(change: dict[str, Any]) -> TargetChange:
    """A change as ``syntaxChanges.json`` has it (``histeg.impact.changes`` keeps them as loaded), without its code."""

    def lines(key: str) -> tuple[int, int] | None:
        span = change.get(key)
        return None if span is None else (span[0], span[1])

    return TargetChange(
        id=change["id"],
        entity=change["entity"],
        type=change["type"],
        code_type=change["codeType"],
        significance=change["significance"],
        old_lines=lines("oldLines"),
        new_lines=lines("newLines"),
        old_path=change.get("oldPath"),
        new_path=change.get("newPath"),
    )


def _local(divergence: Divergence) -> LocalDivergence:
    call = divergence.call
    return LocalDivergence(
        entry_point=entry_label(divergence.entry),
        function=call.function,
        kinds=call.kinds,
        classes=list(divergence.classes),
        metrics=call.metrics_record(),
    )


def _non_local(divergence: Divergence, hops: int | None) -> NonLocalDivergence:
    """As a local divergence, with the calls from the target down to it."""
    return NonLocalDivergence(**msgspec.structs.asdict(_local(divergence)), call_distance=hops)


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
    executed = comparison.executed()
    evident = {d.entry for d in comparison.divergences if OUTCOME_CHANGED in d.classes}
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
        target = Target(
            identifier, kind, file, lines, value, syntax, impact, identifier in mapped.unmapped, identifier in changes.new_entities
        )
        target.new_tests = sorted(key for key, called in comparison.new_entry_functions.items() if identifier in called)
        target.notes = notes_on(
            target,
            sum(1 for f in executed.values() if identifier in f),
            sum(1 for key, f in executed.items() if key in evident and identifier in f),
        )
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
