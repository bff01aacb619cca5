"""Comparing two matched call trees (thesis section 4.5.2).

For each pair of corresponding calls: edit distance and divergent sections of
their line sequences, per-line execution-count differences, differing
parameters and return value or exception, and missing or additional child
calls; then the same for every pair of aligned children. Identical subtrees
are recognised by a digest computed once per call and skipped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from histeg.compare.alignment import align
from histeg.compare.code_lines import CodeLines
from histeg.compare.sequences import compare_sequences, coverage_difference, encode
from histeg.traces import Call, Value

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


def _value_text(value: Value | None) -> str | None:
    return None if value is None else str(value)


def _outcome(call: Call) -> tuple[str, str | None]:
    if call.raised is not None:
        return "raised", _value_text(call.raised)
    return "returned", _value_text(call.returned)


def _outcomes_differ(old: tuple[str, str | None], new: tuple[str, str | None]) -> bool:
    """Returned versus raised always differs; a value that was not recorded (budget, ``--no-values``) is unknown."""
    if old[0] != new[0]:
        return True
    return old[1] is not None and new[1] is not None and old[1] != new[1]


class Digests:
    """Digest of a call's whole subtree, computed iteratively (deep recursion is common in traces)."""

    def __init__(self, code_lines: CodeLines) -> None:
        self.code_lines = code_lines
        self._memo: dict[int, bytes] = {}

    def __call__(self, root: Call) -> bytes:
        stack: list[tuple[Call, bool]] = [(root, False)]
        while stack:
            call, expanded = stack.pop()
            if id(call) in self._memo:
                continue
            if not expanded:
                stack.append((call, True))
                stack.extend((child, False) for _, child in call.children if id(child) not in self._memo)
                continue
            digest = hashlib.blake2b(digest_size=16)
            digest.update(call.function.ident.encode())
            if call.lines_complete:
                digest.update(encode(self.code_lines.positions(call)).encode("utf-8", "surrogatepass"))
            else:
                digest.update(b"\x00lines not recorded")
            digest.update(repr([_value_text(v) for v in call.params]).encode())
            digest.update(repr(_outcome(call)).encode())
            for position, child in call.children:
                digest.update(position.to_bytes(4, "little", signed=False) if position >= 0 else b"-")
                digest.update(self._memo[id(child)])
            self._memo[id(call)] = digest.digest()
        return self._memo[id(root)]


def _compare_pair(old: Call, new: Call, old_positions: list[int], new_positions: list[int], chain: tuple[str, ...], path: tuple[int, ...], with_sections: bool) -> tuple[CallDivergence, list[tuple[int, int]]]:
    divergence = CallDivergence(new.function.ident, chain, path)
    old_lines, new_lines = encode(old_positions), encode(new_positions)
    if old_lines != new_lines:
        difference = compare_sequences(old_lines, new_lines, with_sections)
        divergence.distance = difference.distance
        divergence.sections = len(difference.sections)
        divergence.coverage = coverage_difference(old_positions, new_positions)
        divergence.details["sections"] = [[s.old_start, s.old_end, s.new_start, s.new_end] for s in difference.sections[:20]]
    names = old.function.params or new.function.params
    old_params, new_params = [_value_text(v) for v in old.params], [_value_text(v) for v in new.params]
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
    if _outcomes_differ(_outcome(old), _outcome(new)):
        divergence.returns = 1
        divergence.details["return"] = {"old": list(_outcome(old)), "new": list(_outcome(new))}
    alignment = align([c.function.ident for _, c in old.children], [c.function.ident for _, c in new.children])
    if alignment.missing or alignment.additional:
        divergence.calls = len(alignment.missing) + len(alignment.additional)
        divergence.details["missingCalls"] = [old.children[i][1].function.ident for i in alignment.missing][:50]
        divergence.details["additionalCalls"] = [new.children[i][1].function.ident for i in alignment.additional][:50]
    return divergence, alignment.pairs


def compare_calls(old: Call, new: Call, digests_old: Digests, digests_new: Digests, with_sections: bool = True) -> Iterator[CallDivergence]:
    """Every divergence between two matched call trees, parents before children."""
    stack: list[tuple[Call, Call, tuple[str, ...], tuple[int, ...]]] = [(old, new, (), ())]
    while stack:
        old_call, new_call, chain, path = stack.pop()
        if digests_old(old_call) == digests_new(new_call):
            continue
        if old_call.lines_complete and new_call.lines_complete:
            positions = digests_old.code_lines.positions(old_call), digests_new.code_lines.positions(new_call)
        else:  # beyond a line budget on either side: the lines are unknown, not different
            positions = [], []
        divergence, pairs = _compare_pair(old_call, new_call, *positions, chain, path, with_sections)
        if divergence.kinds:
            yield divergence
        below = (*chain, new_call.function.ident)
        for old_index, new_index in reversed(pairs):
            stack.append((old_call.children[old_index][1], new_call.children[new_index][1], below, (*path, new_index)))
