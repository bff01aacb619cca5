"""Bounded diffs of long strings: common ends, and Myers' O(ND) shortest insert/delete script.

An exact Levenshtein alignment costs time proportional to the product of the
lengths, which for two line paths of millions of events never ends. Myers'
greedy algorithm costs O((N + M) D) for D insertions and deletions and is
given up past a limit, so a pair of long paths that differ in a few places
is diffed in milliseconds and one that differs everywhere costs a bounded
amount. Runs of equal characters are measured by comparing slices (memcmp in
C) of doubling length, not one character at a time in Python.
"""

from __future__ import annotations

from collections.abc import Sequence

_FIRST_STEP = 8


def common_prefix(a: str, b: str, i: int = 0, j: int = 0) -> int:
    """Length of the common prefix of ``a[i:]`` and ``b[j:]``."""
    n = min(len(a) - i, len(b) - j)
    if n <= 0 or a[i] != b[j]:
        return 0
    done, step = 1, _FIRST_STEP
    while done < n:
        end = min(done + step, n)
        if a[i + done : i + end] != b[j + done : j + end]:
            return done + _prefix_within(a, b, i + done, j + done, end - done)
        done, step = end, 2 * step
    return n


def _prefix_within(a: str, b: str, i: int, j: int, n: int) -> int:
    """Length of the common prefix of ``a[i:i+n]`` and ``b[j:j+n]``, known to differ somewhere: bisection."""
    low, high = 0, n  # a[i:i+low] == b[j:j+low]; the first difference lies before high
    while high - low > 1:
        middle = (low + high) // 2
        if a[i + low : i + middle] == b[j + low : j + middle]:
            low = middle
        else:
            high = middle
    return low


def common_suffix(a: str, b: str, keep: int = 0) -> int:
    """Length of the common suffix of ``a[keep:]`` and ``b[keep:]`` (the first ``keep`` characters are a known prefix)."""
    n = min(len(a), len(b)) - keep
    if n <= 0 or a[-1] != b[-1]:
        return 0
    done, step = 1, _FIRST_STEP
    while done < n:
        end = min(done + step, n)
        if a[len(a) - end : len(a) - done] != b[len(b) - end : len(b) - done]:
            low, high = done, end  # a's last ``low`` equal b's; they differ within the last ``high``
            while high - low > 1:
                middle = (low + high) // 2
                if a[len(a) - middle : len(a) - low] == b[len(b) - middle : len(b) - low]:
                    low = middle
                else:
                    high = middle
            return low
        done, step = end, 2 * step
    return n


Block = tuple[int, int, int]
"""An equal run: ``a[i:i+size] == b[j:j+size]`` as (i, j, size)."""


def equal_blocks(a: str, b: str, limit: int) -> list[Block] | None:
    """The equal runs of a shortest insert/delete script turning ``a`` into ``b``, in order and adjacent ones
    joined; None when more than ``limit`` insertions and deletions are needed (work O((N + M) limit))."""
    n, m = len(a), len(b)
    offset = limit + 1
    v = [0] * (2 * limit + 3)  # v[offset + k]: furthest x reached on diagonal k = x - y
    history: list[list[int]] = []  # v[offset - d - 1 : offset + d + 2] at the start of each round d
    for d in range(limit + 1):
        history.append(v[offset - d - 1 : offset + d + 2])
        for k in range(-d, d + 1, 2):
            # down (insert b[y]) or right (delete a[x - 1])
            x = v[offset + k + 1] if k == -d or (k != d and v[offset + k - 1] < v[offset + k + 1]) else v[offset + k - 1] + 1
            x += common_prefix(a, b, x, x - k)
            v[offset + k] = x
            if x >= n and x - k >= m:
                return _backtrack(history, n, m)
    return None


def _backtrack(history: list[list[int]], n: int, m: int) -> list[Block]:
    blocks: list[Block] = []
    x, y = n, m
    for d in range(len(history) - 1, -1, -1):
        if d == 0:
            if x:
                blocks.append((0, 0, x))
            break
        v = history[d]  # index k + d + 1
        k = x - y
        down = k == -d or (k != d and v[k - 1 + d + 1] < v[k + 1 + d + 1])
        previous_k = k + 1 if down else k - 1
        previous_x = v[previous_k + d + 1]
        previous_y = previous_x - previous_k
        start_x, start_y = (previous_x, previous_y + 1) if down else (previous_x + 1, previous_y)
        if x > start_x:
            blocks.append((start_x, start_y, x - start_x))
        x, y = previous_x, previous_y
    blocks.reverse()
    joined: list[Block] = []
    for i, j, size in blocks:
        if joined and joined[-1][0] + joined[-1][2] == i and joined[-1][1] + joined[-1][2] == j:
            joined[-1] = (joined[-1][0], joined[-1][1], joined[-1][2] + size)
        else:
            joined.append((i, j, size))
    return joined


def gaps(blocks: Sequence[Block], n: int, m: int) -> list[tuple[int, int, int, int]]:
    """The stretches between equal runs (old start, old end, new start, new end): the divergent sections."""
    found = []
    i = j = 0
    for start_i, start_j, size in (*blocks, (n, m, 0)):
        if start_i > i or start_j > j:
            found.append((i, start_i, j, start_j))
        i, j = start_i + size, start_j + size
    return found
