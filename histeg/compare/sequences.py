"""Edit distance between two executions of one function (thesis section 4.5.2).

A call's behaviour is its sequence of line offsets. Sequences are encoded as
strings, one character per offset, because python-Levenshtein is an order of
magnitude faster on ``str`` than on lists. The edit operations give the
divergent sections: maximal runs of consecutive non-matching operations.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import Levenshtein

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


@dataclass(frozen=True)
class SequenceDifference:
    distance: int
    sections: tuple[Section, ...]

    @property
    def identical(self) -> bool:
        return self.distance == 0


def compare_sequences(old: str, new: str, with_sections: bool = True) -> SequenceDifference:
    """Levenshtein distance of two encoded sequences and, optionally, their divergent sections."""
    if old == new:
        return SequenceDifference(0, ())
    distance = Levenshtein.distance(old, new)
    if not with_sections:
        return SequenceDifference(distance, ())
    sections = tuple(
        Section(old_start, old_end, new_start, new_end)
        for tag, old_start, old_end, new_start, new_end in _merged_opcodes(old, new)
        if tag != "equal"
    )
    return SequenceDifference(distance, sections)


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
