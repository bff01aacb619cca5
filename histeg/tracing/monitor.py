"""The collector: ``sys.monitoring`` callbacks that record instrumented calls.

This is the pure-Python collector, the reference: ``native.py`` runs the same
callbacks in C (``_ctracer.c``), word for word, and keeps everything else
here. Tests run every traced project under both.

Cost model (why it is shaped like this):

* ``PY_START`` is the only per-location event enabled globally. It decides
  once per code object; non-instrumented code gets ``DISABLE`` and never
  calls back again at that location. Instrumented code objects get LINE,
  PY_RETURN, PY_YIELD and PY_RESUME enabled locally (``set_local_events``),
  so only project code pays for line events.
* ``PY_UNWIND`` and ``PY_THROW`` cannot be enabled per code object; for
  code that is not ours their callbacks return after a thread-local lookup
  and an identity check (unwind) or a dict lookup (throw).
* A LINE event is one ``array.append`` of the line number to the thread's
  event stream. While a single thread runs instrumented code, the LINE
  callback is bound to that thread's buffer directly; from the moment a
  second thread does, it looks the buffer up in thread-local storage.
* Calls, returns, yields and resumptions are markers in the same stream
  (see ``format.py``), so nesting and the position of a child in its
  parent's line sequence are implicit, and the collector keeps nothing per
  finished call. Buffers are shipped to the writer when they exceed
  ``CHUNK_WORDS`` (checked when a call returns, yields or unwinds) and
  whenever a thread's last instrumented call ends, so memory does not grow
  with the length of the run (one activation that runs millions of lines
  without returning or calling anything instrumented is the exception: its
  buffer grows by 2 bytes per line until it does).
* Parameters cost most: reading them needs the frame's ``f_locals``. Ints
  are stored inline in the value id, other values are cached by type (types
  whose instances show no state) or by value (short str/bytes, bool, None). Values
  are recorded for the first ``value_budget`` calls of a function per entry
  point only; later calls record "no value", which comparisons treat as
  unknown, so a function called millions of times costs about its lines.
"""

from __future__ import annotations

import itertools
import sys
from _thread import _local, allocate_lock, get_ident
from array import array
from collections.abc import Callable
from types import CodeType
from typing import Any

from histeg.tracing import format as fmt
from histeg.tracing.protocol import RETURN_REDACTED, Backend, FunctionEntry
from histeg.tracing.selection import Selector
from histeg.tracing.tracers import LINE_BUDGET, LINE_CAP, VALUE_BUDGET
from histeg.tracing.value_ids import ValueIds
from histeg.tracing.values import Abstraction

_mon = sys.monitoring
_E = _mon.events
DISABLE = _mon.DISABLE
LOCAL_EVENTS = _E.LINE | _E.PY_RETURN | _E.PY_YIELD | _E.PY_RESUME
GLOBAL_EVENTS = _E.PY_START | _E.PY_UNWIND | _E.PY_THROW
CO_VARARGS, CO_VARKEYWORDS = 0x4, 0x8
CO_GENERATOR, CO_COROUTINE, CO_ASYNC_GENERATOR = 0x20, 0x80, 0x200
CHUNK_WORDS = fmt.CHUNK_WORDS
TOOL_IDS = (4, 3, 5, 2)
"""Tool ids tried in this order (0, 1 and 5 are what debuggers, coverage.py and profilers take by convention)."""
INLINE_INT, INT_BIAS = fmt.INLINE_INT, fmt.INT_BIAS
TOOL_NAME = "histeg"
NO_VALUE = 0


def free_tool_id() -> int:
    """A ``sys.monitoring`` tool id nobody uses, claimed for histeg."""
    for tool in TOOL_IDS:
        if _mon.get_tool(tool) is None:
            _mon.use_tool_id(tool, TOOL_NAME)
            return tool
    raise RuntimeError("histeg: no free sys.monitoring tool id")


class ThreadState:
    """One thread's call stack and event stream buffer."""

    __slots__ = ("index", "buf", "stack", "told", "told_epoch")

    def __init__(self, index: int) -> None:
        self.index = index
        """-1 for the scratch state that receives the events of histeg's own ``repr`` calls."""
        self.buf = array("H")
        self.told = 0
        self.told_epoch = -1
        """Its stream has an OFF marker of the first ``told`` functions of ``PyTracer.lines_off`` when ``told_epoch``
        is the tracer's ``off_epoch`` (of none otherwise)."""
        self.stack: list[tuple[Any, ...] | list[Any]] = []
        """Per running call: (code, 0, 0, None) for plain functions, [code, generator call id,
        frame id, resume words, thread state] for generators and coroutines."""


