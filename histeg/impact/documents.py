"""The JSON documents of a version's ranking (testingTargets.json and the single-source lists).

Kept apart from the ranking so that the shape of the files is in one place and the ranking
itself knows nothing of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from histeg.compare.divergences import VersionComparison
from histeg.impact.ranking import Ranking
from histeg.impact.targets import Target, entry_label

SCHEMA_VERSION = 2


def targets_document(identifier: str, against: str | None, options: Mapping[str, Any], ranked: Iterable[Target],
                     sections: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``against``: the commit compared with; ``sections``: what follows the ranked targets (testingTargets.json only)."""
    return {
        "schemaVersion": SCHEMA_VERSION,
        "identifier": identifier,
        "comparingAgainstVersion": against,
        "options": dict(options),
        "targets": [target.to_json(rank) for rank, target in enumerate(ranked, 1)],
        **(sections or {}),
    }


def testing_targets_sections(ranking: Ranking, comparison: VersionComparison, test_data: list[str]) -> dict[str, Any]:
    return {
        "testCode": [t.to_json(None) for t in ranking.test_code],
        "otherCode": [t.to_json(None) for t in ranking.other_code],
        "noise": noise_section(comparison),
        "testData": {
            "files": test_data,
            "divergences": len(ranking.mapped.by_test_data),
            "functions": sorted({d.call.function for d in ranking.mapped.by_test_data}),
        },
        "unmatchedEntryPoints": {"onlyInOld": [k.to_json() for k in comparison.only_old], "onlyInNew": [k.to_json() for k in comparison.only_new]},
        "summary": summary(ranking.targets, comparison),
    }


def noisy_functions(comparison: VersionComparison) -> list[str]:
    return sorted({function for _, function in comparison.unstable})


def noise_section(comparison: VersionComparison) -> dict[str, Any]:
    """What was set aside as noise: it never reaches the ranking, so it is reported here."""
    return {
        "functions": noisy_functions(comparison),
        "entryPoints": sorted({entry.label or entry.root for entry, _ in comparison.unstable}),
        "divergences": len(comparison.noise),
        "unstable": unstable(comparison),
        "confirmation": comparison.confirmation.to_json(),
    }


def unstable(comparison: VersionComparison) -> list[dict[str, Any]]:
    """Each (entry point, function) that differed between runs of one version, with the nature of the difference."""
    return [{"entryPoint": entry_label(entry), "function": function, "natures": sorted(found.natures)}
            for (entry, function), found in sorted(comparison.unstable.items(), key=lambda item: item[0])]


def summary(targets: list[Target], comparison: VersionComparison) -> dict[str, int]:
    return {
        "targets": len(targets),
        "withImpact": sum(1 for t in targets if t.impact.local or t.impact.non_local),
        "unmapped": sum(1 for t in targets if t.unmapped),
        "divergences": len(comparison.divergences),
        "noise": len(comparison.noise),
    }
