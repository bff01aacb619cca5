"""What ranking writes: ``testingTargets.json``, and with --generate-for-syntax/-divergence ``syntaxTargets.json`` and ``divergenceTargets.json``.

The three files share the ranked target and its parts; the single-source lists
are the testing targets' header and ranked list without the sections after it.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from histeg.records.base import Part, Record
from histeg.records.divergences import DivergenceClass, EntryKey, Kind, Metrics, Nature, TargetedReruns
from histeg.records.syntax import ChangeType, CodeType, Entity, FilePath, Line, Lines, Significance
from histeg.records.types import CommitId, Count

Metric = Literal["sections", "coverage", "distance"]
TargetKind = Literal["function", "method", "class", "module", "value"]
Origin = Literal["syntax change", "unmapped divergence"]
CodeState = Literal["diverged", "executed", "unexecuted"]
PartName = Literal["returns", "parameters", "calls", "sections", "distance", "coverage"]

Identifier = Annotated[str, msgspec.Meta(description="package.module:Qual.name; a module is 'package.module:'.")]
TargetFile = Annotated[str | None, msgspec.Meta(description="In the new version (old version for removals).")]
EntryLabel = Annotated[str, msgspec.Meta(description="pytest node id, or command:root#occurrence outside pytest.")]
Score = Annotated[float, msgspec.Meta(ge=0)]
Scaled = Annotated[
    dict[PartName, float],
    msgspec.Meta(
        description=("Averages per trace, scaled, by metric; sections, distance and coverage only as the chosen metrics use them.")
    ),
]


class RankingOptions(Part, kw_only=True):
    """The metrics and weights the targets were valued with."""

    metrics: Annotated[list[Metric], msgspec.Meta(min_length=1)]
    restrict_syntax_mapping: bool
    confirm_runs: Annotated[Count, msgspec.Meta(description="Targeted re-runs per version of the entry points that diverged (0: none).")]
    scaling: Annotated[
        dict[str, float],
        msgspec.Meta(
            description=(
                "Weights under their [tool.histeg.scaling] names (non-local-sections, ...), as a user writes them and settings.json shows them."
            )
        ),
    ]
    evidence_first: Annotated[
        list[DivergenceClass],
        msgspec.Meta(
            description=(
                "Divergence classes that rank a target charged with one above every target charged with none, whatever the values "
                "(evidence-first); empty: ranked by value alone."
            )
        ),
    ] = msgspec.field(default_factory=list)


class ValueParts(Part, kw_only=True):
    """What a target's value is the sum of."""

    local: Scaled
    non_local: Scaled
    call_distance: float
    affected_functions: float
    syntax_changes: float
    new_class: float
    traces: Annotated[Count, msgspec.Meta(description="Traces the averages are taken over.")]


class TargetChange(Part, kw_only=True):
    """A syntax change of the target, as in syntaxChanges.json without its code."""

    id: Count
    entity: Entity
    type: ChangeType
    code_type: CodeType
    significance: Significance
    old_lines: Lines | None
    new_lines: Lines | None
    old_path: FilePath | None
    new_path: FilePath | None


class LocalDivergence(Part, kw_only=True):
    """A divergence in the target itself."""

    entry_point: EntryLabel
    function: str
    kinds: list[Kind]
    classes: Annotated[list[DivergenceClass], msgspec.Meta(min_length=1)]
    metrics: Metrics


class NonLocalDivergence(LocalDivergence, kw_only=True):
    """A divergence charged to the target from a function it calls or whose values it changed."""

    call_distance: Annotated[
        Count | None, msgspec.Meta(description="Calls from the target down to the divergent function; null when unknown.")
    ]


class DivergenceCounts(Part, kw_only=True):
    """How many of the target's divergences fall in each class: a call raised only in the new version (regression candidate), only in the old one (fix), the test's outcome changed (visible), or none of these (silent). A divergence may count in an exception class and outcomeChanged."""

    exception_only_in_new: Count
    exception_only_in_old: Count
    outcome_changed: Count
    silent: Count


