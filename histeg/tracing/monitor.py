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
  with the default repr) or by value (short str/bytes, bool, None). Values
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

from histeg.tracing import format as fmt
from histeg.tracing.selection import Selector
from histeg.tracing.value_ids import ValueIds

_mon = sys.monitoring
_E = _mon.events
DISABLE = _mon.DISABLE
LOCAL_EVENTS = _E.LINE | _E.PY_RETURN | _E.PY_YIELD | _E.PY_RESUME
GLOBAL_EVENTS = _E.PY_START | _E.PY_UNWIND | _E.PY_THROW
CO_VARARGS, CO_VARKEYWORDS = 0x4, 0x8
CO_GENERATOR, CO_COROUTINE, CO_ASYNC_GENERATOR = 0x20, 0x80, 0x200
CHUNK_WORDS = fmt.CHUNK_WORDS
TOOL_IDS = (4, 3, 5, 2)
INLINE_INT, INT_BIAS = fmt.INLINE_INT, fmt.INT_BIAS
TOOL_NAME = "histeg"
NO_VALUE = 0


class ThreadState:
    """One thread's call stack and event stream buffer."""

    __slots__ = ("index", "buf", "stack")

    def __init__(self, index: int) -> None:
        self.index = index
        """-1 for the scratch state that receives the events of histeg's own ``repr`` calls."""
        self.buf = array("H")
        self.stack: list[tuple] = []
        """Per running call: (code, 0, 0, None) for plain functions, [code, generator call id,
        frame id, resume words, thread state] for generators and coroutines."""


