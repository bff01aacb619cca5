"""The ``.htrace`` file format (documented in output_schema/trace-format.md) and its writer.

A file is a short header (magic, version, JSON metadata) followed by a stream
of records (reorganised by entry point by ``histeg.traces.seal`` once the run is over). The records are written
as they are: compressing them in the traced process cost a lexer's dense suite an eighth of the tracer's
instructions, and sealing compresses them anyway. Past ``RAW_STREAM_BYTES`` (a suite whose raw stream would fill
the disk before sealing) the writer appends ``REC_DEFLATE`` and the rest of the body is one zlib stream.
Every batch is written whole (and sync-flushed once compressed), so a process killed mid-run leaves a file that
decodes up to its last batch.
Calls are not records of their own: each thread has an event stream of
16-bit words (line numbers and call/return markers) shipped in chunks, so
the hot path of the tracer is a single ``array.append``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import zlib
from _thread import _count as _other_threads
from _thread import allocate_lock
from collections import deque
from typing import BinaryIO

MAGIC = b"HTRACE\x00"
FORMAT_VERSION = 5
TRAILER = b"HTEND"
"""Written after the records by a clean close, then one status byte: a trace's state is read
from its last six bytes without decompressing it."""
STATUS_COMPLETE = 0
STATUS_BROKEN = 1
STATUS_TRUNCATED = 2
"""Only in sealed files (``histeg.traces.seal``): sealed from a stream that was never closed."""

# Words of a thread's event stream (unsigned 16-bit, little-endian on disk).
MAX_LINE = 0xFFEF
"""Words 1..MAX_LINE are executed line numbers (absolute, as in ``co_lines``)."""
OP_CALL = 0xFFF0
"""A call starts. Followed by function id (2 words), [label id (2 words) if ROOT], [generator call id (2 words) if GEN], parameter count (1 word), parameter value ids (2 words each)."""
CALL_ROOT = 0x1
CALL_GEN = 0x2
CALL_BARE = 0x4
"""No parameter value was captured (a call past the value budget, or a function without parameters): the count and
the ids are left out, and the call reads as one whose parameters, as many as its ``F`` record names, are all value id
0. Four calls in five of a dense suite are past the value budget: a third of its stream's words were their zeros."""
OP_RETURN = 0xFFF8
"""The running call returned; followed by the value id (2 words)."""
OP_RETURN_BARE = 0xFFFF
"""The running call returned a value that was not captured: ``OP_RETURN`` with value id 0, in one word."""
OP_RAISE = 0xFFF9
"""The running call was left by an exception; followed by the exception's value id (2 words)."""
OP_YIELD = 0xFFFA
"""The running generator/coroutine call is suspended; followed by the yielded value id (2 words)."""
OP_RESUME = 0xFFFB
"""A suspended call resumes on this thread; followed by its generator call id (2 words)."""
OP_LINES_OFF = 0xFFFC
"""The function's line budget in this entry point is spent: its calls from here on, and the rest of
its calls still running, record no lines until OP_LINES_ON; followed by the function id (2 words)."""
OP_LINES_ON = 0xFFFD
"""A new entry point starts: the function records lines again; followed by the function id (2 words)."""
OP_THREAD = 0xFFFE
"""Only in the per-entry-point streams of sealed files: the following events ran on this thread (index, 2 words)."""

CHUNK_WORDS = 1 << 15
"""A thread's buffered words are shipped as a chunk once they exceed this (and when its last call ends)."""

INLINE_INT = 0x80000000
"""Value ids with this bit set are ints, stored inline: value = (id & 0x7FFFFFFF) - INT_BIAS."""
INT_BIAS = 0x40000000

# Record tags of the zlib stream.
REC_FUNC = 0x46  # F: id, identifier, relative path, first line, flags, parameter names, code lines
REC_VALUE = 0x56  # V: id, type name, has-repr flag, repr
REC_LABEL = 0x4C  # L: id, node id, phase
REC_OUTCOME = 0x4F  # O: node id, phase, outcome
REC_THREAD = 0x54  # T: index, thread ident, name
REC_CHUNK = 0x43  # C: thread index, byte length, words
REC_END = 0x45  # E: number of chunks written (clean end of trace)
REC_BROKEN = 0x42  # B: why the trace cannot be complete (the tracer's tool id was freed, cleared or taken over)
REC_DEFLATE = 0x5A  # Z: the rest of the body, up to the trailer, is one zlib stream of records

