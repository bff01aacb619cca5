"""Shared by the syntax tests: diff two sources, apply an edit script, generate programs."""

from __future__ import annotations

import random
from textwrap import dedent

from histeg.syntax.actions import Delete, Insert, Move, Update
from histeg.syntax.changes import SyntaxChange
from histeg.syntax.classify import FileContext
from histeg.syntax.diff import diff_sources
from histeg.syntax.edit_script import EditScript, generate
from histeg.syntax.matcher import match
from histeg.syntax.moves import pair_moved_definitions
from histeg.syntax.options import SyntaxOptions
from histeg.syntax.parse import parse_source
from histeg.syntax.tree import Node, Tree, preorder


def source(text: str) -> bytes:
    return dedent(text).lstrip("\n").encode("utf-8")


def changes(old: str, new: str, module: str = "m", renames: bool = True) -> list[SyntaxChange]:
    context = FileContext("m.py", "m.py", module, module)
    result = diff_sources(source(old), source(new), context, SyntaxOptions(renames=renames))
    pair_moved_definitions([result])
    return result.result.changes


def tree(text: str) -> Tree:
    return parse_source(source(text)).tree


def script(old: str, new: str) -> EditScript:
    return generate(match(tree(old), tree(new)))


def summary(found: list[SyntaxChange]) -> set[tuple[str, str, str]]:
    return {(c.entity, c.type, c.code_type) for c in found}


class _Copy:
    def __init__(self, type_: str, label: str) -> None:
        self.type, self.label, self.children, self.parent = type_, label, [], None


def apply_script(old: Tree, edit: EditScript) -> _Copy:
    """Replay the actions on a fresh copy of the old tree (independently of the generator)."""
    copies = {node.id: _Copy(node.type, node.label) for node in old.nodes}
    for node in old.nodes:
        for child in node.children:
            copies[child.id].parent = copies[node.id]
            copies[node.id].children.append(copies[child.id])
    fake = _Copy("", "")
    fake.children.append(copies[0])
    copies[0].parent = fake
    of_new: dict[int, _Copy] = {new.id: copies[old_node.id] for old_node, new in edit.mappings.pairs()}
    for action in edit.actions:
        if isinstance(action, Insert):
            node = _Copy(action.node.type, action.node.label)
            parent = fake if action.parent is None else of_new[action.parent.id]
            parent.children.insert(action.position, node)
            node.parent = parent
            of_new[action.node.id] = node
        elif isinstance(action, Update):
            copies[action.node.id].label = action.new.label
        elif isinstance(action, Move):
            node = copies[action.node.id]
            node.parent.children.remove(node)
            parent = fake if action.parent is None else of_new[action.parent.id]
            parent.children.insert(action.position, node)
            node.parent = parent
        elif isinstance(action, Delete):
            node = copies[action.node.id]
            assert not node.children, "Chawathe deletes leaves only"
            node.parent.children.remove(node)
    assert len(fake.children) == 1
    return fake.children[0]


def same_shape(copy: _Copy, node: Node) -> bool:
    stack = [(copy, node)]
    while stack:
        a, b = stack.pop()
        if a.type != b.type or a.label != b.label or len(a.children) != len(b.children):
            return False
        stack.extend(zip(a.children, b.children))
    return True


def nodes_of(t: Tree) -> list[Node]:
    return list(preorder(t.root))


# -- a small generator of Python programs -------------------------------------

NAMES = ["alpha", "beta", "gamma", "delta", "total", "count", "value", "item"]


class ProgramGenerator:
    """Random but valid modules: functions, classes, constants, control flow."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def expression(self, names: list[str], depth: int = 0) -> str:
        rng = self.rng
        choice = rng.randrange(6 if depth < 2 else 2)
        if choice == 0:
            return str(rng.randrange(100))
        if choice == 1:
            return rng.choice(names)
        if choice == 2:
            return f"{self.expression(names, depth + 1)} {rng.choice(['+', '-', '*', '//'])} {self.expression(names, depth + 1)}"
        if choice == 3:
            return f"max({self.expression(names, depth + 1)}, {self.expression(names, depth + 1)})"
        if choice == 4:
            return f"({self.expression(names, depth + 1)})"
        return f"len([{self.expression(names, depth + 1)}])"

    def block(self, names: list[str], indent: int, depth: int = 0) -> list[str]:
        rng = self.rng
        pad = "    " * indent
        lines: list[str] = []
        local = list(names)
        for _ in range(rng.randint(1, 4)):
            kind = rng.randrange(5 if depth < 2 else 2)
            if kind == 0 or not local:
                target = rng.choice(NAMES)
                lines.append(f"{pad}{target} = {self.expression(local or ['0'])}")
                local.append(target)
            elif kind == 1:
                lines.append(f"{pad}print({self.expression(local)})")
            elif kind == 2:
                lines.append(f"{pad}if {self.expression(local)} > {rng.randrange(10)}:")
                lines.extend(self.block(local, indent + 1, depth + 1))
                if rng.random() < 0.5:
                    lines.append(f"{pad}else:")
                    lines.extend(self.block(local, indent + 1, depth + 1))
            elif kind == 3:
                variable = rng.choice(["i", "j", "k"])
                lines.append(f"{pad}for {variable} in range({self.expression(local)}):")
                lines.extend(self.block([*local, variable], indent + 1, depth + 1))
            else:
                lines.append(f"{pad}while {self.expression(local)} < {rng.randrange(5)}:")
                lines.extend(self.block(local, indent + 1, depth + 1))
                lines.append(f"{pad}    break")
        return lines

    def function(self, name: str, indent: int = 0, method: bool = False) -> list[str]:
        params = self.rng.sample(NAMES, self.rng.randint(0, 3))
        pad = "    " * indent
        head = ["self", *params] if method else params
        lines = [f"{pad}def {name}({', '.join(head)}):"]
        lines.extend(self.block(params, indent + 1))
        lines.append(f"{pad}    return {self.expression(params or ['0'])}")
        return lines

    def module(self) -> str:
        rng = self.rng
        lines = ["import os", ""]
        for index in range(rng.randint(1, 3)):
            lines.append(f"LIMIT_{index} = {rng.randrange(1000)}")
        for index in range(rng.randint(1, 4)):
            lines.append("")
            if rng.random() < 0.3:
                lines.append(f"class Thing{index}:")
                lines.append(f"    SIZE = {rng.randrange(50)}")
                for method in range(rng.randint(1, 3)):
                    lines.append("")
                    lines.extend(self.function(f"method_{method}", indent=1, method=True))
            else:
                lines.extend(self.function(f"func_{index}"))
        return "\n".join(lines) + "\n"
