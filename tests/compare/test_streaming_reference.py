"""The streaming comparator against a naive reference written here, on generated pairs of real traces.

Why: ``compare_entry_points`` decodes entry points lazily, skips identical
entry points and subtrees by digest and reads columns, not call objects: each
shortcut could hide a divergence or invent one. The reference below has none
of them: it walks the materialised ``Call`` trees of ``read_trace`` completely,
recomputes line positions from each function's code lines, and aligns
children by callee identifier with ``Levenshtein.opcodes`` (as
``histeg/compare/alignment.py`` does). On pairs of traces (an old one and a
mutated new one, written by ``trace_builder``) both must find the same
divergences: function, call path and kinds, in the same order.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import Levenshtein
import pytest

from histeg.compare.divergences import compare_entry_points
from histeg.compare.entry_points import EntryRef
from histeg.traces.call_tree import Call
from histeg.traces.reader import TraceFile, read_trace
from histeg.traces.records import Value
from tests.tracing.trace_builder import UNRECORDED, Entry, Fn, Node, Resume, Step, Val, Yield, write_trace

Found = tuple[str, tuple[int, ...], list[str]]
"""(function, call path, kinds) of one divergence."""


# -- the reference ---------------------------------------------------------------------------


def positions(call: Call) -> list[Any]:
    """Executed lines as indexes among the function's code lines (other lines by their offset)."""
    function = call.function
    index = {line: position for position, line in enumerate(function.code_lines)}
    return [index.get(function.first_line + offset, ("offset", offset)) for offset in call.lines]


def outcome(call: Call) -> tuple[str, Value | None]:
    return ("raised", call.raised) if call.left_by_exception else ("returned", call.returned)


def reference_divergences(old: Call, new: Call) -> list[Found]:
    """Every pair of aligned calls compared, parents before children; a value not recorded is unknown."""
    found: list[Found] = []
    stack: list[tuple[Call, Call, tuple[int, ...]]] = [(old, new, ())]
    while stack:
        o, n, path = stack.pop()
        kinds = []
        if o.lines_complete and n.lines_complete and positions(o) != positions(n):
            kinds.append("lines")
        if any(a is not None and b is not None and a != b for a, b in zip(o.params, n.params)):
            kinds.append("parameters")
        (old_kind, old_value), (new_kind, new_value) = outcome(o), outcome(n)
        if old_kind != new_kind or (old_value is not None and new_value is not None and old_value != new_value):
            kinds.append("return")
        old_children, new_children = [c for _, c in o.children], [c for _, c in n.children]
        operations = Levenshtein.opcodes([c.function.ident for c in old_children], [c.function.ident for c in new_children])
        if any(tag != "equal" for tag, *_ in operations):
            kinds.append("calls")
        if kinds:
            found.append((n.function.ident, path, kinds))
        pairs = [pair for tag, a0, a1, b0, b1 in operations if tag == "equal" for pair in zip(range(a0, a1), range(b0, b1))]
        stack.extend((old_children[a], new_children[b], (*path, b)) for a, b in reversed(pairs))
    return found


def streaming_divergences(old: Path, new: Path) -> list[list[Found]]:
    old_file, new_file = TraceFile(old), TraceFile(new)
    assert len(old_file.entries) == len(new_file.entries)
    return [[(d.function, d.path, d.kinds) for d in compare_entry_points(EntryRef(old_file, i), EntryRef(new_file, i))]
            for i in range(len(old_file.entries))]


def reference(old: Path, new: Path) -> list[list[Found]]:
    return [reference_divergences(o, n) for o, n in zip(read_trace(old).entry_points, read_trace(new).entry_points, strict=True)]