class Collector:
    """Records instrumented calls of this process into a ``TraceWriter`` through a backend
    (``PyTracer`` here, the C ``Tracer`` in ``native.NativeCollector``).

    It owns what both backends share: the choice of instrumented code, the
    value table, labels, thread records, shipping, fork, and the watch over its
    ``sys.monitoring`` tool id (a program that frees or takes it over leaves
    a trace that is marked broken, not one that looks complete).
    """

    implementation = "python"

    def __init__(
        self,
        selector: Selector,
        writer: fmt.TraceWriter,
        abstraction: Abstraction | None = None,
        value_budget: int = VALUE_BUDGET,
        tool: int | None = None,
        line_budget: int = LINE_BUDGET,
        line_cap: int = LINE_CAP,
    ) -> None:
        self.selector = selector
        self.writer = writer
        self.abstraction = abstraction
        """None: values are off."""
        self.capture_values = abstraction is not None
        self.value_budget = value_budget
        self.line_budget = line_budget
        """Lines are recorded for the first N calls of each function per entry point (0: every call)."""
        self.line_cap = line_cap
        """And for its first N line events per entry point (0: no bound)."""
        self.tool = tool
        self.broken: str | None = None
        """Why the trace cannot be complete (the tool id was freed, cleared or taken over)."""
        self._codes: dict[int, FunctionEntry] = {}  # id(code) -> entry
        self.value_ids = ValueIds(writer.value, abstraction)
        self._func_ids = itertools.count(1)
        self._threads = 0
        self._lock = allocate_lock()
        self._label_ids = itertools.count(1)
        self.backend = self._make_backend()
        self._callbacks = self._callback_table()

    def _make_backend(self) -> Backend:
        return PyTracer(self)

    def _reset_backend(self) -> None:
        """After fork: the child's threads, suspended calls and value table start afresh; functions
        whose line events are off stay listed, so the child's next entry point turns them on again."""
        old = self.backend
        assert isinstance(old, PyTracer)  # the C backend is reset in place (NativeCollector)
        backend = PyTracer(self)
        backend.lines_off.extend(old.lines_off)
        self.backend = backend
        self._callbacks = self._callback_table()

    def _callback_table(self) -> dict[int, Callable[..., object]]:
        backend = self.backend
        return {
            _E.PY_START: backend.py_start,
            _E.PY_RETURN: backend.py_return,
            _E.PY_YIELD: backend.py_yield,
            _E.PY_RESUME: backend.py_resume,
            _E.PY_THROW: backend.py_resume,
            _E.PY_UNWIND: backend.py_unwind,
            _E.LINE: backend.line,
        }

    # -- lifecycle -----------------------------------------------------------------

    def start(self) -> None:
        if self.tool is None:
            self.tool = free_tool_id()
        tool = self.tool
        for event, callback in self._callbacks.items():
            _mon.register_callback(tool, event, callback)
        _mon.set_events(tool, GLOBAL_EVENTS)

    def check(self, where: str = "") -> str | None:
        """Whether the tool id is still histeg's, with its events and callbacks; the first
        breach is written to the trace (and tracing stops being trusted)."""
        tool = self.tool
        if tool is None or self.broken is not None:
            return self.broken
        owner = _mon.get_tool(tool)
        reason = None
        if owner != TOOL_NAME:
            reason = f"sys.monitoring tool id {tool} was freed" + (f" and taken by {owner!r}" if owner else "")
        elif _mon.get_events(tool) != GLOBAL_EVENTS:
            reason = f"the events of sys.monitoring tool id {tool} were changed or cleared"
        else:
            ours = self._callbacks[_E.PY_START]
            previous = _mon.register_callback(tool, _E.PY_START, ours)
            if previous is not ours:
                _mon.register_callback(tool, _E.PY_START, previous)  # not ours to take back
                reason = f"the callbacks of sys.monitoring tool id {tool} were replaced"
        if reason is not None:
            self.broken = reason + (f" (noticed at {where})" if where else "")
            self.writer.broken(self.broken)
        return self.broken

    def stop(self) -> None:
        """Switch monitoring off (when the tool id is still ours), ship every buffer and close the file."""
        tool = self.tool
        if tool is None:
            return
        self.check("exit")
        self.tool = None
        if self.broken is None:
            _mon.set_events(tool, 0)
            for entry in list(self._codes.values()):
                _mon.set_local_events(tool, entry.code, 0)
            for event in self._callbacks:
                _mon.register_callback(tool, event, None)
            _mon.free_tool_id(tool)
        self.backend.ship_all()
        self.writer.close()

    def after_fork_in_child(self, writer: fmt.TraceWriter) -> None:
        """A forked child writes its own file; the parent's pending data stays the parent's."""
        self.writer.abandon()
        self.writer = writer
        self.value_ids = ValueIds(writer.value, self.abstraction)
        for entry in self._codes.values():
            self._announce(entry)
        self._threads = 0
        label = self.backend.label
        self._reset_backend()
        self.backend.label = label
        tool = self.tool
        if tool is not None and self.broken is None:
            for event, callback in self._callbacks.items():
                _mon.register_callback(tool, event, callback)

    # -- labels and outcomes (pytest plugin) --------------------------------------

    def set_label(self, nodeid: str | None, phase: str = "") -> None:
        """Label the entry points that start from now on (None: unlabelled).

        Between test phases no instrumented call runs on this thread, so calls
        still on its stack are frames whose end was never reported (CPython
        sends no ``PY_UNWIND`` for frames left by hitting the recursion limit):
        they are closed here, or every later test would nest inside them.
        """
        self.backend.close_stale()
        if nodeid is None:
            self.backend.label = 0
            return
        self.check(f"{nodeid} ({phase})")
        label = next(self._label_ids)
        self.writer.label(label, nodeid, phase)
        self.backend.label = label

    def record_outcome(self, nodeid: str, phase: str, outcome: str) -> None:
        self.writer.outcome(nodeid, phase, outcome)

    # -- what the backends call -----------------------------------------------------

    def instrument(self, code: CodeType) -> FunctionEntry | None:
        """The entry of a code object to trace, or None (the backend then disables the location)."""
        found = self.selector.select(code)
        if found is None:
            return None
        lines = [line for _, _, line in code.co_lines() if line is not None]
        if lines and max(lines) > fmt.MAX_LINE:
            return None
        func_id = next(self._func_ids)
        flags = code.co_flags
        kind = (fmt.FUNC_GENERATOR if flags & (CO_GENERATOR | CO_ASYNC_GENERATOR) else 0) | (
            fmt.FUNC_COROUTINE if flags & (CO_COROUTINE | CO_ASYNC_GENERATOR) else 0
        )
        names = _parameter_names(code) if self.capture_values else ()
        redact = 0
        if self.abstraction is not None:
            redact = sum(1 << position for position, name in enumerate(names[:63]) if self.abstraction.redacts(name))
            if self.abstraction.redacts(code.co_name):
                redact |= RETURN_REDACTED
        # extending an array by an array is 5x faster than by a tuple
        called = array("H", (fmt.OP_CALL, func_id & 0xFFFF, func_id >> 16, len(names)))
        try:
            if self.tool is None:  # stopped: a callback still running on another thread
                raise ValueError
            _mon.set_local_events(self.tool, code, LOCAL_EVENTS)
        except ValueError:  # the tool id was freed under us: record it, never raise into the program
            self.check(f"{found[0]} starting")
            return None
        entry = FunctionEntry(code, func_id, kind, names, found, called, redact, self.redacted_id)
        self._announce(entry)
        self._codes[id(code)] = entry
        return entry

    def redacted_id(self, value: object) -> int:
        """A secret's id in the current file (a forked child writes its own)."""
        return self.value_ids.redacted_id(value)

    def _announce(self, entry: FunctionEntry) -> None:
        params = entry.names if self.capture_values else _parameter_names(entry.code)
        code = entry.code
        lines = sorted({line for _, _, line in code.co_lines() if line is not None and line >= code.co_firstlineno})
        self.writer.function(entry.func_id, entry.found[0], entry.found[1], code.co_firstlineno, entry.suspends, params, lines)

    def switch_lines(self, code: CodeType, on: bool) -> None:
        """Line events of one code object on or off (its line budget in this entry point is spent)."""
        try:
            if self.tool is None:  # stopped: a callback still running on another thread
                raise ValueError
            _mon.set_local_events(self.tool, code, LOCAL_EVENTS if on else LOCAL_EVENTS & ~_E.LINE)
        except ValueError:  # the tool id was freed under us
            self.check("a line budget")

    def open_thread(self) -> int:
        """Allocate the calling thread's stream index and write its thread record."""
        with self._lock:
            index = self._threads
            self._threads += 1
            self.writer.thread(index, get_ident(), _current_thread_name())
            return index

    def chunk(self, index: int, data: bytes) -> None:
        self.writer.chunk(index, data)


