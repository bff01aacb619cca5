"""A target's value: scaled averages of its local and non-local divergences (thesis 4.6).

Sums over divergences are divided by the number of traces (entry points) in
which the target appears, so a function called by many tests is not ranked
up merely for being called often.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from histeg.compare.divergences import Divergence
from histeg.impact.mapping import Impact
from histeg.records.targets import PartName, ValueParts
from histeg.settings.scaling import Scaling

_COUNTED = ("sections", "distance", "coverage", "returns", "parameters", "calls")


def averages(divergences: Iterable[Divergence], traces: int) -> dict[str, float]:
    totals = dict.fromkeys(_COUNTED, 0.0)
    for divergence in divergences:
        metrics = divergence.call.metrics()
        for key in _COUNTED:
            totals[key] += metrics[key]
    return {key: value / max(traces, 1) for key, value in totals.items()}


def _scaled(prefix: str, values: dict[str, float], scaling: Scaling, metrics: tuple[str, ...]) -> dict[PartName, float]:
    def scale(name: str) -> float:
        return getattr(scaling, f"{prefix}_{name}")

    parts: dict[PartName, float] = {
        "returns": values["returns"] * scale("returns"),
        "parameters": values["parameters"] * scale("parameters"),
        "calls": values["calls"] * scale("calls"),
    }
    if "sections" in metrics:
        parts["sections"] = values["sections"] * scale("sections")
        parts["distance"] = values["distance"] * scale("distance")
    if "distance" in metrics:
        parts["distance"] = parts.get("distance", 0.0) + values["distance"] * scale("distance_without_sections")
    if "coverage" in metrics:
        parts["coverage"] = values["coverage"] * scale("coverage")
    return parts


@dataclass
class Value:
    total: float
    parts: ValueParts


_LINE_PARTS = ("sections", "distance", "coverage")


def target_value(impact: Impact, traces: int, syntax_changes: int, new_class: bool, scaling: Scaling, metrics: tuple[str, ...]) -> Value:
    local = _scaled("local", averages(impact.local, traces), scaling, metrics)
    if syntax_changes:
        local = {key: value * scaling.changed_own_lines if key in _LINE_PARTS else value for key, value in local.items()}
    non_local = _scaled("non_local", averages((d for d, _ in impact.non_local), traces), scaling, metrics)
    hops = [h for _, h in impact.non_local if h is not None]
    mean_distance = sum(hops) / len(hops) if hops else 0.0
    affected = len({d.call.function for d, _ in impact.non_local})
    call_distance = mean_distance * scaling.call_distance
    affected_functions = affected * scaling.affected_functions
    syntax = syntax_changes * scaling.syntax_changes
    new = scaling.new_class if new_class else 0.0
    total = sum(local.values()) + sum(non_local.values()) + sum((call_distance, affected_functions, syntax, new))
    parts = ValueParts(
        local=_rounded(local),
        non_local=_rounded(non_local),
        call_distance=round(call_distance, 6),
        affected_functions=round(affected_functions, 6),
        syntax_changes=round(syntax, 6),
        new_class=round(new, 6),
        traces=traces,
    )
    return Value(round(total, 6), parts)


def _rounded(values: dict[PartName, float]) -> dict[PartName, float]:
    return {key: round(value, 6) for key, value in values.items()}
