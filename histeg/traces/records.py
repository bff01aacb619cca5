"""The definition records of a trace (functions, values, labels, threads, outcomes) and their parser.

Both the stream a tracer writes and the definitions section of a sealed file
are sequences of these records (``output_schema/trace-format.md``); chunks of
event words appear only in streams and are handed to a callback.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from histeg.tracing import format as fmt


class NeedMore(Exception):
    """A record continues past the data at hand."""


@dataclass(frozen=True)
class Value:
    """An abstracted value: type name and repr (None where the type keeps the default repr)."""

    type: str
    repr: str | None

    def __str__(self) -> str:
        return self.type if self.repr is None else f"{self.type} {self.repr}"

    def to_json(self) -> dict[str, str | None]:
        return {"type": self.type, "repr": self.repr}


@dataclass(frozen=True)
class Function:
    ident: str
    file: str
    first_line: int
    kind: str  # "function", "generator", "coroutine", "async generator"
    params: tuple[str, ...]
    code_lines: tuple[int, ...] = ()
    """Sorted lines that carry code: executed lines are compared as positions among them."""

    def line_of(self, position: int) -> int:
        """The line number of a position (``events.decode``'s inverse)."""
        if position < len(self.code_lines):
            return self.code_lines[position]
        from histeg.traces.events import FALLBACK_BASE

        return self.first_line + position - FALLBACK_BASE


class ValueTable:
    """Value records kept as encoded (a suite records hundreds of thousands of values; a comparison
    reads the few that differ): by id, the record's fields after the id, decoded when asked."""

    def __init__(self) -> None:
        self._data = bytearray()
        self._where = array("Q")
        """By value id: offset + 1 of its fields in ``_data`` (0: no such value)."""
        self.last = 0
        """The id added last."""
        self._digests = array("Q")
        """By value id: its ``digest`` once known (0: not yet)."""
        self._runs: list[tuple[int, array, array, array]] = []
        """Runs added (``add_run``) and not yet placed by id: sealing keeps the records and never asks for one."""

    def add(self, value_id: int, fields: bytes | bytearray | memoryview) -> None:
        if self._runs:  # placed in the order they came: a record defined again replaces the one before
            self._place_runs()
        if value_id >= len(self._where):
            self._where.extend([0] * (value_id + 1 - len(self._where)))
        self._where[value_id] = len(self._data) + 1
        self._data += fields
        self.last = value_id

    def add_run(self, data: bytes | bytearray, start: int, end: int, ids: array, fields: array, digests: array) -> None:
        """The value records ``data[start:end]`` at once: ``ids``, the offsets in ``data`` of their fields
        (``_decode.value_records``) and their digests."""
        if not ids:
            return
        self._runs.append((len(self._data) + 1 - start, ids, fields, digests))
        self._data += data[start:end]
        self.last = ids[-1]

    def _place_runs(self) -> None:
        for shift, ids, fields, digests in self._runs:
            top = max(ids)
            if top >= len(self._where):
                self._where.extend([0] * (top + 1 - len(self._where)))
            if top >= len(self._digests):
                self._digests.extend([0] * (top + 1 - len(self._digests)))
            where, known = self._where, self._digests
            for value_id, at, digest in zip(ids, fields, digests, strict=True):
                where[value_id] = at + shift
                known[value_id] = digest
        self._runs.clear()

    def digest(self, value_id: int) -> int:
        """``text_hash(str(value))``: as read with its record's run, else from the encoded fields (no text decoded and encoded again)."""
        if self._runs:
            self._place_runs()
        if value_id < len(self._digests) and self._digests[value_id]:
            return self._digests[value_id]
        return value_digest(*self._raw(self._where[value_id]))

    def digests(self) -> Iterator[tuple[int, int]]:
        """(value id, digest) of every value."""
        if self._runs:
            self._place_runs()
        for value_id, where in enumerate(self._where):
            if where:
                yield value_id, self.digest(value_id)

    def get(self, value_id: int) -> Value | None:
        if self._runs:
            self._place_runs()
        where = self._where[value_id] if value_id < len(self._where) else 0
        return self._at(where) if where else None

    def latest(self) -> Value:
        """The value added last."""
        if self._runs:
            self._place_runs()
        return self._at(self._where[self.last])

    def _at(self, where: int) -> Value:
        type_name, rep = self._raw(where)
        return Value(type_name.decode("utf-8", "surrogatepass"), None if rep is None else rep.decode("utf-8", "surrogatepass"))

    def _raw(self, where: int) -> tuple[bytes, bytes | None]:
        """The encoded type name and repr (None: the type's default repr) of the value whose fields start at ``where`` - 1."""
        data = self._data
        size, pos = varint(data, where - 1)
        type_name = bytes(data[pos : pos + size])
        pos += size
        if not data[pos]:
            return type_name, None
        size, pos = varint(data, pos + 1)
        return type_name, bytes(data[pos : pos + size])

    def __len__(self) -> int:
        if self._runs:
            self._place_runs()
        return len(self._where) - self._where.count(0)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ValueTable) and dict(self.items()) == dict(other.items())

    __hash__ = None  # type: ignore[assignment]  # mutable and compared by content: unhashable, as object's int-returning __hash__ is not

    def items(self) -> Iterator[tuple[int, Value]]:
        if self._runs:
            self._place_runs()
        for value_id, where in enumerate(self._where):
            if where:
                yield value_id, self._at(where)


