"""Pairing the child calls of two matched calls, by edit distance over callee names.

Aligning by name sequence rather than by position keeps the comparison going
after an inserted or removed call: the calls before and after it still pair.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

import Levenshtein

from histeg.compare.sequences import encode_symbols


@dataclass
class Alignment:
    pairs: list[tuple[int, int]] = field(default_factory=list)
    """(old index, new index) of children that correspond."""
    missing: list[int] = field(default_factory=list)
    """Old children with no counterpart (calls the new version no longer makes)."""
    additional: list[int] = field(default_factory=list)
    """New children with no counterpart."""


def align(old_names: Sequence[str], new_names: Sequence[str]) -> Alignment:
    """Align two sequences of callee identifiers; a replaced call is one missing plus one additional."""
    result = Alignment()
    if list(old_names) == list(new_names):
        result.pairs = [(i, i) for i in range(len(old_names))]
        return result
    codebook: dict[Hashable, str] = {}
    old = encode_symbols(old_names, codebook)
    new = encode_symbols(new_names, codebook)
    for tag, a0, a1, b0, b1 in Levenshtein.opcodes(old, new):
        if tag == "equal":
            result.pairs.extend(zip(range(a0, a1), range(b0, b1), strict=True))
        else:
            result.missing.extend(range(a0, a1))
            result.additional.extend(range(b0, b1))
    return result
