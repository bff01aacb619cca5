"""The C splitter and decoder (``_decode.c``) against the Python reference (``events.py``), on real files.

Why: sealing and every comparison run the C code, while ``events.py`` is the
specification; a silent difference would change digests (entry points
compared as identical or not) or call trees. The traces are written by
``trace_builder`` as the tracer would write them: random call trees with
values, exceptions, generators resumed in other entry points and on other
threads, line and value budgets, calls whose end was never reported, traces
cut short, and a recursion 5,000 levels deep. Each is also checked against
the builder's own record of what it wrote, so both decoders agreeing on a
wrong answer does not pass.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import random
import shutil
import sys
from array import array
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pytest

from histeg.errors import HistegError
from histeg.tracing import activation
from histeg.traces import events, seal
from histeg.tracing import format as fmt
from histeg.traces.call_tree import Call, Trace
from histeg.traces.reader import TraceFile, read_trace
from histeg.traces.records import Definitions, Function, parse_record, varint
from tests.tracing.trace_builder import (
    UNRECORDED, Entry, Fn, Node, Resume, Step, TraceBuilder, Traced, Val, Yield, play, write_trace,
)

NATIVE = seal.native()
needs_c = pytest.mark.skipif(not NATIVE, reason="histeg.traces._decode is not built (or the machine is big-endian): "
                             "only the Python reference runs; build it with `pip install -e .`")
CASES = 200
DEPTH = 5_000


# -- the builder writes what the tracer writes ----------------------------------------------------

TRACED_MODULE = """
def outer(x):
    a = inner(x) + inner(x) + inner(x)
    g = numbers()
    b = next(g)
    try:
        fail()
    except ValueError:
        pass
    c = next(g)
    g.close()
    return a + b + c


def inner(x):
    return x * 2


def numbers():
    yield 1
    yield 2


def fail():
    raise ValueError("boom")
