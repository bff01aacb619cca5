"""Sealing a closed trace: from the stream the tracer wrote to a file read one entry point at a time.

The tracer writes what is cheapest inside the traced process: one zlib
stream of records in which the event chunks of all threads and entry points
interleave. Once the run is over, histeg seals the file (in its own process):

* the definitions (functions, values, labels, threads, outcomes) go to a
  section of their own;
* the events are split by entry point (``events.Splitter``) and stored in xz
  blocks of about ``BLOCK_BYTES``, each entry point's events contiguous;
* every entry point is decoded once (``events.decode``, in C when built) for
  the index: its digest (identical entry points are skipped by comparisons
  without being read), the functions it called, its call and line counts;
* the caller/callee pairs seen go to the index too (the call graph's dynamic
  edges).

The layout is described in ``output_schema/trace-format.md``. A stream that
was never closed (the process was killed) is sealed as far as it decodes and
keeps the status ``truncated``.
"""

from __future__ import annotations

import json
import lzma
import os
import struct
import sys
import zlib
from array import array
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from histeg.tracing import events
from histeg.tracing import format as fmt
from histeg.tracing.records import Definitions, NeedMore, parse_record

try:
    from histeg.tracing import _decode
except ImportError:  # not built: the reference implementation in Python
    _decode = None

BLOCK_BYTES = 4 << 20
"""Uncompressed size at which an event block is closed: big enough for xz to find the repetitions
of a suite, small enough that reading one entry point decompresses little else."""
READ_BLOCK = 1 << 20
FOOTER = struct.Struct("<QQ")
"""Offset and length of the index, just before the trailer."""
STATUS_NAMES = {fmt.STATUS_COMPLETE: "complete", fmt.STATUS_BROKEN: "broken", fmt.STATUS_TRUNCATED: "truncated"}


def native() -> bool:
    return _decode is not None and sys.byteorder == "little"


def decoder(definitions: Definitions) -> Callable[..., events.Columns]:
    """Decoding of entry point streams against one trace's definitions: in C when built."""
    table = definitions.function_table()
    hashes = definitions.value_hashes()
    if not native():
        def decode_in_python(words: bytes | memoryview, with_yields: bool = True) -> events.Columns:
            stream = array("H")
            stream.frombytes(words)
            if sys.byteorder == "big":
                stream.byteswap()
            return events.decode(stream, table, hashes, with_yields)

        return decode_in_python
    functions = {fid: (table.first_line[fid], table.code_lines[fid], table.hashes[fid]) for fid in table.first_line}
    compiled = _decode.Decoder(functions, hashes.tobytes())

    def decode_in_c(words: bytes | memoryview, with_yields: bool = True) -> events.Columns:
        raw = compiled.decode(words, with_yields)
        columns = []
        for code, data in zip("IiIIBIBIIIIIIIIB", raw[:16], strict=True):
            column = array(code)
            column.frombytes(data)
            columns.append(column)
        edges, called = array("Q"), array("I")
        edges.frombytes(raw[17])
        called.frombytes(raw[18])
        return events.Columns(*columns[:15], digests=raw[15], line_events=raw[16], edges=edges, called=called)

    return decode_in_c


@dataclass
class EntryInfo:
    """What the index says of one entry point."""

    thread: int
    function: int
    label: int
    block: int
    start: int
    end: int
    """Byte range of its events in the uncompressed block."""
    digest: bytes
    functions: list[int]
    line_events: int
    calls: int

    def to_json(self) -> list[Any]:
        return [self.thread, self.function, self.label, self.block, self.start, self.end, self.digest.hex(), self.functions,
                self.line_events, self.calls]

    @classmethod
    def from_json(cls, data: list[Any]) -> EntryInfo:
        thread, function, label, block, start, end, digest, functions, line_events, calls = data
        return cls(thread, function, label, block, start, end, bytes.fromhex(digest), functions, line_events, calls)


@dataclass
class Parts:
    """A trace split and indexed, in memory: what a sealed file holds."""

    meta: dict[str, Any]
    status: str
    definitions_raw: bytes
    definitions: Definitions
    entries: list[EntryInfo] = field(default_factory=list)
    words: list[bytes] = field(default_factory=list)
    """Each entry point's events (little-endian words); emptied as ``write_sealed`` writes them."""
    edges: list[tuple[int, int]] = field(default_factory=list)
    line_events: int = 0


class _Split:
    """Feeds a stream's records: definitions kept raw and parsed, chunks to a splitter."""

    def __init__(self) -> None:
        self.definitions = Definitions()
        self.raw = bytearray()
        self.splitter = _decode.Splitter() if native() else events.Splitter()
        self._python = not native()

    def chunk(self, thread: int, words: memoryview) -> None:
        if self._python:
            stream = array("H")
            stream.frombytes(words)
            if sys.byteorder == "big":
                stream.byteswap()
            self.splitter.feed(thread, stream)
        else:
            self.splitter.feed(thread, words)

    def entries(self) -> list[tuple[int, int, int, bytes]]:
        if self._python:
            return [(e.thread, e.function, e.label, _little_endian(e.words)) for e in self.splitter.entries]
        return self.splitter.finish()


