"""Call-tree comparison on call records built directly (the reader's own dataclasses)."""

from __future__ import annotations

from pathlib import Path

from histeg.compare.calls import Digests, compare_calls
from histeg.compare.code_lines import CodeLines
from histeg.traces import Call, Function, Value

F = Function("m:f", "m.py", 1, "function", ("x",))
G = Function("m:g", "m.py", 5, "function", ())


def call(function: Function, lines: list[int], params: list[Value | None], returned: Value | None, children=()) -> Call:
    return Call(function, 0, lines, list(children), params, returned, ended=True)


def divergences(old: Call, new: Call, tmp_path: Path):
    lines = CodeLines(tmp_path)  # no source there: positions fall back to offsets
    return list(compare_calls(old, new, Digests(lines), Digests(lines)))


def test_unrecorded_values_are_unknown_not_different(tmp_path: Path) -> None:
    old = call(F, [1, 2], [Value("int", "1")], Value("int", "2"))
    new = call(F, [1, 2], [None], None)
    assert divergences(old, new, tmp_path) == []


def test_returned_versus_raised_always_differs(tmp_path: Path) -> None:
    old = call(F, [1], [None], None)
    new = Call(F, 0, [1], [], [None], None, Value("ValueError", None), ended=True)
    assert [d.kinds for d in divergences(old, new, tmp_path)] == [["return"]]


def test_missing_child_call_and_child_recursion(tmp_path: Path) -> None:
    child_old = call(G, [1, 2], [], Value("int", "1"))
    child_new = call(G, [1, 3], [], Value("int", "1"))
    old = call(F, [1, 2, 3], [Value("int", "1")], None, [(1, child_old), (2, call(G, [1], [], None))])
    new = call(F, [1, 2, 3], [Value("int", "1")], None, [(1, child_new)])
    found = divergences(old, new, tmp_path)
    assert [(d.function, d.kinds, d.path) for d in found] == [("m:f", ["calls"], ()), ("m:g", ["lines"], (0,))]
    assert found[0].details["missingCalls"] == ["m:g"]


def test_runaway_recursion_still_writes_a_divergence_tree() -> None:
    from histeg.compare.calls import CallDivergence
    from histeg.compare.divergences import MAX_TREE_DEPTH, Divergence, _tree
    from histeg.compare.entry_points import EntryKey
    from histeg.store import dump_json

    entry = EntryKey("pytest", "t::test", "call", "t:test", 0)
    chain = [Divergence(entry, CallDivergence("m:f", ("t:test",) + ("m:f",) * depth, (0,) * depth, returns=1)) for depth in range(400)]
    tree = _tree(chain)
    dump_json(tree)  # orjson refuses more than 255 levels
    depth, node = 0, tree[0]["divergences"][0]
    while node["children"]:
        depth += 1
        last = node
        node = node["children"][0]
    assert depth == MAX_TREE_DEPTH
    assert len(last["children"]) == 400 - MAX_TREE_DEPTH
