"""Comparing two matched call trees (thesis section 4.5.2).

For each pair of corresponding calls: edit distance and divergent sections of
their line sequences, per-line execution-count differences, differing
parameters and return value or exception, and missing or additional child
calls; then the same for every pair of aligned children. Identical subtrees
are recognised by the digests the decoder computed and skipped.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from histeg.compare.alignment import align
from histeg.compare.sequences import compare_sequences, encode
from histeg.records.divergences import Kind, Metrics
from histeg.traces.events import END_RAISED, END_RUNNING, Columns
from histeg.traces.records import Definitions

KINDS: tuple[Kind, ...] = ("lines", "parameters", "return", "calls")


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
    receiver: str | None = None
    """The type (``pkg.mod.Cls``) of the instance or class the call ran for in the new version, when its first
    parameter is ``self`` or ``cls``: which subclass's overriding values a base method's ``self.NAME`` read."""
    capped: bool = False
    """The lines' distance is at least ``distance`` (``histeg.compare.sequences.CUTOFF``), not exactly it."""

    @property
    def kinds(self) -> list[Kind]:
        values = {"lines": self.distance, "parameters": self.parameters, "return": self.returns, "calls": self.calls}
        return [kind for kind in KINDS if values[kind]]

    def without(self, kinds: AbstractSet[str]) -> CallDivergence:
        """The same divergence with the given kinds set aside (they are noise for this function)."""
        kept = CallDivergence(
            self.function,
            self.chain,
            self.path,
            self.distance,
            self.sections,
            self.coverage,
            self.parameters,
            self.returns,
            self.calls,
            dict(self.details),
            self.receiver,
            self.capped,
        )
        if "lines" in kinds:
            kept.distance = kept.sections = kept.coverage = 0
            kept.capped = False
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
        return {
            "distance": self.distance,
            "sections": self.sections,
            "coverage": self.coverage,
            "parameters": self.parameters,
            "returns": self.returns,
            "calls": self.calls,
        }

    def metrics_record(self) -> Metrics:
        """Its metrics as the divergence files write them: ``capped`` says the distance is a lower bound."""
        return Metrics(**self.metrics(), capped=self.capped)


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

    def receiver(self, call: int) -> str | None:
        """The type of ``self`` (or the class that is ``cls``) of a method call, as recorded."""
        names = self.params_names(call)
        c = self.columns
        start = c.param_start[call]
        if not names or names[0] not in ("self", "cls") or start >= c.param_start[call + 1]:
            return None
        value = self.definitions.value(c.params[start])
        if value is None:
            return None
        return value.repr if names[0] == "cls" and value.repr else value.type

    def outcome(self, call: int) -> tuple[str, str | None]:
        """Returned versus raised, with the value's text (a call that never ended returned nothing known)."""
        end = self.columns.end[call]
        value = self.definitions.value_text(self.columns.result[call]) if end != END_RUNNING else None
        return ("raised" if end == END_RAISED else "returned"), value

    def children(self, call: int) -> list[int]:
        c = self.columns
        return c.children[c.child_start[call] : c.child_start[call + 1]].tolist()

    def digest(self, call: int) -> bytes:
        return self.columns.digests[16 * call : 16 * call + 16]

    def buffers(self) -> tuple[Any, ...]:
        """What ``_decode.walk`` reads."""
        c = self.columns
        return c.digests, c.own_digests, c.line_digests, c.complete, c.child_start, c.children

    def quietly_alike(self, call: int, other: Tree, other_call: int) -> bool:
        """Whether the two calls themselves show no divergence and their children pair one to one
        (same functions in the same order), from digests alone: most calls on the way down to the one
        that changed are such, and are passed through without decoding their values."""
        a, b = 16 * call, 16 * other_call
        if self.columns.own_digests[a : a + 16] != other.columns.own_digests[b : b + 16]:
            return False
        both_complete = self.columns.complete[call] and other.columns.complete[other_call]
        return not both_complete or self.columns.line_digests[a : a + 16] == other.columns.line_digests[b : b + 16]


