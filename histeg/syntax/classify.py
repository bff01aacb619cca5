"""Edit actions → ``SyntaxChange`` records.

Every action is charged to its anchor (see :mod:`histeg.syntax.entities`);
the whole subtree of an inserted or deleted node goes with the subtree's
root. Anchors that are partners, or that exchange a moved sub-expression,
form one group, and each group becomes one record: an *addition* when all
its anchors are new, a *removal* when all are gone, else a *modification*
(so ``x = a`` → ``return a`` is one modification, not two changes). A moved
anchor is a *move*; an updated definition name is a *rename*. Finally a
removal and an addition binding the same name (``CACHE: Map = ...`` →
``CACHE: ConcurrentMap = ...`` when the matcher did not pair them) merge
into one modification, which ChangeDistiller did not do (thesis fig. 4.4).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from histeg.syntax.actions import Action, Delete, Insert, Move, Update, describe
from histeg.syntax.changes import ChangeType, CodeType, SyntaxChange
from histeg.syntax.edit_script import EditScript
from histeg.syntax.entities import (
    CLASS,
    DEFINITIONS,
    FUNCTION,
    Place,
    anchor_of,
    code_type,
    header_end,
    is_anchor,
    module_entity,
    name_of,
    parameter_name,
    place_of,
)
from histeg.syntax.significance import significance
from histeg.syntax.tree import Node, Tree

Key = tuple[str, int]


@dataclass(frozen=True)
class FileContext:
    old_path: str | None
    new_path: str | None
    old_module: str | None
    new_module: str | None


@dataclass
class _Group:
    old: dict[int, Node] = field(default_factory=dict)
    new: dict[int, Node] = field(default_factory=dict)
    actions: list[Action] = field(default_factory=list)


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[Key, Key] = {}

    def find(self, key: Key) -> Key:
        parent = self.parent.setdefault(key, key)
        while parent != key:
            grand = self.parent[parent]
            self.parent[key] = grand
            key, parent = parent, grand
        return key

    def union(self, a: Key, b: Key) -> None:
        root_a, root_b = self.find(a), self.find(b)
        if root_a != root_b:
            self.parent[root_b] = root_a


def snippet(tree: Tree, node: Node, whole: bool) -> tuple[str, tuple[int, int]]:
    """Code and lines of an anchor: the whole of it, or only the header of a compound one."""
    body = None if whole else header_end(node)
    if body is None:
        return tree.text(node).strip(), (node.start_line, node.end_line)
    text = tree.text(node, end_byte=body.start_byte).rstrip()
    return text, (node.start_line, max(node.start_line, body.start_line - 1))


def _span(lines: list[tuple[int, int]]) -> tuple[int, int] | None:
    return (min(a for a, _ in lines), max(b for _, b in lines)) if lines else None


class _Classifier:
    def __init__(self, old: Tree, new: Tree, script: EditScript, context: FileContext, renames: bool) -> None:
        self.old, self.new = old, new
        self.mappings = script.mappings
        self.script = script
        self.context = context
        self.renames = renames
        self.old_module = context.old_module or ""
        self.new_module = context.new_module or ""
        self.union = _UnionFind()
        self.groups: dict[Key, _Group] = defaultdict(_Group)
        self.insert_target = self._charge_targets(new, self.mappings.has_dst)
        self.delete_target = self._charge_targets(old, self.mappings.has_src)
        self.special: list[tuple[str, Node, Node, list[Action]]] = []

    @staticmethod
    def _charge_targets(tree: Tree, is_mapped: Callable[[Node], bool]) -> dict[int, Node]:
        """For each unmapped node, the anchor its insertion or deletion is charged to.

        That is the outermost unmapped anchor above it within its unmapped
        region (a deleted ``if`` inside a deleted block is its own removal),
        else the anchor around the region.
        """
        outermost: dict[int, Node | None] = {}
        targets: dict[int, Node] = {}
        for node in tree.nodes:
            if is_mapped(node):
                continue
            parent = node.parent
            above = outermost.get(parent.id) if parent is not None and parent.id in outermost else None
            outermost[node.id] = above if above is not None else (node if is_anchor(node) else None)
            target = outermost[node.id]
            targets[node.id] = target if target is not None else anchor_of(node)
        return targets

    # -- grouping ----------------------------------------------------------

    def _touch_old(self, anchor: Node) -> Key:
        return self._touch("o", anchor, self.mappings.dst_of(anchor))

    def _touch_new(self, anchor: Node) -> Key:
        return self._touch("n", anchor, self.mappings.src_of(anchor))

    def _touch(self, side: str, anchor: Node, partner: Node | None) -> Key:
        """Register an anchor of one side; a mapped anchor joins the group of its partner's anchor."""
        pending, other_pending, other_side = (
            (self._pending_old, self._pending_new, "n") if side == "o" else (self._pending_new, self._pending_old, "o")
        )
        key = (side, anchor.id)
        self.union.find(key)
        pending[key] = anchor
        if partner is not None:
            other = anchor_of(partner)
            other_pending[(other_side, other.id)] = other
            self.union.union(key, (other_side, other.id))
        return key

    def run(self) -> list[SyntaxChange]:
        self._pending_old: dict[Key, Node] = {}
        self._pending_new: dict[Key, Node] = {}
        charged: list[tuple[Key, Action]] = []
        for action in self.script.actions:
            match action:
                case Insert(node=node):
                    charged.append((self._touch_new(self.insert_target[node.id]), action))
                case Delete(node=node):
                    charged.append((self._touch_old(self.delete_target[node.id]), action))
                case Update(node=node, new=new):
                    owner = new.parent
                    if owner is not None and node.parent is not None and owner.type in DEFINITIONS and new.field == "name":
                        self.special.append(("rename", node.parent, owner, [action]))
                        continue
                    key = self._touch_new(anchor_of(new))
                    self.union.union(key, self._touch_old(anchor_of(node)))
                    charged.append((key, action))
                case Move(node=node, new=new):
                    if anchor_of(new) is new:
                        self.special.append(("move", node, new, [action]))
                        continue
                    key = self._touch_new(anchor_of(new))
                    self.union.union(key, self._touch_old(anchor_of(node)))
                    charged.append((key, action))
        for key, anchor in self._pending_old.items():
            self.groups[self.union.find(key)].old[anchor.id] = anchor
        for key, anchor in self._pending_new.items():
            self.groups[self.union.find(key)].new[anchor.id] = anchor
        for key, action in charged:
            self.groups[self.union.find(key)].actions.append(action)
        changes: list[SyntaxChange] = []
        for group in self.groups.values():
            if group.actions:
                changes.extend(self._group_changes(group))
        for kind, old_node, new_node, actions in self.special:
            if kind == "move":
                changes.append(self._move(old_node, new_node, actions))
            else:
                changes.extend(self._rename(old_node, new_node, actions))
        return merge_same_name(changes)

    # -- records -----------------------------------------------------------

    def _side(self, tree: Tree, anchors: list[Node], whole: bool) -> tuple[str | None, tuple[int, int] | None]:
        if not anchors:
            return None, None
        parts = [snippet(tree, anchor, whole) for anchor in anchors]
        return "\n".join(text for text, _ in parts), _span([lines for _, lines in parts])

    def _group_changes(self, group: _Group) -> list[SyntaxChange]:
        olds = sorted(group.old.values(), key=lambda n: n.id)
        news = sorted(group.new.values(), key=lambda n: n.id)
        kind: ChangeType
        if news and not olds:
            kind = "addition"
        elif olds and not news:
            kind = "removal"
        else:
            kind = "modification"
        whole = kind != "modification"
        if news:
            place = place_of(news[0], self.new_module)
            ctype = code_type(self.new, news[0], place.level)
        else:
            place = place_of(olds[0], self.old_module)
            ctype = code_type(self.old, olds[0], place.level)
        old_place = place_of(olds[0], self.old_module) if olds else None
        if kind == "modification" and ctype == "parameter" and self._only_name_updates(group, news[0]):
            kind = "rename" if self.renames else "modification"
        before, old_lines = self._side(self.old, olds, whole)
        after, new_lines = self._side(self.new, news, whole)
        change = self._record(place, kind, ctype, before, after, old_lines, new_lines, old_place, group.actions)
        if kind == "rename":
            old_name = parameter_name(olds[0])
            new_name = parameter_name(news[0])
            change.old_name = old_name.label if old_name else None
            change.new_name = new_name.label if new_name else None
        if kind in ("addition", "removal") and ctype in ("function", "class"):
            change.fingerprint = (self.new, news[0]) if news else (self.old, olds[0])
        return [change]

    def _only_name_updates(self, group: _Group, anchor: Node) -> bool:
        name = parameter_name(anchor)
        return all(isinstance(action, Update) and action.new is name for action in group.actions)

    def _record(
        self,
        place: Place,
        kind: ChangeType,
        ctype: CodeType,
        before: str | None,
        after: str | None,
        old_lines: tuple[int, int] | None,
        new_lines: tuple[int, int] | None,
        old_place: Place | None,
        actions: list[Action],
        same_scope: bool = True,
    ) -> SyntaxChange:
        change = change_at(place, kind, ctype, (before, after), (old_lines, new_lines), self.context, same_scope)
        change.old_entity = old_place.entity if old_place else None
        change.edits = [describe(action) for action in actions]
        return change

    def _move(self, old_node: Node, new_node: Node, actions: list[Action]) -> SyntaxChange:
        place = place_of(new_node, self.new_module)
        old_place = place_of(old_node, self.old_module)
        ctype = code_type(self.new, new_node, place.level)
        definition = new_node.type in DEFINITIONS
        if definition:
            same_scope = place.entity == old_place.entity
        else:
            old_parent = old_node.parent
            same_scope = old_parent is not None and self.mappings.dst_of(old_parent) is new_node.parent
        before, old_lines = snippet(self.old, old_node, whole=True)
        after, new_lines = snippet(self.new, new_node, whole=True)
        if definition:
            before, after = snippet(self.old, old_node, False)[0], snippet(self.new, new_node, False)[0]
        return self._record(place, "move", ctype, before, after, old_lines, new_lines, old_place, actions, same_scope)

    def _rename(self, old_def: Node, new_def: Node, actions: list[Action]) -> list[SyntaxChange]:
        place = place_of(new_def, self.new_module)
        old_place = place_of(old_def, self.old_module)
        ctype: CodeType = "function" if new_def.type == FUNCTION else "class"
        if not self.renames:
            before, old_lines = snippet(self.old, old_def, whole=True)
            after, new_lines = snippet(self.new, new_def, whole=True)
            removal = self._record(old_place, "removal", ctype, before, None, old_lines, None, old_place, actions)
            addition = self._record(place, "addition", ctype, None, after, None, new_lines, None, actions)
            removal.defines = addition.defines = None  # never merged back into a modification
            return [removal, addition]
        before, old_lines = snippet(self.old, old_def, whole=False)
        after, new_lines = snippet(self.new, new_def, whole=False)
        change = self._record(place, "rename", ctype, before, after, old_lines, new_lines, old_place, actions)
        change.old_name, change.new_name = name_of(old_def), name_of(new_def)
        return [change]