"""


def raw_records(path: Path) -> tuple[Definitions, list[tuple[int, bytes]]]:
    """The definitions and the chunks of an unsealed trace, in file order."""
    with open(path, "rb") as handle:
        _, meta, body = fmt.read_header(handle)
        handle.seek(body)
        assert not seal.is_sealed(meta)
        stream = seal.StreamBody(handle, meta)
        raw = bytearray()
        while (block := stream.read()) is not None:
            raw += block
    definitions, chunks = Definitions(), []
    pos, ended = 0, False
    while not ended:
        assert raw[pos] != fmt.REC_DEFLATE  # small traces stay raw
        pos, ended = parse_record(raw, pos, definitions, lambda thread, words: chunks.append((thread, bytes(words))))
    return definitions, chunks


COLLECTORS = ["python", pytest.param("c", marks=pytest.mark.skipif(
    importlib.util.find_spec("histeg.tracing._ctracer") is None, reason="the C collector (_ctracer) is not built"))]


@pytest.mark.parametrize("tracer", COLLECTORS)
def test_the_builder_writes_what_the_tracer_writes(tracer: str, tmp_path: Path) -> None:
    """The real collector traces a small module in this process; the builder, given the same calls,
    must write the same chunks word for word: call flags, labels, generator ids, value ids, ends, and
    budgets (the third ``inner`` call of an entry point records no lines and no values, and the next
    entry point turns its lines on again)."""
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "fidelity_mod.py").write_text(TRACED_MODULE)
    spec = importlib.util.spec_from_file_location("fidelity_mod", root / "src" / "fidelity_mod.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    config = activation.TraceConfig(root=str(root), sources=["src"], tests=[], trace_dir=str(tmp_path / "traces"), tracer=tracer,
                                    line_budget=2, value_budget=2)
    collector = activation.start(config)
    try:
        for test in ("t::first", "t::second"):
            collector.set_label(test, "call")
            assert module.outer(3) == 18 + 1 + 2
    finally:
        path = Path(activation.stop())
    definitions, chunks = raw_records(path)

    fns = {f.ident.split(":")[1]: Fn(f.ident, f.file, f.first_line, f.code_lines, f.params, f.kind == "generator")
           for f in definitions.functions.values()}
    line = {text.strip(): number for number, text in enumerate(TRACED_MODULE.splitlines(), 1) if text.strip()}
    outer, inner, numbers, fail = fns["outer"], fns["inner"], fns["numbers"], fns["fail"]

    def entry(test: str) -> Entry:
        # ``g.close()`` throws GeneratorExit into the generator up to 3.12; 3.13 closes a generator
        # suspended outside any try block without resuming it, so the tracer sees nothing.
        closing = [Resume(test)] if sys.version_info < (3, 13) else []
        gen = Node(numbers, (), [line["yield 1"], Yield(1), line["yield 2"], Yield(2)], raises=GeneratorExit(), name=test)
        body = [line["a = inner(x) + inner(x) + inner(x)"], *(Node(inner, (3,), [line["return x * 2"]], returns=6) for _ in range(3)),
                line["g = numbers()"], line["b = next(g)"], gen, line["try:"], line["fail()"],
                Node(fail, (), [line['raise ValueError("boom")']], raises=ValueError("boom")), line["except ValueError:"],
                line["pass"], line["c = next(g)"], Resume(test), line["g.close()"], *closing, line["return a + b + c"]]
        return Entry(Node(outer, (3,), body, returns=21), label=(test, "call"))

    steps = [entry("t::first"), entry("t::second")]
    built = write_trace(tmp_path / "built.htrace", steps, value_budget=config.value_budget, line_budget=config.line_budget)
    built_definitions, built_chunks = raw_records(built.path)
    assert built_chunks == chunks
    assert (built_definitions.values, built_definitions.labels) == (definitions.values, definitions.labels)
    assert built_definitions.functions == definitions.functions
    words = array("H", b"".join(words for _, words in chunks))
    assert words.count(fmt.OP_LINES_OFF) == 2 and words.count(fmt.OP_LINES_ON) == 1, "the budgets were not exercised"


# -- random traces -----------------------------------------------------------------------

VALUES: list[Any] = [0, 1, -1, 7, 2**29, -(2**30), 2**30, 2**40, -(2**31) - 5, "", "a", "text with spaces", None, True, False,
                     1.5, Val("pkg.Thing", "{a=1}"), Val("pkg.Thing", "{a=2}"), Val("pkg.Opaque"), UNRECORDED, (1, "x")]
EXCEPTIONS: list[Any] = [Val("ValueError", "('boom',)"), Val("KeyError", "('k',)"), Val("StopIteration"), UNRECORDED]


def random_functions(rng: random.Random) -> list[Fn]:
    functions = []
    for number in range(rng.randint(2, 7)):
        first = rng.choice([1, 10, rng.randrange(1, 5000), fmt.MAX_LINE - 20])
        size = rng.randint(1, 12)
        code = tuple(sorted(rng.sample(range(first, min(first + 2 * size + 1, fmt.MAX_LINE + 1)), size)))
        params = tuple(f"p{k}" for k in range(rng.choice([0, 0, 1, 2, 3])))
        functions.append(Fn(f"pkg.mod{number % 3}:f{number}", f"pkg/mod{number % 3}.py", first, code, params, rng.random() < 0.35))
    return functions


def random_line(rng: random.Random, fn: Fn) -> int:
    """Mostly code lines; sometimes a line that is not one (its position falls back to an offset)."""
    roll = rng.random()
    if roll < 0.85 and fn.code_lines:
        return rng.choice(fn.code_lines)
    if roll < 0.9:
        return max(0, fn.first_line - rng.randint(1, 3))
    return min(fmt.MAX_LINE, fn.first_line + rng.randint(0, 40))


class RandomScript:
    """Random steps: trees with lines, values, exceptions, yields; resumptions of earlier generators."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.functions = random_functions(rng)
        self.generators: list[str] = []
        self.calls = 0

    def node(self, depth: int, inside_generator: bool) -> Node:
        rng = self.rng
        fn = rng.choice(self.functions)
        self.calls += 1
        node = Node(fn, tuple(rng.choice(VALUES) for _ in fn.params), returns=rng.choice(VALUES))
        if rng.random() < 0.15:
            node.raises = rng.choice(EXCEPTIONS)
        if fn.generator:
            node.name = f"g{self.calls}"
        generator = inside_generator or fn.generator
        for _ in range(rng.randint(0, 6)):
            roll = rng.random()
            if roll < 0.55:
                node.body.append(random_line(rng, fn))
            elif roll < 0.8 and depth < 5 and self.calls < 120:
                node.body.append(self.node(depth + 1, generator))
            elif roll < 0.9 and fn.generator:
                node.body.append(Yield(rng.choice(VALUES)))
            elif not generator and self.generators:
                # Only calls outside any generator resume one: no thread can then wait for a generator
                # that waits for it, and a generator is never resumed inside its own activation.
                node.body.append(Resume(rng.choice(self.generators)))
        if rng.random() < 0.03 and not generator:
            node.unreported = True
        if node.name is not None and not inside_generator:  # one inside a generator may not have started yet
            self.generators.append(node.name)
        return node

    def steps(self, threads: int) -> list[Step]:
        rng = self.rng
        labels = [("tests/test_a.py::test_one", "call"), ("tests/test_a.py::test_one", "teardown"),
                  ("tests/test_b.py::test_two", "call"), None]
        steps: list[Step] = []
        for _ in range(rng.randint(1, 8)):
            thread = rng.randrange(threads)
            if self.generators and rng.random() < 0.2:
                steps.append(Resume(rng.choice(self.generators), thread))
            else:
                steps.append(Entry(self.node(0, False), thread, rng.choice(labels)))
        return steps


