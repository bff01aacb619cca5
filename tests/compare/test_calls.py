"""Call-tree comparison on real traces: written by ``trace_builder`` as the tracer would, decoded, compared.

Why real files: the comparator works on decoded columns and their digests, so
hand-made call objects would skip exactly what can go wrong (positions from
code lines, digests of unrecorded values, the alignment of children).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from histeg.compare.calls import CallDivergence, Tree, compare_calls
from histeg.compare.divergences import compare_entry_points
from histeg.compare.entry_points import EntryRef
from histeg.traces.reader import TraceFile
from tests.tracing.trace_builder import UNRECORDED, Entry, Fn, Node, Val, write_trace

F = Fn("m:f", "m.py", 1, (2, 3, 4), ("x",))
G = Fn("m:g", "m.py", 5, (6, 7, 8), ())


def divergences(old: Node, new: Node, tmp_path: Path, new_options: dict[str, Any] | None = None) -> list[CallDivergence]:
    """Both entry points written to trace files; compared by ``compare_calls`` and ``compare_entry_points`` alike."""
    old_file = TraceFile(write_trace(tmp_path / "old.htrace", [Entry(old)]).path)
    new_file = TraceFile(write_trace(tmp_path / "new.htrace", [Entry(new)], **(new_options or {})).path)
    direct = list(compare_calls(Tree(old_file.columns(0), old_file.definitions), Tree(new_file.columns(0), new_file.definitions)))
    streamed = compare_entry_points(EntryRef(old_file, 0), EntryRef(new_file, 0))
    assert [(d.function, d.path, d.kinds, d.details) for d in direct] == [(d.function, d.path, d.kinds, d.details) for d in streamed]
    return streamed


def test_unrecorded_values_are_unknown_not_different(tmp_path: Path) -> None:
    old = Node(F, (1,), [2, 3], returns=2)
    new = Node(F, (UNRECORDED,), [2, 3], returns=UNRECORDED)
    assert divergences(old, new, tmp_path) == []


def test_values_beyond_the_budget_are_unknown_not_different(tmp_path: Path) -> None:
    """The new trace records values for the first call of ``g`` only (a value budget of 1): the second
    call's changed return is unknown there, not a divergence."""
    def entry(second: object) -> Node:
        return Node(F, (1,), [2, Node(G, (), [6], returns=1), 3, Node(G, (), [6], returns=second), 4])

    assert divergences(entry(1), entry(2), tmp_path, new_options={"value_budget": 1}) == []
    assert [d.kinds for d in divergences(entry(1), entry(2), tmp_path / "all")] == [["return"]]


def test_returned_versus_raised_always_differs(tmp_path: Path) -> None:
    old = Node(F, (UNRECORDED,), [2], returns=UNRECORDED)
    new = Node(F, (UNRECORDED,), [2], raises=Val("ValueError"))
    assert [d.kinds for d in divergences(old, new, tmp_path)] == [["return"]]


def test_returned_versus_raised_differs_even_when_neither_value_was_recorded(tmp_path: Path) -> None:
    old = Node(F, (1,), [2], returns=UNRECORDED)
    new = Node(F, (1,), [2], raises=UNRECORDED)
    (found,) = divergences(old, new, tmp_path)
    assert found.kinds == ["return"] and found.details["return"] == {"old": ["returned", None], "new": ["raised", None]}


def test_missing_child_call_and_child_recursion(tmp_path: Path) -> None:
    old = Node(F, (1,), [2, Node(G, (), [6, 7], returns=1), 3, Node(G, (), [6]), 4])
    new = Node(F, (1,), [2, Node(G, (), [6, 8], returns=1), 3, 4])
    found = divergences(old, new, tmp_path)
    assert [(d.function, d.kinds, d.path) for d in found] == [("m:f", ["calls"], ()), ("m:g", ["lines"], (0,))]
    assert found[0].details["missingCalls"] == ["m:g"] and found[0].details["additionalCalls"] == []


def test_lines_are_compared_as_positions(tmp_path: Path) -> None:
    """A comment inserted in ``g`` moves its last line down: same positions, no divergence, no decoding."""
    moved = Fn("m:g", "m.py", 5, (6, 7, 9), ())
    old = Node(F, (1,), [2, Node(G, (), [6, 8]), 3])
    new = Node(F, (1,), [2, Node(moved, (), [6, 9]), 3])
    old_file = TraceFile(write_trace(tmp_path / "old.htrace", [Entry(old)]).path)
    new_file = TraceFile(write_trace(tmp_path / "new.htrace", [Entry(new)]).path)
    assert old_file.entries[0].digest == new_file.entries[0].digest
    assert compare_entry_points(EntryRef(old_file, 0), EntryRef(new_file, 0)) == []


def test_runaway_recursion_still_writes_a_divergence_tree() -> None:
    import msgspec

    from histeg.atomic import dump_json
    from histeg.compare.calls import CallDivergence
    from histeg.compare.divergences import MAX_TREE_DEPTH, Divergence, _tree
    from histeg.compare.entry_points import EntryKey

    entry = EntryKey("pytest", "t::test", "call", "t:test", 0)
    chain = [Divergence(entry, CallDivergence("m:f", ("t:test",) + ("m:f",) * depth, (0,) * depth, returns=1)) for depth in range(400)]
    tree = _tree(chain)
    dump_json(msgspec.to_builtins(tree))  # orjson, which writes the records, refuses more than 255 levels
    [root] = tree
    assert root.entry_point == entry and root.call_path == []
    depth, node = 0, root
    while node.children:
        depth += 1
        last = node
        node = node.children[0]
    assert depth == MAX_TREE_DEPTH
    assert len(last.children) == 400 - MAX_TREE_DEPTH