@pytest.fixture
def decoded(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts ``TraceFile.columns`` calls: entry points with equal digests must not be decoded."""
    calls: list[int] = []
    original = TraceFile.columns

    def counting(self: TraceFile, entry: int, *args: Any, **kwargs: Any) -> Any:
        calls.append(entry)
        return original(self, entry, *args, **kwargs)

    monkeypatch.setattr(TraceFile, "columns", counting)
    return calls


# -- generated pairs -------------------------------------------------------------------------

VALUES: list[Any] = [0, 1, 2, -3, 2**40, "a", "b", None, True, Val("app.Point", "{x=1}"), Val("app.Point", "{x=2}"), (1, 2)]
EXCEPTIONS = [Val("ValueError", "('bad',)"), Val("KeyError", "('k',)")]


def functions(rng: random.Random) -> list[Fn]:
    made = []
    for number in range(rng.randint(3, 6)):
        first = rng.randrange(1, 400)
        size = rng.randint(2, 8)
        code = tuple(sorted(rng.sample(range(first + 1, first + 2 * size + 2), size)))
        params = tuple(f"a{k}" for k in range(rng.choice([0, 1, 2])))
        made.append(Fn(f"app.mod{number % 2}:f{number}", f"app/mod{number % 2}.py", first, code, params,
                       number > 0 and rng.random() < 0.25))
    return made


class Trees:
    """Random entry points over a few functions; lines are code lines, generators are resumed by their caller."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.functions = functions(rng)
        self.count = 0

    def node(self, depth: int, plain: bool = False) -> Node:
        rng = self.rng
        fn = rng.choice([f for f in self.functions if not (plain and f.generator)])
        self.count += 1
        node = Node(fn, tuple(rng.choice(VALUES) for _ in fn.params), returns=rng.choice(VALUES), name=f"g{self.count}")
        if rng.random() < 0.1:
            node.raises = rng.choice(EXCEPTIONS)
        started: list[str] = []
        for _ in range(rng.randint(1, 7)):
            roll = rng.random()
            if roll < 0.5:
                node.body.append(rng.choice(fn.code_lines))
            elif roll < 0.8 and depth < 4:
                child = self.node(depth + 1)
                node.body.append(child)
                if child.fn.generator:
                    started.append(child.name or "")
            elif fn.generator and roll < 0.9:
                node.body.append(Yield(rng.choice(VALUES)))
            elif started:
                node.body.append(Resume(rng.choice(started)))
        return node

    def steps(self) -> list[Step]:
        return [Entry(self.node(0, plain=True), self.rng.choice([0, 0, 1]), (f"tests/test_app.py::test_{k}", "call"))
                for k in range(self.rng.randint(1, 4))]


def nodes(steps: list[Step]) -> Iterator[Node]:
    stack = [step.node for step in steps if isinstance(step, Entry)]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(item for item in node.body if isinstance(item, Node))


def mutate(steps: list[Step], kind: str, rng: random.Random, trees: Trees) -> list[Step]:
    """A copy of ``steps`` with one change of ``kind``."""
    new = copy.deepcopy(steps)
    every = list(nodes(new))
    node = rng.choice(every)
    if kind == "value" and rng.random() < 0.7:
        node = rng.choice([n for n in every if n.args] or every)
    lines = [k for k, item in enumerate(node.body) if isinstance(item, int)]
    children = [k for k, item in enumerate(node.body) if isinstance(item, Node) and not item.fn.generator]
    if kind == "lines":
        code = node.fn.code_lines
        if lines and rng.random() < 0.5:
            node.body[rng.choice(lines)] = rng.choice(code)
        elif lines and rng.random() < 0.5:
            del node.body[rng.choice(lines)]
        else:
            node.body.insert(rng.randrange(len(node.body) + 1), rng.choice(code))
    elif kind == "value":
        if node.args and rng.random() < 0.6:
            args = list(node.args)
            args[rng.randrange(len(args))] = rng.choice(VALUES)
            node.args = tuple(args)
        else:
            node.returns = rng.choice(VALUES)
    elif kind == "unrecorded":
        node.args = tuple(UNRECORDED for _ in node.args)
        node.returns = UNRECORDED
    elif kind == "remove call" and children:
        del node.body[rng.choice(children)]
    elif kind in ("add call", "remove call"):
        node.body.insert(rng.randrange(len(node.body) + 1), trees.node(3, plain=True))
    elif kind == "replace call" and children:
        at = rng.choice(children)
        node.body[at] = Node(rng.choice([f for f in trees.functions if not f.generator]))
    elif kind == "raise":
        node.raises = None if node.raises is not None else rng.choice(EXCEPTIONS)
    elif kind in ("comment", "move"):
        fn = node.fn
        if kind == "comment":  # a comment line inserted after ``cut``: later lines move down, positions stay
            cut = rng.choice(fn.code_lines)
            shift = {line: line + (line > cut) for line in range(fn.first_line, fn.code_lines[-1] + 1)}
            moved = Fn(fn.ident, fn.file, fn.first_line, tuple(shift[line] for line in fn.code_lines), fn.params, fn.generator)
        else:  # the whole function moves down (code inserted above it)
            shift = {line: line + 7 for line in range(fn.first_line, fn.code_lines[-1] + 1)}
            moved = Fn(fn.ident, fn.file, fn.first_line + 7, tuple(shift[line] for line in fn.code_lines), fn.params, fn.generator)
        for other in nodes(new):
            if other.fn == fn:
                other.fn = moved
                other.body = [shift[item] if isinstance(item, int) else item for item in other.body]
    return new


NEUTRAL = {"identical", "comment", "move", "unrecorded"}
"""Changes without behaviour (or with values that are unknown): no divergence."""
KINDS = ["identical", "lines", "value", "unrecorded", "remove call", "add call", "replace call", "raise", "comment", "move"]
PAIRS = 150


@dataclass
class Pair:
    old: Path
    new: Path
    kind: str


def make_pair(seed: int, directory: Path) -> Pair:
    rng = random.Random(seed)
    trees = Trees(rng)
    old_steps = trees.steps()
    kind = KINDS[seed % len(KINDS)]
    new_steps = mutate(old_steps, kind, rng, trees)
    if kind not in NEUTRAL and rng.random() < 0.3:  # sometimes two changes
        new_steps = mutate(new_steps, rng.choice(KINDS[1:]), rng, trees)
    options = {"line_budget": rng.choice([0, 0, 0, 2])}
    old = write_trace(directory / f"old-{seed}.htrace", old_steps, **options).path
    new = write_trace(directory / f"new-{seed}.htrace", new_steps, **options).path
    return Pair(old, new, kind)


@pytest.mark.parametrize("implementation", ["c", "python"])
@pytest.mark.parametrize("block", range(5))
def test_streaming_comparison_finds_what_the_reference_finds(block: int, implementation: str, tmp_path: Path, decoded: list[int],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """With the C decoder and walk, and with their Python references (where no compiler built them)."""
    from histeg.traces import seal

    if implementation == "python":
        monkeypatch.setattr(seal, "_decode", None)
    elif not seal.native():
        pytest.skip("the C decoder is not built")
    kinds: set[str] = set()
    for seed in range(block * PAIRS // 5, (block + 1) * PAIRS // 5):
        pair = make_pair(seed, tmp_path)
        decoded.clear()
        streaming = streaming_divergences(pair.old, pair.new)
        streamed = list(decoded)  # before read_trace decodes everything for the reference
        expected = reference(pair.old, pair.new)
        assert streaming == expected, f"seed {seed} ({pair.kind})"
        if pair.kind in NEUTRAL:
            assert streaming == [[]] * len(streaming), f"seed {seed} ({pair.kind})"
        if pair.kind in NEUTRAL - {"unrecorded"}:
            assert streamed == [], f"seed {seed} ({pair.kind}): equal digests, yet entry points were decoded"
        kinds.update(kind for entry in streaming for _, _, found in entry for kind in found)
    assert kinds == {"lines", "parameters", "return", "calls"}, "the mutations should make every kind of divergence"


def test_identical_traces_are_not_decoded(tmp_path: Path, decoded: list[int]) -> None:
    steps = Trees(random.Random(7)).steps()
    old = write_trace(tmp_path / "old.htrace", steps).path
    new = write_trace(tmp_path / "new.htrace", copy.deepcopy(steps), chunk_words=4).path  # other chunks, same events
    assert streaming_divergences(old, new) == [[]] * len(TraceFile(old).entries)
    assert decoded == []
    assert reference(old, new) == [[]] * len(TraceFile(old).entries)


# -- deep recursion ------------------------------------------------------------------------------

DOWN = Fn("app.deep:down", "app/deep.py", 1, (2, 3, 4, 5), ("n",))
LEAF = Fn("app.deep:leaf", "app/deep.py", 8, (9,), ())
TEST = Fn("tests.test_deep:test_down", "tests/test_deep.py", 3, (4, 5), ())
DEPTH = 5_000


def recursion(depth: int, bottom_lines: list[int], bottom_calls: list[Node], offset: int = 0) -> list[Step]:
    """``down(depth)`` down to ``down(0)``, built iteratively; each level returns ``n + offset``."""
    node = Node(DOWN, (0,), [2, *bottom_lines, *bottom_calls], returns=offset)
    for n in range(1, depth + 1):
        node = Node(DOWN, (n,), [2, 4, node, 5], returns=n + offset)
    return [Entry(Node(TEST, (), [4, node, 5]))]


def test_deep_recursion_a_line_changed_at_the_bottom(tmp_path: Path, decoded: list[int]) -> None:
    old = write_trace(tmp_path / "old.htrace", recursion(DEPTH, [3], [])).path
    new = write_trace(tmp_path / "new.htrace", recursion(DEPTH, [4], [])).path
    found = streaming_divergences(old, new)
    assert decoded == [0, 0]
    assert found == reference(old, new)
    assert found == [[("app.deep:down", (0,) * (DEPTH + 1), ["lines"])]]


def test_deep_recursion_a_call_added_at_the_bottom_and_every_return_changed(tmp_path: Path) -> None:
    old = write_trace(tmp_path / "old.htrace", recursion(DEPTH, [3], [])).path
    new = write_trace(tmp_path / "new.htrace", recursion(DEPTH, [3], [Node(LEAF, (), [9])], offset=1)).path
    found = streaming_divergences(old, new)
    assert found == reference(old, new)
    (entry,) = found
    assert len(entry) == DEPTH + 1 and entry[0] == ("app.deep:down", (0,), ["return"])
    assert entry[-1] == ("app.deep:down", (0,) * (DEPTH + 1), ["return", "calls"])


def test_deep_recursion_identical_is_not_decoded(tmp_path: Path, decoded: list[int]) -> None:
    old = write_trace(tmp_path / "old.htrace", recursion(DEPTH, [3], [])).path
    new = write_trace(tmp_path / "new.htrace", recursion(DEPTH, [3], [])).path
    assert streaming_divergences(old, new) == [[]] and decoded == []


# -- what the materialised calls cannot say ---------------------------------------------------------------


def test_a_raise_whose_value_was_not_recorded_still_reads_as_a_raise(tmp_path: Path) -> None:
    f = Fn("app.core:f", "app/core.py", 1, (2, 3), ("x",))
    main = Fn("tests.test_core:test_f", "tests/test_core.py", 1, (2,), ())

    def steps(second: Node) -> list[Step]:
        return [Entry(Node(main, (), [2, Node(f, (1,), [2]), second]))]

    old = write_trace(tmp_path / "old.htrace", steps(Node(f, (2,), [2, 3], returns=5)), value_budget=1).path
    new = write_trace(tmp_path / "new.htrace", steps(Node(f, (2,), [2, 3], raises=Val("ValueError", "('x',)"))), value_budget=1).path
    assert streaming_divergences(old, new) == [[("app.core:f", (1,), ["return"])]]
    assert reference(old, new) == streaming_divergences(old, new)
