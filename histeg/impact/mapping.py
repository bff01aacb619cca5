"""Attaching each divergence to the syntax change that can explain it (thesis 4.6).

In order: the divergent function itself changed (local impact); a changed
function above it in the call chain (non-local impact of each, or only of the
closest with ``restrict``); a function at or above it reads a changed
constant, class attribute or module global (non-local impact of that value);
otherwise the divergent function becomes an unmapped target of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from histeg.compare.divergences import Divergence
from histeg.impact.changes import ChangeIndex


@dataclass
class Impact:
    """What one target is charged with."""

    local: list[Divergence] = field(default_factory=list)
    non_local: list[tuple[Divergence, int | None]] = field(default_factory=list)
    """Divergences in other functions, with the call distance from this target."""


@dataclass
class ImpactMap:
    targets: dict[str, Impact] = field(default_factory=dict)
    unmapped: set[str] = field(default_factory=set)

    def of(self, identifier: str) -> Impact:
        return self.targets.setdefault(identifier, Impact())


Distance = Callable[[str, str], int | None]


def map_divergences(
    divergences: Iterable[Divergence],
    changes: ChangeIndex,
    reads: Mapping[str, set[str]],
    distance: Distance,
    restrict: bool = False,
) -> ImpactMap:
    """``reads`` maps a function to the values it reads; ``distance`` is the call-graph distance."""
    result = ImpactMap()
    for divergence in divergences:
        function = divergence.call.function
        if function in changes.functions:
            result.of(function).local.append(divergence)
            continue
        chain = list(reversed(divergence.call.chain))  # closest caller first
        changed_callers = [caller for caller in chain if caller in changes.functions]
        if changed_callers:
            for caller in changed_callers[:1] if restrict else changed_callers:
                hops = distance(caller, function)
                result.of(caller).non_local.append((divergence, hops if hops is not None else chain.index(caller) + 1))
            continue
        readers = [(hops, values) for hops, reader in enumerate([function, *chain]) if (values := reads.get(reader, set()) & changes.values)]
        if readers:
            hops, values = readers[0]
            for value in sorted(values):
                result.of(value).non_local.append((divergence, hops))
            continue
        result.of(function).local.append(divergence)
        result.unmapped.add(function)
    return result