def _outcomes_differ(old: tuple[str, str | None], new: tuple[str, str | None]) -> bool:
    """Returned versus raised always differs; a value that was not recorded (budget, ``--no-values``) is unknown."""
    if old[0] != new[0]:
        return True
    return old[1] is not None and new[1] is not None and old[1] != new[1]


def _compare_pair(
    old: Tree, new: Tree, o: int, n: int, chain: tuple[str, ...], path: tuple[int, ...], with_sections: bool
) -> tuple[CallDivergence, list[int], list[int], list[tuple[int, int]]]:
    """The divergence of one pair of calls, their children and the pairs of aligned children."""
    divergence = CallDivergence(new.ident(n), chain, path)
    if old.complete(o) and new.complete(n):  # beyond a line budget on either side the lines are unknown, not different
        old_positions, new_positions = old.positions(o), new.positions(n)
        old_lines, new_lines = encode(old_positions), encode(new_positions)
        if old_lines != new_lines:
            difference = compare_sequences(old_lines, new_lines, with_sections)
            divergence.distance = difference.distance
            divergence.sections = len(difference.sections)
            divergence.coverage = difference.coverage
            divergence.capped = difference.capped
            divergence.details["sections"] = [[s.old_start, s.old_end, s.new_start, s.new_end] for s in difference.sections[:20]]
    names = old.params_names(o) or new.params_names(n)
    divergence.receiver = new.receiver(n)
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


def _walk_python(old: Tree, new: Tree, pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The pairs of calls below each of ``pairs``, itself included, that need a comparison of their own,
    depth first: equal subtrees are skipped and quietly alike calls passed through (``_decode.walk`` in C)."""
    found = []
    stack = list(reversed(pairs))
    while stack:
        o, n = stack.pop()
        if old.digest(o) == new.digest(n):
            continue
        if not old.quietly_alike(o, new, n):
            found.append((o, n))
            continue
        children = zip(old.children(o), new.children(n), strict=True)
        stack.extend(pair for pair in reversed(list(children)) if old.digest(pair[0]) != new.digest(pair[1]))
    return found


Walk = Callable[[Tree, Tree, list[tuple[int, int]]], list[tuple[int, int]]]


def _walker() -> Walk:
    from histeg.traces import seal

    if not seal.native():
        return _walk_python
    walk = seal._decode.walk

    def walk_in_c(old: Tree, new: Tree, pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
        return walk(old.buffers(), new.buffers(), pairs)

    return walk_in_c


class _Places:
    """Call chains and child paths of the new tree's calls, from the parent links, remembered on the way down."""

    def __init__(self, tree: Tree) -> None:
        self.tree = tree
        self.known: dict[int, tuple[tuple[str, ...], tuple[int, ...]]] = {0: ((), ())}

    def __call__(self, call: int) -> tuple[tuple[str, ...], tuple[int, ...]]:
        climbed = []
        current = call
        columns = self.tree.columns
        while current not in self.known:
            parent = columns.parent[current]
            first = columns.child_start[parent]  # children are numbered in the order they started: sorted
            climbed.append((parent, bisect.bisect_left(columns.children, current, first, columns.child_start[parent + 1]) - first))
            current = parent
        chain, path = self.known[current]
        for parent, position in reversed(climbed):
            chain, path = (*chain, self.tree.ident(parent)), (*path, position)
        self.known[call] = (chain, path)
        return chain, path


def compare_calls(old: Tree, new: Tree, with_sections: bool = True) -> Iterator[CallDivergence]:
    """Every divergence between two matched call trees, parents before children, depth first; identical
    subtrees are skipped and calls that show no divergence of their own are passed through by digests."""
    walk = _walker()
    places = _Places(new)
    pending: list[Iterator[tuple[int, int]]] = [iter(walk(old, new, [(0, 0)]))]
    while pending:
        step = next(pending[-1], None)
        if step is None:
            pending.pop()
            continue
        o, n = step
        chain, path = places(n)
        divergence, old_children, new_children, pairs = _compare_pair(old, new, o, n, chain, path, with_sections)
        if divergence.kinds:
            yield divergence
        pending.append(iter(walk(old, new, [(old_children[a], new_children[b]) for a, b in pairs])))
