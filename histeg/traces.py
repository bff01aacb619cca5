"""Reading ``.htrace`` files one entry point at a time, and as whole call trees.

The file format is described in output_schema/trace-format.md. ``TraceFile``
reads a sealed file's index and definitions, and decodes an entry point only
when asked (``columns``): comparisons never hold more than the entry points
they compare. A file the tracer wrote but histeg has not sealed yet is sealed
in memory. A file whose end record is missing (the process was killed) is
read up to its last complete record and reported as ``truncated``; a file
that is not a trace or is damaged raises a one-line ``HistegError``.
"""

from __future__ import annotations

import json
import lzma
import zlib
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from histeg.errors import HistegError
from histeg.tracing import format as fmt
from histeg.tracing.events import END_RAISED, END_RETURNED, Columns
from histeg.tracing.records import Definitions, Function, Value, parse_definitions
from histeg.tracing.seal import FOOTER, EntryInfo, Parts, decoder, is_sealed, split_stream

__all__ = ["Call", "Function", "Trace", "TraceFile", "Value", "read_trace", "trace_files"]


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
    left_by_exception: bool = False
    """True when it ended by an exception (``raised`` is None when its value was not recorded)."""
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
            "leftByException": self.left_by_exception,
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


def trace_files(directory: Path) -> list[Path]:
    """The trace files of a traces directory, oldest first (by name is by pid, so by mtime)."""
    return sorted(Path(directory).glob("*.htrace"), key=lambda p: (p.stat().st_mtime_ns, p.name))


