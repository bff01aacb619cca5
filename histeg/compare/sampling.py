"""Which diverging entry points the confirmation re-runs: a bounded sample of each (function, kind).

When a core function changes, hundreds of tests see it diverge the same way. Re-running them all tells
nothing the first few do not: noise is a property of how a function behaves under a test (a clock read,
a random draw), and a function that is noisy in one way shows it in its sample. So each group of
divergences that share a function and a kind is re-run through at most ``per_group`` of its entry points;
a group whose sample shows any instability of that kind is widened to every entry point it has, which are
then re-run and judged one by one as without sampling. A group whose sample is stable keeps the
divergences of its other entry points as they are: they are the same change seen by more tests.

A test's own function (the entry point's root) diverges under that one test only: grouped by its name, a
core change that every test sees would make one group per test, and the sample would be the whole suite. So
the tests' own functions form one group per kind (``OWN_FUNCTION``): that a test's body reads a clock or draws
a number shows in the sample like any function's noise, and widens the group to every test.

The sample is chosen greedily, the groups with the fewest entry points first; within a group, entry points
already chosen count, then those that diverged in the most groups come first, so that one test re-run serves
every function it saw diverge. Ties go by entry point order: the same divergences always give the same sample,
and a rerun of histeg reuses its re-runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from histeg.compare.entry_points import EntryKey
from histeg.compare.noise import NoiseMap

Group = tuple[str, str]
"""(function, kind of divergence)."""
OWN_FUNCTION = "<each test's own function>"
"""The function of the groups of the divergences of tests' own functions under their tests."""


def group_function(entry: EntryKey, function: str) -> str:
    """The function a divergence is grouped by: ``OWN_FUNCTION`` for a test's own (the root of an entry point a test owns)."""
    return OWN_FUNCTION if entry.label and function == entry.root else function


def groups(divergences: Iterable[tuple[EntryKey, str, Iterable[str]]]) -> dict[Group, set[EntryKey]]:
    """Per (function, kind), the entry points under which it diverged that way."""
    found: dict[Group, set[EntryKey]] = {}
    for entry, function, kinds in divergences:
        grouped = group_function(entry, function)
        for kind in kinds:
            found.setdefault((grouped, kind), set()).add(entry)
    return found


def choose(by_group: Mapping[Group, set[EntryKey]], per_group: int) -> set[EntryKey]:
    """At most ``per_group`` entry points of each group (every entry point when ``per_group`` is 0), few in all."""
    everyone: set[EntryKey] = set().union(*by_group.values()) if by_group else set()
    if per_group <= 0:
        return everyone
    breadth: dict[EntryKey, int] = {}
    for entries in by_group.values():
        for entry in entries:
            breadth[entry] = breadth.get(entry, 0) + 1
    chosen: set[EntryKey] = set()
    for group in sorted(by_group, key=lambda group: (len(by_group[group]), group)):  # the most constrained groups first
        entries = by_group[group]
        missing = per_group - len(entries & chosen)
        if missing > 0:
            chosen.update(sorted(entries - chosen, key=lambda entry: (-breadth[entry], entry))[:missing])
    return chosen


def unsettled(by_group: Mapping[Group, set[EntryKey]], chosen: set[EntryKey], unstable: NoiseMap) -> set[Group]:
    """The groups some sampled entry point of which showed the group's function unstable in the group's kind."""
    found = set()
    for (function, kind), entries in by_group.items():
        for entry in entries & chosen:
            noise = unstable.get((entry, entry.root if function == OWN_FUNCTION else function))
            if noise is not None and kind in noise.kinds:
                found.add((function, kind))
                break
    return found