def change_at(
    place: Place,
    kind: ChangeType,
    ctype: CodeType,
    code: tuple[str | None, str | None],
    lines: tuple[tuple[int, int] | None, tuple[int, int] | None],
    context: FileContext,
    same_scope: bool = True,
) -> SyntaxChange:
    """A change of ``kind`` at ``place``; ``code`` and ``lines`` are (old, new)."""
    return SyntaxChange(
        level=place.level,
        entity=place.entity,
        function=place.function,
        klass=place.klass,
        type=kind,
        code_type=ctype,
        significance=significance(kind, ctype, place.level, same_scope),
        before=code[0],
        after=code[1],
        old_lines=lines[0],
        new_lines=lines[1],
        old_path=context.old_path,
        new_path=context.new_path,
        defines=place.defines,
    )


def merge_same_name(changes: list[SyntaxChange]) -> list[SyntaxChange]:
    """A removal and an addition binding the same name become one modification."""
    removals: dict[str, list[SyntaxChange]] = defaultdict(list)
    additions: dict[str, list[SyntaxChange]] = defaultdict(list)
    for change in changes:
        if change.defines is None:
            continue
        if change.type == "removal":
            removals[change.defines].append(change)
        elif change.type == "addition":
            additions[change.defines].append(change)
    merged: set[int] = set()
    result = []
    for name, removed in removals.items():
        added = additions.get(name)
        if len(removed) != 1 or not added or len(added) != 1:
            continue
        old, new = removed[0], added[0]
        merged.update((id(old), id(new)))
        ctype = new.code_type
        result.append(
            SyntaxChange(
                level=new.level,
                entity=new.entity,
                function=new.function,
                klass=new.klass,
                type="modification",
                code_type=ctype,
                significance=significance("modification", ctype, new.level),
                before=old.before,
                after=new.after,
                old_lines=old.old_lines,
                new_lines=new.new_lines,
                old_path=old.old_path,
                new_path=new.new_path,
                old_entity=old.entity,
                edits=old.edits + new.edits,
                defines=new.defines,
            )
        )
    result.extend(change for change in changes if id(change) not in merged)
    return result