STREAM_RAW = "raw"
"""``meta["stream"]`` of a file whose records start uncompressed; files without it are one zlib stream."""
RAW_STREAM_BYTES = 1 << 28
"""Bytes of records a trace writes uncompressed before it compresses the rest (sqlparse's suite, 500 short tests:
63 MB raw, 3.7 MB deflated)."""

FUNC_GENERATOR = 0x1
FUNC_COROUTINE = 0x2

_BIG_ENDIAN = sys.byteorder == "big"


_SMALL = [bytes((n,)) for n in range(0x80)]


def varint(value: int) -> bytes:
    """Unsigned LEB128."""
    if value < 0x80:
        return _SMALL[value]
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def text(value: str) -> bytes:
    data = value.encode("utf-8", "surrogatepass")
    size = len(data)
    return (_SMALL[size] if size < 0x80 else varint(size)) + data


HELD_BYTES = 1 << 25
"""While the traced program runs threads of its own, batches are held up to this many bytes instead of written."""


class TraceWriter:
    """Appends records to a trace file; thread-safe; memory bounded by ``batch_bytes``, or ``HELD_BYTES`` while other threads
    run.

    Compressing and writing a batch release the GIL (zlib and ``os.write`` do): with other threads waiting, one of
    them would run there, at a place of the program's code where it would not have run untraced. A race the program
    has could then show where it does not (a cache pruned by two threads at once, seen on a real suite). So while the
    process has threads other than its main one, batches wait in memory, and are written once it has none again (or
    past ``HELD_BYTES``, or at close)."""

    def __init__(self, path: str, meta: dict, level: int = 1, batch_bytes: int = 1 << 16, raw_bytes: int = RAW_STREAM_BYTES) -> None:
        self.path = path
        self._level = level
        self._compressor: zlib._Compress | None = None
        self._raw_left = raw_bytes
        """Bytes still written as they are; then ``REC_DEFLATE`` and ``_compressor`` takes over."""
        self._records: deque[bytes] = deque()
        """Records not written yet: appended without a lock (a deque's append is atomic), drained under ``_lock``."""
        self._held = 0
        """Bytes in ``_records``, about (threads add to it without a lock; it only says when to write)."""
        self._batch_bytes = batch_bytes
        self._lock = allocate_lock()
        self.chunks = 0
        self.closed = False
        self.status = STATUS_COMPLETE
        self.failure: str | None = None
        """Why writing stopped (disk full, file too large, ...): the file then ends at its last whole batch,
        without trailer, and reads as truncated: an incomplete trace, never an error in the traced program."""
        self._written = 0
        self._fd = -1
        try:
            self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except OSError as exc:
            self._give_up(exc)
            return
        header = json.dumps({**meta, "stream": STREAM_RAW}, sort_keys=True).encode()
        self._write_raw(MAGIC + bytes([FORMAT_VERSION]) + varint(len(header)) + header)

    def _write_raw(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view) :]
        except OSError as exc:
            self._give_up(exc)
            return
        self._written += len(data)

    def _give_up(self, exc: OSError) -> None:
        """Stop writing for good without raising into the traced program: the file is cut back to its last whole
        batch so it decodes up to there, and why is said once on stderr (the run's log keeps it)."""
        self.closed = True
        self.failure = f"cannot write {self.path}: {exc.strerror or exc}"
        self._records.clear()
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, self._written)
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = -1
        with contextlib.suppress(OSError):
            os.write(2, f"histeg: tracing stopped: {self.failure}\n".encode("utf-8", "replace"))

    def _add(self, record: bytes) -> None:
        """No lock is taken here: a thread waiting for a lock another thread holds would release the GIL too."""
        if self.closed:
            return
        self._records.append(record)
        self._held += len(record)
        if self._held >= self._batch_bytes and (not _other_threads() or self._held >= HELD_BYTES):
            with self._lock:
                self._flush_locked()

    def _flush_locked(self) -> None:
        records = self._records
        if records and not self.closed:
            self._held = 0
            pending = b"".join([records.popleft() for _ in range(len(records))])  # a record added meanwhile waits its turn
            if self._compressor is None and len(pending) <= self._raw_left:
                self._raw_left -= len(pending)
                self._write_raw(pending)
                return
            prefix = b""
            if self._compressor is None:
                self._compressor = zlib.compressobj(self._level)
                prefix = bytes([REC_DEFLATE])
            self._write_raw(prefix + self._compressor.compress(pending) + self._compressor.flush(zlib.Z_SYNC_FLUSH))

    def flush(self) -> None:
        with self._lock:
            if not self.closed:
                self._flush_locked()

    def function(
        self, func_id: int, ident: str, relpath: str, first_line: int, flags: int, params: tuple[str, ...], code_lines: list[int]
    ) -> None:
        """``code_lines``: the sorted lines that carry code, stored as deltas from ``first_line``: readers
        turn executed lines into positions among them, which a comment or a moved function does not change."""
        names = b"".join(text(name) for name in params)
        deltas, previous = [], first_line
        for line in code_lines:
            deltas.append(varint(line - previous) if line >= previous else varint(0))
            previous = max(previous, line)
        self._add(
            bytes([REC_FUNC])
            + varint(func_id)
            + text(ident)
            + text(relpath)
            + varint(first_line)
            + varint(flags)
            + varint(len(params))
            + names
            + varint(len(code_lines))
            + b"".join(deltas)
        )

    def value(self, value_id: int, type_name: str, rep: str | None) -> None:
        flag = b"\x00" if rep is None else b"\x01" + text(rep)
        self._add(bytes([REC_VALUE]) + varint(value_id) + text(type_name) + flag)

    def records(self, data: bytes) -> None:
        """Whole records encoded elsewhere (the C collector's value records, a batch at a time)."""
        self._add(data)

    def label(self, label_id: int, nodeid: str, phase: str) -> None:
        self._add(bytes([REC_LABEL]) + varint(label_id) + text(nodeid) + text(phase))

    def outcome(self, nodeid: str, phase: str, outcome: str) -> None:
        self._add(bytes([REC_OUTCOME]) + text(nodeid) + text(phase) + text(outcome))

    def broken(self, reason: str) -> None:
        self.status = STATUS_BROKEN
        self._add(bytes([REC_BROKEN]) + text(reason))

    def thread(self, index: int, ident: int, name: str) -> None:
        self._add(bytes([REC_THREAD]) + varint(index) + varint(ident) + text(name))

    def chunk(self, thread_index: int, words: bytes) -> None:
        """``words``: the thread's event stream in native byte order (``array('H').tobytes()``)."""
        if _BIG_ENDIAN:
            from array import array

            swapped = array("H", words)
            swapped.byteswap()
            words = swapped.tobytes()
        self.chunks += 1
        self._add(bytes([REC_CHUNK]) + varint(thread_index) + varint(len(words)) + words)

    def close(self) -> None:
        """Write the end record; a file without it is reported as truncated."""
        with self._lock:
            if self.closed:
                return
            self._records.append(bytes([REC_END]) + varint(self.chunks))
            self._flush_locked()
            if not self.closed:
                finish = b"" if self._compressor is None else self._compressor.flush(zlib.Z_FINISH)
                self._write_raw(finish + TRAILER + bytes([self.status]))
            if not self.closed:  # else a write failed and the file is closed already
                self.closed = True
                with contextlib.suppress(OSError):
                    os.close(self._fd)

    def abandon(self) -> None:
        """Forget this file without writing (a forked child starts its own)."""
        with self._lock:
            self.closed = True
            if self._fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(self._fd)
                self._fd = -1


