"""Reading ``.htrace`` files one entry point at a time, and as whole call trees (``call_tree``).

The file format is described in output_schema/trace-format.md. ``TraceFile``
reads a sealed file's index and definitions, and decodes an entry point only
when asked (``columns``): comparisons never hold more than the entry points
they compare. A file the tracer wrote but histeg has not sealed yet is sealed
in memory. A file whose end record is missing (the process was killed) is
read up to its last complete record and reported as ``truncated``; a file
that is not a trace or is damaged raises a one-line ``HistegError``.

Runs in histeg's process, never in a traced one: the collector does not
import it, so its ``histeg.errors`` import stays out of traced programs.
"""

from __future__ import annotations

import json
import lzma
import zlib
from collections import OrderedDict
from pathlib import Path
from typing import Any

from histeg.errors import HistegError
from histeg.traces.call_tree import Call, Trace
from histeg.traces.events import END_RAISED, END_RETURNED, STREAM_DIGEST, Columns
from histeg.traces.records import Definitions
from histeg.traces.seal import FOOTER, EntryInfo, Parts, decoder, decompress, is_sealed, read_definitions, split_stream
from histeg.tracing import format as fmt


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
                    raise HistegError(
                        f"trace file {self.path} has format version {self.version}; this histeg reads version {fmt.FORMAT_VERSION}"
                    )
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
        scheme = index.get("streamDigest", 1)
        if type(scheme) is not int or not 0 < scheme < 1 << 16:
            raise ValueError(f"unknown stream digest {scheme!r}")
        if scheme != STREAM_DIGEST:  # sealed by an earlier histeg: its digests are kept apart from today's, never equal to one
            for entry in self.entries:
                entry.digest = scheme.to_bytes(2, "little") + entry.digest
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
                return decompress(handle.read(length), self.meta.get("compression"))
        except OSError as exc:
            raise HistegError(f"cannot read trace file {self.path}: {exc.strerror}") from None
        except ValueError as exc:
            raise self._corrupt(str(exc)) from None

    @property
    def definitions(self) -> Definitions:
        if self._definitions is None:
            try:
                self._definitions = read_definitions(self._section(self._sections[0]))
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
            call = Call(
                function,
                columns.thread[index],
                [function.line_of(p) - first for p in columns.lines[ls:le]],
                params=[value(v) for v in columns.params[columns.param_start[index] : columns.param_start[index + 1]]],
                yielded=[value(v) for v in columns.yields[columns.yield_start[index] : columns.yield_start[index + 1]]],
                ended=columns.end[index] != 0,
                lines_complete=bool(columns.complete[index]),
            )
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
    return Trace(
        loaded.path,
        loaded.meta,
        loaded.version,
        roots,
        definitions.threads,
        definitions.outcomes,
        loaded.line_events,
        truncated=loaded.truncated,
        broken=definitions.broken,
    )