class RankedTarget(Part, kw_only=True):
    """A function, method, class, module or module-level value to test, with why."""

    rank: Annotated[
        Annotated[int, msgspec.Meta(ge=1)] | None, msgspec.Meta(description="1 for the most important; null in testCode and otherCode.")
    ]
    identifier: Identifier
    kind: TargetKind
    module: str
    qualname: str
    file: TargetFile
    lines: Lines | None
    value: Score
    parts: ValueParts
    origin: Origin
    new: bool
    syntax_changes: Annotated[list[TargetChange], msgspec.Meta(description="The first 25.")]
    syntax_change_count: Count
    local_divergences: Annotated[list[LocalDivergence], msgspec.Meta(description="The first 25.")]
    local_divergence_count: Count
    non_local_divergences: Annotated[list[NonLocalDivergence], msgspec.Meta(description="The first 25.")]
    non_local_divergence_count: Count
    affected_functions: Annotated[list[str], msgspec.Meta(description="Functions whose divergences were charged to the target.")]
    entry_points: Annotated[list[EntryLabel], msgspec.Meta(description="The first 25.")]
    entry_point_count: Count
    divergence_classes: DivergenceCounts
    new_test_entry_points: Annotated[
        list[EntryLabel],
        msgspec.Meta(
            description=(
                "Entry points only this version has (added or renamed tests) that run the target: "
                "they may observe behaviour the old tests cannot (first 25)."
            )
        ),
    ]
    new_test_entry_point_count: Count
    notes: list[str]
    evidence: Annotated[
        list[DivergenceClass],
        msgspec.Meta(
            description=(
                "The classes among options.evidenceFirst that its divergences have: a target with any ranks above every target with "
                "none, then by value."
            )
        ),
    ] = msgspec.field(default_factory=list)
    merge_classes: Annotated[
        list[Literal["lost", "introduced"]],
        msgspec.Meta(
            description=(
                "Merge mode (--merges), on a merge: lost (a parent's change the merge does not keep) or introduced (behaviour neither "
                "parent had) charged to the target; such targets rank first (mergeDivergences.json)."
            )
        ),
    ] = msgspec.field(default_factory=list)


class UnstablePair(Part, kw_only=True):
    """An (entry point, function) that differed between runs of one version: noise there and only there."""

    entry_point: EntryLabel
    function: str
    natures: list[Nature]


class NoiseSection(Part, kw_only=True):
    """What was set aside as noise: it never reaches the ranking."""

    functions: list[str]
    entry_points: list[EntryLabel]
    divergences: Count
    unstable: list[UnstablePair]
    confirmation: TargetedReruns


class TestData(Part, kw_only=True):
    """Changed files in the tests directories that are not Python (inputs of the entry points), and the divergences nothing else explains that are charged to them instead of becoming unmapped targets."""

    __test__ = False
    """A record, not a pytest class."""

    files: Annotated[list[str], msgspec.Meta(description="Snapshot-relative paths (old and new path of a rename).")]
    divergences: Count
    functions: Annotated[list[str], msgspec.Meta(description="Functions whose divergences were charged to the changed test data.")]


class UnmatchedEntryPoints(Part, kw_only=True):
    only_in_old: list[EntryKey]
    only_in_new: list[EntryKey]


class ChangedCode(Part, kw_only=True):
    """A changed function, method, class or module-level entity in the sources directories, and whether the entry points ran its changed lines."""

    identifier: Identifier
    kind: TargetKind
    module: str
    qualname: str
    file: TargetFile
    lines: Lines | None
    changed_lines: Annotated[
        list[Line],
        msgspec.Meta(
            description=(
                "Executable new-version lines the commit added or changed (not blank, comment, docstring or def lines; "
                "changes of significance none do not count): within the statements its syntax changes touched, the lines a line diff "
                "of the file's two versions added or changed, and where lines were only removed, the lines either side of the gap."
            )
        ),
    ]
    executed_changed_lines: Annotated[
        list[Line], msgspec.Meta(description="Those of changedLines some entry point executed in the new version.")
    ]
    state: Annotated[
        CodeState,
        msgspec.Meta(
            description=(
                "diverged: it has local divergences or is a ranked target with divergences; executed: some changed line ran and nothing diverged; "
                "unexecuted: no entry point ran a changed line of it."
            )
        ),
    ]


