"""The ranking of one version, from its loaded inputs to ordered targets; no file and no store is touched.

Divergences are mapped to syntax changes (``mapping``), each change or
divergent function becomes a target valued by its metrics (``targets``,
``metrics``, ``scaling``), and the targets are split by where their code
lives: only code under the sources directories is ranked; targets in the
tests directories and elsewhere are listed apart.

Evidence weighs before value: a target charged with a divergence of a class
in ``evidence_first`` (by default a changed test outcome or an exception only
the new version raises) ranks above every target without one, whatever their
values; within each group, the higher value first. A value adds up every
divergence alike, so a table that every test reads, diverging silently under
each, would otherwise outrank the method that made tests fail.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from histeg.compare.divergences import VersionComparison
from histeg.impact.changes import ChangeIndex
from histeg.impact.mapping import Distance, ImpactMap, map_divergences
from histeg.impact.targets import FunctionInfo, Target, build_targets, in_directories
from histeg.naming import split_identifier
from histeg.settings.evidence import EVIDENCE_FIRST
from histeg.settings.scaling import Scaling
from histeg.statics.reads import FunctionReads
from histeg.tracing.selection import IgnoreRule


def unknown_distance(changed: str, divergent: str) -> int | None:
    """No call graph: a changed caller's distance is then counted along the call chain."""
    return None


@dataclass(frozen=True)
class Layout:
    """Where a version keeps its code (its settings' sources and tests directories) and the function names it ignores."""

    sources: tuple[str, ...]
    tests: tuple[str, ...]
    ignored_functions: frozenset[str] = frozenset()


@dataclass
class RankingInputs:
    """What the ranking of one version reads, already loaded."""

    comparison: VersionComparison
    changes: ChangeIndex
    functions: Mapping[str, FunctionInfo]
    """Function table of both versions (the new one's rows win)."""
    layout: Layout
    reads: Mapping[str, FunctionReads] = field(default_factory=dict)
    """Values each function reads; needed only when the version changed a value."""
    distance: Distance = unknown_distance
    """Call-graph distance from a changed function down to a divergent one."""
    test_data: list[str] = field(default_factory=list)
    """Files in the tests directories that changed and are not Python."""


@dataclass
class Ranking:
    mapped: ImpactMap
    targets: list[Target]
    """Targets in the sources, ranked."""
    test_code: list[Target]
    """Targets in the tests directories, ordered as ranked, not ranked."""
    other_code: list[Target]
    """Targets in neither (benchmark scripts, say), ordered likewise."""

    def syntax_targets(self) -> list[Target]:
        return [t for t in self.targets if t.syntax_changes]

    def divergence_targets(self) -> list[Target]:
        return [t for t in self.targets if t.impact.local or t.impact.non_local]


def rank_version(
    inputs: RankingInputs,
    scaling: Scaling,
    metrics: tuple[str, ...],
    restrict: bool = False,
    evidence_first: tuple[str, ...] = EVIDENCE_FIRST,
) -> Ranking:
    """``evidence_first``: the divergence classes that put a target above those without (empty: by value alone)."""
    layout, comparison = inputs.layout, inputs.comparison
    tests = frozenset(identifier for identifier, info in inputs.functions.items() if in_directories(info.file, layout.tests))
    mapped = map_divergences(
        comparison.divergences,
        inputs.changes,
        inputs.reads,
        inputs.distance,
        restrict,
        tests,
        bool(inputs.test_data),
        entry_functions=comparison.executed(),
        earlier=comparison.carried,
    )
    built = build_targets(inputs.changes, mapped, comparison, inputs.functions, scaling, metrics)
    kept = [t for t in built if not ignored(t.identifier, layout.ignored_functions)]
    for target in kept:
        target.evidence = [name for name, count in target.classes().items() if count and name in evidence_first]
    product, test_code, other_code = partition(kept, layout)
    return Ranking(mapped, ranked(product), ranked(test_code), ranked(other_code))


def ranked(targets: Iterable[Target]) -> list[Target]:
    """Targets with evidence (``Target.evidence``) first, then the highest value; equal values by identifier, so the
    order never depends on the input's."""
    return sorted(targets, key=lambda t: (not t.evidence, -t.value.total, t.identifier))


def ignored(identifier: str, names: frozenset[str]) -> bool:
    """As the tracer decides (``IgnoreRule``): by the function's own name (``mod:Class.name`` -> ``name``) or its qualified name."""
    return IgnoreRule(functions=tuple(names)).ignores(qualname=split_identifier(identifier)[1])


def section_of(file: str | None, layout: Layout) -> Literal["product", "tests", "other"]:
    """Where code in ``file`` is reported: ranked (the sources), test code, or other code; tests win where they lie inside
    the sources."""
    if in_directories(file, layout.tests):
        return "tests"
    if any(d in ("", ".") for d in layout.sources) or in_directories(file, layout.sources):
        return "product"
    return "other"


def partition(targets: Iterable[Target], layout: Layout) -> tuple[list[Target], list[Target], list[Target]]:
    """Targets in the sources, in the tests directories, and elsewhere."""
    found: dict[str, list[Target]] = {"product": [], "tests": [], "other": []}
    for target in targets:
        found[section_of(target.file, layout)].append(target)
    return found["product"], found["tests"], found["other"]


def changed_test_data(file_changes: Iterable[Mapping[str, Any]], tests: Iterable[str]) -> list[str]:
    """Files in the tests directories that changed and are not Python (``fileChanges.json`` rows): inputs of the entry points."""
    paths = {path for change in file_changes if not change["python"] for path in (change["oldPath"], change["newPath"]) if path}
    directories = tuple(tests)
    return sorted(path for path in paths if in_directories(path, directories))