def classify(old: Tree, new: Tree, script: EditScript, context: FileContext, renames: bool = True) -> list[SyntaxChange]:
    """The changes between two parsed versions of one file."""
    return _Classifier(old, new, script, context, renames).run()


def whole_module(tree: Tree, context: FileContext, added: bool) -> list[SyntaxChange]:
    """An added or removed file: the module, and each of its classes (the thesis' NEW_CLASS)."""
    module = module_entity((context.new_module if added else context.old_module) or "")
    lines = (1, max(1, tree.root.end_line)) if tree.root.children else None
    text = tree.text(tree.root).strip() or None
    kind: ChangeType = "addition" if added else "removal"
    changes = [_whole(tree, node, context, added) for node in top_level_definitions(tree) if node.type == CLASS]
    changes.append(
        SyntaxChange(
            level="module",
            entity=module,
            function=None,
            klass=None,
            type=kind,
            code_type="module",
            significance=significance(kind, "module", "module"),
            before=None if added else text,
            after=text if added else None,
            old_lines=None if added else lines,
            new_lines=lines if added else None,
            old_path=context.old_path,
            new_path=context.new_path,
            old_entity=None if added else module,
        )
    )
    return changes


def top_level_definitions(tree: Tree) -> list[Node]:
    """Classes and functions not inside a function: what another file can import."""
    found = []
    stack = [tree.root]
    while stack:
        node = stack.pop()
        for child in node.children:
            if child.type in DEFINITIONS:
                found.append(child)
                if child.type == CLASS:
                    stack.append(child)
            elif child.type != FUNCTION:
                stack.append(child)
    return sorted(found, key=lambda n: n.id)


def _whole(tree: Tree, node: Node, context: FileContext, added: bool) -> SyntaxChange:
    """One definition of an added or removed file."""
    module = (context.new_module if added else context.old_module) or ""
    place = place_of(node, module)
    kind: ChangeType = "addition" if added else "removal"
    ctype: CodeType = "class" if node.type == CLASS else "function"
    text, lines = snippet(tree, node, whole=True)
    change = change_at(place, kind, ctype, (None, text) if added else (text, None), (None, lines) if added else (lines, None), context)
    change.old_entity = None if added else place.entity
    change.fingerprint = (tree, node)
    return change
