"""Reading ``.htrace`` files: entry points (traces) as call trees.

The file format is described in output_schema/trace-format.md and written by
``histeg.tracing.format``. A file whose end record is missing (the process
was killed) is read up to its last complete record and reported as
``truncated``; a file that is not a trace or is damaged raises a one-line
``HistegError``.
"""

from __future__ import annotations

import lzma
import re
import sys
import zlib
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from histeg.errors import HistegError
from histeg.tracing import format as fmt

READ_BLOCK = 1 << 20


@dataclass(frozen=True)
class Value:
    """An abstracted value: type name and repr (None where the type keeps the default repr)."""

    type: str
    repr: str | None

    def __str__(self) -> str:
        return self.type if self.repr is None else f"{self.type} {self.repr}"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "repr": self.repr}


@dataclass(frozen=True)
class Function:
    ident: str
    file: str
    first_line: int
    kind: str  # "function", "generator", "coroutine", "async generator"
    params: tuple[str, ...]


@dataclass(eq=False)
class Call:
    """One call of an instrumented function (all activations of a generator or coroutine)."""

    function: Function
    thread: int
    lines: list[int] = field(default_factory=list)
    """Executed lines, as offsets from the function's first line (``co_firstlineno``)."""
    children: list[tuple[int, Call]] = field(default_factory=list)
    """Nested calls with the number of this call's lines executed before each started."""
    params: list[Value | None] = field(default_factory=list)
    returned: Value | None = None
    raised: Value | None = None
    yielded: list[Value | None] = field(default_factory=list)
    ended: bool = False
    """False when the call was still running (or suspended) when the trace ended."""
    label: str | None = None
    """The entry point's label (a pytest node id), on root calls only."""
    phase: str | None = None
    lines_complete: bool = True
    """False when some of its lines were not recorded (the function's line budget in the entry
    point was spent): its line sequence is unknown to comparisons."""

    def __repr__(self) -> str:
        """Shallow: the dataclass default would recurse into the children and fail on deep trees."""
        return f"Call({self.function.ident!r}, thread={self.thread}, lines={len(self.lines)}, children={len(self.children)})"

    def walk(self) -> Iterator[Call]:
        """This call and every call below it, in pre-order.

        Iterative: recursion thousands of calls deep is common in traces and would exceed Python's recursion limit.
        """
        stack = [self]
        while stack:
            call = stack.pop()
            yield call
            stack.extend(child for _, child in reversed(call.children))

    def segments(self) -> Iterator[tuple[list[int], Call | None]]:
        """Execution order: the lines run before each child call started, with that child; last the lines after it (``None``)."""
        start = 0
        for position, child in self.children:
            end = max(start, position)
            yield self.lines[start:end], child
            start = end
        yield self.lines[start:], None

    def to_json(self) -> dict[str, Any]:
        """The nested form of thesis figure 4.6: lines with the child calls in place.

        Built with an explicit stack, so that call trees of any depth convert.
        """
        root = self._json_node()
        stack = [(self, root["trace"])]
        while stack:
            call, trace = stack.pop()
            for lines, child in call.segments():
                trace.extend(lines)
                if child is not None:
                    node = child._json_node()
                    trace.append(node)
                    stack.append((child, node["trace"]))
        return root

    def _json_node(self) -> dict[str, Any]:
        """This call's own fields, with an empty ``trace`` for ``to_json`` to fill."""
        data: dict[str, Any] = {
            "called": self.function.ident,
            "kind": self.function.kind,
            "file": self.function.file,
            "firstLine": self.function.first_line,
            "thread": self.thread,
            "calledWithParameters": [_value_json(name, value) for name, value in zip(self.function.params, self.params)],
            "trace": [],
            "returned": None if self.returned is None else self.returned.to_json(),
            "raised": None if self.raised is None else self.raised.to_json(),
            "ended": self.ended,
        }
        if self.yielded:
            data["yielded"] = [None if value is None else value.to_json() for value in self.yielded]
        if not self.lines_complete:
            data["linesComplete"] = False
        if self.label is not None:
            data["entryPoint"] = {"label": self.label, "phase": self.phase}
        return data


def _value_json(name: str, value: Value | None) -> dict[str, Any]:
    return {"name": name, **({"type": None, "repr": None} if value is None else value.to_json())}


