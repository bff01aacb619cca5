"""Divergence classes between an old and a new version, after the Shadow paper.

A divergence where a call raised only in the new version is a regression candidate; one where it
raised only in the old version looks like a fix; a divergence under a test whose outcome changed
(passed, failed, skipped ...) is visible to the suite; any other divergence is silent: the tests run
the change, the behaviour differs, and no test tells. The classes' names are in ``histeg.settings.evidence``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from histeg.records.divergences import DivergenceClass
from histeg.settings.evidence import (
    EXCEPTION_ONLY_IN_NEW,
    EXCEPTION_ONLY_IN_OLD,
    OUTCOME_CHANGED,
    SILENT,
)

if TYPE_CHECKING:
    from histeg.compare.calls import CallDivergence


def exception_side(call: CallDivergence) -> DivergenceClass | None:
    """Which version alone raised out of this call, if one did."""
    outcomes: dict[str, Any] | None = call.details.get("return")
    if not outcomes:
        return None
    old, new = outcomes["old"][0], outcomes["new"][0]
    if old == new:
        return None
    return EXCEPTION_ONLY_IN_NEW if new == "raised" else EXCEPTION_ONLY_IN_OLD


def classify(call: CallDivergence, outcome_changed: bool) -> tuple[DivergenceClass, ...]:
    """The classes of one divergence: an exception side and a changed outcome may both hold."""
    found: list[DivergenceClass] = [side] if (side := exception_side(call)) else []
    if outcome_changed:
        found.append(OUTCOME_CHANGED)
    return tuple(found) or (SILENT,)


def outcomes_differ(old: dict[str, dict[str, str]], new: dict[str, dict[str, str]], label: str) -> bool:
    """Whether the test ``label`` ended otherwise (any phase): both versions must have run it."""
    return bool(label) and label in old and label in new and old[label] != new[label]