def read_status(path: str) -> str:
    """``complete``, ``broken`` (the tracer lost its tool id) or ``truncated`` (the process ended
    without closing the trace: ``os._exit``, a signal), from the trailer alone."""
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            if size < len(TRAILER) + 1:
                return "truncated"
            handle.seek(size - len(TRAILER) - 1)
            tail = handle.read()
    except OSError:
        return "truncated"
    if tail[:-1] != TRAILER:
        return "truncated"
    return {STATUS_COMPLETE: "complete", STATUS_BROKEN: "broken"}.get(tail[-1], "truncated")


def read_header(handle: BinaryIO) -> tuple[int, dict, int]:
    """``(format version, meta, offset of the body)`` of an open trace file; ValueError when it is none."""
    head = handle.read(1 << 16)
    if not head.startswith(MAGIC) or len(head) <= len(MAGIC) + 1:
        raise ValueError("not a histeg trace file")
    version = head[len(MAGIC)]
    pos, size, shift = len(MAGIC) + 1, 0, 0
    while True:
        if pos >= len(head):
            raise ValueError("header cut short")
        byte = head[pos]
        pos += 1
        size |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            break
    if pos + size > len(head):
        raise ValueError("header cut short")
    return version, json.loads(head[pos : pos + size]), pos + size


def read_meta(path: str) -> dict:
    """The JSON header of a trace file ({} when it is not readable)."""
    try:
        with open(path, "rb") as handle:
            return read_header(handle)[1]
    except (OSError, ValueError):
        return {}