@dataclass
class Trace:
    """Everything one traced process recorded."""

    path: Path
    meta: dict[str, Any]
    version: int
    entry_points: list[Call]
    threads: dict[int, tuple[int, str]]
    """Thread index -> (thread ident, thread name)."""
    outcomes: dict[str, dict[str, str]]
    """pytest node id -> {phase: outcome}."""
    line_events: int
    truncated: bool
    broken: str | None = None
    """Why the trace is incomplete although closed: the tracer lost its sys.monitoring tool id."""

    def to_json(self) -> dict[str, Any]:
        """The nested form of the whole trace; call trees of any depth (``Call.to_json`` does not recurse)."""
        return {
            "schemaVersion": 1,
            "formatVersion": self.version,
            "meta": self.meta,
            "truncated": self.truncated,
            "broken": self.broken,
            "lineEvents": self.line_events,
            "threads": [{"index": index, "ident": ident, "name": name} for index, (ident, name) in sorted(self.threads.items())],
            "outcomes": self.outcomes,
            "traces": [call.to_json() for call in self.entry_points],
        }


def read_trace(path: Path, build: bool = True) -> Trace:
    """Read a whole trace file; ``build=False`` only counts (fast enough for benchmarks)."""
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            return _Reader(path, handle, build).read()
    except OSError as exc:
        raise HistegError(f"cannot read trace file {path}: {exc.strerror}") from None


def _decompressor(meta: dict[str, Any]) -> Any:
    """zlib as the tracer writes it, xz once ``format.compact`` has recompressed the body."""
    if meta.get("compression") == "xz":
        return lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
    return zlib.decompressobj()


def trace_files(directory: Path) -> list[Path]:
    """The trace files of a traces directory, oldest first (by name is by pid, so by mtime)."""
    return sorted(Path(directory).glob("*.htrace"), key=lambda p: (p.stat().st_mtime_ns, p.name))


class _NeedMore(Exception):
    """A record continues past the data decoded so far."""


