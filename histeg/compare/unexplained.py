"""Divergences no changed code explains: they need more evidence before they can become a target.

A divergence under an entry point that ran no changed function, in either version, of a command
whose test modules ran none while they were collected (a parametrize list a changed function built), in a version
without a changed class- or module-level value, has no cause in the code that histeg can name. It
may still have one (a data file the test reads), but it is also what a coin flip that happened to
land alike on every re-run looks like. (Under an entry point that ran a changed function, any
divergence may be its consequence: a caller sees another return value, a later call other state.) Such divergences that round 1 of
the re-runs did not show to be noise get a second round of their own (``histeg.runs.confirm``,
``round`` 2) with twice the re-runs. A divergence of the code shows in every one of them, so the
second round costs time only, never a real divergence; it is skipped when every survivor is explained.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from histeg.records.syntax import SyntaxChanges

SECOND_ROUND_FACTOR = 2
"""Re-runs of the second round, per version, as a multiple of the first round's."""


@dataclass(frozen=True)
class Explanations:
    """What in a version's syntax changes can explain a divergence."""

    functions: frozenset[str]
    """Functions changed with runtime meaning (added, removed and renamed ones by both names)."""
    values: bool
    """A class- or module-level change with runtime meaning: a value any function may read."""

    def explain(self, executed: set[str]) -> bool:
        """``executed``: the functions the divergence's entry point ran, in either version."""
        return self.values or not self.functions.isdisjoint(executed)


def explanations(path: Path) -> Explanations:
    """From ``syntaxChanges.json``; none when it is missing (then every survivor gets its second round)."""
    if not path.is_file():
        return Explanations(frozenset(), False)
    functions: set[str] = set()
    values = False
    for entry in SyntaxChanges.read(path).files:
        for change in entry.changes:
            if change.significance == "none":  # docstrings, comments, formatting
                continue
            if change.level == "function":
                functions.update(name for name in (change.function, change.entity, change.old_entity) if name)
            else:
                values = True
    return Explanations(frozenset(functions), values)
