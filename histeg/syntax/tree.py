"""histeg's own syntax tree, independent of the parser that produced it.

The matcher, the edit script and the classification only see this tree, so
that a different parser could be plugged in (GumTree's design). Nodes are
numbered in pre-order, which makes "is a descendant of" a range check
(``a.id < b.id < a.id + a.size``). Every traversal is iterative: a deeply
nested expression must not hit Python's recursion limit.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol, Self


class Node:
    """One syntax node: grammar type, label (leaf text, operator), positions."""

    __slots__ = (
        "id",
        "type",
        "label",
        "field",
        "parent",
        "children",
        "start_byte",
        "end_byte",
        "start_line",
        "end_line",
        "height",
        "size",
        "hash",
        "shape",
    )

    def __init__(
        self, type_: str, label: str, start_byte: int, end_byte: int, start_line: int, end_line: int, field: str | None = None
    ) -> None:
        self.id = -1
        self.type = type_
        self.label = label
        self.field = field
        """Role in the parent as named by the grammar (``name``, ``body``, ``superclasses`` ...)."""
        self.parent: Node | None = None
        self.children: list[Node] = []
        self.start_byte = start_byte
        self.end_byte = end_byte
        self.start_line = start_line
        """1-based first line."""
        self.end_line = end_line
        """1-based last line (inclusive)."""
        self.height = 1
        """1 for a leaf."""
        self.size = 1
        """Number of nodes in the subtree, the node included."""
        self.hash = 0
        """Equal for isomorphic subtrees (same types, labels and shape)."""
        self.shape = 0
        """Equal for subtrees of the same shape and types, labels ignored."""

    def __repr__(self) -> str:
        label = f" {self.label!r}" if self.label else ""
        return f"<{self.type}{label} #{self.id} L{self.start_line}>"

    def child(self, field: str) -> Node | None:
        for child in self.children:
            if child.field == field:
                return child
        return None

    def is_descendant_of(self, other: Node) -> bool:
        return other.id < self.id < other.id + other.size

    def ancestors(self) -> Iterator[Node]:
        node = self.parent
        while node is not None:
            yield node
            node = node.parent


class Tree:
    """A root, its nodes in pre-order (``nodes[n.id] is n``) and the source."""

    def __init__(self, root: Node, source: bytes) -> None:
        self.root = root
        self.source = source
        self.nodes: list[Node] = preorder(root)
        for index, node in enumerate(self.nodes):
            node.id = index
        self.postorder_nodes: list[Node] = compute_metrics(root)

    def __len__(self) -> int:
        return len(self.nodes)

    def text(self, node: Node, start_byte: int | None = None, end_byte: int | None = None) -> str:
        start = node.start_byte if start_byte is None else start_byte
        end = node.end_byte if end_byte is None else end_byte
        return self.source[start:end].decode("utf-8", "replace")

    def descendants(self, node: Node) -> list[Node]:
        """Proper descendants of ``node`` in pre-order (a slice, no traversal)."""
        return self.nodes[node.id + 1 : node.id + node.size]

    def subtree(self, node: Node) -> list[Node]:
        return self.nodes[node.id : node.id + node.size]


class Branching(Protocol):
    """A node with ordered children: ``Node``, and the edit script's working copy of the old tree."""

    @property
    def children(self) -> Sequence[Self]: ...


def preorder[N: Branching](root: N) -> list[N]:
    return _depth_first(root, left_to_right=True)


def postorder[N: Branching](root: N) -> list[N]:
    """Children before parents, siblings left to right (the reverse of a right-to-left pre-order)."""
    order = _depth_first(root, left_to_right=False)
    order.reverse()
    return order


def _depth_first[N: Branching](root: N, left_to_right: bool) -> list[N]:
    out: list[N] = []
    stack = [root]
    while stack:
        node = stack.pop()
        out.append(node)
        if node.children:
            stack.extend(reversed(node.children) if left_to_right else node.children)
    return out


def compute_metrics(root: Node) -> list[Node]:
    """Height, size and the two hashes, bottom-up in one post-order pass; returns that order."""
    order = postorder(root)
    for node in order:
        if node.children:
            node.height = 1 + max(child.height for child in node.children)
            node.size = 1 + sum(child.size for child in node.children)
            node.hash = hash((node.type, node.label, *(child.hash for child in node.children)))
            node.shape = hash((node.type, *(child.shape for child in node.children)))
        else:
            node.height = 1
            node.size = 1
            node.hash = hash((node.type, node.label))
            node.shape = hash(node.type)
    return order