class Collector:
    """Records instrumented calls of this process into a ``TraceWriter`` (pure-Python callbacks).

    ``histeg.tracing.native.NativeCollector`` replaces the callbacks by C ones and
    keeps the rest: the choice of instrumented code, labels, shipping, fork.
    """

    implementation = "python"

    def __init__(self, selector: Selector, writer: fmt.TraceWriter, capture_values: bool = True, value_budget: int = 64) -> None:
        self.selector = selector
        self.writer = writer
        self.capture_values = capture_values
        self.value_budget = value_budget
        self.tool: int | None = None
        self.states: list[ThreadState] = []
        self._codes: dict[int, tuple] = {}  # id(code) -> (code, call prefix, flags, parameter names, ...)
        self._suspended: dict[int, list] = {}  # frame id -> stack entry of a suspended generator call
        self.value_ids = ValueIds(writer.value)
        self._func_ids = itertools.count(1)
        self._gen_ids = itertools.count(1)
        self._label_ids = itertools.count(1)
        self._label = 0
        self._threads = 0
        self._lock = allocate_lock()
        self._tls = _local()
        self._owner: ThreadState | None = None
        self._multi = False
        self._callbacks = self._make_callbacks()

    # -- lifecycle -----------------------------------------------------------------

    def start(self) -> None:
        for tool in TOOL_IDS:
            if _mon.get_tool(tool) is None:
                _mon.use_tool_id(tool, TOOL_NAME)
                self.tool = tool
                break
        else:
            raise RuntimeError("histeg: no free sys.monitoring tool id")
        for event, callback in self._callbacks.items():
            _mon.register_callback(self.tool, event, callback)
        _mon.set_events(self.tool, GLOBAL_EVENTS)

    def stop(self) -> None:
        """Switch monitoring off, ship every buffer and close the file."""
        tool = self.tool
        if tool is None:
            return
        self.tool = None
        _mon.set_events(tool, 0)
        for entry in list(self._codes.values()):
            _mon.set_local_events(tool, entry[0], 0)
        for event in (*self._callbacks, _E.LINE):
            _mon.register_callback(tool, event, None)
        _mon.free_tool_id(tool)
        self._ship_all()
        self.writer.close()

    def after_fork_in_child(self, writer: fmt.TraceWriter) -> None:
        """A forked child writes its own file; the parent's pending data stays the parent's."""
        self.writer.abandon()
        self.writer = writer
        self.value_ids = ValueIds(writer.value)
        for entry in self._codes.values():
            self._announce(entry)
        self._forget_threads()
        if self.tool is not None:
            for event, callback in self._callbacks.items():
                _mon.register_callback(self.tool, event, callback)

    # -- labels and outcomes (pytest plugin) --------------------------------------

    def set_label(self, nodeid: str | None, phase: str = "") -> None:
        """Label the entry points that start from now on (None: unlabelled).

        Between test phases no instrumented call runs on this thread, so calls
        still on its stack are frames whose end was never reported (CPython
        sends no ``PY_UNWIND`` for frames left by hitting the recursion limit):
        they are closed here, or every later test would nest inside them.
        """
        self._close_stale_frames()
        if nodeid is None:
            self._set_label_id(0)
            return
        label = next(self._label_ids)
        self.writer.label(label, nodeid, phase)
        self._set_label_id(label)

    def record_outcome(self, nodeid: str, phase: str, outcome: str) -> None:
        self.writer.outcome(nodeid, phase, outcome)

    # -- what the two implementations share ----------------------------------------

    def _instrument(self, code: object) -> tuple | None:
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
        count = code.co_argcount + code.co_kwonlyargcount + bool(flags & CO_VARARGS) + bool(flags & CO_VARKEYWORDS)
        names = code.co_varnames[:count]
        prefix = (fmt.OP_CALL, func_id & 0xFFFF, func_id >> 16)
        called = (*prefix, len(names) if self.capture_values else 0)
        # extending an array by an array is 5x faster than by a tuple
        spent = [0, 0]  # [entry point epoch, calls with values recorded in it]
        entry = (code, prefix, kind, names, found, func_id, (code, 0, 0, None), array("H", called), spent, array("H", bytes(4 * len(names))))
        self._announce(entry)
        self._codes[id(code)] = entry
        _mon.set_local_events(self.tool, code, LOCAL_EVENTS)
        return entry

    def _announce(self, entry: tuple) -> None:
        code, _, kind, names, found, func_id = entry[:6]
        self.writer.function(func_id, found[0], found[1], code.co_firstlineno, kind, names)

    def _open_thread(self) -> int:
        """Allocate the calling thread's stream index and write its thread record."""
        with self._lock:
            index = self._threads
            self._threads += 1
            self.writer.thread(index, get_ident(), _current_thread_name())
            return index

    def _ship(self, state: ThreadState) -> None:
        """Move a thread's buffered events to the writer (only called by that thread or at exit)."""
        buf = state.buf
        if buf and state.index >= 0:
            data = buf.tobytes()
            del buf[:]
            self.writer.chunk(state.index, data)

    # -- the pure-Python callbacks ---------------------------------------------------

    def _set_label_id(self, label: int) -> None:
        self._label = label

    def _close_stale_frames(self) -> None:
        state = getattr(self._tls, "st", None)
        if state is not None and state.stack and state.index >= 0:
            closing = array("H", (fmt.OP_RAISE, NO_VALUE & 0xFFFF, NO_VALUE >> 16))
            while state.stack:
                top = state.stack.pop()
                if isinstance(top, list):
                    self._suspended.pop(top[2], None)
                state.buf.extend(closing)
            self._ship(state)

    def _ship_all(self) -> None:
        for state in list(self.states):
            self._ship(state)

    def _forget_threads(self) -> None:
        self._threads = 0
        self.states = []
        self._suspended.clear()
        self._owner = None
        self._multi = False
        self._tls = _local()
        if self.tool is not None:
            _mon.register_callback(self.tool, _E.LINE, None)
        self._callbacks = self._make_callbacks()

    def _new_state(self) -> ThreadState:
        state = ThreadState(self._open_thread())
        self.states.append(state)
        self._tls.st = state
        self._tls.buf = state.buf
        with self._lock:
            if self._owner is None and not self._multi:
                self._owner = state
                _mon.register_callback(self.tool, _E.LINE, _fast_line(state.buf.append))
            elif not self._multi:
                self._multi = True
                _mon.register_callback(self.tool, _E.LINE, _multi_line(self._tls))
        return state

    def _make_callbacks(self) -> dict[int, object]:
        """The callbacks, as closures over local names: attribute lookups cost on the hot path."""
        codes_get = self._codes.get
        suspended = self._suspended
        suspended_pop = suspended.pop
        instrument = self._instrument
        new_state = self._new_state
        ship = self._ship
        tls = self._tls
        gen_ids = self._gen_ids
        capture = self.capture_values
        budget = self.value_budget
        epoch = [0]  # counts entry points: value budgets start afresh in each
        getframe = sys._getframe
        collector = self
        id_of = self.value_ids.id_of
        by_type_get = self.value_ids.by_type.get

        def diverted(state: ThreadState, abstract_value: Callable[[], int]) -> int:
            """Run a user ``repr`` with this thread's events diverted to a scratch state (histeg's own
            calls are not part of the trace; the lines that the LINE callback may append to this
            thread's buffer directly are cut off)."""
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

        def py_start(code: object, offset: int) -> object:
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
            if stack and not entry[2]:  # the common case: a nested plain function
                stack.append(entry[6])
                buf.extend(entry[7])
            elif state.index < 0:
                return None  # inside histeg's own repr call
            else:
                words = array("H", entry[1])
                if not stack:
                    epoch[0] += 1
                    words[0] |= fmt.CALL_ROOT
                    label = collector._label
                    words.append(label & 0xFFFF)
                    words.append(label >> 16)
                if entry[2]:
                    words[0] |= fmt.CALL_GEN
                    call_id = next(gen_ids)
                    words.append(call_id & 0xFFFF)
                    words.append(call_id >> 16)
                    resume_words = array("H", (fmt.OP_RESUME, call_id & 0xFFFF, call_id >> 16))
                    stack.append([code, call_id, id(getframe(1)), resume_words, state])
                else:
                    stack.append(entry[6])
                words.append(entry[7][3])
                buf.extend(words)
            if capture:
                spent = entry[8]
                if spent[0] != epoch[0]:
                    spent[0] = epoch[0]
                    spent[1] = 0
                spent[1] += 1
                if not entry[3]:
                    return None
                if budget and spent[1] > budget:
                    buf.extend(entry[9])
                    return None
                local = getframe(1).f_locals
                for name in entry[3]:
                    if name in local:
                        value = local[name]
                        vid = by_type_get(type(value)) or value_id(value, state)  # `self` mostly hits by type
                    else:
                        vid = NO_VALUE
                    buf.append(vid & 0xFFFF)
                    buf.append(vid >> 16)
            return None

        def leaving(op: int) -> object:
            """The PY_RETURN / PY_YIELD / PY_UNWIND callback: pop the running call, write ``op`` and the value."""
            suspends = op == fmt.OP_YIELD

            def leave(code: object, offset: int, value: object) -> None:
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
                if not capture or (budget and codes_get(id(code))[8][1] > budget):
                    vid = NO_VALUE
                elif type(value) is int and -INT_BIAS <= value < INT_BIAS:  # id_of's first case, inlined
                    vid = (value + INT_BIAS) | INLINE_INT
                else:
                    vid = value_id(value, state)
                buf = state.buf
                buf.append(op)
                buf.append(vid & 0xFFFF)
                buf.append(vid >> 16)
                if not stack or len(buf) > CHUNK_WORDS:
                    ship(state)

            return leave

        def resume(code: object, offset: int, exc: object = None) -> None:
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
            state.stack.append(entry)
            state.buf.extend(entry[3])

        return {
            _E.PY_START: py_start,
            _E.PY_RETURN: leaving(fmt.OP_RETURN),
            _E.PY_YIELD: leaving(fmt.OP_YIELD),
            _E.PY_RESUME: resume,
            _E.PY_THROW: resume,
            _E.PY_UNWIND: leaving(fmt.OP_RAISE),
        }


def _fast_line(append: object) -> object:
    def line(code: object, line_number: int) -> None:
        append(line_number)

    return line


def _multi_line(tls: object) -> object:
    def line(code: object, line_number: int) -> None:
        try:
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