class TraceFile:
    """One trace file: its index at once, its definitions and entry points when asked."""

    CACHED_BLOCKS = 2

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        try:
            with open(self.path, "rb") as handle:
                head = handle.read(len(fmt.MAGIC) + 1)
                if not head.startswith(fmt.MAGIC):
                    raise HistegError(f"{self.path} is not a histeg trace file")
                if len(head) <= len(fmt.MAGIC):
                    raise self._corrupt("header cut short")
                self.version = head[len(fmt.MAGIC)]
                if self.version != fmt.FORMAT_VERSION:
                    raise HistegError(f"trace file {self.path} has format version {self.version}; this histeg reads version {fmt.FORMAT_VERSION}")
                handle.seek(0)
                _, self.meta, _ = fmt.read_header(handle)
                self._parts: Parts | None = None
                if is_sealed(self.meta):
                    self._read_index(handle)
                else:
                    self._words: dict[int, bytes] = {}
                    self._parts = split_stream(self.path, lambda number, _, words: self._words.__setitem__(number, words))
                    self.status = self._parts.status
                    self.entries = self._parts.entries
                    self.edges = self._parts.edges
                    self.line_events = self._parts.line_events
        except OSError as exc:
            raise HistegError(f"cannot read trace file {self.path}: {exc.strerror}") from None
        except (ValueError, KeyError, TypeError, EOFError, lzma.LZMAError, zlib.error) as exc:
            raise self._corrupt(str(exc) or type(exc).__name__) from None
        self._definitions: Definitions | None = self._parts.definitions if self._parts else None
        self._decode: Any = None
        self._blocks: OrderedDict[int, bytes] = OrderedDict()

    def _corrupt(self, why: str) -> HistegError:
        return HistegError(f"corrupt trace file {self.path}: {why}")

    def _read_index(self, handle: Any) -> None:
        size = handle.seek(0, 2)
        tail = FOOTER.size + len(fmt.TRAILER) + 1
        if size < tail:
            raise ValueError("index missing")
        handle.seek(size - tail)
        footer = handle.read(tail)
        if footer[FOOTER.size : -1] != fmt.TRAILER:
            raise ValueError("sealed file cut short")
        offset, length = FOOTER.unpack(footer[: FOOTER.size])
        status = footer[-1]
        self.status = {fmt.STATUS_COMPLETE: "complete", fmt.STATUS_BROKEN: "broken"}.get(status, "truncated")
        handle.seek(offset)
        index = json.loads(zlib.decompress(handle.read(length)))
        self._sections = index["definitions"], index["blocks"]
        self.entries = [EntryInfo.from_json(item) for item in index["entries"]]
        self.edges = [tuple(edge) for edge in index["edges"]]
        self.line_events = index["lineEvents"]

    @property
    def truncated(self) -> bool:
        return self.status == "truncated"

    def _section(self, where: list[int]) -> bytes:
        offset, length = where
        try:
            with open(self.path, "rb") as handle:
                handle.seek(offset)
                return lzma.decompress(handle.read(length), format=lzma.FORMAT_XZ)
        except OSError as exc:
            raise HistegError(f"cannot read trace file {self.path}: {exc.strerror}") from None
        except lzma.LZMAError as exc:
            raise self._corrupt(f"compressed data damaged ({exc})") from None

    @property
    def definitions(self) -> Definitions:
        if self._definitions is None:
            try:
                self._definitions = parse_definitions(self._section(self._sections[0]))
            except ValueError as exc:
                raise self._corrupt(str(exc)) from None
        return self._definitions

    def words(self, entry: int) -> bytes | memoryview:
        """The event stream of one entry point (little-endian words)."""
        info = self.entries[entry]
        if self._parts is not None:
            return self._words[entry]
        else:
            block = self._blocks.get(info.block)
            if block is None:
                block = self._blocks[info.block] = self._section(self._sections[1][info.block])
                while len(self._blocks) > self.CACHED_BLOCKS:
                    self._blocks.popitem(last=False)
            self._blocks.move_to_end(info.block)
        return memoryview(block)[info.start : info.end]

    def columns(self, entry: int, with_yields: bool = False) -> Columns:
        """One entry point decoded; yielded values only when asked (``events.decode``)."""
        if self._decode is None:
            self._decode = decoder(self.definitions)
        try:
            return self._decode(self.words(entry), with_yields)
        except ValueError as exc:
            raise self._corrupt(f"entry point {entry}: {exc}") from None

    def label(self, entry: int) -> tuple[str | None, str | None]:
        """(pytest node id, phase) of an entry point, or (None, None)."""
        found = self.definitions.labels.get(self.entries[entry].label)
        return found if found is not None else (None, None)

    def call(self, entry: int) -> Call:
        """An entry point as a tree of ``Call`` objects (for display and export)."""
        columns = self.columns(entry, with_yields=True)
        definitions = self.definitions
        value = definitions.value
        calls: list[Call] = []
        for index in range(len(columns)):
            function = definitions.functions[columns.function[index]]
            first = function.first_line
            ls, le = columns.line_start[index], columns.line_start[index + 1]
            call = Call(function, columns.thread[index], [function.line_of(p) - first for p in columns.lines[ls:le]],
                        params=[value(v) for v in columns.params[columns.param_start[index] : columns.param_start[index + 1]]],
                        yielded=[value(v) for v in columns.yields[columns.yield_start[index] : columns.yield_start[index + 1]]],
                        ended=columns.end[index] != 0, lines_complete=bool(columns.complete[index]))
            if columns.end[index] == END_RETURNED:
                call.returned = value(columns.result[index])
            elif columns.end[index] == END_RAISED:
                call.raised = value(columns.result[index])
                call.left_by_exception = True
            parent = columns.parent[index]
            if parent >= 0:
                calls[parent].children.append((columns.at[index], call))
            calls.append(call)
        root = calls[0]
        root.label, root.phase = self.label(entry)
        return root


def read_trace(path: Path) -> Trace:
    """A whole trace file as call trees (every entry point decoded: for display, export and tests)."""
    loaded = TraceFile(path)
    definitions = loaded.definitions
    roots = [loaded.call(entry) for entry in range(len(loaded.entries))]
    return Trace(loaded.path, loaded.meta, loaded.version, roots, definitions.threads, definitions.outcomes, loaded.line_events,
                 truncated=loaded.truncated, broken=definitions.broken)