def _parameter_names(code: CodeType) -> tuple[str, ...]:
    flags = code.co_flags
    count = code.co_argcount + code.co_kwonlyargcount + bool(flags & CO_VARARGS) + bool(flags & CO_VARKEYWORDS)
    return code.co_varnames[:count]


class PyTracer:
    """The pure-Python backend: the callbacks as closures over local names (attribute lookups
    cost on the hot path), exposed under the names of ``protocol.Backend``."""

    py_start: Callable[[CodeType, int], object]
    py_return: Callable[[CodeType, int, object], object]
    py_yield: Callable[[CodeType, int, object], object]
    py_unwind: Callable[[CodeType, int, object], object]
    py_resume: Callable[..., object]  # PY_RESUME passes (code, offset), PY_THROW (code, offset, exc)

    def __init__(self, collector: Collector) -> None:
        self.collector = collector
        self.label = 0
        self.states: list[ThreadState] = []
        self._suspended: dict[int, list] = {}  # frame id -> stack entry of a suspended generator call
        self._gen_ids = itertools.count(1)
        self.lines_off: list[FunctionEntry] = []
        """Functions whose line events are off until the next entry point (their line budget is spent)."""
        self._tls = _local()
        self._owner: ThreadState | None = None
        self._multi = False
        self._lock = allocate_lock()
        self._build()

    def line(self, code: CodeType, line_number: int) -> None:
        """Registered until the first thread runs instrumented code; then a bound fast path takes over."""
        state = self._state()
        if state is not None:
            state.buf.append(line_number)

    def _state(self) -> ThreadState | None:
        return getattr(self._tls, "st", None)

    def ship(self, state: ThreadState) -> None:
        """Move a thread's buffered events to the writer (only called by that thread or at exit)."""
        buf = state.buf
        if buf and state.index >= 0:
            data = buf.tobytes()
            del buf[:]
            self.collector.chunk(state.index, data)

    def close_stale(self) -> None:
        state = self._state()
        if state is not None and state.stack and state.index >= 0:
            closing = array("H", (fmt.OP_RAISE, NO_VALUE & 0xFFFF, NO_VALUE >> 16))
            while state.stack:
                top = state.stack.pop()
                if isinstance(top, list):
                    self._suspended.pop(top[2], None)
                state.buf.extend(closing)
            self.ship(state)

    def ship_all(self) -> None:
        for state in list(self.states):
            self.ship(state)

    def new_state(self) -> ThreadState:
        state = ThreadState(self.collector.open_thread())
        self.states.append(state)
        self._tls.st = state
        self._tls.buf = state.buf
        tool = self.collector.tool
        if tool is None:  # stopped: a callback still running on another thread
            return state
        with self._lock:
            count = self.count_line
            if self._owner is None and not self._multi:
                self._owner = state
                _mon.register_callback(tool, _E.LINE, _fast_line(state.buf.append) if count is None else _capped_line(state, count))
            elif not self._multi:
                self._multi = True
                _mon.register_callback(tool, _E.LINE, _multi_line(self._tls) if count is None else _capped_multi_line(self._tls, count))
        return state

    def _build(self) -> None:
        """The event callbacks, as closures over names bound once here. Long on purpose: this runs on every event of
        the traced program, and a closure reads a bound local where a method or a helper would pay an attribute or a
        global lookup per event; the callbacks share those locals, so they are made together."""
        collector = self.collector
        codes_get = collector._codes.get
        code_entry = collector._codes.__getitem__  # a code on a thread's stack is instrumented
        suspended = self._suspended
        suspended_pop = suspended.pop
        instrument = collector.instrument
        new_state = self.new_state
        ship = self.ship
        tls = self._tls
        gen_ids = self._gen_ids
        capture = collector.capture_values
        budget = collector.value_budget
        epoch = [0]  # counts entry points: value and line budgets start afresh in each
        line_limit = collector.line_budget + 1 if collector.line_budget else 0
        lines_off = self.lines_off
        off_epoch = [0]  # counts the times lines_off was emptied
        states = self.states
        switch_lines = collector.switch_lines
        getframe = sys._getframe
        tracer = self
        id_of = collector.value_ids.id_of
        by_type_get = collector.value_ids.by_type.get

        def diverted(state: ThreadState, abstract_value: Callable[[], int]) -> int:
            """Run a user ``repr`` (repr mode only) with this thread's events diverted to a scratch
            state (histeg's own calls are not part of the trace; the lines that the LINE callback
            may append to this thread's buffer directly are cut off)."""
            buf = state.buf
            mark = len(buf)
            tls.st = ThreadState(-1)
            try:
                return abstract_value()
            finally:
                tls.st = state
                if len(buf) != mark:
                    del buf[mark:]

        def value_id(value: object, state: ThreadState) -> int:
            return id_of(value, diverted, state)

        def tell(state: ThreadState) -> None:
            """Streams are shipped in chunks, so one thread's marker says nothing of when another thread's events ran:
            each stream gets an OFF marker of every function whose lines are off before its next call or resumption
            (and at once when a call it runs loses lines), where it happened in that thread's own time."""
            if state.told_epoch != off_epoch[0]:
                state.told_epoch = off_epoch[0]
                state.told = 0
            buf = state.buf
            for entry in lines_off[state.told :]:
                buf.extend(entry.lines_off)
            state.told = len(lines_off)

        def spend_lines(entry: FunctionEntry, state: ThreadState) -> None:
            """The function's line budget or line cap is spent: its line events go off until the next entry point."""
            switch_lines(entry.code, False)
            lines_off.append(entry)
            entry.spent[3] = True
            tell(state)
            if len(states) > 1:  # another thread's running call of it loses lines from now on
                code = entry.code
                for other in states:
                    if other is not state and other.index >= 0 and any(item[0] is code for item in other.stack):
                        tell(other)

        def py_start(code: CodeType, offset: int) -> object:  # every call: one function, no helper calls on the common path
            entry = codes_get(id(code))
            if entry is None:
                entry = instrument(code)
                if entry is None:
                    return DISABLE
            try:
                state = tls.st
            except AttributeError:
                state = new_state()
            stack = state.stack
            buf = state.buf
            if not stack:
                if state.index < 0:
                    return None  # inside histeg's own repr call
                epoch[0] += 1
                if lines_off:  # a new entry point: every function gets its lines back, and every stream told hears it
                    for off in lines_off:
                        switch_lines(off.code, True)
                        off.spent[3] = False
                    for other in states:
                        if other.told_epoch == off_epoch[0] and other.index >= 0:
                            for off in lines_off[: other.told]:
                                other.buf.extend(off.lines_on)
                    lines_off.clear()
                    off_epoch[0] += 1
            if state.told != len(lines_off) or state.told_epoch != off_epoch[0]:
                tell(state)
            spent = entry.spent
            if spent[0] != epoch[0]:
                spent[0] = epoch[0]
                spent[1] = 0
                spent[2] = 0
            spent[1] += 1
            if spent[1] == line_limit and state.index >= 0 and not spent[3]:  # the first call beyond the line budget
                spend_lines(entry, state)
            bare = capture and (not entry.names or (budget and spent[1] > budget))  # no parameter value to capture
            if stack and not entry.suspends:  # the common case: a nested plain function
                stack.append(entry.plain)
                buf.extend(entry.called_bare if bare else entry.called)
            elif state.index < 0:
                return None  # inside histeg's own repr call
            else:
                words = array("H", entry.prefix)
                if bare:
                    words[0] |= fmt.CALL_BARE
                if not stack:
                    words[0] |= fmt.CALL_ROOT
                    label = tracer.label
                    words.append(label & 0xFFFF)
                    words.append(label >> 16)
                if entry.suspends:
                    words[0] |= fmt.CALL_GEN
                    call_id = next(gen_ids)
                    words.append(call_id & 0xFFFF)
                    words.append(call_id >> 16)
                    resume_words = array("H", (fmt.OP_RESUME, call_id & 0xFFFF, call_id >> 16))
                    stack.append([code, call_id, id(getframe(1)), resume_words, state])
                else:
                    stack.append(entry.plain)
                if not bare:
                    words.append(entry.called[3])
                buf.extend(words)
            if capture and not bare:
                names = entry.names
                local = getframe(1).f_locals
                redact = entry.redact
                for position, name in enumerate(names):
                    if name not in local:
                        vid = NO_VALUE
                    elif redact and redact >> position & 1:
                        vid = entry.redacted(local[name])
                    else:
                        value = local[name]
                        vid = by_type_get(type(value)) or value_id(value, state)
                    buf.append(vid & 0xFFFF)
                    buf.append(vid >> 16)
            return None

        def leaving(op: int) -> Callable[[CodeType, int, object], None]:
            """The PY_RETURN / PY_YIELD / PY_UNWIND callback: pop the running call, write ``op`` and the value."""
            suspends = op == fmt.OP_YIELD

            def leave(code: CodeType, offset: int, value: object) -> None:
                try:
                    state = tls.st
                except AttributeError:
                    return
                stack = state.stack
                if not stack or stack[-1][0] is not code:
                    return  # a frame that started before tracing, or code that is not ours (unwind is global)
                top = stack.pop()
                if suspends:
                    suspended[top[2]] = top
                entry = code_entry(id(code))
                if not capture or (budget and entry.spent[1] > budget):
                    vid = NO_VALUE
                elif entry.redact & RETURN_REDACTED:
                    vid = entry.redacted(value)
                elif type(value) is int and -INT_BIAS <= value < INT_BIAS:  # id_of's first case, inlined
                    vid = (value + INT_BIAS) | INLINE_INT
                else:
                    vid = value_id(value, state)
                buf = state.buf
                if vid == NO_VALUE and op == fmt.OP_RETURN:
                    buf.append(fmt.OP_RETURN_BARE)
                else:
                    buf.append(op)
                    buf.append(vid & 0xFFFF)
                    buf.append(vid >> 16)
                if not stack or len(buf) > CHUNK_WORDS:
                    ship(state)

            return leave

        def resume(code: CodeType, offset: int, exc: object = None) -> None:
            """The PY_RESUME / PY_THROW callback: push the suspended call of this frame again."""
            state = getattr(tls, "st", None)
            if state is not None and state.index < 0:
                return  # inside histeg's own repr call
            entry = suspended_pop(id(getframe(1)), None)
            if entry is None:
                return  # a generator that started before tracing or inside histeg's repr
            if state is None:
                state = new_state()
            if entry[4] is not state:  # resumed on another thread than last time
                ship(entry[4])  # the events before must precede this RESUME in the file
                entry[4] = state
            if state.told != len(lines_off) or state.told_epoch != off_epoch[0]:
                tell(state)
            state.stack.append(entry)
            state.buf.extend(entry[3])

        line_cap = collector.line_cap

        def count_line(state: ThreadState, code: CodeType) -> None:
            """A line of the running call counts against its function's line cap in this entry point."""
            stack = state.stack
            if not stack or stack[-1][0] is not code:
                return
            entry = code_entry(id(code))
            spent = entry.spent
            if spent[0] != epoch[0]:  # a generator resumed in a later entry point
                spent[0] = epoch[0]
                spent[1] = 0
                spent[2] = 0
            spent[2] += 1
            if spent[2] == line_cap and not spent[3]:
                spend_lines(entry, state)

        self.count_line = count_line if line_cap else None
        self.py_start = py_start
        self.py_return = leaving(fmt.OP_RETURN)
        self.py_yield = leaving(fmt.OP_YIELD)
        self.py_unwind = leaving(fmt.OP_RAISE)
        self.py_resume = resume


