"""Noise: what differs between runs of one version, kept per entry point and function.

A divergence between two versions that one entry point also shows between two runs of the same
version, in the same function and of the same kind, is noise for that entry point and function
only: a clock-reading test must not silence a change that fifty other tests observe. Kinds of
divergence are told apart (a random remark held in an object makes parameters noise, not lines)
and reported by their nature: ``values`` (parameters, return values), ``path`` (lines, calls) or
``exception`` (returned in one run, raised in another).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from histeg.compare.calls import KINDS, CallDivergence
from histeg.compare.classes import exception_side
from histeg.compare.entry_points import EntryKey

VALUES, PATH, EXCEPTION = "values", "path", "exception"


def natures(call: CallDivergence) -> set[str]:
    found = set()
    if call.distance or call.calls:
        found.add(PATH)
    if call.parameters or (call.returns and exception_side(call) is None):
        found.add(VALUES)
    if exception_side(call) is not None:
        found.add(EXCEPTION)
    return found


@dataclass
class Unstable:
    """How one function behaved differently between runs of one version under one entry point."""

    kinds: set[str] = field(default_factory=set)
    natures: set[str] = field(default_factory=set)
    between_runs: set[str] = field(default_factory=set)
    """The kinds seen differing between runs of one version; the others were only not seen again when the entry point
    was re-run (``irreproducible``), which state left by the tests before it in the first runs can explain too."""

    def add(self, call: CallDivergence) -> None:
        self.kinds.update(call.kinds)
        self.natures.update(natures(call))
        if call.parameters:
            # unstable inputs make unstable outputs, even when two runs happen to return alike
            # (a message holding the length of a clock reading): values are noise together
            self.kinds.add("return")
        self.between_runs.update(self.kinds)

    def add_all(self) -> None:
        """The entry point itself came and went between runs: everything under it is unstable."""
        self.kinds.update(KINDS)
        self.natures.update((VALUES, PATH))
        self.between_runs.update(KINDS)


NoiseMap = dict[tuple[EntryKey, str], Unstable]
"""(entry point, function) -> what was unstable there."""


def merge(into: NoiseMap, found: NoiseMap, rename: dict[EntryKey, EntryKey] | None = None) -> None:
    """Add ``found`` to ``into``; ``rename`` maps entry points of the old version to the new one's
    (noise of the old version counts for the matched entry point of the new one)."""
    for (key, function), unstable in found.items():
        if rename is not None:
            if key not in rename:
                continue
            key = rename[key]
        target = into.setdefault((key, function), Unstable())
        target.kinds |= unstable.kinds
        target.natures |= unstable.natures
        target.between_runs |= unstable.between_runs
