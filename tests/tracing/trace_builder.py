"""Real ``.htrace`` files from a description of call trees, written word for word as the tracer would.

Why: the splitter, both decoders (``events.py`` and ``_decode.c``) and the
comparator must be tested on streams a traced project produces only by
accident (generators resumed in another entry point or on another thread,
line budgets spent mid-recursion, calls whose end was never reported, 5,000
levels of recursion), and on many of them. Tracing real code for each case
would be slow and hard to steer, and hand-written word lists would test what
the author believes the tracer writes. So ``TraceBuilder`` *simulates*
``histeg.tracing.monitor.PyTracer``: the same stacks, epochs, value and line
budgets, ``OP_LINES_OFF``/``OP_LINES_ON`` markers, generator call ids, label
ids and chunk shipping, through the real ``TraceWriter``
(``test_decode_parity.test_the_builder_writes_what_the_tracer_writes`` checks
it word for word against both real collectors).

Two layers:

* ``TraceBuilder``: the tracer's callbacks as methods (``call``, ``lines``,
  ``ret``, ``throw``, ``yield_``, ``resume``, ``label``) on named threads, plus
  ``chunk`` for raw (corrupt) words. It also keeps the *truth* of what it
  wrote (``Traced`` calls), so tests can check a decoder against the events
  rather than only against the other decoder.
* ``Node`` / ``Yield`` / ``Resume`` / ``Entry`` and ``play``: call trees with
  their lines, children, values and outcomes, run by an explicit-stack
  interpreter (no recursion: trees may be thousands of levels deep), one
  thread after the other or interleaved event by event by a ``random.Random``.

Values: Python ints in the inline range become inline ids, ``Val(type, repr)``
a ``V`` record, ``UNRECORDED`` id 0 ("not recorded"), anything else goes
through histeg's structural abstraction (``None`` is ``NoneType None``).
"""

from __future__ import annotations

import itertools
import random
from array import array
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from histeg.tracing import format as fmt
from histeg.tracing.values import REDACTED, Abstraction

NO_VALUE = 0


@dataclass(frozen=True)
class Fn:
    """An instrumented function (one code object); equal descriptions are the same function."""

    ident: str
    file: str = "m.py"
    first_line: int = 1
    code_lines: tuple[int, ...] = ()
    """Absolute line numbers that carry code (the F record keeps those >= ``first_line``, as the tracer does)."""
    params: tuple[str, ...] = ()
    generator: bool = False

    def line(self, position: int) -> int:
        """The line number of a code position (tests describe bodies by position)."""
        return self.code_lines[position]


@dataclass(frozen=True)
class Val:
    """A value with a ``V`` record of its own."""

    type: str
    repr: str | None = None


class _Unrecorded:
    def __repr__(self) -> str:
        return "UNRECORDED"


UNRECORDED: Any = _Unrecorded()
"""Value id 0: values off, beyond the value budget, or a parameter missing from ``f_locals``."""


@dataclass(eq=False)
class Traced:
    """The truth about one call as the builder wrote it (what a correct decoder must find)."""

    fid: int
    thread: int
    """Thread index of the thread it started on."""
    parent: Traced | None
    at: int
    params: list[int]
    lines: list[int] = field(default_factory=list)
    """Absolute line numbers written for it."""
    yields: list[int] = field(default_factory=list)
    children: list[Traced] = field(default_factory=list)
    end: int = 0
    """0 running, 1 returned, 2 raised (``events.END_*``)."""
    result: int = 0
    off_while_alive: bool = False
    """Its function's lines were off (in real time) at some moment between its start and its end."""
    lines_lost: bool = False
    """A line it executed was not written because its function's lines were off."""
    label: int = 0


@dataclass(eq=False)
class Gen:
    """A generator call: what ``resume`` needs."""

    call_id: int
    frame: _Frame
    thread: _Thread
    """The thread it last ran on (a resumption elsewhere ships that thread's buffer first, as the tracer does)."""
    suspended: bool = False
    finished: bool = False


