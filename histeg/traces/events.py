"""Event streams split by entry point, and decoded into call trees: the reference in Python.

``_decode.c`` does the same in C, word for word (``tests/tracing/test_decode_parity.py``);
this module is what histeg uses when the extension is not built, and the
specification of both.

**Splitting.** The tracer writes one event stream per thread. An entry point
is a root call (a call made when the thread's stack is empty) with every
event of its tree: the resumptions of its generators (at any depth, on any
thread, while other entry points run in between) and the line-budget state
its calls see. ``split`` gives each entry point a stream of its own, so that a
reader can decode one entry point without the others: a word goes to the
entry point that owns the call it belongs to; ``OP_THREAD`` words say on which
thread the following events ran; the global set of functions whose lines are
off is passed on to an entry point as ``OP_LINES_OFF``/``OP_LINES_ON`` words
just before its next event. That set is kept per thread, from the markers in
the thread's own stream: streams reach the file in chunks, so the order of
two threads' chunks says nothing of when their events ran, and one thread's
marker read in file order would reach another thread's calls too early or
too late. The collector writes each thread the markers it needs where they
happened in its own time (``PyTracer``: at once to a thread whose running call
loses lines, and before a thread's next call or resumption otherwise). A root
call empties its thread's set, as the collector turns every function's lines
back on there.

**Decoding.** ``decode`` turns one entry point's stream into ``Columns``:
calls in the order they started (a parent before its children), with their lines as *positions* among the function's code
lines (so that a comment or a moved function changes nothing), parameters,
outcome, children, and a digest of every call's subtree, so that comparisons
skip identical subtrees without looking inside. It runs in four phases, the
same in _decode.c under the same names: ``read_tokens`` (the events read into
calls), ``build_columns`` (the calls as columns), ``compute_digests`` and
``export_columns`` (the ``Columns`` with the call graph's edges).
"""

from __future__ import annotations

import bisect
from array import array
from dataclasses import dataclass, field
from typing import NamedTuple

from histeg.tracing import format as fmt

MAX_THREADS = 1 << 20
"""Thread indices at or above this are taken for corruption (``MAX_THREADS`` in _decode.c)."""
FALLBACK_BASE = 1 << 16
"""Positions of lines that are not code lines of their function: this plus the offset from its first line."""

END_RUNNING, END_RETURNED, END_RAISED = 0, 1, 2

_MASK = (1 << 64) - 1
_INCOMPLETE = 0x6C696E65736F6666  # "linesoff"
_INT_DOMAIN = 0x696E6C696E65696E  # "inlinein"
_EVENT = 1 << 63
"""Set in what a stream digest takes of an event other than a line (``EVENT_WORD`` in _decode.c): no line position has it."""
SEED_A, SEED_B = 0x243F6A8885A308D3, 0x13198A2E03707344
LANE_A, LANE_B = 0xA0761D6478BD642F, 0xE7037ED1A0B428DB
STREAM_DIGEST = 2
"""How stream digests are made, as a sealed file's index says (``streamDigest``; absent: 1, splitmix64 steps): digests of
two schemes are never taken as equal."""


@dataclass
class FunctionTable:
    """What decoding needs of a trace's functions, by function id."""

    first_line: dict[int, int] = field(default_factory=dict)
    code_lines: dict[int, tuple[int, ...]] = field(default_factory=dict)
    """Sorted line numbers that carry code (``co_lines``)."""
    hashes: dict[int, int] = field(default_factory=dict)
    """64-bit hash of the identifier."""
    params: dict[int, int] = field(default_factory=dict)
    """Parameter count (the ``F`` record's names): a bare call's parameters (``format.CALL_BARE``)."""


