"""The contract between the collector and its callbacks, kept by the C and the Python backend alike.

``Collector`` (monitor.py) decides what is instrumented and hands each
instrumented code object to the backend as a ``FunctionEntry``; the backend
(``_ctracer.Tracer`` or ``monitor.PyTracer``) holds the ``sys.monitoring``
callbacks and writes the event streams. ``_ctracer.pyi`` states the C side.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from types import CodeType
from typing import Protocol

from histeg.tracing.format import CALL_BARE, OP_LINES_OFF, OP_LINES_ON

RETURN_REDACTED = 1 << 63
"""Bit of ``FunctionEntry.redact`` for the return value (bits 0..62: parameters by position)."""


class FunctionEntry:
    """What the backends know of one instrumented code object (slots: the Python hot path reads them)."""

    __slots__ = (
        "code",
        "prefix",
        "suspends",
        "names",
        "found",
        "func_id",
        "plain",
        "called",
        "called_bare",
        "spent",
        "redact",
        "redacted",
        "lines_off",
        "lines_on",
    )

    def __init__(
        self,
        code: CodeType,
        func_id: int,
        suspends: int,
        names: tuple[str, ...],
        found: tuple[str, str],
        called: array,
        redact: int,
        redacted: Callable[[object], int],
    ) -> None:
        self.code = code
        self.func_id = func_id
        self.prefix = tuple(called[:3])
        """OP_CALL and the function id (3 words)."""
        self.suspends = suspends
        """FUNC_GENERATOR / FUNC_COROUTINE flags: non-zero for code that yields or awaits."""
        self.names = names
        """Parameter names whose values are recorded (empty when values are off)."""
        self.found = found
        """(identifier, relative path)."""
        self.plain = (code, 0, 0, None)
        """The stack item of a call of a plain function."""
        self.called = called
        """The words of a nested plain call: prefix and parameter count."""
        self.called_bare = array("H", (called[0] | CALL_BARE, called[1], called[2]))
        """The words of a nested plain call that captures no parameter value (``format.CALL_BARE``)."""
        self.spent = [0, 0, 0, False]
        """[entry point epoch, calls in it, line events in it, whether its line events are off until the next one]."""
        self.redact = redact
        """Parameters (bit i) and return value (``RETURN_REDACTED``) recorded by a keyed digest."""
        self.redacted = redacted
        """``value -> id`` of the value's keyed digest, written in its place."""
        self.lines_off = array("H", (OP_LINES_OFF, func_id & 0xFFFF, func_id >> 16))
        self.lines_on = array("H", (OP_LINES_ON, func_id & 0xFFFF, func_id >> 16))
        """The markers written when its line events go off (budget spent) and on again (next entry point)."""


class Backend(Protocol):
    """The callbacks object of a collector: ``sys.monitoring`` callbacks and the collector's controls."""

    label: int
    """Label id of the entry points that start from now on."""

    def py_start(self, code: CodeType, offset: int) -> object: ...

    def py_return(self, code: CodeType, offset: int, value: object) -> object: ...

    def py_yield(self, code: CodeType, offset: int, value: object) -> object: ...

    def py_unwind(self, code: CodeType, offset: int, exc: object) -> object: ...

    def py_resume(self, code: CodeType, offset: int, exc: object = None) -> object: ...

    def line(self, code: CodeType, line_number: int) -> object: ...

    def close_stale(self) -> None:
        """Close the calls left on this thread's stack (frames whose end was never reported) and ship its events."""

    def ship_all(self) -> None:
        """Ship every thread's buffered events."""