def _little_endian(words: array) -> bytes:
    if sys.byteorder == "big":
        words = array("H", words)
        words.byteswap()
    return words.tobytes()


def _read_stream(handle: BinaryIO, body: int, meta: dict[str, Any], path: Path) -> tuple[_Split, bool]:
    handle.seek(body)
    inflate = lzma.LZMADecompressor(format=lzma.FORMAT_XZ) if meta.get("compression") == "xz" else zlib.decompressobj()
    split = _Split()
    data = bytearray()
    pos = 0
    ended = False
    while not ended:
        try:
            start = pos
            pos, ended = parse_record(data, pos, split.definitions, split.chunk)
            if data[start] != fmt.REC_CHUNK and not ended:
                split.raw += data[start:pos]
            continue
        except NeedMore:
            pass
        block = handle.read(READ_BLOCK)
        if not block or inflate.eof:
            break
        del data[:pos]
        pos = 0
        try:
            data += inflate.decompress(block)
        except (zlib.error, lzma.LZMAError) as exc:
            raise ValueError(f"compressed data damaged ({exc})") from None
    return split, ended


def split_stream(path: Path) -> Parts:
    """Read a trace as the tracer wrote it and split it by entry point; ValueError when it is damaged."""
    status = fmt.read_status(str(path))
    with open(path, "rb") as handle:
        version, meta, body = fmt.read_header(handle)
        if version != fmt.FORMAT_VERSION:
            raise ValueError(f"format version {version}; this histeg reads version {fmt.FORMAT_VERSION}")
        split, ended = _read_stream(handle, body, meta, path)
    if not ended:
        status = "truncated"
    parts = Parts(meta, status, bytes(split.raw), split.definitions)
    decode = decoder(split.definitions)
    edges: set[int] = set()
    for thread, function, label, words in split.entries():
        columns = decode(words, False)
        edges.update(columns.edges)
        parts.entries.append(EntryInfo(thread, function, label, -1, 0, len(words), columns.digest(0), columns.called.tolist(),
                                       columns.line_events, len(columns)))
        parts.words.append(words)
        parts.line_events += columns.line_events
    parts.edges = [(edge >> 32, edge & 0xFFFFFFFF) for edge in sorted(edges)]
    return parts


def is_sealed(meta: dict[str, Any]) -> bool:
    return bool(meta.get("sealed"))


def seal(path: str | Path, preset: int = 1) -> bool:
    """Seal a closed or truncated trace file in place, atomically; False when it is sealed already.

    ValueError when the file is not a trace or is damaged (left as it is)."""
    path = Path(path)
    if is_sealed(fmt.read_meta(str(path))):
        return False
    parts = split_stream(path)
    temporary = path.with_name(path.name + ".sealing")
    try:
        with open(temporary, "wb") as target:
            write_sealed(target, parts, preset)
        os.replace(temporary, path)
    finally:
        if temporary.exists():
            temporary.unlink()
    return True


def _blocks(parts: Parts) -> Iterator[bytes]:
    """Entry points' events grouped into blocks of about BLOCK_BYTES; sets where each entry point lands."""
    block = bytearray()
    number = 0
    for entry, words in zip(parts.entries, parts.words, strict=True):
        if block and len(block) + len(words) > BLOCK_BYTES:
            yield bytes(block)
            block.clear()
            number += 1
        entry.block, entry.start, entry.end = number, len(block), len(block) + len(words)
        block += words
    parts.words.clear()
    if block:
        yield bytes(block)


def write_sealed(target: BinaryIO, parts: Parts, preset: int = 1) -> None:
    """Blocks are compressed on two threads (lzma releases the GIL), at most a few in memory at once."""
    header = json.dumps({**parts.meta, "sealed": True, "compression": "xz"}, sort_keys=True).encode()
    target.write(fmt.MAGIC + bytes([fmt.FORMAT_VERSION]) + fmt.varint(len(header)) + header)

    def compress(data: bytes) -> bytes:
        return lzma.compress(data, format=lzma.FORMAT_XZ, preset=preset)

    def section(data: bytes) -> list[int]:
        offset = target.tell()
        target.write(data)
        return [offset, len(data)]

    definitions = section(compress(parts.definitions_raw))
    blocks: list[list[int]] = []
    with ThreadPoolExecutor(max_workers=2) as pool:
        pending: deque[Future[bytes]] = deque()
        for block in _blocks(parts):
            pending.append(pool.submit(compress, block))
            if len(pending) > 2:
                blocks.append(section(pending.popleft().result()))
        while pending:
            blocks.append(section(pending.popleft().result()))
    index = {
        "definitions": definitions,
        "blocks": blocks,
        "entries": [entry.to_json() for entry in parts.entries],
        "edges": parts.edges,
        "lineEvents": parts.line_events,
    }
    offset = target.tell()
    data = zlib.compress(json.dumps(index, separators=(",", ":")).encode(), 6)
    target.write(data)
    status = {"complete": fmt.STATUS_COMPLETE, "broken": fmt.STATUS_BROKEN}.get(parts.status, fmt.STATUS_TRUNCATED)
    target.write(FOOTER.pack(offset, len(data)) + fmt.TRAILER + bytes([status]))