class _Reader:
    def __init__(self, path: Path, handle: BinaryIO, build: bool) -> None:
        self.path = path
        self.handle = handle
        self.build = build
        self.functions: dict[int, Function] = {}
        self.values: dict[int, Value] = {}
        self.labels: dict[int, tuple[str, str]] = {}
        self.threads: dict[int, tuple[int, str]] = {}
        self.stacks: dict[int, list[Call]] = {}
        self.depths: dict[int, int] = {}
        self.generators: dict[int, Call] = {}
        self.outcomes: dict[str, dict[str, str]] = {}
        self.roots: list[Call] = []
        self.line_events = 0
        self.broken: str | None = None
        self.suspended: dict[int, Call] = {}
        """Generator and coroutine calls suspended now (by ``id``)."""
        self.silent: set[int] = set()
        """Functions whose line events are off (line budget spent) until the next entry point."""

    def fail(self, why: str) -> HistegError:
        return HistegError(f"corrupt trace file {self.path}: {why}")

    def read(self) -> Trace:
        version, meta, rest = self._header()
        decompressor = _decompressor(meta)
        data = bytearray(self._inflate(decompressor, rest))
        pos = 0
        ended = False
        while not ended:
            try:
                pos, ended = self._record(data, pos)
                continue
            except (_NeedMore, IndexError):
                pass
            block = self.handle.read(READ_BLOCK)
            if not block:
                break
            del data[:pos]
            pos = 0
            data += self._inflate(decompressor, block)
        truncated = not ended or fmt.read_status(str(self.path)) == "truncated"  # a clean close ends with the trailer
        return Trace(self.path, meta, version, self.roots, self.threads, self.outcomes, self.line_events, truncated=truncated, broken=self.broken)

    def _inflate(self, decompressor: Any, block: bytes) -> bytes:
        if decompressor.eof:
            return b""  # the trailer follows the stream
        try:
            return decompressor.decompress(block)
        except (zlib.error, lzma.LZMAError) as exc:
            raise self.fail(f"compressed data damaged ({exc})") from None

    def _header(self) -> tuple[int, dict[str, Any], bytes]:
        head = self.handle.read(len(fmt.MAGIC) + 1)
        if not head.startswith(fmt.MAGIC):
            raise HistegError(f"{self.path} is not a histeg trace file")
        if len(head) <= len(fmt.MAGIC):
            raise self.fail("header cut short")
        version = head[len(fmt.MAGIC)]
        if version != fmt.FORMAT_VERSION:
            raise HistegError(f"trace file {self.path} has format version {version}; this histeg reads version {fmt.FORMAT_VERSION}")
        self.handle.seek(0)
        try:
            _, meta, body = fmt.read_header(self.handle)
        except ValueError:
            raise self.fail("header cut short or damaged") from None
        self.handle.seek(body)
        return version, meta, self.handle.read(READ_BLOCK)

    def _record(self, data: bytearray, pos: int) -> tuple[int, bool]:
        if pos >= len(data):
            raise _NeedMore
        tag = data[pos]
        pos += 1
        if tag == fmt.REC_CHUNK:
            index, pos = _varint(data, pos)
            size, pos = _varint(data, pos)
            if pos + size > len(data):
                raise _NeedMore
            raw = bytes(data[pos : pos + size])
            words = array("H", raw)
            if sys.byteorder == "big":
                words.byteswap()
            (self._events if self.build else self._count)(index, words, raw)
            return pos + size, False
        if tag == fmt.REC_VALUE:
            value_id, pos = _varint(data, pos)
            type_name, pos = _text(data, pos)
            has_repr = data[pos]
            pos += 1
            rep = None
            if has_repr:
                rep, pos = _text(data, pos)
            self.values[value_id] = Value(type_name, rep)
            return pos, False
        if tag == fmt.REC_FUNC:
            (func_id, ident, relpath, first, flags, count), pos = _fields(data, pos, "vttvvv")
            names, pos = _fields(data, pos, "t" * count)
            self.functions[func_id] = Function(ident, relpath, first, _kind(flags), tuple(names))
        elif tag == fmt.REC_LABEL:
            (label_id, nodeid, phase), pos = _fields(data, pos, "vtt")
            self.labels[label_id] = (nodeid, phase)
        elif tag == fmt.REC_OUTCOME:
            (nodeid, phase, outcome), pos = _fields(data, pos, "ttt")
            self.outcomes.setdefault(nodeid, {})[phase] = outcome
        elif tag == fmt.REC_THREAD:
            (index, ident, name), pos = _fields(data, pos, "vvt")
            self.threads[index] = (ident, name)
        elif tag == fmt.REC_BROKEN:
            self.broken, pos = _text(data, pos)
        elif tag == fmt.REC_END:
            _, pos = _varint(data, pos)
            return pos, True
        else:
            raise self.fail(f"unknown record type {tag:#04x}")
        return pos, False
    def _value(self, value_id: int) -> Value | None:
        if value_id & fmt.INLINE_INT:
            return Value("int", str((value_id & ~fmt.INLINE_INT) - fmt.INT_BIAS))
        return self.values.get(value_id)

    def _lines_off(self, function_id: int) -> None:
        """A function's lines go off: its calls still running or suspended lose the rest of their lines."""
        self.silent.add(function_id)
        function = self.functions[function_id]
        running = [call for stack in self.stacks.values() for call in stack]
        for call in (*running, *self.suspended.values()):
            if call.function is function:
                call.lines_complete = False

    def _count(self, thread: int, words: array, raw: bytes) -> None:
        """``_events`` without building calls: only the depth of each thread's stack matters."""
        depth = self.depths.get(thread, 0)
        n = len(words)
        i = 0
        events = 0
        while i < n:
            word = words[i]
            if word <= fmt.MAX_LINE:
                end = _next_op(raw, i, n)
                if depth:
                    events += end - i
                i = end
            elif word & 0xFFF8 == fmt.OP_CALL:
                i += 3 + 2 * bool(word & fmt.CALL_ROOT) + 2 * bool(word & fmt.CALL_GEN)
                i += 1 + 2 * words[i] if i < n else 1
                depth += 1
            elif word == fmt.OP_RESUME:
                i += 3
                depth += 1
            elif word in (fmt.OP_LINES_OFF, fmt.OP_LINES_ON):
                i += 3
            elif word in (fmt.OP_RETURN, fmt.OP_RAISE, fmt.OP_YIELD) and depth:
                i += 3
                depth -= 1
            else:
                raise self.fail(f"inconsistent event stream in thread {thread}")
        self.depths[thread] = depth
        self.line_events += events

    def _events(self, thread: int, words: array, raw: bytes) -> None:
        """Replay one chunk of a thread's event stream (``raw``: its little-endian bytes) onto its call stack."""
        stack = self.stacks.setdefault(thread, [])
        value = self._value
        n = len(words)
        i = 0
        lines = stack[-1].lines if stack else None
        first = stack[-1].function.first_line if stack else 0
        events = 0
        try:
            while i < n:
                word = words[i]
                if word <= fmt.MAX_LINE:
                    end = _next_op(raw, i, n)
                    if stack:
                        events += end - i
                        lines.extend([line - first for line in words[i:end]])
                    i = end
                    continue
                if word & 0xFFF8 == fmt.OP_CALL:
                    function_id = words[i + 1] | words[i + 2] << 16
                    function = self.functions[function_id]
                    i += 3
                    call = Call(function, thread, lines_complete=function_id not in self.silent)
                    if word & fmt.CALL_ROOT:
                        label = self.labels.get(words[i] | words[i + 1] << 16)
                        if label is not None:
                            call.label, call.phase = label
                        i += 2
                    if word & fmt.CALL_GEN:
                        self.generators[words[i] | words[i + 1] << 16] = call
                        i += 2
                    count = words[i]
                    i += 1
                    call.params = [value(words[j] | words[j + 1] << 16) for j in range(i, i + 2 * count, 2)]
                    if stack:
                        parent = stack[-1]
                        parent.children.append((len(parent.lines), call))
                    else:
                        self.roots.append(call)
                    i += 2 * count
                    stack.append(call)
                elif word == fmt.OP_RESUME:
                    call = self.generators[words[i + 1] | words[i + 2] << 16]
                    i += 3
                    stack.append(call)
                    self.suspended.pop(id(call), None)
                elif word == fmt.OP_LINES_OFF:
                    self._lines_off(words[i + 1] | words[i + 2] << 16)
                    i += 3
                elif word == fmt.OP_LINES_ON:
                    self.silent.discard(words[i + 1] | words[i + 2] << 16)
                    i += 3
                elif word in (fmt.OP_RETURN, fmt.OP_RAISE, fmt.OP_YIELD):
                    result = value(words[i + 1] | words[i + 2] << 16)
                    i += 3
                    call = stack.pop()
                    if word == fmt.OP_YIELD:
                        call.yielded.append(result)
                        self.suspended[id(call)] = call
                    else:
                        call.ended = True
                        if word == fmt.OP_RETURN:
                            call.returned = result
                        else:
                            call.raised = result
                else:
                    raise self.fail(f"unknown event {word:#06x} in thread {thread}")
                lines = stack[-1].lines if stack else None
                first = stack[-1].function.first_line if stack else 0
        except (IndexError, KeyError) as exc:
            raise self.fail(f"inconsistent event stream in thread {thread} ({type(exc).__name__})") from None
        finally:
            self.line_events += events