def _mix(state: int, word: int) -> int:
    """splitmix64 of ``state ^ word``: the step of both digest lanes (``mix`` in _decode.c)."""
    z = ((state ^ word) + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def value_hash(value_id: int, hashes: array) -> int:
    """A value's 64-bit content hash: inline ints from their value, others from the table (0: not recorded)."""
    if value_id & fmt.INLINE_INT:
        return _mix(_INT_DOMAIN, value_id & ~fmt.INLINE_INT)
    return hashes[value_id] if value_id < len(hashes) else 0


@dataclass
class Entry:
    """One entry point's own event stream, from a ``Splitter``."""

    number: int
    """Its place among the entry points of the trace, in the order they started."""
    thread: int
    function: int
    label: int
    """Label id; 0 when the root call had none."""
    words: array = field(default_factory=lambda: array("H"))


@dataclass
class _Owner:
    entry: Entry
    silent: frozenset[int] = frozenset()
    version: tuple[int, int] = (-1, -1)
    """(thread, version) of the set ``silent`` was last brought up to."""
    thread: int = -1
    live: int = 0
    """Its calls running or suspended: at 0 no later event can belong to it."""


class Splitter:
    """Splits the chunks of a trace, fed in file order, by entry point (see the module docstring).

    An entry point whose calls have all ended is handed out by ``take`` at once, so that memory
    holds the entry points still running, not the whole trace; ``finish`` gives the rest."""

    def __init__(self) -> None:
        self._open: dict[int, _Owner] = {}
        self._finished: list[Entry] = []
        self._started = 0
        self._stacks: dict[int, list[_Owner]] = {}
        self._generators: dict[int, _Owner] = {}
        self._silent: dict[int, set[int]] = {}
        """Per thread: the functions whose lines are off, as its stream says."""
        self._version = 0
        """Counts the changes of any thread's set."""

    def _ended(self, owner: _Owner) -> None:
        owner.live -= 1
        if owner.live == 0:
            entry = self._open.pop(owner.entry.number).entry
            self._finished.append(entry)

    def take(self) -> list[Entry]:
        """The entry points finished since the last call, in the order they finished."""
        finished, self._finished = self._finished, []
        return finished

    def finish(self) -> list[Entry]:
        """Every entry point not taken yet: the finished ones, then those still running when the trace ended."""
        rest = self.take() + [owner.entry for owner in self._open.values()]
        self._open.clear()
        return rest

    def _emit(self, owner: _Owner, thread: int, words: array | list[int]) -> None:
        out = owner.entry.words
        if owner.thread != thread:
            out.extend((fmt.OP_THREAD, thread & 0xFFFF, thread >> 16))
            owner.thread = thread
        if owner.version != (thread, self._version):
            current = frozenset(self._silent.get(thread, ()))
            for function in sorted(current - owner.silent):
                out.extend((fmt.OP_LINES_OFF, function & 0xFFFF, function >> 16))
            for function in sorted(owner.silent - current):
                out.extend((fmt.OP_LINES_ON, function & 0xFFFF, function >> 16))
            owner.silent, owner.version = current, (thread, self._version)
        out.extend(words)

    def feed(self, thread: int, words: array) -> None:
        """The next chunk of ``thread``'s stream, in file order. Runs of line words, most of a stream,
        are handled here: they go to the entry point of the thread's current call, whole."""
        if thread >= MAX_THREADS:
            raise ValueError(f"thread index {thread} out of range")
        stack = self._stacks.setdefault(thread, [])
        n = len(words)
        i = 0
        while i < n:
            word = words[i]
            if word <= fmt.MAX_LINE:
                end = i + 1
                while end < n and words[end] <= fmt.MAX_LINE:
                    end += 1
                if stack:
                    self._emit(stack[-1], thread, words[i:end])
                i = end
            elif word & 0xFFF8 == fmt.OP_CALL:
                i = self._split_call(thread, stack, words, i)
            else:
                i += self._split_event(thread, stack, words, i)

    def _split_call(self, thread: int, stack: list[_Owner], words: array, i: int) -> int:
        """The call event at ``i`` goes to the entry point of the calling call, or starts one; returns where the next event starts."""
        word, n = words[i], len(words)
        size = 3 + 2 * bool(word & fmt.CALL_ROOT) + 2 * bool(word & fmt.CALL_GEN)
        if not word & fmt.CALL_BARE:
            if i + size >= n:
                raise ValueError(f"call cut short in thread {thread}")
            size += 1 + 2 * words[i + size]
        if i + size > n:
            raise ValueError(f"call cut short in thread {thread}")
        owner = stack[-1] if stack else self._start_entry(thread, words, i)
        if word & fmt.CALL_GEN:
            at = i + 3 + 2 * bool(word & fmt.CALL_ROOT)
            self._generators[words[at] | words[at + 1] << 16] = owner
        self._emit(owner, thread, words[i : i + size])
        stack.append(owner)
        owner.live += 1
        return i + size

    def _start_entry(self, thread: int, words: array, i: int) -> _Owner:
        """A root call at ``i`` starts an entry point."""
        if self._silent.get(thread):  # the collector turns every function's lines back on at a root call
            self._silent[thread].clear()
            self._version += 1
        label = words[i + 3] | words[i + 4] << 16 if words[i] & fmt.CALL_ROOT else 0
        owner = _Owner(Entry(self._started, thread, words[i + 1] | words[i + 2] << 16, label))
        self._open[self._started] = owner
        self._started += 1
        return owner

    def _split_event(self, thread: int, stack: list[_Owner], words: array, i: int) -> int:
        """Any event at ``i`` but a line or a call: three words, an op and its operand (``OP_RETURN_BARE``: one word);
        returns its length."""
        word = words[i]
        size = 1 if word == fmt.OP_RETURN_BARE else 3
        if i + size > len(words):
            raise ValueError(f"event {word:#06x} cut short in thread {thread}")
        operand = words[i + 1] | words[i + 2] << 16 if size == 3 else 0
        if word == fmt.OP_RESUME:
            owner = self._generators.get(operand)
            if owner is None:
                raise ValueError(f"resumption of an unknown generator call {operand} in thread {thread}")
            self._emit(owner, thread, words[i : i + 3])
            stack.append(owner)
        elif word in (fmt.OP_RETURN, fmt.OP_RETURN_BARE, fmt.OP_RAISE, fmt.OP_YIELD):
            if not stack:
                raise ValueError(f"a call ends on the empty stack of thread {thread}")
            owner = stack.pop()
            self._emit(owner, thread, words[i : i + size])
            if word != fmt.OP_YIELD:
                self._ended(owner)
        elif word == fmt.OP_LINES_OFF:
            self._silent.setdefault(thread, set()).add(operand)
            self._version += 1
        elif word == fmt.OP_LINES_ON:
            self._silent.setdefault(thread, set()).discard(operand)
            self._version += 1
        else:
            raise ValueError(f"unknown event {word:#06x} in thread {thread}")
        return size


@dataclass
class Columns:
    """The calls of one entry point in the order they started (a parent before its children); call 0 is the root. Children of call ``i`` are
    ``children[child_start[i]:child_start[i + 1]]``, and likewise for lines, parameters and yields."""

    function: array  # I
    parent: array  # i, -1 for the root
    at: array  # I: lines of the parent executed before this call started
    thread: array  # I
    end: array  # B: END_RUNNING (running or suspended when the trace ended), END_RETURNED, END_RAISED
    result: array  # I: value id returned or raised
    complete: array  # B: 1 when every line was recorded (no line budget spent)
    line_start: array  # I, n + 1
    lines: array  # I: positions
    param_start: array  # I, n + 1
    params: array  # I: value ids
    yield_start: array  # I, n + 1
    yields: array  # I: value ids
    child_start: array  # I, n + 1
    children: array  # I
    digests: bytes
    """16 bytes per call: the digest of its whole subtree."""
    line_events: int
    edges: array  # Q: caller << 32 | callee, sorted, each once
    called: array  # I: the functions called, sorted, each once
    own_digests: bytes
    """16 bytes per call: its function, parameters, outcome and its children's functions in order —
    what a comparison of the call itself looks at, but its lines."""
    line_digests: bytes
    """16 bytes per call: its line positions, or that not all were recorded."""

    def __len__(self) -> int:
        return len(self.function)

    def digest(self, call: int) -> bytes:
        return self.digests[16 * call : 16 * call + 16]


class ReadCall:
    """A call as the stream tells of it (phase 1, tokens): its lines, parameters and yields in stream order."""

    __slots__ = ("at", "children", "complete", "end", "function", "lines", "params", "parent", "result", "thread", "yields")

    def __init__(self, function: int, parent: int, at: int, thread: int, complete: bool, params: list[int]) -> None:
        self.function, self.parent, self.at, self.thread = function, parent, at, thread
        self.end, self.result, self.complete = END_RUNNING, 0, complete
        self.lines: list[int] = []
        self.params = params
        self.yields: list[int] = []
        self.children: list[int] = []


@dataclass
class Tokens:
    """Phase 1 of decoding (``read_tokens``): the calls of one entry point's stream in the order they started."""

    calls: list[ReadCall]
    line_events: int


class CallColumns(NamedTuple):
    """Phase 2 of decoding (``build_columns``): the calls as the first columns of ``Columns``, same names and order."""

    function: array
    parent: array
    at: array
    thread: array
    end: array
    result: array
    complete: array
    line_start: array
    lines: array
    param_start: array
    params: array
    yield_start: array
    yields: array
    child_start: array
    children: array


@dataclass
class Digests:
    """Phase 3 of decoding (``compute_digests``): 16 bytes per call in each (see ``Columns``)."""

    digests: bytes
    own_digests: bytes
    line_digests: bytes


def _position(line: int, first: int, code_lines: tuple[int, ...] | None) -> int:
    if code_lines:
        index = bisect.bisect_left(code_lines, line)
        if index < len(code_lines) and code_lines[index] == line:
            return index
    return FALLBACK_BASE + line - first


def decode(words: array, functions: FunctionTable, value_hashes: array, with_yields: bool = True) -> Columns:
    """One entry point's stream (from ``split``) as columns; ValueError when it is inconsistent.

    Comparisons leave the yielded values out (``with_yields=False``): digests do not cover them, and
    a generator resumed millions of times would hold millions of them. The four phases are those of
    ``decoder_decode`` in _decode.c, under the same names."""
    tokens = read_tokens(words, functions, with_yields)
    columns = build_columns(tokens)
    return export_columns(columns, compute_digests(columns, functions, value_hashes), tokens.line_events)


@dataclass
class EntryIndex:
    """What a trace's index says of one entry point (``index_entry``)."""

    digest: bytes
    """16 bytes over its event stream, ids replaced by what they stand for (a function's identifier, a value's
    text, a line's position, threads and generators in the order the stream shows them): equal digests
    mean equal streams, hence equal calls, so comparisons skip the pair without decoding it."""
    line_events: int
    calls: int
    edges: array  # Q: caller << 32 | callee, sorted, each once
    called: array  # I: the functions called, sorted, each once


def index_entry(words: array, functions: FunctionTable, value_hashes: array) -> EntryIndex:
    """One entry point's index facts in one pass over its stream (``Decoder.index`` in _decode.c): sealing
    reads every entry point once, and the calls' columns are not needed for it; ValueError as ``decode``."""
    reader = _read(_TokenReader(functions, False, value_hashes), words)
    calls = reader.calls
    a, b = _lanes(reader.stream or [])
    return EntryIndex(
        digest=_lanes_bytes([(a, b)]),
        line_events=reader.line_events,
        calls=len(calls),
        edges=array("Q", sorted({calls[c.parent].function << 32 | c.function for c in calls[1:]})),
        called=array("I", sorted({c.function for c in calls})),
    )


# -- phase 1: tokens ------------------------------------------------------------------------------


def read_tokens(words: array, functions: FunctionTable, with_yields: bool = True) -> Tokens:
    """The calls of one entry point's stream, each with its lines, values and outcome as the stream tells."""
    reader = _read(_TokenReader(functions, with_yields), words)
    return Tokens(reader.calls, reader.line_events)


def _read(reader: _TokenReader, words: array) -> _TokenReader:
    """``reader`` after every event of ``words``; ValueError when the stream is inconsistent or holds no call."""
    try:
        reader.read(words)
    except (IndexError, KeyError) as exc:
        raise ValueError(f"inconsistent event stream ({type(exc).__name__})") from None
    if not reader.calls:
        raise ValueError("an entry point without a call")
    return reader


class _TokenReader:
    """The state of a stream as it is read: each thread's stack of running calls, the suspended
    generators by call id, and the functions whose lines are off."""

    def __init__(self, functions: FunctionTable, with_yields: bool, value_hashes: array | None = None) -> None:
        self.functions = functions
        self.with_yields = with_yields
        self.value_hashes = value_hashes
        """Given when indexing (``index_entry``): ``stream`` then gets what the stream digest covers."""
        self.stream: list[int] | None = None if value_hashes is None else []
        self.threads_seen: list[int] = []
        self.run: list[int] = []
        """When indexing: the positions of the run of lines being read."""
        self.calls: list[ReadCall] = []
        self.stacks: dict[int, list[int]] = {0: []}
        self.stack = self.stacks[0]
        self.thread = 0
        self.generators: dict[int, int] = {}
        self.silent: set[int] = set()
        self.line_events = 0

    def read(self, words: array) -> None:
        """Every event of ``words``. Line words, most of a stream, are handled here with local names
        rather than by a method call each (``read_tokens`` turns IndexError and KeyError into ValueError)."""
        calls, first_line, code_lines = self.calls, self.functions.first_line, self.functions.code_lines
        stack, stream = self.stack, self.stream
        line_events = 0
        n = len(words)
        i = 0
        while i < n:
            word = words[i]
            if word <= fmt.MAX_LINE:
                if stack:
                    call = calls[stack[-1]]
                    call.lines.append(_position(word, first_line[call.function], code_lines.get(call.function)))
                    line_events += 1
                    if stream is not None:
                        self.run.append(call.lines[-1])
                i += 1
                continue
            if self.run:
                self._end_run()
            if word & 0xFFF8 == fmt.OP_CALL:
                i = self._call(words, i, word)
            elif word == fmt.OP_RETURN_BARE:
                self._left(fmt.OP_RETURN, 0)
                i += 1
            else:
                self._event(word, words[i + 1] | words[i + 2] << 16)
                stack = self.stack
                i += 3
        if self.run:
            self._end_run()
        self.line_events = line_events

    def _end_run(self) -> None:
        """A run of lines into the stream digest: its length, then its positions three to a word."""
        run = self.run
        assert self.stream is not None
        self.stream.append(len(run))
        for k in range(0, len(run), 3):
            self.stream.append(sum((position & 0x1FFFFF) << (21 * slot) for slot, position in enumerate(run[k : k + 3])))
        run.clear()

    def _call(self, words: array, i: int, word: int) -> int:
        """The call event at ``i`` starts a call on the current thread; returns where the next event starts."""
        function = words[i + 1] | words[i + 2] << 16
        if function not in self.functions.first_line:
            raise ValueError(f"call of an undefined function {function}")
        i += 3 + 2 * bool(word & fmt.CALL_ROOT)
        gen = None
        if word & fmt.CALL_GEN:
            gen = words[i] | words[i + 1] << 16
            i += 2
        if word & fmt.CALL_BARE:  # no count, no ids: the function's parameters, none captured
            if i > len(words):
                raise ValueError("a root call's label cut short")
            count = self.functions.params.get(function, 0)
            params = [0] * count
            after = i
        else:
            count = words[i]
            params = [words[j] | words[j + 1] << 16 for j in range(i + 1, i + 1 + 2 * count, 2)]
            if len(params) != count:
                raise ValueError("parameters cut short")
            after = i + 1 + 2 * count
        if self.stream is not None:
            self.stream += [_EVENT | word & (fmt.OP_CALL | fmt.CALL_GEN), self.functions.hashes.get(function, 0), count]
            self.stream += [value_hash(param, self.value_hashes) for param in params]  # type: ignore[arg-type]
        calls, stack = self.calls, self.stack
        parent = stack[-1] if stack else -1
        if parent < 0 and calls:
            raise ValueError("a second root call in one entry point")
        index = len(calls)
        at = len(calls[parent].lines) if parent >= 0 else 0
        calls.append(ReadCall(function, parent, at, self.thread, function not in self.silent, params))
        if parent >= 0:
            calls[parent].children.append(index)
        if gen is not None:
            self.generators[gen] = index
        stack.append(index)
        return after

    def _event(self, word: int, operand: int) -> None:
        """Any event but a line or a call: three words, an op and its operand."""
        if word == fmt.OP_THREAD:
            if operand >= MAX_THREADS:
                raise ValueError(f"thread index {operand} out of range")
            self.thread = operand
            self.stack = self.stacks.setdefault(operand, [])
            if self.stream is not None:
                if operand not in self.threads_seen:
                    self.threads_seen.append(operand)
                self.stream += [_EVENT | word, self.threads_seen.index(operand)]
            return
        if word == fmt.OP_RESUME:
            self.stack.append(self.generators[operand])
            if self.stream is not None:
                self.stream += [_EVENT | word, self.generators[operand]]
            return
        if self.stream is not None and word in (fmt.OP_LINES_OFF, fmt.OP_LINES_ON):
            self.stream += [_EVENT | word, self.functions.hashes.get(operand, 0)]
        if word == fmt.OP_LINES_OFF:
            self.silent.add(operand)
            self._lines_lost(operand)
        elif word == fmt.OP_LINES_ON:
            self.silent.discard(operand)
        elif word in (fmt.OP_RETURN, fmt.OP_RAISE, fmt.OP_YIELD):
            self._left(word, operand)
        else:
            raise ValueError(f"unknown event {word:#06x}")

    def _left(self, word: int, operand: int) -> None:
        """The current call returned, raised or yielded ``operand``."""
        call = self.calls[self.stack.pop()]
        if self.stream is not None:
            self.stream += [_EVENT | word, value_hash(operand, self.value_hashes)]  # type: ignore[arg-type]
        if word == fmt.OP_YIELD:
            if self.with_yields:
                call.yields.append(operand)
        else:
            call.end = END_RETURNED if word == fmt.OP_RETURN else END_RAISED
            call.result = operand

    def _lines_lost(self, function: int) -> None:
        """The lines of ``function`` are off: its calls running or suspended now miss some of theirs."""
        calls = self.calls
        for index in (*(c for s in self.stacks.values() for c in s), *self.generators.values()):
            if calls[index].function == function and calls[index].end == END_RUNNING:
                calls[index].complete = False


# -- phase 2: columns -----------------------------------------------------------------------------


def build_columns(tokens: Tokens) -> CallColumns:
    """The calls' fields as columns, and their lists as offsets into flat columns."""
    calls = tokens.calls
    line_start, lines = _offsets([c.lines for c in calls])
    param_start, params = _offsets([c.params for c in calls])
    yield_start, yields = _offsets([c.yields for c in calls])
    child_start, children = _offsets([c.children for c in calls])
    return CallColumns(
        function=array("I", [c.function for c in calls]),
        parent=array("i", [c.parent for c in calls]),
        at=array("I", [c.at for c in calls]),
        thread=array("I", [c.thread for c in calls]),
        end=array("B", [c.end for c in calls]),
        result=array("I", [c.result for c in calls]),
        complete=array("B", [int(c.complete) for c in calls]),
        line_start=line_start,
        lines=lines,
        param_start=param_start,
        params=params,
        yield_start=yield_start,
        yields=yields,
        child_start=child_start,
        children=children,
    )


def _offsets(lists: list[list[int]]) -> tuple[array, array]:
    """The lists concatenated, and where each starts (one more offset than lists: the end)."""
    starts, flat = array("I", [0]), array("I")
    for items in lists:
        flat.extend(items)
        starts.append(len(flat))
    return starts, flat


# -- phase 3: digests -----------------------------------------------------------------------------

Lanes = tuple[int, int]


def compute_digests(columns: CallColumns, functions: FunctionTable, value_hashes: array) -> Digests:
    """Every call's three digests, from the last call to the first: a call's children started after it,
    and its subtree digest covers theirs."""
    hashes = functions.hashes
    function, child_start = columns.function, columns.child_start
    count = len(function)
    subtree: list[Lanes] = [(0, 0)] * count
    own: list[Lanes] = [(0, 0)] * count
    lines: list[Lanes] = [(0, 0)] * count
    for call in range(count - 1, -1, -1):
        function_hash = hashes.get(function[call], 0)
        line_words = _line_words(columns, call)
        value_words = _value_words(columns, call, value_hashes)
        children = columns.children[child_start[call] : child_start[call + 1]]
        lines[call] = _lanes(line_words)
        own[call] = _lanes([function_hash, *value_words, len(children), *(hashes.get(function[c], 0) for c in children)])
        subtree[call] = _lanes(
            [function_hash, *line_words, *value_words, len(children), *(word for c in children for word in (columns.at[c], *subtree[c]))]
        )
    return Digests(_lanes_bytes(subtree), _lanes_bytes(own), _lanes_bytes(lines))


def _line_words(columns: CallColumns, call: int) -> list[int]:
    """What digests take of a call's lines: their positions, or that not all were recorded."""
    if not columns.complete[call]:
        return [_INCOMPLETE]
    positions = columns.lines[columns.line_start[call] : columns.line_start[call + 1]]
    return [len(positions), *positions]


def _value_words(columns: CallColumns, call: int, value_hashes: array) -> list[int]:
    """What digests take of a call's values: its parameters, how it ended and its result."""
    params = columns.params[columns.param_start[call] : columns.param_start[call + 1]]
    end = columns.end[call]
    return [
        len(params),
        *(value_hash(value_id, value_hashes) for value_id in params),
        END_RAISED if end == END_RAISED else END_RETURNED,
        value_hash(columns.result[call], value_hashes) if end != END_RUNNING else 0,
    ]


def _mum(x: int, y: int) -> int:
    """The 128-bit product of two 64-bit words, its halves xor-ed (``mum`` in _decode.c)."""
    product = x * y
    return (product ^ (product >> 64)) & _MASK


def _lanes(words: list[int]) -> Lanes:
    """The two 64-bit lanes of a digest over ``words`` (``feed`` in _decode.c)."""
    a, b = SEED_A, SEED_B
    for word in words:
        a = _mum(a ^ word, LANE_A)
        b = _mum(b ^ word, LANE_B)
    return a, b


def _lanes_bytes(digests: list[Lanes]) -> bytes:
    return b"".join(a.to_bytes(8, "little") + b.to_bytes(8, "little") for a, b in digests)


# -- phase 4: export ------------------------------------------------------------------------------


def export_columns(columns: CallColumns, digests: Digests, line_events: int) -> Columns:
    """The columns with their digests, and the call graph's edges and functions they show."""
    function, parent = columns.function, columns.parent
    return Columns(
        **columns._asdict(),
        digests=digests.digests,
        line_events=line_events,
        edges=array("Q", sorted({function[parent[call]] << 32 | function[call] for call in range(1, len(function))})),
        called=array("I", sorted(set(function))),
        own_digests=digests.own_digests,
        line_digests=digests.line_digests,
    )