@dataclasses.dataclass
class Case:
    seed: int
    path: Path
    builder: TraceBuilder
    threads: int
    cut: bool
    """The file was cut at a random byte (a process killed mid-write): the builder's truth does not apply."""


def random_case(seed: int, directory: Path) -> Case:
    rng = random.Random(seed)
    script = RandomScript(rng)
    threads = rng.choice([1, 1, 2, 3])
    steps = script.steps(threads)
    options = {
        "values": rng.random() < 0.85,
        "value_budget": rng.choice([0, 0, 1, 2]),
        "line_budget": rng.choice([0, 0, 1, 2, 3]),
        "chunk_words": rng.choice([fmt.CHUNK_WORDS, 3, 8, 64]),
    }
    stop_after = rng.randrange(1, 300) if rng.random() < 0.15 else None
    path = directory / f"case-{seed}.htrace"
    builder = TraceBuilder(path, **options)
    play(builder, steps, rng if threads > 1 or rng.random() < 0.5 else None, stop_after)
    builder.close(complete=rng.random() > 0.1)
    cut = rng.random() < 0.08
    if cut:
        data = path.read_bytes()
        path.write_bytes(data[: rng.randrange(len(data) // 2, len(data))])
    return Case(seed, path, builder, threads, cut)


# -- comparisons ---------------------------------------------------------------------------


def assert_same_columns(c: events.Columns, python: events.Columns, where: str) -> None:
    for item in dataclasses.fields(events.Columns):
        assert getattr(c, item.name) == getattr(python, item.name), f"{where}: column {item.name} differs"


def split(path: Path) -> tuple[seal.Parts, list[bytes]]:
    """A stream split and indexed, with each entry point's words in start order."""
    words: dict[int, bytes] = {}
    parts = seal.split_stream(path, lambda number, _, data: words.__setitem__(number, bytes(data)))
    return parts, [words[number] for number in range(len(words))]


def assert_same_parts(c: tuple[seal.Parts, list[bytes]], python: tuple[seal.Parts, list[bytes]], where: str) -> None:
    for item in dataclasses.fields(seal.Parts):
        if item.name == "entries":
            assert index_entries(c[0].entries) == index_entries(python[0].entries), f"{where}: entries differ"
        else:
            assert getattr(c[0], item.name) == getattr(python[0], item.name), f"{where}: {item.name} differs"
    assert c[1] == python[1], f"{where}: the entry points' words differ"


def index_entries(entries: list[seal.EntryInfo]) -> list[tuple[Any, ...]]:
    """What an index says of each entry point, without where its words lie (in memory or in a block)."""
    return [(e.thread, e.function, e.label, e.end - e.start, e.digest, e.functions, e.line_events, e.calls) for e in entries]


def flat_call(root: Call) -> list[tuple[Any, ...]]:
    """A call tree as a pre-order list (nested == would recurse 5,000 levels deep)."""
    out = []
    stack: list[tuple[int, int, Call]] = [(0, 0, root)]
    while stack:
        depth, at, call = stack.pop()
        out.append((depth, at, call.function, call.thread, tuple(call.lines), tuple(call.params), call.returned, call.raised,
                    tuple(call.yielded), call.ended, call.label, call.phase, call.lines_complete, len(call.children)))
        stack.extend((depth + 1, position, child) for position, child in reversed(call.children))
    return out


def flat_trace(trace: Trace) -> tuple[Any, ...]:
    return (trace.version, trace.truncated, trace.broken, trace.line_events, trace.threads, trace.outcomes,
            [flat_call(root) for root in trace.entry_points])


def outcome(action: Callable[[], Any]) -> tuple[str, Any]:
    """("ok", result) or ("error", exception type): both implementations must end alike."""
    try:
        return "ok", action()
    except (ValueError, HistegError) as exc:
        return "error", type(exc).__name__


def position(function: Function, line: int) -> int:
    """The position a decoder gives an executed line: its index among code lines, else an offset."""
    if line in function.code_lines:
        return function.code_lines.index(line)
    return events.FALLBACK_BASE + line - function.first_line


def assert_matches_truth(case: Case, file: TraceFile, decoded: list[events.Columns]) -> None:
    """The decoded entry points are the calls the builder wrote, in the splitter's order (walked as trees:
    calls are numbered as they start, so a generator's later children come after other subtrees)."""
    roots = case.builder.file_roots
    assert len(file.entries) == len(roots), f"seed {case.seed}: entry points"
    functions = file.definitions.functions
    for entry, root in enumerate(roots):
        c = decoded[entry]
        assert file.entries[entry].label == root.label
        seen = 0
        stack: list[tuple[int, Traced]] = [(0, root)]
        while stack:
            index, truth = stack.pop()
            seen += 1
            where = f"seed {case.seed}, entry {entry}, call {index}"
            function = functions[truth.fid]
            assert c.function[index] == truth.fid and c.thread[index] == truth.thread and c.at[index] == truth.at, where
            assert c.end[index] == truth.end and (truth.end == 0 or c.result[index] == truth.result), where
            assert c.lines[c.line_start[index] : c.line_start[index + 1]].tolist() == [position(function, n) for n in truth.lines], where
            assert c.params[c.param_start[index] : c.param_start[index + 1]].tolist() == truth.params, where
            assert c.yields[c.yield_start[index] : c.yield_start[index + 1]].tolist() == truth.yields, where
            children = c.children[c.child_start[index] : c.child_start[index + 1]].tolist()
            assert len(children) == len(truth.children), where
            assert not (c.complete[index] and truth.lines_lost), f"{where}: lines were lost, yet the call is complete"
            assert c.complete[index] or truth.off_while_alive, f"{where}: incomplete, yet its lines were never off"
            stack.extend(zip(children, truth.children))
        assert seen == len(c), f"seed {case.seed}, entry {entry}: calls"


def check_case(case: Case, directory: Path, python_reference: Callable[[], Any]) -> None:
    """Splitting, index, columns, sealing and reading: C and Python alike (and like the truth)."""
    path = case.path
    c_split = outcome(lambda: split(path))
    with python_reference():
        py_split = outcome(lambda: split(path))
    assert c_split[0] == py_split[0], f"seed {case.seed}: C {c_split}, Python {py_split}"
    if c_split[0] == "error":
        assert case.cut, f"seed {case.seed}: a trace as the tracer writes it does not split: {c_split}"
        return
    assert_same_parts(c_split[1], py_split[1], f"seed {case.seed}")
    c_parts, py_parts = c_split[1][0], py_split[1][0]

    c_decode = seal.decoder(c_parts.definitions)
    with python_reference():
        py_decode = seal.decoder(py_parts.definitions)
    file = TraceFile(path)
    assert index_entries(file.entries) == index_entries(c_parts.entries)
    decoded = [py_decode(file.words(entry)) for entry in range(len(file.entries))]
    for entry, columns in enumerate(decoded):
        assert_same_columns(c_decode(file.words(entry)), columns, f"seed {case.seed}, entry {entry}")
        lean = py_decode(file.words(entry), False)  # as comparisons decode: without the yielded values
        assert_same_columns(c_decode(file.words(entry), False), lean, f"seed {case.seed}, entry {entry}, without yields")
        assert len(lean.yields) == 0 and lean.digests == columns.digests
    if not case.cut:
        assert_matches_truth(case, file, decoded)

    unsealed = flat_trace(read_trace(path))
    with python_reference():
        assert flat_trace(read_trace(path)) == unsealed, f"seed {case.seed}: read_trace, Python"
    sealed_c, sealed_py = directory / f"c-{case.seed}.htrace", directory / f"py-{case.seed}.htrace"
    shutil.copyfile(path, sealed_c)
    shutil.copyfile(path, sealed_py)
    assert seal.seal(sealed_c)
    with python_reference():
        assert seal.seal(sealed_py)
    assert sealed_c.read_bytes() == sealed_py.read_bytes(), f"seed {case.seed}: sealed files differ"
    assert index_entries(TraceFile(sealed_c).entries) == index_entries(c_parts.entries)
    assert flat_trace(read_trace(sealed_c)) == unsealed, f"seed {case.seed}: read_trace sealed, C"
    with python_reference():
        assert flat_trace(read_trace(sealed_c)) == unsealed, f"seed {case.seed}: read_trace sealed, Python"


@needs_c
@pytest.mark.parametrize("block", range(10))
def test_random_traces_decode_alike(block: int, tmp_path: Path, python_reference: Callable[[], Any]) -> None:
    for seed in range(block * CASES // 10, (block + 1) * CASES // 10):
        check_case(random_case(seed, tmp_path), tmp_path, python_reference)


def test_random_traces_match_the_truth_in_python(tmp_path: Path, python_reference: Callable[[], Any]) -> None:
    """Without the C module, the reference is still checked against what was written (and sealing against reading)."""
    with python_reference():
        for seed in range(0, CASES, 10):
            case = random_case(seed, tmp_path)
            if case.cut:
                continue
            file = TraceFile(case.path)
            decode = seal.decoder(file.definitions)
            assert_matches_truth(case, file, [decode(file.words(entry)) for entry in range(len(file.entries))])
            sealed = tmp_path / f"sealed-{seed}.htrace"
            shutil.copyfile(case.path, sealed)
            seal.seal(sealed)
            assert flat_trace(read_trace(sealed)) == flat_trace(read_trace(case.path))


def test_the_random_traces_cover_what_they_should(tmp_path: Path) -> None:
    """The generator is only worth its cases if they hold every kind of event (checked on the truth)."""
    seen: set[str] = set()
    for seed in range(0, CASES, 2):
        case = random_case(seed, tmp_path)
        calls = case.builder.calls
        kinds = {
            "threads": len({c.thread for c in calls}) > 1,
            "resumed on another thread": any(c.parent is not None and c.parent.thread != c.thread for c in calls),
            "raise": any(c.end == 2 for c in calls),
            "running at the end": any(c.end == 0 for c in calls),
            "yield": any(c.yields for c in calls),
            "lines off": any(c.off_while_alive for c in calls),
            "inline int": any(v & fmt.INLINE_INT for c in calls for v in c.params),
            "unrecorded": any(v == 0 for c in calls for v in c.params),
            "several entry points": len(case.builder.file_roots) > 3,
            "stale calls closed": case.builder.stale_closed > 0,
            "truncated": not case.cut and fmt.read_status(str(case.path)) == "truncated",
            "cut": case.cut,
        }
        seen |= {kind for kind, present in kinds.items() if present}
    assert seen == set(kinds), set(kinds) - seen


def deep_recursion(depth: int) -> list[Step]:
    """``down(n)`` calling itself ``depth`` times, built without recursion; a generator resumed at the bottom."""
    down = Fn("pkg.deep:down", "pkg/deep.py", 1, (2, 3, 4), ("n",))
    numbers = Fn("pkg.deep:numbers", "pkg/deep.py", 6, (7, 8), (), generator=True)
    bottom = Node(down, (0,), [2, 3, Resume("numbers"), Resume("numbers")], returns=0)
    for n in range(1, depth + 1):
        bottom = Node(down, (n,), [2, 4, bottom, 4], returns=n)
    maker = Node(numbers, (), [7, Yield(0), 8, Yield(1), 8], name="numbers")
    return [Entry(Node(Fn("tests.test_deep:test", "tests/test_deep.py", 1, (2, 3)), (), [2, maker, 3, bottom]))]


@needs_c
def test_deep_recursion_decodes_alike(tmp_path: Path, python_reference: Callable[[], Any]) -> None:
    builder = write_trace(tmp_path / "deep.htrace", deep_recursion(DEPTH), line_budget=0)
    case = Case(-1, builder.path, builder, 1, False)
    check_case(case, tmp_path, python_reference)
    (root,) = read_trace(builder.path).entry_points
    assert sum(1 for _ in root.walk()) == DEPTH + 3


@needs_c
def test_deep_recursion_with_a_line_budget_decodes_alike(tmp_path: Path, python_reference: Callable[[], Any]) -> None:
    """The budget is spent at the fourth level: every running call above goes incomplete."""
    builder = write_trace(tmp_path / "deep.htrace", deep_recursion(1_000), line_budget=3, value_budget=2)
    check_case(Case(-2, builder.path, builder, 1, False), tmp_path, python_reference)
    (root,) = read_trace(builder.path).entry_points
    downs = [call for call in root.walk() if call.function.ident == "pkg.deep:down"]
    assert [call.lines_complete for call in downs[:5]] == [False] * 5 and all(call.params == [None] for call in downs[2:])


# -- corrupt streams ----------------------------------------------------------------------------

F = Fn("m:f", "m.py", 1, (2, 3), ("x",))
G = Fn("m:g", "m.py", 5, (6, 7), (), generator=True)
ROOT = [fmt.OP_CALL | fmt.CALL_ROOT, 1, 0, 0, 0, 1, 5, 0x8000]
"""A root call of function 1 (``m:f``), unlabelled, with one parameter (inline int)."""

CORRUPT_STREAMS: dict[str, list[int]] = {
    "call cut short": ROOT[:5],
    "parameters cut short": ROOT[:7],
    "return cut short": [*ROOT, 2, fmt.OP_RETURN, 5],
    "bare call cut short": [fmt.OP_CALL | fmt.CALL_ROOT | fmt.CALL_BARE, 1, 0, 0],
    "bare return after the root returned": [*ROOT, fmt.OP_RETURN, 0, 0, fmt.OP_RETURN_BARE],
    "thread marker in a raw stream": [*ROOT, fmt.OP_THREAD, 1, 0, fmt.OP_RETURN, 0, 0],
    "resume of an unknown generator": [*ROOT, fmt.OP_RESUME, 77, 0, fmt.OP_RETURN, 0, 0],
    "return on an empty stack": [fmt.OP_RETURN, 0, 0],
    "bare return on an empty stack": [fmt.OP_RETURN_BARE],
    "return after the root returned": [*ROOT, fmt.OP_RETURN, 0, 0, fmt.OP_RAISE, 0, 0],
}

CORRUPT_ENTRIES: dict[str, list[int]] = {
    **{name: [fmt.OP_THREAD, 0, 0, *words] for name, words in CORRUPT_STREAMS.items() if "on an empty stack" not in name},
    "bare return on an empty stack": [fmt.OP_THREAD, 0, 0, fmt.OP_RETURN_BARE],
    "return on an empty stack": [fmt.OP_THREAD, 0, 0, fmt.OP_RETURN, 0, 0],
    "call of an undefined function": [fmt.OP_THREAD, 0, 0, fmt.OP_CALL | fmt.CALL_ROOT, 9, 0, 0, 0, 0, fmt.OP_RETURN, 0, 0],
    "a second root call": [fmt.OP_THREAD, 0, 0, *ROOT, fmt.OP_RETURN, 0, 0, *ROOT, fmt.OP_RETURN, 0, 0],
    "no call at all": [fmt.OP_THREAD, 0, 0, 2, 3],
    "empty": [],
    "marker cut short": [fmt.OP_THREAD, 0, 0, *ROOT, fmt.OP_LINES_OFF, 1],
}
def implementations(kind: str, names: list[str]) -> list[Any]:
    """(name, implementation) pairs; C skipped when not built."""
    pairs = []
    for name in sorted(names):
        pairs.append(pytest.param(name, "c", marks=[needs_c], id=f"{name}-c"))
        pairs.append(pytest.param(name, "python", id=f"{name}-python"))
    return pairs


def corrupt_file(path: Path, words: list[int]) -> Path:
    """Definitions as the tracer writes them, then one chunk of ``words``."""
    builder = TraceBuilder(path)
    builder.function(F)
    builder.function(G)
    builder.chunk(0, words)
    return builder.close()


def split_words(implementation: str, words: list[int]) -> None:
    if implementation == "c":
        splitter = seal._decode.Splitter()
        splitter.feed(0, array("H", words).tobytes())
        splitter.finish()
    else:
        events.Splitter().feed(0, array("H", words))


@pytest.mark.parametrize(("name", "implementation"), implementations("streams", list(CORRUPT_STREAMS)))
def test_corrupt_streams_are_refused(name: str, implementation: str, tmp_path: Path, python_reference: Callable[[], Any]) -> None:
    words = CORRUPT_STREAMS[name]
    with pytest.raises(ValueError):
        split_words(implementation, words)
    path = corrupt_file(tmp_path / "corrupt.htrace", words)
    with python_reference() if implementation == "python" else nullcontext():
        with pytest.raises(HistegError) as raised:
            TraceFile(path)
        with pytest.raises(HistegError):
            read_trace(path)
    message = str(raised.value)
    assert message.startswith(f"corrupt trace file {path}: ") and "\n" not in message


@pytest.mark.parametrize(("name", "implementation"), implementations("entries", list(CORRUPT_ENTRIES)))
def test_corrupt_entry_streams_are_refused(name: str, implementation: str, tmp_path: Path,
                                           python_reference: Callable[[], Any]) -> None:
    """An entry point's stream damaged inside a sealed file: the decoder refuses it, TraceFile says so in one line."""
    good = write_trace(tmp_path / "good.htrace", [Entry(Node(F, (1,), [2, 3]), label=None)]).path
    seal.seal(good)
    file = TraceFile(good)
    definitions = file.definitions
    words = array("H", CORRUPT_ENTRIES[name]).tobytes()
    with python_reference() if implementation == "python" else nullcontext():
        decode = seal.decoder(definitions)
        with pytest.raises(ValueError):
            decode(words)
        file.words = lambda entry: words  # type: ignore[method-assign]
        with pytest.raises(HistegError) as raised:
            file.columns(0)
    assert str(raised.value).startswith(f"corrupt trace file {good}: entry point 0: ") and "\n" not in str(raised.value)


@needs_c
def test_a_chunk_of_odd_length_is_refused_by_both(tmp_path: Path, python_reference: Callable[[], Any]) -> None:
    builder = TraceBuilder(tmp_path / "odd.htrace")
    builder.function(F)
    builder.thread(0)
    builder.writer.chunk(0, array("H", [*ROOT, 2, fmt.OP_RETURN, 0, 0]).tobytes() + b"\x07")
    path = builder.close()
    with python_reference():
        with pytest.raises(HistegError):
            TraceFile(path)
    with pytest.raises(HistegError):
        TraceFile(path)


@needs_c
def test_a_huge_thread_index_is_read_alike(tmp_path: Path, python_reference: Callable[[], Any]) -> None:
    builder = TraceBuilder(tmp_path / "threads.htrace")
    builder.function(F)
    builder.writer.thread(1 << 21, 99, "far")
    builder.writer.chunk(1 << 21, array("H", [*ROOT, 2, fmt.OP_RETURN, 0, 0]).tobytes())
    path = builder.close()
    with python_reference():
        python = outcome(lambda: flat_trace(read_trace(path)))
    assert outcome(lambda: flat_trace(read_trace(path))) == python


# -- line budgets across threads ------------------------------------------------------------------

STEP = Fn("pkg.hot:step", "pkg/hot.py", 1, (2, 3), ("x",))
SPIN = Fn("pkg.hot:spin", "pkg/hot.py", 5, (6, 7, 8), ())
WORK = Fn("pkg.hot:work", "pkg/hot.py", 10, (11, 12), ())


def test_a_root_call_turns_every_function_on_whatever_the_file_order(tmp_path: Path) -> None:
    """Thread 0 spends ``step``'s budget; meanwhile a worker thread starts an entry point (lines back on) and
    ends first, so its chunk (LINES_ON) precedes thread 0's (LINES_OFF). A later test calls ``step`` once:
    all its lines are recorded, and it must decode complete."""
    builder = TraceBuilder(tmp_path / "threads.htrace", line_budget=2)
    builder.label("tests/test_hot.py::test_spin")
    builder.call(SPIN)
    for x in range(3):
        builder.call(STEP, x)
        builder.lines(2, 3)
        builder.ret(x)
    builder.call(WORK, thread=1)  # a worker's root call: the tracer turns every function's lines on again
    builder.lines(11, 12, thread=1)
    builder.ret(None, thread=1)
    builder.ret(None)
    builder.label("tests/test_hot.py::test_once")
    builder.call(STEP, 5)
    builder.lines(2, 3)
    builder.ret(5)
    path = builder.close()
    last = read_trace(path).entry_points[-1]
    assert last.function.ident == "pkg.hot:step" and last.lines == [1, 2]
    assert last.lines_complete, "all its lines were recorded"


def test_a_call_that_lost_lines_to_another_threads_budget_is_incomplete(tmp_path: Path) -> None:
    builder = TraceBuilder(tmp_path / "threads.htrace", line_budget=2)
    builder.call(WORK, thread=1)  # a worker: a long call of step, running while the main thread spends step's budget
    builder.call(STEP, 9, thread=1)
    builder.lines(2, thread=1)
    builder.call(SPIN)
    for x in range(3):
        builder.call(STEP, x)
        builder.lines(2, 3)
        builder.ret(x)
    builder.lines(3, thread=1)  # step's lines are off now: the worker's call loses this one
    builder.ret(9, thread=1)
    builder.ret(None, thread=1)  # the worker's entry point ends and ships before the main thread's
    builder.ret(None)
    path = builder.close()
    worker = next(call for call in read_trace(path).entry_points if call.function.ident == "pkg.hot:work")
    (_, step), = worker.children
    assert step.lines == [1]
    assert not step.lines_complete, "its second line was not recorded"


def test_a_call_that_ended_before_another_thread_spent_the_budget_is_complete(tmp_path: Path, python_reference: Callable[[], Any]) -> None:
    """A worker's call of ``step`` ends before thread 0 spends ``step``'s budget, but the worker's chunk holding it reaches
    the file after thread 0's (its entry point started in an earlier chunk). The budget was spent on thread 0: the
    worker's stream never said ``step`` was off, so its call decodes complete, in both splitters."""
    builder = TraceBuilder(tmp_path / "threads.htrace", line_budget=2, chunk_words=30)
    builder.call(WORK, thread=1)
    builder.call(SPIN, thread=1)
    builder.lines(*[6, 7] * 20, thread=1)
    builder.ret(None, thread=1)  # over 30 words: the worker's first chunk ships here
    builder.call(STEP, 9, thread=1)
    builder.lines(2, 3, thread=1)
    builder.ret(10, thread=1)  # a short chunk: it stays in the buffer
    builder.call(SPIN)
    for x in range(3):
        builder.call(STEP, x)
        builder.lines(2, 3)
        builder.ret(x)
    builder.ret(None)  # thread 0's entry point ends: its chunk, with step's LINES_OFF, ships
    builder.ret(None, thread=1)  # then the worker's second chunk
    path = builder.close()
    with python_reference():
        in_python = read_trace(path)
    for trace in (read_trace(path), in_python):
        worker = next(call for call in trace.entry_points if call.function.ident == "pkg.hot:work")
        (_, step) = worker.children[1]
        assert step.function.ident == "pkg.hot:step" and step.lines == [1, 2]
        assert step.lines_complete, "its lines were on all along"


def value_record(value_id: int, type_name: str, rep: str | None) -> bytes:
    shown = b"\x00" if rep is None else b"\x01" + fmt.text(rep)
    return bytes([fmt.REC_VALUE]) + fmt.varint(value_id) + fmt.text(type_name) + shown


def chunk_record(thread: int, words: list[int]) -> bytes:
    data = array("H", words).tobytes()
    return bytes([fmt.REC_CHUNK]) + fmt.varint(thread) + fmt.varint(len(data)) + data


@needs_c
def test_records_reads_value_and_chunk_runs_as_one_record_at_a_time_would() -> None:
    """Splitter.records takes the value and chunk records that follow each other in one call: the same values, ids and
    digests as value_records, the same entries as feeding each chunk, and it stops before any other record and before
    one cut short, wherever the cut is."""
    stream = [
        value_record(5, "int", None),
        chunk_record(0, [*ROOT, 2]),
        value_record(6, "str", "'a'"),
        value_record(7, "list", "[1, 2]"),
        chunk_record(0, [3, fmt.OP_RETURN, 6, 0]),
        chunk_record(1, [*ROOT, 2, fmt.OP_RETURN, 7, 0]),
    ]
    data = b"".join(stream) + bytes([fmt.REC_LABEL]) + fmt.varint(1) + fmt.text("t::x") + fmt.text("call")
    boundaries = [sum(len(part) for part in stream[:k]) for k in range(len(stream) + 1)]
    values = [part for part in stream if part[0] == fmt.REC_VALUE]
    _, ids, spans, digests = seal._decode.value_records(b"".join(values), 0)
    one_at_a_time = seal._decode.Splitter()
    for part in stream:
        if part[0] == fmt.REC_CHUNK:
            at = 1
            thread, at = varint(part, at)
            _, at = varint(part, at)
            one_at_a_time.feed(thread, part[at:])
    expected = [(n, t, f, lb, bytes(w)) for n, t, f, lb, w in one_at_a_time.finish()]
    for cut in range(len(data) + 1):
        splitter = seal._decode.Splitter()
        end, read, read_ids, fields, read_digests = splitter.records(data[:cut], 0)
        assert end == max(b for b in boundaries if b <= cut), f"cut at {cut}"
        kept = [part for part in stream[: boundaries.index(end)] if part[0] == fmt.REC_VALUE]
        assert read == b"".join(kept) and len(read_ids) == len(read_digests) == len(fields) == 8 * len(kept)
        assert read_ids == ids[: 8 * len(kept)] and read_digests == digests[: 8 * len(kept)]
        assert array("Q", fields).tolist() == [sum(map(len, kept[:k])) + 1 + len(fmt.varint(5 + k)) for k in range(len(kept))]
        if end == boundaries[-1]:
            assert [(n, t, f, lb, bytes(w)) for n, t, f, lb, w in splitter.finish()] == expected
    with pytest.raises(ValueError, match="thread index"):
        seal._decode.Splitter().records(chunk_record(1 << 21, [*ROOT, 2]), 0)