@dataclass(eq=False)
class _Function:
    fn: Fn
    fid: int
    spent: list[int] = field(default_factory=lambda: [0, 0])
    """[entry point epoch, calls in it], as ``FunctionEntry.spent``."""


@dataclass(eq=False)
class _Frame:
    function: _Function
    traced: Traced
    gen: Gen | None = None


@dataclass(eq=False)
class _Thread:
    index: int
    buf: array = field(default_factory=lambda: array("H"))
    stack: list[_Frame] = field(default_factory=list)
    roots: list[Traced] = field(default_factory=list)
    """Root calls whose first words are in ``buf`` (for the file order of entry points)."""
    told: int = 0
    told_epoch: int = -1
    """Its stream has an OFF marker of the first ``told`` functions of ``_lines_off`` when ``told_epoch`` is ``_off_epoch``."""


def _words(op: int, operand: int) -> tuple[int, int, int]:
    return op, operand & 0xFFFF, operand >> 16


class TraceBuilder:
    """A simulated ``PyTracer`` writing a real trace file (see the module docstring).

    ``line_budget``/``value_budget``: as the collector's options (0: unlimited).
    ``chunk_words``: a thread's buffer is shipped once it exceeds this when a call
    ends (``format.CHUNK_WORDS`` in the tracer; small values make many chunks).
    """

    def __init__(self, path: str | Path, *, values: bool = True, value_budget: int = 0, line_budget: int = 0,
                 chunk_words: int = fmt.CHUNK_WORDS, meta: dict[str, Any] | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        info = {"pid": 4242, "ppid": 1, "label": "builder", "values": "structural" if values else "off", "tracer": "python",
                "root": "/project", "argv": ["builder"], "toolId": 4}
        self.writer = fmt.TraceWriter(str(self.path), {**info, **(meta or {})})
        self.capture = values
        self.value_budget = value_budget
        self.line_limit = line_budget + 1 if line_budget else 0
        self.chunk_words = chunk_words
        self.functions: dict[Fn, _Function] = {}
        self.threads: dict[int, _Thread] = {}
        self.calls: list[Traced] = []
        self.file_roots: list[Traced] = []
        """Root calls in the order their first words reached the file: the splitter's entry point order."""
        self.label_id = 0
        self.current_label: tuple[str, str] | None = None
        self.closed = False
        self.stale_closed = 0
        """Calls closed by ``close_stale`` (their end was never reported)."""
        self._func_ids = itertools.count(1)
        self._label_ids = itertools.count(1)
        self._gen_ids = itertools.count(1)
        self._epoch = 0
        self._generators: list[Gen] = []
        self._lines_off: list[_Function] = []
        """Functions whose lines are off until the next entry point, in the order they went off."""
        self._off_epoch = 0
        self._abstraction = Abstraction()
        self._values: dict[tuple[str, str | None], int] = {}
        self._next_value = itertools.count(1)
        self.intern(REDACTED, None)  # ValueIds interns the redaction marker first

    # -- definitions ------------------------------------------------------------

    def intern(self, type_name: str, rep: str | None) -> int:
        key = (type_name, rep)
        found = self._values.get(key)
        if found is None:
            found = self._values[key] = next(self._next_value)
            self.writer.value(found, type_name, rep)
        return found

    def value_id(self, value: object) -> int:
        if value is UNRECORDED:
            return NO_VALUE
        if type(value) is int and -fmt.INT_BIAS <= value < fmt.INT_BIAS:
            return (value + fmt.INT_BIAS) | fmt.INLINE_INT
        if isinstance(value, Val):
            return self.intern(value.type, value.repr)
        return self.intern(*self._abstraction.abstract(value))

    def function(self, fn: Fn) -> _Function:
        """The F record is written when the function is first called (``Collector.instrument``)."""
        found = self.functions.get(fn)
        if found is None:
            found = self.functions[fn] = _Function(fn, next(self._func_ids))
            lines = sorted({line for line in fn.code_lines if line >= fn.first_line})
            flags = fmt.FUNC_GENERATOR if fn.generator else 0
            self.writer.function(found.fid, fn.ident, fn.file, fn.first_line, flags, fn.params, lines)
        return found

    def fid(self, fn: Fn) -> int:
        return self.function(fn).fid

    def thread(self, key: int) -> _Thread:
        """A thread's state, created (with its T record) the first time it runs instrumented code."""
        state = self.threads.get(key)
        if state is None:
            state = self.threads[key] = _Thread(len(self.threads))
            self.writer.thread(state.index, 0x1000 + key, "MainThread" if key == 0 else f"Thread-{key}")
        return state

    def label(self, nodeid: str | None, phase: str = "call", thread: int = 0) -> None:
        """``Collector.set_label``: close the calls left on the thread's stack, then label what starts next."""
        self.close_stale(thread)
        if nodeid is None:
            self.label_id, self.current_label = 0, None
            return
        self.label_id = next(self._label_ids)
        self.writer.label(self.label_id, nodeid, phase)
        self.current_label = (nodeid, phase)

    def outcome(self, nodeid: str, phase: str, outcome: str) -> None:
        self.writer.outcome(nodeid, phase, outcome)

    # -- the callbacks ------------------------------------------------------------

    def call(self, fn: Fn, *args: object, thread: int = 0) -> Gen | None:
        """``py_start``: returns the generator call of a generator function (for ``resume``)."""
        function = self.function(fn)
        state = self.thread(thread)
        stack, buf = state.stack, state.buf
        if not stack:
            self._epoch += 1
            if self._lines_off:  # a new entry point: every function gets its lines back, every stream told hears it
                for other in self.threads.values():
                    if other.told_epoch == self._off_epoch:
                        for off in self._lines_off[: other.told]:
                            other.buf.extend(_words(fmt.OP_LINES_ON, off.fid))
                self._lines_off.clear()
                self._off_epoch += 1
        self._tell(state)
        spent = function.spent
        if spent[0] != self._epoch:
            spent[0], spent[1] = self._epoch, 0
        spent[1] += 1
        if spent[1] == self.line_limit:  # the first call beyond the line budget
            self._lines_off.append(function)
            self._tell(state)
            for other in self.threads.values():  # another thread's running call of it loses lines from now on
                if other is not state and any(frame.function is function for frame in other.stack):
                    self._tell(other)
            for alive in self._alive():
                if alive.function is function:
                    alive.traced.off_while_alive = True
        parent = stack[-1].traced if stack else None
        traced = Traced(function.fid, state.index, parent, len(parent.lines) if parent else 0, [],
                        off_while_alive=function in self._lines_off, label=self.label_id if parent is None else 0)
        words = [fmt.OP_CALL, function.fid & 0xFFFF, function.fid >> 16]
        if not stack:
            words[0] |= fmt.CALL_ROOT
            words += [self.label_id & 0xFFFF, self.label_id >> 16]
            state.roots.append(traced)
        gen = None
        frame = _Frame(function, traced)
        if fn.generator:
            words[0] |= fmt.CALL_GEN
            call_id = next(self._gen_ids)
            words += [call_id & 0xFFFF, call_id >> 16]
            gen = frame.gen = Gen(call_id, frame, state)
            self._generators.append(gen)
        names = fn.params if self.capture else ()
        bare = self.capture and (not names or bool(self.value_budget and spent[1] > self.value_budget))
        if bare:  # no parameter value to capture: no count, no ids
            words[0] |= fmt.CALL_BARE
            traced.params.extend([NO_VALUE] * len(names))
        else:
            words.append(len(names))
        buf.extend(words)
        stack.append(frame)
        if names and not bare:
            for position in range(len(names)):
                vid = NO_VALUE if position >= len(args) else self.value_id(args[position])
                traced.params.append(vid)
                buf.extend((vid & 0xFFFF, vid >> 16))
        self.calls.append(traced)
        if parent is not None:
            parent.children.append(traced)
        return gen

    def lines(self, *numbers: int, thread: int = 0, fn: Fn | None = None) -> None:
        """LINE events of ``fn`` (default: the running call's function), appended to the running call.

        Nothing is written for a function whose lines are off, nor on a thread that never ran
        instrumented code; on an empty stack the words are written and the splitter drops them."""
        state = self.threads.get(thread)
        if state is None:
            return
        top = state.stack[-1] if state.stack else None
        function = self.function(fn) if fn is not None else top.function if top else None
        if function is not None and function in self._lines_off:
            if top is not None and top.function is function:
                top.traced.lines_lost = True
            return
        for number in numbers:
            if not 0 <= number <= fmt.MAX_LINE:
                raise ValueError(f"line {number} cannot be traced")
        state.buf.extend(numbers)
        if top is not None:
            top.traced.lines.extend(numbers)

    def ret(self, value: object = None, thread: int = 0, fn: Fn | None = None) -> None:
        self._leave(fmt.OP_RETURN, value, thread, fn)

    def throw(self, exc: object = Val("ValueError", "('boom',)"), thread: int = 0, fn: Fn | None = None) -> None:
        """PY_UNWIND: the running call is left by an exception."""
        self._leave(fmt.OP_RAISE, exc, thread, fn)

    def yield_(self, value: object = None, thread: int = 0, fn: Fn | None = None) -> None:
        self._leave(fmt.OP_YIELD, value, thread, fn)

    def _leave(self, op: int, value: object, thread: int, fn: Fn | None) -> None:
        """``leaving(op)``: ignored, as by the tracer, when the top of the stack is not ``fn``'s call."""
        state = self.threads.get(thread)
        if state is None or not state.stack:
            if fn is not None:
                return
            raise ValueError("no running call to leave (use chunk() for corrupt streams)")
        stack = state.stack
        if fn is not None and stack[-1].function is not self.function(fn):
            return
        frame = stack.pop()
        if op == fmt.OP_YIELD:
            if frame.gen is None:
                raise ValueError("only generator calls yield")
            frame.gen.suspended = True
        elif frame.gen is not None:
            frame.gen.finished = True
        function = frame.function
        if not self.capture or (self.value_budget and function.spent[1] > self.value_budget):
            vid = NO_VALUE
        else:
            vid = self.value_id(value)
        if op == fmt.OP_RETURN and vid == NO_VALUE:
            state.buf.append(fmt.OP_RETURN_BARE)
        else:
            state.buf.extend(_words(op, vid))
        if op == fmt.OP_YIELD:
            frame.traced.yields.append(vid)
        else:
            frame.traced.end = 1 if op == fmt.OP_RETURN else 2
            frame.traced.result = vid
        if not stack or len(state.buf) > self.chunk_words:
            self.ship(state)

    def resume(self, gen: Gen, thread: int = 0) -> None:
        """PY_RESUME: a suspended generator call runs again, on this thread."""
        if not gen.suspended:
            raise ValueError(f"generator call {gen.call_id} is not suspended")
        state = self.thread(thread)
        if gen.thread is not state:  # resumed on another thread: the events before must precede it in the file
            self.ship(gen.thread)
            gen.thread = state
        self._tell(state)
        gen.suspended = False
        state.stack.append(gen.frame)
        state.buf.extend(_words(fmt.OP_RESUME, gen.call_id))
        if gen.frame.function in self._lines_off:
            gen.frame.traced.off_while_alive = True

    def close_stale(self, thread: int = 0) -> None:
        """Calls left on a thread's stack (their end was never reported) end by an exception of no value."""
        state = self.threads.get(thread)
        if state is None or not state.stack:
            return
        while state.stack:
            frame = state.stack.pop()
            if frame.gen is not None:
                frame.gen.finished = True
            state.buf.extend(_words(fmt.OP_RAISE, NO_VALUE))
            frame.traced.end, frame.traced.result = 2, NO_VALUE
            self.stale_closed += 1
        self.ship(state)

    def _tell(self, state: _Thread) -> None:
        """``PyTracer``'s ``tell``: OFF markers of the functions whose lines went off since the stream last heard."""
        if state.told_epoch != self._off_epoch:
            state.told_epoch, state.told = self._off_epoch, 0
        for off in self._lines_off[state.told :]:
            state.buf.extend(_words(fmt.OP_LINES_OFF, off.fid))
        state.told = len(self._lines_off)

    def _alive(self) -> Iterable[_Frame]:
        """Calls started and not ended: on a stack, or suspended."""
        for state in self.threads.values():
            yield from state.stack
        for gen in self._generators:
            if gen.suspended:
                yield gen.frame

    # -- chunks and the end of the file ----------------------------------------------

    def ship(self, state: _Thread) -> None:
        if state.buf:
            self.writer.chunk(state.index, state.buf.tobytes())
            del state.buf[:]
            self.file_roots.extend(state.roots)
            state.roots.clear()

    def chunk(self, thread: int, words: Sequence[int]) -> None:
        """Raw words as one chunk of a thread (after shipping what it has): for corrupt streams."""
        state = self.thread(thread)
        self.ship(state)
        self.writer.chunk(state.index, array("H", words).tobytes())

    def close(self, complete: bool = True) -> Path:
        """Ship every buffer (``ship_all``) and close the file; ``complete=False`` leaves it as a killed
        process would (no end record, no trailer: ``truncated``)."""
        if not self.closed:
            for state in self.threads.values():
                self.ship(state)
            if complete:
                self.writer.close()
            else:
                self.writer.flush()
                self.writer.abandon()
            self.closed = True
        return self.path


# -- call trees -----------------------------------------------------------------------


@dataclass(eq=False)
class Node:
    """A call: function, arguments, body in execution order (line numbers, child ``Node``s,
    ``Yield``s, ``Resume``s of other generators) and outcome."""

    fn: Fn
    args: tuple[Any, ...] = ()
    body: list[Any] = field(default_factory=list)
    returns: Any = None
    raises: Any = None
    """Not None: the call ends by raising this (``UNRECORDED``: an exception whose value is not recorded)."""
    name: str | None = None
    """Generator calls: the name a ``Resume`` refers to."""
    unreported: bool = False
    """Its end is never reported (frames left by hitting the recursion limit): the caller's later
    events land on it, as in the tracer, until a label change closes it."""


@dataclass
class Yield:
    """The generator whose body this is suspends; the rest of its body runs when it is resumed."""

    value: Any = None


@dataclass
class Resume:
    """Resume the named generator until its next ``Yield`` or its end (nothing when it has finished).
    In a body: from the running call; as a step: on an empty stack of ``thread``."""

    name: str
    thread: int = 0


@dataclass
class Entry:
    """A root call on ``thread`` under a pytest label (None: unlabelled); the label is set when it differs."""

    node: Node
    thread: int = 0
    label: tuple[str, str] | None = ("tests/test_m.py::test", "call")


Step = Entry | Resume

_EVENT, _BLOCKED, _DONE = 0, 1, 2


@dataclass(eq=False)
class _Run:
    """One thread's steps and the frames ``[node, next body index]`` of its running calls."""

    key: int
    steps: deque[Step] = field(default_factory=deque)
    frames: list[list[Any]] = field(default_factory=list)


class _Player:
    """Runs call trees through a builder with explicit stacks (trees may be thousands of levels deep)."""

    def __init__(self, builder: TraceBuilder) -> None:
        self.builder = builder
        self.gens: dict[str, Gen] = {}
        self.gen_frames: dict[str, list[Any]] = {}

    def _start(self, run: _Run, node: Node) -> None:
        gen = self.builder.call(node.fn, *node.args, thread=run.key)
        frame = [node, 0]
        if gen is not None:
            name = node.name or f"#{id(node)}"
            if name in self.gens:
                raise ValueError(f"generator {name!r} is started twice")
            self.gens[name], self.gen_frames[name] = gen, frame
        run.frames.append(frame)

    def _resume(self, run: _Run, name: str) -> int | None:
        """None when the generator has finished (resuming it records nothing)."""
        gen = self.gens.get(name)
        if gen is None or not (gen.suspended or gen.finished):
            return _BLOCKED  # not started yet, or running elsewhere
        if gen.finished:
            return None
        self.builder.resume(gen, thread=run.key)
        run.frames.append(self.gen_frames[name])
        return _EVENT

    def step(self, run: _Run) -> int:
        builder, key = self.builder, run.key
        if not run.frames:
            if not run.steps:
                return _DONE
            item = run.steps[0]
            if isinstance(item, Resume):
                found = self._resume(run, item.name)
                if found == _BLOCKED:
                    return _BLOCKED
                run.steps.popleft()
                return _EVENT
            run.steps.popleft()
            if item.label != builder.current_label:
                builder.label(*(item.label or (None,)), thread=key)
            self._start(run, item.node)
            return _EVENT
        frame = run.frames[-1]
        node, index = frame
        if index == len(node.body):
            run.frames.pop()
            if node.unreported:
                return _EVENT
            if node.raises is not None:
                builder.throw(node.raises, thread=key, fn=node.fn)
            else:
                builder.ret(node.returns, thread=key, fn=node.fn)
            return _EVENT
        item = node.body[index]
        if isinstance(item, Resume):
            found = self._resume(run, item.name)
            if found == _BLOCKED:
                return _BLOCKED
            frame[1] += 1
            return _EVENT
        frame[1] += 1
        if isinstance(item, int):
            builder.lines(item, thread=key, fn=node.fn)
        elif isinstance(item, Node):
            self._start(run, item)
        elif isinstance(item, Yield):
            run.frames.pop()
            builder.yield_(item.value, thread=key, fn=node.fn)
        else:
            raise TypeError(f"unknown body item {item!r}")
        return _EVENT


def play(builder: TraceBuilder, steps: Iterable[Step], rng: random.Random | None = None, stop_after: int | None = None) -> int:
    """Run the steps; returns the number of events.

    Without ``rng`` each step runs to completion before the next (generators left suspended stay
    so). With ``rng`` every thread takes its steps in order while the threads interleave in random
    bursts of events; a thread waits while the generator it resumes runs elsewhere or has not
    started yet. ``stop_after``: stop after that many events, as if the process had been killed
    (calls still running stay so). ValueError when the steps can never all run."""
    player = _Player(builder)
    runs: dict[int, _Run] = {}
    events = 0
    if rng is None:
        for step in steps:
            run = runs.setdefault(step.thread, _Run(step.thread))
            run.steps.append(step)
            while True:
                found = player.step(run)
                if found == _DONE:
                    break
                if found == _BLOCKED:
                    raise ValueError(f"step {step!r} waits for a generator that is not suspended")
                events += 1
                if stop_after is not None and events >= stop_after:
                    return events
        return events
    for step in steps:
        runs.setdefault(step.thread, _Run(step.thread)).steps.append(step)
    active = list(runs.values())
    while active:
        order = active[:]
        rng.shuffle(order)
        for run in order:
            found = player.step(run)
            if found == _DONE:
                active.remove(run)
                break
            if found == _EVENT:
                events += 1
                for _ in range(rng.randrange(12)):  # a burst on the same thread
                    if stop_after is not None and events >= stop_after:
                        return events
                    found = player.step(run)
                    if found != _EVENT:
                        break
                    events += 1
                break
        else:
            raise ValueError("every thread waits for a generator: the steps deadlock")
        if stop_after is not None and events >= stop_after:
            return events
    return events


def write_trace(path: str | Path, steps: Iterable[Step], *, rng: random.Random | None = None, stop_after: int | None = None,
                complete: bool = True, **options: Any) -> TraceBuilder:
    """Build, play and close one trace file (``options``: ``TraceBuilder``'s); the builder keeps the truth."""
    builder = TraceBuilder(path, **options)
    play(builder, steps, rng, stop_after)
    builder.close(complete)
    return builder
