"""Comparing two matched call trees (thesis section 4.5.2).

For each pair of corresponding calls: edit distance and divergent sections of
their line sequences, per-line execution-count differences, differing
parameters and return value or exception, and missing or additional child
calls; then the same for every pair of aligned children. Identical subtrees
are recognised by the digests the decoder computed and skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from histeg.compare.alignment import align
from histeg.compare.sequences import compare_sequences, coverage_difference, encode
from histeg.tracing.events import END_RAISED, END_RUNNING, Columns
from histeg.tracing.records import Definitions

KINDS = ("lines", "parameters", "return", "calls")


@dataclass
class CallDivergence:
    """How one call of a function behaved differently in the new version."""

    function: str
    chain: tuple[str, ...]
    """Functions from the entry point down to the caller of this call."""
    path: tuple[int, ...]
    """Child positions from the entry point down to this call (in the new trace)."""
    distance: int = 0
    sections: int = 0
    coverage: int = 0
    parameters: int = 0
    returns: int = 0
    calls: int = 0
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def kinds(self) -> list[str]:
        values = {"lines": self.distance, "parameters": self.parameters, "return": self.returns, "calls": self.calls}
        return [kind for kind in KINDS if values[kind]]

    def without(self, kinds: set[str]) -> CallDivergence:
        """The same divergence with the given kinds set aside (they are noise for this function)."""
        kept = CallDivergence(self.function, self.chain, self.path, self.distance, self.sections, self.coverage,
                              self.parameters, self.returns, self.calls, dict(self.details))
        if "lines" in kinds:
            kept.distance = kept.sections = kept.coverage = 0
            kept.details.pop("sections", None)
        if "parameters" in kinds:
            kept.parameters = 0
            kept.details.pop("parameters", None)
        if "return" in kinds:
            kept.returns = 0
            kept.details.pop("return", None)
        if "calls" in kinds:
            kept.calls = 0
            kept.details.pop("missingCalls", None)
            kept.details.pop("additionalCalls", None)
        return kept

    def metrics(self) -> dict[str, int]:
        return {"distance": self.distance, "sections": self.sections, "coverage": self.coverage,
                "parameters": self.parameters, "returns": self.returns, "calls": self.calls}


class Tree:
    """One decoded entry point with the definitions of its trace: calls are indices (0: the root)."""

    __slots__ = ("columns", "definitions")

    def __init__(self, columns: Columns, definitions: Definitions) -> None:
        self.columns = columns
        self.definitions = definitions

    def ident(self, call: int) -> str:
        return self.definitions.functions[self.columns.function[call]].ident

    def params_names(self, call: int) -> tuple[str, ...]:
        return self.definitions.functions[self.columns.function[call]].params

    def positions(self, call: int) -> list[int]:
        """Executed lines as positions among the function's code lines; [] when not all were recorded."""
        c = self.columns
        if not c.complete[call]:
            return []
        return c.lines[c.line_start[call] : c.line_start[call + 1]].tolist()

    def complete(self, call: int) -> bool:
        return bool(self.columns.complete[call])

    def params(self, call: int) -> list[str | None]:
        c = self.columns
        return [self.definitions.value_text(v) for v in c.params[c.param_start[call] : c.param_start[call + 1]]]

    def outcome(self, call: int) -> tuple[str, str | None]:
        """Returned versus raised, with the value's text (a call that never ended returned nothing known)."""
        end = self.columns.end[call]
        value = self.definitions.value_text(self.columns.result[call]) if end != END_RUNNING else None
        return ("raised" if end == END_RAISED else "returned"), value

    def children(self, call: int) -> list[int]:
        c = self.columns
        return c.children[c.child_start[call] : c.child_start[call + 1]].tolist()

    def digest(self, call: int) -> bytes:
        return self.columns.digest(call)


def _outcomes_differ(old: tuple[str, str | None], new: tuple[str, str | None]) -> bool:
    """Returned versus raised always differs; a value that was not recorded (budget, ``--no-values``) is unknown."""
    if old[0] != new[0]:
        return True
    return old[1] is not None and new[1] is not None and old[1] != new[1]


def _compare_pair(old: Tree, new: Tree, o: int, n: int, chain: tuple[str, ...], path: tuple[int, ...],
                  with_sections: bool) -> tuple[CallDivergence, list[int], list[int], list[tuple[int, int]]]:
    """The divergence of one pair of calls, their children and the pairs of aligned children."""
    divergence = CallDivergence(new.ident(n), chain, path)
    if old.complete(o) and new.complete(n):  # beyond a line budget on either side the lines are unknown, not different
        old_positions, new_positions = old.positions(o), new.positions(n)
        old_lines, new_lines = encode(old_positions), encode(new_positions)
        if old_lines != new_lines:
            difference = compare_sequences(old_lines, new_lines, with_sections)
            divergence.distance = difference.distance
            divergence.sections = len(difference.sections)
            divergence.coverage = coverage_difference(old_positions, new_positions)
            divergence.details["sections"] = [[s.old_start, s.old_end, s.new_start, s.new_end] for s in difference.sections[:20]]
    names = old.params_names(o) or new.params_names(n)
    old_params, new_params = old.params(o), new.params(n)
    if old_params != new_params:
        changed = []
        for position in range(max(len(old_params), len(new_params))):
            before = old_params[position] if position < len(old_params) else None
            after = new_params[position] if position < len(new_params) else None
            if before is not None and after is not None and before != after:  # a value not recorded is unknown
                name = names[position] if position < len(names) else f"#{position}"
                changed.append({"name": name, "old": before, "new": after})
        divergence.parameters = len(changed)
        if changed:
            divergence.details["parameters"] = changed[:20]
    old_outcome, new_outcome = old.outcome(o), new.outcome(n)
    if _outcomes_differ(old_outcome, new_outcome):
        divergence.returns = 1
        divergence.details["return"] = {"old": list(old_outcome), "new": list(new_outcome)}
    old_children, new_children = old.children(o), new.children(n)
    alignment = align([old.ident(c) for c in old_children], [new.ident(c) for c in new_children])
    if alignment.missing or alignment.additional:
        divergence.calls = len(alignment.missing) + len(alignment.additional)
        divergence.details["missingCalls"] = [old.ident(old_children[i]) for i in alignment.missing][:50]
        divergence.details["additionalCalls"] = [new.ident(new_children[i]) for i in alignment.additional][:50]
    return divergence, old_children, new_children, alignment.pairs


def compare_calls(old: Tree, new: Tree, with_sections: bool = True) -> Iterator[CallDivergence]:
    """Every divergence between two matched call trees, parents before children; identical subtrees are skipped."""
    stack: list[tuple[int, int, tuple[str, ...], tuple[int, ...]]] = [(0, 0, (), ())]
    while stack:
        o, n, chain, path = stack.pop()
        if old.digest(o) == new.digest(n):
            continue
        divergence, old_children, new_children, pairs = _compare_pair(old, new, o, n, chain, path, with_sections)
        if divergence.kinds:
            yield divergence
        below = (*chain, divergence.function)
        for old_index, new_index in reversed(pairs):
            stack.append((old_children[old_index], new_children[new_index], below, (*path, new_index)))
