"""Definitions that left one place and arrived at another: moves, not delete + insert.

The matcher sees one file at a time, so a function moved to another file (or
re-nested in a way the matcher could not follow) first appears as a removal
and an addition. Here removed and added definitions of all files of a
version are paired: same kind and name with similar code, or identical code
under another name. A pair becomes one ``move`` in the file it arrived in.
"""

from __future__ import annotations

from dataclasses import dataclass

from Levenshtein import ratio

from histeg.syntax.changes import CodeType, SyntaxChange
from histeg.syntax.classify import FileContext, change_at, snippet, top_level_definitions
from histeg.syntax.diff import FileDiff
from histeg.syntax.entities import CLASS, name_of, place_of
from histeg.syntax.tree import Node, Tree

MIN_SIMILARITY = 0.5
"""Same-named definitions are one moved definition if their code is at least this similar."""


@dataclass
class _Candidate:
    diff: FileDiff
    tree: Tree
    node: Node
    record: SyntaxChange | None
    """The file's removal or addition record, if the definition had its own."""

    @property
    def name(self) -> str:
        return name_of(self.node)

    def body_text(self) -> str:
        """The code without the definition's name line, to compare renamed copies."""
        body = self.node.child("body")
        return self.tree.text(body) if body is not None else ""


def _candidates(diffs: list[FileDiff], added: bool) -> list[_Candidate]:
    found: list[_Candidate] = []
    kind = "addition" if added else "removal"
    for diff in diffs:
        tree = diff.new if added else diff.old
        if tree is None:
            continue
        whole_file = (diff.old is None) if added else (diff.new is None)
        by_node = {
            id(change.fingerprint[1]): change for change in diff.result.changes if change.type == kind and change.fingerprint is not None
        }
        if whole_file:
            nodes = top_level_definitions(tree)
        else:
            nodes = [change.fingerprint[1] for change in diff.result.changes if change.type == kind and change.fingerprint is not None]
        found.extend(_Candidate(diff, tree, node, by_node.get(id(node))) for node in nodes)
    return found


def _score(old: _Candidate, new: _Candidate) -> float:
    if old.node.type != new.node.type:
        return 0.0
    if old.name != new.name or _owner(old.node) != _owner(new.node):
        body = old.body_text()
        return 1.0 if body and body == new.body_text() and old.node.size > 8 else 0.0
    if old.node.hash == new.node.hash:
        return 1.0
    small, large = sorted((old.node.size, new.node.size))
    if small * 2 < large:
        return 0.0
    return ratio(old.tree.text(old.node), new.tree.text(new.node))


def _owner(node: Node) -> str | None:
    """The enclosing class's name of a method."""
    for ancestor in node.ancestors():
        if ancestor.type == CLASS:
            return name_of(ancestor)
    return None


def _inside(node: Node, paired: list[Node]) -> bool:
    return any(node.is_descendant_of(other) for other in paired)


def pair_moved_definitions(diffs: list[FileDiff]) -> int:
    """Turn matching removals and additions into moves, in place; returns how many."""
    removed = _candidates(diffs, added=False)
    added = _candidates(diffs, added=True)
    if not removed or not added:
        return 0
    scored = []
    for i, old in enumerate(removed):
        for j, new in enumerate(added):
            score = _score(old, new)
            if score >= MIN_SIMILARITY:
                scored.append((score, -new.node.size, i, j))
    scored.sort()
    scored.sort(key=lambda item: -item[0])
    used_old: set[int] = set()
    used_new: set[int] = set()
    moves = 0
    paired_old: dict[int, list[Node]] = {}
    paired_new: dict[int, list[Node]] = {}
    for _, _, i, j in scored:
        old, new = removed[i], added[j]
        if i in used_old or j in used_new:
            continue
        if _inside(old.node, paired_old.get(id(old.tree), [])) or _inside(new.node, paired_new.get(id(new.tree), [])):
            continue
        used_old.add(i)
        used_new.add(j)
        paired_old.setdefault(id(old.tree), []).append(old.node)
        paired_new.setdefault(id(new.tree), []).append(new.node)
        _replace(old, new)
        moves += 1
    for diff in diffs:
        if moves:
            diff.result.number()
    return moves


def _context(diff: FileDiff) -> FileContext:
    result = diff.result
    return FileContext(result.old_path, result.new_path, result.old_module, result.new_module)


def _replace(old: _Candidate, new: _Candidate) -> None:
    if old.record is not None:
        old.diff.result.changes.remove(old.record)
    if new.record is not None:
        new.diff.result.changes.remove(new.record)
    old_context, new_context = _context(old.diff), _context(new.diff)
    old_place = place_of(old.node, old_context.old_module or "")
    new_place = place_of(new.node, new_context.new_module or "")
    ctype: CodeType = "class" if new.node.type == CLASS else "function"
    before, old_lines = snippet(old.tree, old.node, whole=True)
    after, new_lines = snippet(new.tree, new.node, whole=True)
    same_place = old_place.entity == new_place.entity
    context = FileContext(old_context.old_path, new_context.new_path, old_context.old_module, new_context.new_module)
    header = (snippet(old.tree, old.node, whole=False)[0], snippet(new.tree, new.node, whole=False)[0])
    change = change_at(new_place, "move", ctype, header, (old_lines, new_lines), context, same_scope=same_place)
    change.old_entity = old_place.entity
    change.defines = None
    change.edits = [f"move {new.node.type}" + ("" if before == after else " (with changes)")]
    if old.name != new.name:
        change.old_name, change.new_name = old.name, new.name
    new.diff.result.changes.append(change)