def text_hash(text: str) -> int:
    return bytes_hash(text.encode("utf-8", "surrogatepass"))


def bytes_hash(data: bytes | bytearray) -> int:
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


def value_digest(type_name: bytes | bytearray, rep: bytes | bytearray | None) -> int:
    """``text_hash(str(value))`` from a value record's encoded type name and repr (None: the type's default repr)."""
    return bytes_hash(type_name if rep is None else type_name + b" " + rep)


@dataclass
class Definitions:
    functions: dict[int, Function] = field(default_factory=dict)
    values: ValueTable = field(default_factory=ValueTable)
    labels: dict[int, tuple[str, str]] = field(default_factory=dict)
    threads: dict[int, tuple[int, str]] = field(default_factory=dict)
    """Thread index -> (thread ident, thread name)."""
    outcomes: dict[str, dict[str, str]] = field(default_factory=dict)
    """pytest node id -> {phase: outcome}."""
    broken: str | None = None

    def value(self, value_id: int) -> Value | None:
        """None: not recorded (values off, beyond the budget) or not defined."""
        if value_id & fmt.INLINE_INT:
            return Value("int", str((value_id & ~fmt.INLINE_INT) - fmt.INT_BIAS))
        return self.values.get(value_id)

    def value_text(self, value_id: int) -> str | None:
        value = self.value(value_id)
        return None if value is None else str(value)


def varint(data: bytes | bytearray | memoryview, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while True:
        if pos >= len(data):
            raise NeedMore
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def _text(data: bytes | bytearray | memoryview, pos: int) -> tuple[str, int]:
    size, pos = varint(data, pos)
    if pos + size > len(data):
        raise NeedMore
    return bytes(data[pos : pos + size]).decode("utf-8", "surrogatepass"), pos + size


def _fields(data: bytes | bytearray | memoryview, pos: int, kinds: str) -> tuple[list, int]:
    """Consecutive fields: ``v`` a varint, ``t`` a text."""
    values: list = []
    for kind in kinds:
        value, pos = varint(data, pos) if kind == "v" else _text(data, pos)
        values.append(value)
    return values, pos


def _kind(flags: int) -> str:
    generator = flags & fmt.FUNC_GENERATOR
    coroutine = flags & fmt.FUNC_COROUTINE
    if generator and coroutine:
        return "async generator"
    return "generator" if generator else "coroutine" if coroutine else "function"


Chunk = Callable[[int, memoryview], None]


def parse_record(data: bytes | bytearray, pos: int, into: Definitions, chunk: Chunk | None = None) -> tuple[int, bool]:
    """Parse the record at ``pos``: ``(end of the record, whether it was the end record)``.

    NeedMore when the record is cut short; ValueError when it is no record.
    """
    if pos >= len(data):
        raise NeedMore
    tag = data[pos]
    pos += 1
    if tag == fmt.REC_CHUNK:
        (index, size), pos = _fields(data, pos, "vv")
        if pos + size > len(data):
            raise NeedMore
        if chunk is None:
            raise ValueError("a chunk of events among definitions")
        with memoryview(data) as whole, whole[pos : pos + size] as words:  # let go of `data` once read, even if a profiler
            chunk(index, words)  # in this process keeps this frame (its locals with it): `data` is resized next
        return pos + size, False
    if tag == fmt.REC_VALUE:
        value_id, pos = varint(data, pos)
        start = pos
        size, pos = varint(data, pos)
        pos += size
        if pos >= len(data):
            raise NeedMore
        if data[pos]:
            size, pos = varint(data, pos + 1)
            pos += size
        else:
            pos += 1
        if pos > len(data):
            raise NeedMore
        into.values.add(value_id, data[start:pos])
    elif tag == fmt.REC_FUNC:
        (func_id, ident, relpath, first, flags, count), pos = _fields(data, pos, "vttvvv")
        names, pos = _fields(data, pos, "t" * count)
        lines, pos = varint(data, pos)
        deltas, pos = _fields(data, pos, "v" * lines)
        code_lines, line = [], first
        for delta in deltas:
            line += delta
            code_lines.append(line)
        into.functions[func_id] = Function(ident, relpath, first, _kind(flags), tuple(names), tuple(code_lines))
    elif tag == fmt.REC_LABEL:
        (label_id, nodeid, phase), pos = _fields(data, pos, "vtt")
        into.labels[label_id] = (nodeid, phase)
    elif tag == fmt.REC_OUTCOME:
        (nodeid, phase, outcome), pos = _fields(data, pos, "ttt")
        into.outcomes.setdefault(nodeid, {})[phase] = outcome
    elif tag == fmt.REC_THREAD:
        (index, ident, name), pos = _fields(data, pos, "vvt")
        into.threads[index] = (ident, name)
    elif tag == fmt.REC_BROKEN:
        into.broken, pos = _text(data, pos)
    elif tag == fmt.REC_END:
        _, pos = varint(data, pos)
        return pos, True
    else:
        raise ValueError(f"unknown record type {tag:#04x}")
    return pos, False