def _fast_line(append: Callable[[int], None]) -> Callable[[CodeType, int], None]:
    def line(code: CodeType, line_number: int) -> None:
        append(line_number)

    return line


def _capped_line(state: ThreadState, count: Callable[[ThreadState, CodeType], None]) -> Callable[[CodeType, int], None]:
    append = state.buf.append

    def line(code: CodeType, line_number: int) -> None:
        append(line_number)
        count(state, code)

    return line


def _capped_multi_line(tls: _local, count: Callable[[ThreadState, CodeType], None]) -> Callable[[CodeType, int], None]:
    def line(code: CodeType, line_number: int) -> None:
        try:
            tls.buf.append(line_number)
            count(tls.st, code)
        except AttributeError:
            pass

    return line


def _multi_line(tls: _local) -> Callable[[CodeType, int], None]:
    def line(code: CodeType, line_number: int) -> None:
        try:  # noqa: SIM105  called for every line: try costs nothing, a with block would
            tls.buf.append(line_number)
        except AttributeError:
            pass

    return line


def _current_thread_name() -> str:
    """The ``threading`` name without creating a dummy Thread for foreign threads."""
    threading = sys.modules.get("threading")
    if threading is None:
        return "MainThread"
    thread = getattr(threading, "_active", {}).get(get_ident())
    return thread.name if thread is not None else ""
