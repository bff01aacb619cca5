"""The records of a version's ranking (testingTargets.json and the single-source lists).

Kept apart from the ranking so that the ranking itself knows nothing of the files;
their shape is in ``histeg.records.targets``.
"""

from __future__ import annotations

from collections.abc import Iterable

from histeg.compare.divergences import VersionComparison
from histeg.impact.ranking import Ranking
from histeg.impact.targets import Target, entry_label
from histeg.records.targets import (
    ChangedCode,
    DiffCoverage,
    DivergenceTargets,
    NoiseSection,
    RankedTarget,
    RankingOptions,
    SyntaxTargets,
    TargetSummary,
    TestData,
    TestingTargets,
    UnmatchedEntryPoints,
    UnstablePair,
    UntestedChange,
)


def ranked(targets: Iterable[Target]) -> list[RankedTarget]:
    """Ranks from 1, in the order given."""
    return [target.record(rank) for rank, target in enumerate(targets, 1)]


def testing_targets(
    identifier: str,
    against: str,
    options: RankingOptions,
    ranking: Ranking,
    comparison: VersionComparison,
    test_data: list[str],
    changed: list[ChangedCode] | None = None,
    untested: list[UntestedChange] | None = None,
) -> TestingTargets:
    """``against``: the commit compared with; ``test_data``: the changed files in the tests directories that are not Python;
    ``changed`` and ``untested``: the changed code in the sources and its ranked unexecuted part (``histeg.impact.untested``)."""
    changed, untested = changed or [], untested or []
    return TestingTargets(
        identifier=identifier,
        comparing_against_version=against,
        options=options,
        targets=ranked(ranking.targets),
        test_code=[t.record(None) for t in ranking.test_code],
        other_code=[t.record(None) for t in ranking.other_code],
        noise=noise_section(comparison),
        test_data=TestData(
            files=test_data,
            divergences=len(ranking.mapped.by_test_data),
            functions=sorted({d.call.function for d in ranking.mapped.by_test_data}),
        ),
        unmatched_entry_points=UnmatchedEntryPoints(only_in_old=comparison.only_old, only_in_new=comparison.only_new),
        changed_code=changed,
        untested_changes=untested,
        summary=summary(ranking.targets, comparison, changed, untested),
    )


def single_source(
    kind: type[SyntaxTargets | DivergenceTargets], identifier: str, against: str, options: RankingOptions, targets: list[Target]
) -> SyntaxTargets | DivergenceTargets:
    """The targets from one source alone, ranked among themselves."""
    return kind(identifier=identifier, comparing_against_version=against, options=options, targets=ranked(targets))


def noise_section(comparison: VersionComparison) -> NoiseSection:
    """What was set aside as noise: it never reaches the ranking, so it is reported here."""
    return NoiseSection(
        functions=comparison.noisy_functions(),
        entry_points=sorted({entry.label or entry.root for entry, _ in comparison.unstable}),
        divergences=len(comparison.noise),
        unstable=unstable(comparison),
        confirmation=comparison.confirmation.record(),
    )


def unstable(comparison: VersionComparison) -> list[UnstablePair]:
    """Each (entry point, function) that differed between runs of one version, with the nature of the difference."""
    return [
        UnstablePair(entry_point=entry_label(entry), function=function, natures=sorted(found.natures))  # type: ignore[arg-type]  # natures typed str by compare.divergences
        for (entry, function), found in sorted(comparison.unstable.items(), key=lambda item: item[0])
    ]


def summary(
    targets: list[Target], comparison: VersionComparison, changed: Iterable[ChangedCode] = (), untested: list[UntestedChange] | None = None
) -> TargetSummary:
    return TargetSummary(
        targets=len(targets),
        with_impact=sum(1 for t in targets if t.impact.local or t.impact.non_local),
        unmapped=sum(1 for t in targets if t.unmapped),
        divergences=len(comparison.divergences),
        noise=len(comparison.noise),
        untested=len(untested or []),
        diff_coverage=diff_coverage(changed),
    )


def diff_coverage(changed: Iterable[ChangedCode]) -> DiffCoverage:
    """Changed executable lines in the sources and how many some entry point ran: the diff coverage of the commit."""
    total: set[tuple[str | None, int]] = set()
    executed: set[tuple[str | None, int]] = set()
    for code in changed:  # a line in a class's change and in its method's counts once
        total.update((code.file, line) for line in code.changed_lines)
        executed.update((code.file, line) for line in code.executed_changed_lines)
    return DiffCoverage(
        changed_lines=len(total), executed_lines=len(executed), ratio=round(len(executed) / len(total), 4) if total else None
    )
