"""Mappings between the nodes of two trees (one partner per node at most)."""

from __future__ import annotations

from collections.abc import Iterator

from histeg.syntax.tree import Node, Tree


class MappingStore:
    def __init__(self, src: Tree, dst: Tree) -> None:
        self.src = src
        self.dst = dst
        self._to_dst: list[Node | None] = [None] * len(src)
        self._to_src: list[Node | None] = [None] * len(dst)

    def __len__(self) -> int:
        return sum(1 for node in self._to_dst if node is not None)

    def add(self, a: Node, b: Node) -> None:
        """Map ``a`` to ``b``, dropping any earlier partner of either."""
        old_b, old_a = self._to_dst[a.id], self._to_src[b.id]
        if old_b is not None:
            self._to_src[old_b.id] = None
        if old_a is not None:
            self._to_dst[old_a.id] = None
        self._to_dst[a.id] = b
        self._to_src[b.id] = a

    def add_isomorphic(self, a: Node, b: Node) -> None:
        """Map two isomorphic, so far unmapped subtrees node by node (same pre-order layout)."""
        size = a.size
        self._to_dst[a.id : a.id + size] = self.dst.nodes[b.id : b.id + size]
        self._to_src[b.id : b.id + size] = self.src.nodes[a.id : a.id + size]

    def dst_partners(self) -> list[Node | None]:
        """The partner of every old node, by id (read-only view)."""
        return self._to_dst

    def src_partners(self) -> list[Node | None]:
        """The partner of every new node, by id (read-only view)."""
        return self._to_src

    def dst_of(self, a: Node) -> Node | None:
        return self._to_dst[a.id]

    def src_of(self, b: Node) -> Node | None:
        return self._to_src[b.id]

    def has_src(self, a: Node) -> bool:
        return self._to_dst[a.id] is not None

    def has_dst(self, b: Node) -> bool:
        return self._to_src[b.id] is not None

    def are_mapped(self, a: Node, b: Node) -> bool:
        return self._to_dst[a.id] is b

    def pairs(self) -> Iterator[tuple[Node, Node]]:
        for a, b in zip(self.src.nodes, self._to_dst, strict=True):
            if b is not None:
                yield a, b

    def dice(self, a: Node, b: Node) -> float:
        """Share of the two subtrees' descendants that are mapped onto each other."""
        total = a.size + b.size - 2
        if total == 0:
            return 0.0
        low, high = b.id, b.id + b.size
        to_dst = self._to_dst
        common = 0
        for index in range(a.id + 1, a.id + a.size):
            partner = to_dst[index]
            if partner is not None and low < partner.id < high:
                common += 1
        return 2.0 * common / total

    def has_unmapped_descendants(self, a: Node, b: Node) -> bool:
        """Both subtrees have an unmapped node below their roots."""
        return None in self._to_dst[a.id + 1 : a.id + a.size] and None in self._to_src[b.id + 1 : b.id + b.size]

    def subtree_unmapped(self, a: Node, b: Node) -> bool:
        """Neither subtree has a mapped node."""
        return self._to_dst[a.id : a.id + a.size].count(None) == a.size and self._to_src[b.id : b.id + b.size].count(None) == b.size
