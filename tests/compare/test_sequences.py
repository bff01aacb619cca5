"""Edit distance, divergent sections, coverage differences and child alignment."""

from __future__ import annotations

import random

import pytest

from histeg.compare.alignment import align
from histeg.compare.sequences import Section, compare_sequences, coverage_difference, encode


def diff(old: list[int], new: list[int]):
    return compare_sequences(encode(old), encode(new))


def test_identical_sequences() -> None:
    result = diff([0, 1, 2, 1, 2, 5], [0, 1, 2, 1, 2, 5])
    assert result.identical and result.sections == ()


def test_other_branch_is_one_section() -> None:
    # if/else: lines 0,1,2,5 versus 0,1,3,4,5
    result = diff([0, 1, 2, 5], [0, 1, 3, 4, 5])
    assert result.distance == 2
    assert result.sections == (Section(2, 3, 2, 4),)


def test_extra_loop_iteration_and_changed_tail_are_two_sections() -> None:
    old = [0, 1, 2, 1, 2, 1, 6, 7]
    new = [0, 1, 2, 1, 2, 1, 2, 1, 6, 8]
    result = diff(old, new)
    assert result.distance == 3
    assert len(result.sections) == 2


def test_distance_only_skips_sections() -> None:
    result = compare_sequences(encode([0, 1]), encode([0, 2]), with_sections=False)
    assert result.distance == 1 and result.sections == ()


def test_encoding_is_injective_across_sequences() -> None:
    big = [0, 60000, -3, 60000, 131071]
    assert len(encode(big)) == 5
    assert compare_sequences(encode(big), encode(big)).identical
    assert compare_sequences(encode([65537, 65538]), encode([65537, 65539])).distance == 1
    values = list(range(-2000, 140000, 7))
    assert len(set(encode(values))) == len(values)


@pytest.mark.parametrize("seed", range(20))
def test_distance_is_symmetric_and_bounded(seed: int) -> None:
    rng = random.Random(seed)
    old = [rng.randrange(8) for _ in range(rng.randrange(30))]
    new = [rng.randrange(8) for _ in range(rng.randrange(30))]
    forward, backward = diff(old, new), diff(new, old)
    assert forward.distance == backward.distance <= max(len(old), len(new))
    assert (forward.distance == 0) == (old == new)
    assert len(forward.sections) <= forward.distance


def test_coverage_difference_counts_per_line() -> None:
    assert coverage_difference([0, 1, 1, 1, 4], [0, 1, 3, 4]) == 3
    assert coverage_difference([0, 1], [0, 1]) == 0


def test_alignment_survives_an_inserted_call() -> None:
    result = align(["a", "b", "c"], ["a", "x", "b", "c"])
    assert result.pairs == [(0, 0), (1, 2), (2, 3)]
    assert result.additional == [1] and result.missing == []


def test_alignment_of_a_replaced_call() -> None:
    result = align(["a", "b"], ["a", "z"])
    assert result.pairs == [(0, 0)] and result.missing == [1] and result.additional == [1]