class UntestedChange(Part, kw_only=True):
    """Changed code with at least one changed executable line no entry point executed: what the tests cannot see."""

    rank: Annotated[int, msgspec.Meta(ge=1, description="1 for the most important.")]
    identifier: Identifier
    kind: TargetKind
    module: str
    qualname: str
    file: TargetFile
    lines: Lines | None
    origin: Literal["untested change"]
    unexecuted_lines: Annotated[list[Line], msgspec.Meta(description="Changed executable lines no entry point executed.")]
    changed_line_count: Count
    value: Score
    syntax_changes: Annotated[list[TargetChange], msgspec.Meta(description="The first 25.")]
    syntax_change_count: Count
    notes: list[str]


class DiffCoverage(Part, kw_only=True):
    """Changed executable lines in the sources directories, and how many of them some entry point executed."""

    changed_lines: Count
    executed_lines: Count
    ratio: Annotated[
        Annotated[float, msgspec.Meta(ge=0, le=1)] | None,
        msgspec.Meta(description=("executedLines / changedLines; null when no changed executable line.")),
    ]


class TargetSummary(Part, kw_only=True):
    targets: Count
    with_impact: Count
    unmapped: Count
    divergences: Count
    noise: Count
    untested: Annotated[Count, msgspec.Meta(description="Entries of untestedChanges.")]
    diff_coverage: DiffCoverage


class RankedTargets(Record, kw_only=True):
    """The header and ranked list every targets file has; each file is a subclass."""

    schema_version: Literal[2] = 2
    identifier: CommitId
    comparing_against_version: CommitId
    options: RankingOptions
    targets: Annotated[list[RankedTarget], msgspec.Meta(description="Highest value first.")]


class TestingTargets(RankedTargets, kw_only=True):
    """What to test in this version and in what order: targets sorted by value, highest first. For a test generator: module plus qualname (Pynguin's --module-name and --only-cover)."""

    __test__ = False
    """A record, not a pytest class."""

    FILE = "testingTargets.json"
    TITLE = "<index>/testingTargets.json"
    schema_version: Literal[3] = 3  # type: ignore[assignment]  # narrows the base's Literal[2]; 3: changedCode, untestedChanges, summary.untested and diffCoverage
    test_code: Annotated[list[RankedTarget], msgspec.Meta(description="Targets in the tests directories: reported, never ranked.")]
    other_code: Annotated[
        list[RankedTarget],
        msgspec.Meta(
            description=(
                "Targets in Python files outside the sources and tests directories (scripts, benchmarks, docs configuration): reported, never ranked."
            )
        ),
    ]
    noise: NoiseSection
    test_data: TestData
    unmatched_entry_points: UnmatchedEntryPoints
    changed_code: Annotated[list[ChangedCode], msgspec.Meta(description="Every changed entity in the sources directories, by identifier.")]
    untested_changes: Annotated[
        list[UntestedChange], msgspec.Meta(description="Changed code with changed lines no entry point executed, most important first.")
    ]
    summary: TargetSummary


class SyntaxTargets(RankedTargets, kw_only=True):
    """Targets from syntax changes alone (--generate-for-syntax), ranked with the same metrics."""

    FILE = "syntaxTargets.json"
    TITLE = "<index>/syntaxTargets.json"


class DivergenceTargets(RankedTargets, kw_only=True):
    """Targets that have divergences attributed to them (--generate-for-divergence)."""

    FILE = "divergenceTargets.json"
    TITLE = "<index>/divergenceTargets.json"


__all__ = [
    "ChangedCode",
    "CodeState",
    "DiffCoverage",
    "DivergenceCounts",
    "DivergenceTargets",
    "LocalDivergence",
    "Metric",
    "NoiseSection",
    "NonLocalDivergence",
    "Origin",
    "PartName",
    "RankedTarget",
    "RankedTargets",
    "RankingOptions",
    "SyntaxTargets",
    "TargetChange",
    "TargetKind",
    "TargetSummary",
    "TestData",
    "TestingTargets",
    "UnmatchedEntryPoints",
    "UnstablePair",
    "UntestedChange",
    "ValueParts",
]
