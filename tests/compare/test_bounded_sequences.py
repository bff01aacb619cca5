"""Bounded comparison of long line paths: exact below the cutoff, a marked lower bound above it, fast on millions of events.

Times are this process's CPU time, so that other tests running beside it on the machine do not count.
"""

from __future__ import annotations

import random
import time

import Levenshtein
import pytest

from histeg.compare.myers import common_prefix, common_suffix, equal_blocks, gaps
from histeg.compare.sequences import (
    CUTOFF,
    Section,
    compare_sequences,
    coverage_difference,
    encode,
)


def _lcs(a: str, b: str) -> int:
    """Longest common subsequence by the textbook table: the reference a shortest insert/delete script is held to."""
    row = [0] * (len(b) + 1)
    for char in a:
        previous = 0
        for j, other in enumerate(b, 1):
            previous, row[j] = row[j], previous + 1 if char == other else max(row[j], row[j - 1])
    return row[-1]


def _random_pair(rng: random.Random, length: int, edits: int, alphabet: int = 4) -> tuple[list[int], list[int]]:
    old = [rng.randrange(alphabet) for _ in range(length)]
    new = list(old)
    for _ in range(edits):
        position = rng.randrange(len(new) + 1)
        match rng.randrange(3):
            case 0 if position < len(new):
                new[position] = rng.randrange(alphabet)
            case 1 if position < len(new):
                del new[position]
            case _:
                new.insert(position, rng.randrange(alphabet))
    return old, new


def _loop_path(length: int, rng: random.Random) -> list[int]:
    """A path like a lexer's: a loop body whose branches depend on the data."""
    path = [0, 1]
    while len(path) < length:
        path.extend((2, 3, 4) if rng.random() < 0.8 else (2, 5, 6, 7))
    return path[:length]


@pytest.mark.parametrize("seed", range(60))
def test_common_ends_match_a_plain_scan(seed: int) -> None:
    rng = random.Random(seed)
    old, new = _random_pair(rng, rng.randrange(0, 200), rng.randrange(0, 4), alphabet=2)
    a, b = encode(old), encode(new)
    prefix = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    assert common_prefix(a, b) == prefix
    suffix = next((i for i, (x, y) in enumerate(zip(reversed(a[prefix:]), reversed(b[prefix:]), strict=False)) if x != y),
                  min(len(a), len(b)) - prefix)
    assert common_suffix(a, b, prefix) == suffix


@pytest.mark.parametrize("seed", range(80))
def test_shortest_script_is_as_short_as_the_exact_one_and_its_sections_are_real(seed: int) -> None:
    rng = random.Random(seed)
    old, new = _random_pair(rng, rng.randrange(0, 60), rng.randrange(0, 12))
    a, b = encode(old), encode(new)
    blocks = equal_blocks(a, b, len(a) + len(b))
    assert blocks is not None
    assert sum(size for _, _, size in blocks) == _lcs(a, b)
    for i, j, size in blocks:
        assert a[i : i + size] == b[j : j + size]
    stretches = gaps(blocks, len(a), len(b))
    assert sum(i1 - i0 for i0, i1, _, _ in stretches) + sum(size for _, _, size in blocks) == len(a)
    assert sum(j1 - j0 for _, _, j0, j1 in stretches) + sum(size for _, _, size in blocks) == len(b)
    indel = len(a) + len(b) - 2 * _lcs(a, b)
    assert equal_blocks(a, b, indel) is not None
    if indel:
        assert equal_blocks(a, b, indel - 1) is None


@pytest.mark.parametrize("seed", range(80))
def test_bounded_comparison_is_exact_within_the_cutoff_and_a_lower_bound_beyond(seed: int) -> None:
    rng = random.Random(seed)
    old, new = _random_pair(rng, rng.randrange(1, 80), rng.randrange(1, 25))
    a, b = encode(old), encode(new)
    exact = Levenshtein.distance(a, b)
    for cutoff in (1, 3, 8, 200):
        bounded = compare_sequences(a, b, cutoff=cutoff, exact_cells=0)
        assert bounded.capped == (exact > cutoff)
        assert bounded.distance == min(exact, cutoff)
        assert bounded.coverage == coverage_difference(old, new)
        assert (bounded.sections == ()) == (a == b)
        for section in bounded.sections:
            assert 0 <= section.old_start <= section.old_end <= len(a) and 0 <= section.new_start <= section.new_end <= len(b)


@pytest.mark.parametrize("seed", range(40))
def test_short_sequences_are_compared_exactly_as_before(seed: int) -> None:
    """Below ``EXACT_CELLS`` nothing changes: python-Levenshtein's distance and opcodes on the whole sequences."""
    rng = random.Random(seed)
    common = [rng.randrange(5) for _ in range(rng.randrange(0, 300))]
    old, new = _random_pair(rng, rng.randrange(0, 40), rng.randrange(0, 10))
    old, new = common + old + common, common + new + common
    a, b = encode(old), encode(new)
    result = compare_sequences(a, b)
    assert result.distance == Levenshtein.distance(a, b) and not result.capped
    sections, last = [], None
    for tag, a0, a1, b0, b1 in Levenshtein.opcodes(a, b):
        if tag == "equal":
            last = None
        elif last is not None:
            sections[-1] = Section(sections[-1].old_start, a1, sections[-1].new_start, b1)
        else:
            sections.append(Section(a0, a1, b0, b1))
            last = tag
    assert list(result.sections) == sections


def test_millions_of_events_that_differ_in_a_few_places_are_compared_in_well_under_two_seconds() -> None:
    rng = random.Random(7)
    old = _loop_path(3_000_000, rng)
    new = list(old)
    new[1_000_000:1_000_003] = [2, 5, 6, 7]  # another branch, one iteration
    del new[2_000_000:2_000_003]  # one iteration fewer
    new[2_900_000] = 9  # a line never run before
    a, b = encode(old), encode(new)
    started = time.process_time()
    result = compare_sequences(a, b)
    elapsed = time.process_time() - started
    assert elapsed < 2.0, elapsed
    assert not result.capped
    assert result.distance == Levenshtein.distance(a, b, score_cutoff=100)
    assert len(result.sections) == 3
    for section, place in zip(result.sections, (1_000_000, 2_000_000, 2_900_000), strict=True):
        assert abs(section.old_start - place) <= 4 and section.old_end - section.old_start <= 4


def test_paths_that_differ_everywhere_are_capped_in_bounded_time() -> None:
    rng = random.Random(3)
    old = _loop_path(2_000_000, rng)
    new = [position if position != 3 else 8 for position in old]  # one line of the loop body moved: every iteration differs
    a, b = encode(old), encode(new)
    started = time.process_time()
    result = compare_sequences(a, b)
    assert time.process_time() - started < 2.0
    assert result.capped and result.distance == CUTOFF
    assert len(result.sections) == 1


def test_far_apart_paths_with_equal_counts_are_capped_in_bounded_time() -> None:
    """Counts alone cannot tell: the same iterations in another order. The script search gives up at twice the cutoff."""
    rng = random.Random(5)
    old = _loop_path(300_000, rng)
    new = list(reversed(old))
    a, b = encode(old), encode(new)
    started = time.process_time()
    result = compare_sequences(a, b)
    assert time.process_time() - started < 10.0
    assert result.capped and result.distance == CUTOFF
