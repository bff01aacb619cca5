"""Metric scaling: jHisteg's defaults, overridable in ``[tool.histeg.scaling]``.

Non-local values outweigh local ones (the goal is to rank changes by their
effect on the rest of the program); divergent sections outweigh the raw edit
distance, which is little more than a tie-breaker. Kept with the settings, whose
option table types ``scaling`` and ``metric`` with it; the ranking only reads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from histeg.errors import HistegError

METRICS = ("sections", "coverage", "distance")
"""Default: divergent sections; coverage-based and distance-only alternatives can be combined."""


@dataclass(frozen=True)
class Scaling:
    local_sections: float = 0.1
    local_distance: float = 0.0
    local_distance_without_sections: float = 0.1
    local_returns: float = 0.1
    local_parameters: float = 0.1
    local_coverage: float = 0.1
    local_calls: float = 0.1
    non_local_sections: float = 10.0
    non_local_distance: float = 0.3
    non_local_distance_without_sections: float = 1.0
    non_local_returns: float = 1.0
    non_local_parameters: float = 1.0
    non_local_coverage: float = 1.0
    non_local_calls: float = 1.0
    call_distance: float = 3.5
    affected_functions: float = 0.01
    syntax_changes: float = 1.0
    new_class: float = 12.0
    changed_own_lines: float = 0.0
    """Factor on the line-based local metrics (sections, distance, coverage) of a
    function that itself changed. Its lines differ by construction, whatever the
    change does; what it does shows in returns, parameters, calls and non-local
    divergences. jHisteg scored them (factor 1); 0 keeps an equivalent
    refactoring with many loop iterations from outranking real impact."""

    @classmethod
    def from_config(cls, table: Mapping[str, Any] | None) -> Scaling:
        """Keys as in TOML: ``non-local-sections = 10``."""
        known = {f.name.replace("_", "-"): f.name for f in fields(cls)}
        values = {}
        for key, value in (table or {}).items():
            if key not in known:
                raise HistegError(f"unknown scaling '{key}' in [tool.histeg.scaling]; known: {', '.join(sorted(known))}")
            if not isinstance(value, int | float) or isinstance(value, bool):
                raise HistegError(f"scaling '{key}' must be a number")
            values[known[key]] = float(value)
        return cls(**values)

    def to_json(self) -> dict[str, float]:
        return {key.replace("_", "-"): value for key, value in asdict(self).items()}


def parse_metrics(values: list[str] | str | None) -> tuple[str, ...]:
    chosen = [values] if isinstance(values, str) else list(values or ["sections"])
    for metric in chosen:
        if metric not in METRICS:
            raise HistegError(f"unknown metric '{metric}'; choose from {', '.join(METRICS)}")
    return tuple(m for m in METRICS if m in chosen)
