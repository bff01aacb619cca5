"""GumTree matching (Falleri et al., ASE 2014) between two histeg trees.

Three phases, each adding to one mapping store:

1. *top-down*: the largest isomorphic subtrees are mapped greedily, tallest
   first; a subtree isomorphic to several candidates is resolved by the dice
   similarity of the candidates' parents, then by closeness of position;
2. *bottom-up*: an unmapped container is mapped to the container of the same
   type that shares the most mapped descendants (dice ≥ ``min_dice``); a
   ``block`` is not compared on its own but follows the statement owning it
   (else an ``else`` body can be taken for the loop body around it), and a
   named definition below the threshold is still mapped to the one candidate
   of the same name (a class that gained a large method stays that class);
3. *recovery*, for every container pair of phase 2 (and the roots): an
   optimal tree edit distance (Zhang–Shasha) when both subtrees are small,
   else GumTree's "simple" recovery (Falleri & Martinez, ICSE 2024):
   longest common subsequences of the unmapped children by equality, then by
   shape, then children whose type is unique on both sides.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from histeg.syntax.mapping import MappingStore
from histeg.syntax.tree import Node, Tree
from histeg.syntax.zhang_shasha import ZhangShasha

OWNED = frozenset({"block"})
"""Containers without identity of their own: mapped only as the body of partner statements."""


@dataclass(frozen=True)
class MatcherOptions:
    """GumTree's parameters.

    ``min_height`` 2: a single leaf (a name, a number) is too ambiguous to be
    mapped on its own; it is mapped later through its context. This is the
    value of the 2014 paper and in the 1–2 range the later hyperparameter
    study found robust. ``min_dice`` 0.5: GumTree's default, at least half of
    the descendants in common. ``max_size`` 100: the 2014 paper's bound for
    the optimal recovery; GumTree's Java implementation now allows 1000, but
    the quadratic algorithm in Python costs about a second at that size, and
    the simple recovery covers larger containers.
    """

    min_height: int = 2
    min_dice: float = 0.5
    max_size: int = 100
    max_ambiguous_pairs: int = 10_000
    """Above this many candidate pairs for one hash, candidates are paired in order of position."""


def match(src: Tree, dst: Tree, options: MatcherOptions | None = None) -> MappingStore:
    options = options or MatcherOptions()
    mappings = MappingStore(src, dst)
    _top_down(src, dst, mappings, options)
    _bottom_up(src, dst, mappings, options)
    return mappings


# -- phase 1 -----------------------------------------------------------------


class _HeightQueue:
    """Subtrees waiting to be compared, tallest first (GumTree's priority list)."""

    def __init__(self, root: Node, min_height: int) -> None:
        self._heap: list[tuple[int, int, Node]] = []
        self._min_height = min_height
        self.push(root)

    def push(self, node: Node) -> None:
        if node.height >= self._min_height:
            heapq.heappush(self._heap, (-node.height, node.id, node))

    def open(self, node: Node) -> None:
        for child in node.children:
            self.push(child)

    def peek_height(self) -> int:
        return -self._heap[0][0] if self._heap else 0

    def pop_tallest(self) -> list[Node]:
        height = self.peek_height()
        nodes = []
        while self._heap and -self._heap[0][0] == height:
            nodes.append(heapq.heappop(self._heap)[2])
        return nodes


def _top_down(src: Tree, dst: Tree, mappings: MappingStore, options: MatcherOptions) -> None:
    queue1 = _HeightQueue(src.root, options.min_height)
    queue2 = _HeightQueue(dst.root, options.min_height)
    ambiguous: list[tuple[Node, Node]] = []
    while True:
        height1, height2 = queue1.peek_height(), queue2.peek_height()
        if min(height1, height2) < options.min_height:
            break
        if height1 != height2:
            queue, _ = (queue1, queue2) if height1 > height2 else (queue2, queue1)
            for node in queue.pop_tallest():
                queue.open(node)
            continue
        layer1, layer2 = queue1.pop_tallest(), queue2.pop_tallest()
        by_hash1: dict[int, list[Node]] = defaultdict(list)
        by_hash2: dict[int, list[Node]] = defaultdict(list)
        for node in layer1:
            by_hash1[node.hash].append(node)
        for node in layer2:
            by_hash2[node.hash].append(node)
        for key, group1 in by_hash1.items():
            group2 = by_hash2.get(key)
            if not group2:
                continue
            if len(group1) == 1 and len(group2) == 1:
                mappings.add_isomorphic(group1[0], group2[0])
            elif len(group1) * len(group2) > options.max_ambiguous_pairs:
                for a, b in zip(
                    group1, group2, strict=False
                ):  # too many pairs to weigh: pair them in order, the longer group's rest unmapped
                    mappings.add_isomorphic(a, b)
            else:
                ambiguous.extend((a, b) for a in group1 for b in group2)
        candidates = {id(a) for a, _ in ambiguous} | {id(b) for _, b in ambiguous}
        for node in layer1:
            if not mappings.has_src(node) and id(node) not in candidates:
                queue1.open(node)
        for node in layer2:
            if not mappings.has_dst(node) and id(node) not in candidates:
                queue2.open(node)
    _resolve_ambiguous(src, dst, ambiguous, mappings)


def _resolve_ambiguous(src: Tree, dst: Tree, pairs: list[tuple[Node, Node]], mappings: MappingStore) -> None:
    if not pairs:
        return
    parent_dice: dict[tuple[int, int], float] = {}

    def key(pair: tuple[Node, Node]) -> tuple[float, float]:
        a, b = pair
        if a.parent is None or b.parent is None:
            similarity = 0.0
        else:
            parents = (a.parent.id, b.parent.id)
            similarity = parent_dice.get(parents, -1.0)
            if similarity < 0:
                similarity = parent_dice[parents] = mappings.dice(a.parent, b.parent)
        distance = abs(a.id / len(src) - b.id / len(dst))
        return (-similarity, distance)

    pairs.sort(key=key)
    for a, b in pairs:
        if not mappings.has_src(a) and not mappings.has_dst(b):
            mappings.add_isomorphic(a, b)


# -- phase 2 -----------------------------------------------------------------


def _bottom_up(src: Tree, dst: Tree, mappings: MappingStore, options: MatcherOptions) -> None:
    mapped = mappings.dst_partners()
    root = src.root
    for node in src.postorder_nodes:
        if mapped[node.id] is not None or not node.children or node is root or node.type in OWNED:
            continue
        best, best_dice = None, options.min_dice
        candidates = _candidates(src, node, mappings)
        for candidate in candidates:
            similarity = mappings.dice(node, candidate)
            if similarity >= best_dice and (best is None or similarity > best_dice):
                best, best_dice = candidate, similarity
        if best is None:
            best = _same_name(node, candidates)
        if best is not None:
            mappings.add(node, best)
            _map_owned_children(node, best, mappings)
            _recover(node, best, mappings, options)
    if not mappings.has_src(root) and not mappings.has_dst(dst.root) and root.type == dst.root.type:
        mappings.add(root, dst.root)
    if mappings.are_mapped(root, dst.root):
        _map_owned_children(root, dst.root, mappings)
        _recover(root, dst.root, mappings, options)


def _name(node: Node) -> str | None:
    for child in node.children:
        if child.field == "name":
            return child.label
    return None


def _same_name(node: Node, candidates: list[Node]) -> Node | None:
    """A definition that shares a mapped descendant and its name (``class Tool`` that gained a method)."""
    name = _name(node)
    if name is None:
        return None
    named = [candidate for candidate in candidates if _name(candidate) == name]
    return named[0] if len(named) == 1 else None


def _map_owned_children(a: Node, b: Node, mappings: MappingStore) -> None:
    """The blocks of two partner statements are partners, role by role."""
    for child in a.children:
        if child.type in OWNED and not mappings.has_src(child):
            for other in b.children:
                if other.type == child.type and other.field == child.field and not mappings.has_dst(other):
                    mappings.add(child, other)
                    break


def _candidates(src: Tree, node: Node, mappings: MappingStore) -> list[Node]:
    """Unmapped ancestors of the partners of ``node``'s descendants, of ``node``'s type."""
    seen: set[int] = set()
    found: list[Node] = []
    for descendant in src.descendants(node):
        partner = mappings.dst_of(descendant)
        if partner is None:
            continue
        ancestor = partner.parent
        while ancestor is not None and ancestor.id not in seen:
            seen.add(ancestor.id)
            if ancestor.type == node.type and not mappings.has_dst(ancestor) and ancestor.parent is not None:
                found.append(ancestor)
            ancestor = ancestor.parent
    return found


# -- phase 3 -----------------------------------------------------------------


def _recover(a: Node, b: Node, mappings: MappingStore, options: MatcherOptions) -> None:
    if not mappings.has_unmapped_descendants(a, b):
        return
    if max(a.size, b.size) <= options.max_size:
        # Pre-order, so that a parent pair is added before its children. A leaf
        # is only mapped under partner parents: the optimal script happily
        # renames ``flag`` of one statement into ``i`` of another, which is
        # cheap in edit distance but not what anybody changed. The same holds
        # for a block, which is nothing without the statement owning it.
        for x, y in sorted(ZhangShasha(a, b).mapping(), key=lambda pair: pair[0].id):
            if x is a or mappings.has_src(x) or mappings.has_dst(y):
                continue
            if (
                (x.children and x.type not in OWNED)
                or (x.parent is a and y.parent is b)
                or (x.parent is not None and mappings.dst_of(x.parent) is y.parent)
            ):
                mappings.add(x, y)
    else:
        _simple_recovery(a, b, mappings)


def _simple_recovery(a: Node, b: Node, mappings: MappingStore) -> None:
    work = [(a, b)]
    while work:
        x, y = work.pop()
        for equal in (_same_hash, _same_shape, _same_key):
            free1 = [child for child in x.children if not mappings.has_src(child)]
            free2 = [child for child in y.children if not mappings.has_dst(child)]
            if not free1 or not free2:
                break
            for c1, c2 in lcs(free1, free2, equal):
                if equal is _same_key:
                    mappings.add(c1, c2)
                    work.append((c1, c2))
                elif mappings.subtree_unmapped(c1, c2):
                    mappings.add_isomorphic(c1, c2)  # equal shape: same pre-order layout
        free1 = [child for child in x.children if not mappings.has_src(child)]
        free2 = [child for child in y.children if not mappings.has_dst(child)]
        types1 = _unique_by_type(free1)
        types2 = _unique_by_type(free2)
        for kind, only1 in types1.items():
            only2 = types2.get(kind)
            if only2 is not None:
                mappings.add(only1, only2)
                work.append((only1, only2))
        for child in x.children:
            partner = mappings.dst_of(child)
            if partner is not None and partner.parent is y and child.children and mappings.has_unmapped_descendants(child, partner):
                work.append((child, partner))


def _same_hash(a: Node, b: Node) -> bool:
    return a.hash == b.hash


def _same_shape(a: Node, b: Node) -> bool:
    return a.shape == b.shape


def _key(node: Node) -> tuple[str, str]:
    """Type and first leaf label: ``x = 1`` and ``x = f()`` share the key of statement ``x``."""
    leaf = node
    while leaf.children:
        leaf = leaf.children[0]
    return node.type, leaf.label


def _same_key(a: Node, b: Node) -> bool:
    return _key(a) == _key(b)


def _unique_by_type(nodes: Sequence[Node]) -> dict[str, Node]:
    count: dict[str, int] = defaultdict(int)
    for node in nodes:
        count[node.type] += 1
    return {node.type: node for node in nodes if count[node.type] == 1}


def lcs[A, B](seq1: Sequence[A], seq2: Sequence[B], equal: Callable[[A, B], bool]) -> list[tuple[A, B]]:
    """Longest common subsequence by dynamic programming (lists are children, short)."""
    n, m = len(seq1), len(seq2)
    if n * m > 4_000_000:  # too long for the table: pairs at equal positions only
        return [(x, y) for x, y in zip(seq1, seq2, strict=False) if equal(x, y)]
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below = table[i], table[i + 1]
        item = seq1[i]
        for j in range(m - 1, -1, -1):
            if equal(item, seq2[j]):
                row[j] = below[j + 1] + 1
            else:
                row[j] = below[j] if below[j] >= row[j + 1] else row[j + 1]  # noqa: FURB136  inlined: max() costs a call per cell
    pairs: list[tuple[A, B]] = []
    i = j = 0
    while i < n and j < m:
        if equal(seq1[i], seq2[j]):
            pairs.append((seq1[i], seq2[j]))
            i += 1
            j += 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs
