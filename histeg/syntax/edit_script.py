"""Chawathe et al.'s edit script generation from a mapping (as in GumTree).

The old tree is copied and transformed in place, breadth-first over the new
tree: unmapped new nodes are inserted, mapped ones are updated when their
labels differ and moved when their parents are not partners, children are
re-ordered along a longest common subsequence, and finally every old node
left without partner is deleted (post-order, so always a leaf). Kept apart
from the matcher: any mapping gives a valid script.
"""

from __future__ import annotations

from dataclasses import dataclass

from histeg.syntax.actions import Action, Delete, Insert, Move, Update
from histeg.syntax.mapping import MappingStore
from histeg.syntax.matcher import lcs
from histeg.syntax.tree import Node, postorder


class _Copy:
    """A node of the working copy of the old tree."""

    __slots__ = ("type", "label", "children", "parent", "origin", "partner")

    def __init__(self, type_: str, label: str, origin: Node | None, partner: Node | None) -> None:
        self.type = type_
        self.label = label
        self.children: list[_Copy] = []
        self.parent: _Copy | None = None
        self.origin = origin
        """The old node this copy stands for (``None`` for inserted nodes)."""
        self.partner = partner
        """The new node it is mapped to."""


@dataclass
class EditScript:
    actions: list[Action]
    mappings: MappingStore

    def __len__(self) -> int:
        return len(self.actions)


def _exact_subtrees(mappings: MappingStore) -> list[bool]:
    """For each new node: its subtree is mapped node for node onto an identical old subtree.

    Linear: a subtree is exact when every node in its pre-order range is mapped
    at the same offset and the partner root has the same hash.
    """
    dst, src_nodes = mappings.dst, mappings.src.nodes
    offsets = [partner.id - index if partner is not None else None for index, partner in enumerate(mappings.src_partners())]
    count = len(offsets)
    run_end = [count] * count
    for index in range(count - 2, -1, -1):
        offset = offsets[index]
        run_end[index] = run_end[index + 1] if offset is not None and offsets[index + 1] == offset else index + 1
    return [
        (offset := offsets[index]) is not None and run_end[index] >= index + node.size and src_nodes[index + offset].hash == node.hash
        for index, node in enumerate(dst.nodes)
    ]


def generate(mappings: MappingStore) -> EditScript:
    return _Generator(mappings).run()


class _Generator:
    def __init__(self, mappings: MappingStore) -> None:
        self.mappings = mappings
        src, dst = mappings.src, mappings.dst
        self.exact = _exact_subtrees(mappings)
        # Copies only where actions can happen: not inside exactly mapped subtrees.
        self.copies: dict[int, _Copy] = {}
        inside: set[int] = set()
        for node in src.nodes:
            parent = node.parent
            if parent is not None and (parent.id in inside or self._is_exact_src(parent)):
                inside.add(node.id)
                continue
            copy = _Copy(node.type, node.label, node, mappings.dst_of(node))
            self.copies[node.id] = copy
            if parent is not None:
                parent_copy = self.copies[parent.id]
                copy.parent = parent_copy
                parent_copy.children.append(copy)
        self.fake_root = _Copy("", "", None, None)
        root_copy = self.copies[src.root.id]
        self.fake_root.children.append(root_copy)
        root_copy.parent = self.fake_root
        self.copy_of: dict[int, _Copy] = {}
        for copy in self.copies.values():
            if copy.partner is not None:
                self.copy_of[copy.partner.id] = copy
        self.src_in_order: set[int] = set()
        self.dst_in_order: set[int] = set()
        self.actions: list[Action] = []
        self._dst = dst

    def _is_exact_src(self, node: Node) -> bool:
        partner = self.mappings.dst_of(node)
        return partner is not None and self.exact[partner.id]

    def run(self) -> EditScript:
        queue = [self._dst.root]
        index = 0
        while index < len(queue):
            x = queue[index]
            index += 1
            y = x.parent
            z = self.fake_root if y is None else self.copy_of[y.id]
            w = self.copy_of.get(x.id)
            if w is None:
                position = self._find_position(x)
                w = _Copy(x.type, x.label, None, x)
                self.copy_of[x.id] = w
                self._attach(w, z, position)
                self.actions.append(Insert(x, y, position))
            else:
                if w.label != x.label:
                    assert w.origin is not None
                    self.actions.append(Update(w.origin, x))
                    w.label = x.label
                if w.parent is not z:
                    self._move(w, x, z)
            self.src_in_order.add(id(w))
            self.dst_in_order.add(x.id)
            if not self.exact[x.id]:  # an exactly mapped subtree needs nothing below its root
                self._align_children(w, x)
                queue.extend(x.children)
        for copy in postorder(self.fake_root):
            if copy.partner is None and copy.origin is not None:
                self.actions.append(Delete(copy.origin))
        return EditScript(self.actions, self.mappings)

    def _move(self, copy: _Copy, x: Node, parent: _Copy) -> None:
        """Move ``copy`` under ``parent`` where ``x`` sits in the new tree."""
        assert copy.origin is not None
        self._detach(copy)  # first: the position counts the siblings without it
        position = self._find_position(x)
        self._attach(copy, parent, position)
        self.actions.append(Move(copy.origin, x, x.parent, position))

    @staticmethod
    def _attach(node: _Copy, parent: _Copy, position: int) -> None:
        parent.children.insert(position, node)
        node.parent = parent

    @staticmethod
    def _detach(node: _Copy) -> None:
        assert node.parent is not None
        node.parent.children.remove(node)

    def _align_children(self, w: _Copy, x: Node) -> None:
        for child in w.children:
            self.src_in_order.discard(id(child))
        for node in x.children:
            self.dst_in_order.discard(node.id)
        s1 = [child for child in w.children if child.partner is not None and child.partner.parent is x]
        s2 = [child for child in x.children if (copy := self.copy_of.get(child.id)) is not None and copy.parent is w]
        if not s1:
            return
        common = list(zip(s1, s2, strict=True)) if [child.partner for child in s1] == s2 else lcs(s1, s2, lambda a, b: a.partner is b)
        kept = set()
        for a, b in common:
            self.src_in_order.add(id(a))
            self.dst_in_order.add(b.id)
            kept.add(b.id)
        for b in s2:
            if b.id in kept:
                continue
            a = self.copy_of[b.id]
            self._move(a, b, w)
            self.src_in_order.add(id(a))
            self.dst_in_order.add(b.id)

    def _find_position(self, x: Node) -> int:
        """Where ``x``'s copy goes: right after the copy of its rightmost in-order left sibling."""
        y = x.parent
        if y is None:
            return len(self.fake_root.children)
        siblings = y.children
        for child in siblings:
            if child.id in self.dst_in_order:
                if child is x:
                    return 0
                break
        anchor = None
        for child in siblings:
            if child is x:
                break
            if child.id in self.dst_in_order:
                anchor = child
        if anchor is None:
            return 0
        copy = self.copy_of[anchor.id]
        assert copy.parent is not None
        return copy.parent.children.index(copy) + 1
