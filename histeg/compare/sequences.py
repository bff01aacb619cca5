"""Edit distance between two executions of one function (thesis section 4.5.2).

A call's behaviour is its sequence of line offsets. Sequences are encoded as
strings, one character per offset, because python-Levenshtein is an order of
magnitude faster on ``str`` than on lists. The edit operations give the
divergent sections: maximal runs of consecutive non-matching operations.

Exact edit distances cost time proportional to the product of the lengths,
and one call of a token generator can run millions of lines. Past a size
(``EXACT_CELLS``) the two paths are compared within bounds instead: their
common beginning and end set aside, sections come from a shortest
insert/delete script (``histeg.compare.myers``) and the distance is worked
out up to ``CUTOFF``; a larger one is reported as the cutoff, marked capped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import Levenshtein

from histeg.compare.myers import common_prefix, common_suffix, equal_blocks, gaps

_BASE = 0x100
_SURROGATES = 0xD800
_SURROGATE_SPAN = 0x800


def _char(number: int) -> str:
    """An injective map of non-negative numbers to characters, skipping the surrogate range."""
    point = _BASE + number
    return chr(point if point < _SURROGATES else point + _SURROGATE_SPAN)


_SMALL = [_char(2 * value) for value in range(4096)]
"""Characters of the values below 4096 (line positions almost always are), looked up in C by ``map``."""


def encode(values: Sequence[int]) -> str:
    """One character per value, the same character for the same value in every sequence.

    Values are zigzag-mapped (0, -1, 1, -2, ... to 0, 1, 2, 3, ...) so that
    negative offsets encode too; up to about half a million distinct values fit.
    """
    try:
        return "".join(map(_SMALL.__getitem__, values)) if min(values, default=0) >= 0 else _encode(values)
    except IndexError:
        return _encode(values)


def _encode(values: Sequence[int]) -> str:
    return "".join([_char(2 * value if value >= 0 else -2 * value - 1) for value in values])


def encode_symbols(values: Sequence[Hashable], codebook: dict[Hashable, str]) -> str:
    """Encode arbitrary hashable symbols with a shared codebook (for pairs of sequences)."""
    out = []
    for value in values:
        char = codebook.get(value)
        if char is None:
            char = codebook[value] = _char(len(codebook))
        out.append(char)
    return "".join(out)


@dataclass(frozen=True)
class Section:
    """A divergent stretch: ``old[old_start:old_end]`` became ``new[new_start:new_end]``."""

    old_start: int
    old_end: int
    new_start: int
    new_end: int


CUTOFF = 500
"""Edit operations beyond which the distance of two long line paths is not worked out: it is reported as
the cutoff and marked ``capped`` (a lower bound). A distance this large already outweighs many divergent
sections in the ranking; what it is exactly changes nothing a reader acts on, and finding it costs time
proportional to the paths' lengths times the distance."""
EXACT_CELLS = 10**8
"""Below this product of the lengths of the two paths' differing middles (after their common beginning and
end) everything is exact, as python-Levenshtein computes it: a few tens of milliseconds at most."""


@dataclass(frozen=True)
class SequenceDifference:
    distance: int
    sections: tuple[Section, ...]
    coverage: int = 0
    """Sum over lines of the difference in execution counts."""
    capped: bool = False
    """The distance is at least ``distance``, not exactly it; sections may join several stretches into one."""

    @property
    def identical(self) -> bool:
        return self.distance == 0


def compare_sequences(
    old: str, new: str, with_sections: bool = True, cutoff: int = CUTOFF, exact_cells: int = EXACT_CELLS
) -> SequenceDifference:
    """Levenshtein distance of two encoded sequences, their coverage difference and, optionally, their divergent
    sections; bounded work on long ones (``EXACT_CELLS``, ``CUTOFF``)."""
    if old == new:
        return SequenceDifference(0, ())
    start = common_prefix(old, new)
    end = common_suffix(old, new, start)
    a, b = old[start : len(old) - end], new[start : len(new) - end]
    counts_a, counts_b = Counter(a), Counter(b)
    coverage = sum(abs(counts_a[char] - counts_b[char]) for char in counts_a.keys() | counts_b.keys())
    if len(a) * len(b) <= exact_cells:
        distance = Levenshtein.distance(old, new)
        if not with_sections:
            return SequenceDifference(distance, (), coverage)
        sections = tuple(
            Section(old_start, old_end, new_start, new_end)
            for tag, old_start, old_end, new_start, new_end in _merged_opcodes(old, new)
            if tag != "equal"
        )
        return SequenceDifference(distance, sections, coverage)
    return _bounded(a, b, start, coverage, _count_bound(counts_a, counts_b), with_sections, cutoff)


def _count_bound(counts_a: Counter[str], counts_b: Counter[str]) -> int:
    """A lower bound of the edit distance from counts alone: a substitution mends one surplus and one
    shortage, an insertion or deletion one of either."""
    surplus = sum((counts_a - counts_b).values())
    shortage = sum((counts_b - counts_a).values())
    return max(surplus, shortage)


def _bounded(a: str, b: str, start: int, coverage: int, lower: int, with_sections: bool, cutoff: int) -> SequenceDifference:
    """Two long differing middles: a shortest insert/delete script within twice the cutoff (it exists whenever
    the edit distance is within the cutoff) gives the sections and an upper bound, python-Levenshtein the
    distance within that bound. Past the cutoff the distance is the cutoff and the middle one section when
    no script was found."""
    whole = (Section(start, start + len(a), start, start + len(b)),)
    if lower > cutoff:
        return SequenceDifference(cutoff, whole if with_sections else (), coverage, capped=True)
    blocks = equal_blocks(a, b, 2 * cutoff)
    if blocks is None:
        return SequenceDifference(cutoff, whole if with_sections else (), coverage, capped=True)
    upper = len(a) + len(b) - 2 * sum(size for _, _, size in blocks)
    distance = Levenshtein.distance(a, b, score_cutoff=min(upper, cutoff))
    sections = tuple(Section(start + i0, start + i1, start + j0, start + j1) for i0, i1, j0, j1 in gaps(blocks, len(a), len(b)))
    capped = distance > cutoff
    return SequenceDifference(cutoff if capped else distance, sections if with_sections else (), coverage, capped)


def _merged_opcodes(old: str, new: str) -> list[tuple[str, int, int, int, int]]:
    """Opcodes with adjacent non-equal blocks joined into one section."""
    merged: list[tuple[str, int, int, int, int]] = []
    for tag, a0, a1, b0, b1 in Levenshtein.opcodes(old, new):
        if tag != "equal" and merged and merged[-1][0] != "equal":
            _, p0, _, q0, _ = merged[-1]
            merged[-1] = ("diverge", p0, a1, q0, b1)
        else:
            merged.append((tag if tag == "equal" else "diverge", a0, a1, b0, b1))
    return merged


def coverage_difference(old: Sequence[int], new: Sequence[int]) -> int:
    """Sum over lines of the difference in execution counts (the thesis' coverage metric)."""
    old_counts, new_counts = Counter(old), Counter(new)
    return sum(abs(old_counts[line] - new_counts[line]) for line in old_counts.keys() | new_counts.keys())
