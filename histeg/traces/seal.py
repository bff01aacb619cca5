"""Sealing a closed trace: from the stream the tracer wrote to a file read one entry point at a time.

The tracer writes what is cheapest inside the traced process: one stream of
records (uncompressed up to ``format.RAW_STREAM_BYTES``) in which the event
chunks of all threads and entry points interleave. Once the run is over,
histeg seals the file (in its own process):

* the events are split by entry point (``events.Splitter``) and stored in zstd
  blocks of about ``BLOCK_BYTES``, each entry point's events contiguous; an
  entry point is written as soon as its calls have all ended, so memory holds
  the entry points running at one time, not the trace;
* every entry point is read once (``events.index_entry``, in C when built) for
  the index: the digest of its stream (identical entry points are skipped by
  comparisons without being read), the functions it called, its call and line
  counts, without building its columns;
* the caller/callee pairs seen go to the index too (the call graph's dynamic
  edges), from the same pass;
* the definitions (functions, values, labels, threads, outcomes) go to a
  section of their own.

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
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import zstandard

from histeg.traces import events
from histeg.traces.records import Definitions, Function, NeedMore, parse_record, text_hash
from histeg.tracing import format as fmt

try:
    from histeg.traces import _decode  # type: ignore[attr-defined]  # a C extension without a .pyi
except ImportError:  # not built: the reference implementation in Python
    _decode = None

BLOCK_BYTES = 4 << 20
"""Uncompressed size at which an event block is closed: big enough for zstd to find the repetitions
of a suite, small enough that reading one entry point decompresses little else."""
READ_BLOCK = 1 << 20
"""Bytes of a raw stream read at a time: each read is a round of the Python loop that hands the records to C (1 MiB:
sqlparse's sealing 3.75 G -> 3.70 G instructions against 64 KiB)."""
INFLATE_BLOCK = 1 << 16
"""Bytes of a compressed stream read at a time: an event stream inflates about twentyfold."""
COMPRESS_STEP = 1 << 20
FOOTER = struct.Struct("<QQ")
"""Offset and length of the index, just before the trailer."""
STATUS_NAMES = {fmt.STATUS_COMPLETE: "complete", fmt.STATUS_BROKEN: "broken", fmt.STATUS_TRUNCATED: "truncated"}


INTERFACE = 6
"""What ``_decode.INTERFACE`` must be. A build left by another histeg (an in-place build for another interpreter,
say) may lack a method this module calls; it counts as not built, and the Python reference runs."""


COMPRESSION = "zstd"
"""How sealing compresses the definitions and event blocks (files sealed by earlier versions say ``xz``)."""


def decompress(data: bytes, compression: str | None) -> bytes:
    """A section of a sealed file; ValueError when it is damaged."""
    try:
        if compression == "xz":
            return lzma.decompress(data, format=lzma.FORMAT_XZ)
        return zstandard.ZstdDecompressor().decompress(data)
    except (lzma.LZMAError, zstandard.ZstdError) as exc:
        raise ValueError(f"compressed data damaged ({exc})") from None


def native() -> bool:
    return _decode is not None and getattr(_decode, "INTERFACE", None) == INTERFACE and sys.byteorder == "little"


def _words(data: bytes | memoryview) -> array:
    stream = array("H")
    stream.frombytes(data)
    if sys.byteorder == "big":
        stream.byteswap()
    return stream


def _little_endian(words: array) -> bytes:
    if sys.byteorder == "big":
        words = array("H", words)
        words.byteswap()
    return words.tobytes()


class Decoding:
    """The definitions read so far, ready to decode entry points with (in C when built)."""

    def __init__(self) -> None:
        self._c = _decode.Decoder() if native() else None
        self.table = events.FunctionTable()
        self.value_hashes = array("Q")

    def define(self, func_id: int, function: Function) -> None:
        digest = text_hash(function.ident)
        if self._c is not None:
            self._c.define(func_id, function.first_line, function.code_lines, digest, len(function.params))
        else:
            self.table.first_line[func_id] = function.first_line
            self.table.code_lines[func_id] = function.code_lines
            self.table.hashes[func_id] = digest
            self.table.params[func_id] = len(function.params)

    def define_value_hashes(self, ids: array, hashes: array) -> None:
        """``define_value_hash`` of each pair (two ``array("Q")``), in one call where the decoder is C."""
        if self._c is not None:
            self._c.define_values(ids, hashes)
            return
        for value_id, digest in zip(ids, hashes, strict=True):
            self.define_value_hash(value_id, digest)

    def define_value_hash(self, value_id: int, digest: int) -> None:
        """A value by its ``text_hash`` alone: all that decoding needs of it."""
        if self._c is not None:
            self._c.define_value(value_id, digest)
        else:
            if value_id >= len(self.value_hashes):
                self.value_hashes.extend([0] * (value_id + 1 - len(self.value_hashes)))
            self.value_hashes[value_id] = digest

    def __call__(self, words: bytes | memoryview, with_yields: bool = True) -> events.Columns:
        if self._c is None:
            return events.decode(_words(words), self.table, self.value_hashes, with_yields)
        return columns_from_c(self._c.decode(words, with_yields))

    def index(self, words: bytes | memoryview) -> events.EntryIndex:
        """What the index says of one entry point (its columns are not built)."""
        if self._c is None:
            return events.index_entry(_words(words), self.table, self.value_hashes)
        digest, line_events, calls, edges, called = self._c.index(words)
        return events.EntryIndex(digest, line_events, calls, _array("Q", edges), _array("I", called))


def _array(code: str, data: bytes) -> array:
    column = array(code)
    column.frombytes(data)
    return column


def columns_from_c(raw: tuple[Any, ...]) -> events.Columns:
    """What ``_decode.Decoder.decode`` (or its last phase alone, ``export``) returns, as ``Columns``."""
    columns = [_array(code, data) for code, data in zip("IiIIBIBIIIIIIII", raw[:15], strict=True)]
    edges, called = _array("Q", raw[17]), _array("I", raw[18])
    (
        function,
        parent,
        at,
        thread,
        end,
        result,
        complete,
        line_start,
        lines,
        param_start,
        params,
        yield_start,
        yields,
        child_start,
        children,
    ) = columns
    return events.Columns(
        function,
        parent,
        at,
        thread,
        end,
        result,
        complete,
        line_start,
        lines,
        param_start,
        params,
        yield_start,
        yields,
        child_start,
        children,
        digests=raw[15],
        line_events=raw[16],
        edges=edges,
        called=called,
        own_digests=raw[19],
        line_digests=raw[20],
    )


def value_run(data: bytes | bytearray, pos: int, into: Definitions) -> tuple[int, array, array]:
    """The value records from ``pos`` on, read in C into ``into.values``: where they end, their ids and their
    ``text_hash`` digests (from the encoded fields). Ends at once (at ``pos``) when the C decoder is not built."""
    if not native() or pos >= len(data) or data[pos] != fmt.REC_VALUE:
        return pos, array("Q"), array("Q")
    end, id_bytes, span_bytes, digest_bytes = _decode.value_records(data, pos)
    ids, spans, hashes = _array("Q", id_bytes), _array("Q", span_bytes), _array("Q", digest_bytes)
    into.values.add_run(data, pos, end, ids, spans[0::5], hashes)
    return end, ids, hashes


def read_definitions(data: bytes) -> Definitions:
    """The definitions section of a sealed file, its runs of value records read in C when built."""
    into = Definitions()
    pos = 0
    try:
        while pos < len(data):
            pos, _, _ = value_run(data, pos, into)
            if pos < len(data):
                pos, _ = parse_record(data, pos, into)
    except NeedMore:
        raise ValueError("definitions cut short") from None
    return into


def decoder(definitions: Definitions) -> Decoding:
    """Decoding against a whole trace's definitions."""
    decoding = Decoding()
    for func_id, function in definitions.functions.items():
        decoding.define(func_id, function)
    for value_id, digest in definitions.values.digests():
        decoding.define_value_hash(value_id, digest)
    return decoding


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
        return [
            self.thread,
            self.function,
            self.label,
            self.block,
            self.start,
            self.end,
            self.digest.hex(),
            self.functions,
            self.line_events,
            self.calls,
        ]

    @classmethod
    def from_json(cls, data: list[Any]) -> EntryInfo:
        thread, function, label, block, start, end, digest, functions, line_events, calls = data
        return cls(thread, function, label, block, start, end, bytes.fromhex(digest), functions, line_events, calls)


@dataclass
class Parts:
    """What sealing learnt of a trace: its index, and its definitions raw and parsed."""

    meta: dict[str, Any]
    status: str
    definitions_raw: bytes
    definitions: Definitions
    entries: list[EntryInfo]
    """In the order the entry points started."""
    edges: list[tuple[int, int]]
    line_events: int


Sink = Callable[[int, EntryInfo, bytes], None]
"""Takes each entry point (its number in start order, its index entry, its events as little-endian
words) as soon as it is split and indexed."""


class _Split:
    """Feeds a stream's records: definitions kept raw and parsed, chunks to a splitter, finished entry
    points decoded for the index and handed to the sink."""

    def __init__(self, sink: Sink) -> None:
        self.definitions = Definitions()
        self.raw = bytearray()
        self.decoding = Decoding()
        self.splitter: Any = _decode.Splitter() if native() else events.Splitter()
        self.sink = sink
        self.entries: dict[int, EntryInfo] = {}
        self.edges: set[int] = set()
        self.line_events = 0

    def record(self, data: bytearray, start: int, end: int) -> None:
        """A definition record was parsed: keep it and pass it on to the decoder."""
        self.raw += data[start:end]
        tag = data[start]
        if tag == fmt.REC_FUNC:
            func_id, function = next(reversed(self.definitions.functions.items()))
            self.decoding.define(func_id, function)
        elif tag == fmt.REC_VALUE:
            values = self.definitions.values
            self.decoding.define_value_hash(values.last, values.digest(values.last))

    def runs(self, data: bytearray, pos: int) -> int:
        """The value and chunk records from ``pos`` on, as many as follow each other (where they end): in one call
        into C when built (a lexer's suite writes tens of thousands of chunks, each between value records); none
        without it (``parse_record`` reads them one at a time)."""
        if not native():
            return pos
        end, values, id_bytes, field_bytes, digest_bytes = self.splitter.records(data, pos)
        if values:
            ids, hashes = _array("Q", id_bytes), _array("Q", digest_bytes)
            self.definitions.values.add_run(values, 0, len(values), ids, _array("Q", field_bytes), hashes)
            self.raw += values
            self.decoding.define_value_hashes(ids, hashes)
        if end > pos:
            self._index(self.splitter.take())
        return end

    def chunk(self, thread: int, words: memoryview) -> None:
        self.splitter.feed(thread, words if native() else _words(words))
        self._index(self.splitter.take())

    def finish(self) -> None:
        self._index(self.splitter.finish())

    def _index(self, entries: list[Any]) -> None:
        for item in entries:
            number, thread, function, label, words = (
                item if native() else (item.number, item.thread, item.function, item.label, _little_endian(item.words))
            )
            facts = self.decoding.index(words)
            self.edges.update(facts.edges)
            info = EntryInfo(
                thread, function, label, -1, 0, len(words), facts.digest, facts.called.tolist(), facts.line_events, facts.calls
            )
            self.line_events += facts.line_events
            self.entries[number] = info
            self.sink(number, info, words)


class StreamBody:
    """The records of an unsealed trace's body, a block at a time: as written while the stream is raw, inflated
    from ``REC_DEFLATE`` on (or from the start, in files written before raw streams)."""

    def __init__(self, handle: BinaryIO, meta: dict[str, Any]) -> None:
        self._handle = handle
        self._inflate: Any = None
        if meta.get("stream") != fmt.STREAM_RAW:
            self._inflate = lzma.LZMADecompressor(format=lzma.FORMAT_XZ) if meta.get("compression") == "xz" else zlib.decompressobj()

    def compressed_from(self, data: bytearray, pos: int) -> None:
        """``data[pos]`` is ``REC_DEFLATE``: what follows it, read already, is compressed."""
        if self._inflate is not None:
            raise ValueError("a compressed section inside a compressed stream")
        self._inflate = zlib.decompressobj()
        rest = bytes(data[pos + 1 :])
        del data[pos:]
        data += self._decompress(rest)

    def read(self) -> bytes | None:
        """The next decoded bytes; None at the end of the body."""
        if self._inflate is not None and self._inflate.eof:
            return None
        block = self._handle.read(READ_BLOCK if self._inflate is None else INFLATE_BLOCK)
        if not block:
            return None
        return block if self._inflate is None else self._decompress(block)

    def _decompress(self, block: bytes) -> bytes:
        try:
            return self._inflate.decompress(block)
        except (zlib.error, lzma.LZMAError) as exc:
            raise ValueError(f"compressed data damaged ({exc})") from None


def _read_stream(handle: BinaryIO, meta: dict[str, Any], split: _Split) -> bool:
    """Whether the stream ended cleanly (an end record)."""
    body = StreamBody(handle, meta)
    data = bytearray()
    pos = 0
    ended = False
    while not ended:
        try:
            pos = split.runs(data, pos)
            if pos < len(data) and data[pos] == fmt.REC_DEFLATE:
                body.compressed_from(data, pos)
                continue
            start = pos
            pos, ended = parse_record(data, pos, split.definitions, split.chunk)
            if data[start] != fmt.REC_CHUNK and not ended:
                split.record(data, start, pos)
            continue
        except NeedMore:
            pass
        block = body.read()
        if block is None:
            break
        del data[:pos]
        pos = 0
        data += block
    return ended


def split_stream(path: Path, sink: Sink) -> Parts:
    """Read a trace as the tracer wrote it, split it by entry point and index it; ValueError when it is damaged."""
    status = fmt.read_status(str(path))
    with open(path, "rb") as handle:
        version, meta, body = fmt.read_header(handle)
        if version != fmt.FORMAT_VERSION:
            raise ValueError(f"format version {version}; this histeg reads version {fmt.FORMAT_VERSION}")
        handle.seek(body)
        split = _Split(sink)
        ended = _read_stream(handle, meta, split)
    split.finish()
    edges = [(edge >> 32, edge & 0xFFFFFFFF) for edge in sorted(split.edges)]
    entries = [split.entries[number] for number in range(len(split.entries))]
    return Parts(meta, status if ended else "truncated", bytes(split.raw), split.definitions, entries, edges, split.line_events)


def is_sealed(meta: dict[str, Any]) -> bool:
    return bool(meta.get("sealed"))


class _BlockWriter:
    """Entry points' events into zstd blocks of about BLOCK_BYTES, compressed on a second thread
    (zstandard releases the GIL) while the next block fills; sets where each entry point lands. A block is the list
    of its entry points' words, fed to the compressor one after the other: gathering them in one buffer first copied
    every event once more (sqlparse's sealing: 3.90 G -> 3.81 G instructions, the same bytes written)."""

    def __init__(self, target: BinaryIO, level: int) -> None:
        self.target = target
        self.level = level
        self.sections: list[list[int]] = []
        self._block: list[bytes] = []
        self._size = 0
        self._pool = ThreadPoolExecutor(max_workers=1)
        self._pending: deque[Future[bytes]] = deque()
        self._zstd = zstandard.ZstdCompressor(level=level)  # one context for every block: a new one allocated its
        # tables (a few MiB at level 5) per block, fresh pages each time (sqlparse's sealing: 4 % less CPU, the same bytes)

    def compress(self, parts: list[bytes] | bytes | bytearray) -> bytes:
        """One zstd frame (its size in the header, for a one-shot decompression) of the parts one after the other,
        fed a slice at a time: a one-shot compression of a 25 MB entry point would hold an output buffer as large as
        its input."""
        pieces = [parts] if isinstance(parts, bytes | bytearray) else parts
        compressor = self._zstd.compressobj(size=sum(len(piece) for piece in pieces))
        out: list[bytes] = []
        for piece in pieces:
            with memoryview(piece) as view:
                out.extend(compressor.compress(view[at : at + COMPRESS_STEP]) for at in range(0, len(view), COMPRESS_STEP))
        out.append(compressor.flush())
        return b"".join(out)

    def section(self, data: bytes) -> list[int]:
        offset = self.target.tell()
        self.target.write(data)
        return [offset, len(data)]

    def add(self, number: int, info: EntryInfo, words: bytes) -> None:
        if self._block and self._size + len(words) > BLOCK_BYTES:
            self._ship()
        info.block = len(self.sections) + len(self._pending)
        info.start, info.end = self._size, self._size + len(words)
        self._block.append(words)
        self._size += len(words)
        if self._size >= BLOCK_BYTES:  # the largest entry points make blocks of their own
            self._ship()

    def _ship(self) -> None:
        block, self._block, self._size = self._block, [], 0
        self._pending.append(self._pool.submit(self.compress, block))
        while len(self._pending) > 1:
            self.sections.append(self.section(self._pending.popleft().result()))

    def close(self) -> None:
        if self._block:
            self._ship()
        while self._pending:
            self.sections.append(self.section(self._pending.popleft().result()))
        self._pool.shutdown()


LEVEL = 4
"""zstd level of the event blocks and definitions. On sqlparse's trace (66 MB of events; 22.7 M line events
executed) level 4 stores 1.66 MB (0.073 byte per executed line event) with 12 % less sealing CPU than level 5's
1.50 MB: level 5's greedy match finder took twice level 4's time, and sealing is paid after every traced run
(goals: sealing <= 10 % of the run, <= 0.1 byte per line event). xz's fastest preset took five times as long."""


def seal(path: str | Path, level: int = LEVEL) -> bool:
    """Seal a closed or truncated trace file in place, atomically; False when it is sealed already.

    ValueError when the file is not a trace or is damaged (left as it is)."""
    path = Path(path)
    with open(path, "rb") as source:
        version, meta, _ = fmt.read_header(source)
    if is_sealed(meta):
        return False
    temporary = path.with_name(path.name + ".sealing")
    try:
        with open(temporary, "wb") as target:
            sealed_meta = {key: value for key, value in meta.items() if key != "stream"}
            header = json.dumps({**sealed_meta, "sealed": True, "compression": COMPRESSION}, sort_keys=True).encode()
            target.write(fmt.MAGIC + bytes([version]) + fmt.varint(len(header)) + header)
            blocks = _BlockWriter(target, level)
            try:
                parts = split_stream(path, blocks.add)
            finally:
                blocks.close()
            _finish(target, parts, blocks)
        os.replace(temporary, path)
    finally:
        if temporary.exists():
            temporary.unlink()
    return True


def _finish(target: BinaryIO, parts: Parts, blocks: _BlockWriter) -> None:
    definitions = blocks.section(blocks.compress(parts.definitions_raw))
    index = {
        "definitions": definitions,
        "blocks": blocks.sections,
        "entries": [entry.to_json() for entry in parts.entries],
        "edges": parts.edges,
        "lineEvents": parts.line_events,
        "streamDigest": events.STREAM_DIGEST,
    }
    offset = target.tell()
    data = zlib.compress(json.dumps(index, separators=(",", ":")).encode(), 6)
    target.write(data)
    status = {"complete": fmt.STATUS_COMPLETE, "broken": fmt.STATUS_BROKEN}.get(parts.status, fmt.STATUS_TRUNCATED)
    target.write(FOOTER.pack(offset, len(data)) + fmt.TRAILER + bytes([status]))
