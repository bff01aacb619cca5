"""Edit actions turning the old tree into the new one (Chawathe et al. 1996).

Actions refer to nodes of the two original trees: ``Insert`` and ``Move``
name the new node, its new parent and the position among that parent's
children at the moment the action is applied (for a move: once the node has
left its old place); ``Delete`` names an old node;
``Update`` pairs an old node with the new node whose label it takes.
"""

from __future__ import annotations

from dataclasses import dataclass

from histeg.syntax.tree import Node


@dataclass(frozen=True, slots=True)
class Insert:
    node: Node
    """The inserted node, in the new tree."""
    parent: Node | None
    """Its parent in the new tree (``None`` for a new root)."""
    position: int


@dataclass(frozen=True, slots=True)
class Delete:
    node: Node
    """The deleted node, in the old tree (a leaf at the time it is deleted)."""


@dataclass(frozen=True, slots=True)
class Update:
    node: Node
    """The old node."""
    new: Node
    """Its partner in the new tree, which carries the new label."""


@dataclass(frozen=True, slots=True)
class Move:
    node: Node
    """The moved subtree's root, in the old tree."""
    new: Node
    """Its partner in the new tree."""
    parent: Node | None
    position: int


Action = Insert | Delete | Update | Move


def describe(action: Action) -> str:
    """One line for people: ``update identifier x → y``."""
    match action:
        case Insert(node=node):
            return f"insert {node.type}" + (f" {node.label!r}" if node.label else "")
        case Delete(node=node):
            return f"delete {node.type}" + (f" {node.label!r}" if node.label else "")
        case Update(node=node, new=new):
            return f"update {node.type} {node.label!r} → {new.label!r}"
        case Move(node=node):
            return f"move {node.type}" + (f" {node.label!r}" if node.label else "")
    raise TypeError(action)