_OP_WORD = re.compile(rb"[\xf0-\xff]\xff")
"""A little-endian word >= 0xFFF0 (an event marker; line numbers stop at 0xFFEF)."""


def _next_op(raw: bytes, start: int, end: int) -> int:
    """Index of the first marker word at or after word ``start``: lines in between need no decoding one by one."""
    found = _OP_WORD.search(raw, 2 * start)
    while found is not None and found.start() & 1:
        found = _OP_WORD.search(raw, found.start() + 1)
    return end if found is None else found.start() >> 1


def _kind(flags: int) -> str:
    generator = flags & fmt.FUNC_GENERATOR
    coroutine = flags & fmt.FUNC_COROUTINE
    if generator and coroutine:
        return "async generator"
    return "generator" if generator else "coroutine" if coroutine else "function"


def _varint(data: bytes | bytearray, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def _fields(data: bytes | bytearray, pos: int, kinds: str) -> tuple[list, int]:
    """Decode consecutive fields: ``v`` a varint, ``t`` a text."""
    values: list = []
    for kind in kinds:
        value, pos = _varint(data, pos) if kind == "v" else _text(data, pos)
        values.append(value)
    return values, pos


def _text(data: bytes | bytearray, pos: int) -> tuple[str, int]:
    size, pos = _varint(data, pos)
    if pos + size > len(data):
        raise _NeedMore
    return bytes(data[pos : pos + size]).decode("utf-8", "surrogatepass"), pos + size
