"""The C backend of the collector: ``sys.monitoring`` callbacks writing the event streams of format.py.

It implements ``histeg.tracing.protocol.Backend`` (the callbacks, ``label``,
``close_stale``, ``ship_all``); ``monitor.PyTracer`` is its pure-Python reference.
"""

from array import array
from collections.abc import Callable
from types import CodeType
from typing import Any
from weakref import ReferenceType

from histeg.tracing.protocol import Backend, FunctionEntry

INTERFACE: int
SEES_INTERNALS: int
"""1 when built with the interpreter's internal headers (3.12, 3.13): it tells a signal's due handler and reads inline attributes."""

def untracked(key: tuple) -> tuple: ...
def hear_files(
    opened: set[Any] = ..., listed: set[Any] = ..., others: list[Any] = ..., blind: set[str] = ..., children: list[str] = ..., /
) -> None: ...
def cap(text: str, limit: int) -> str:
    """What the tracer records for a text of the walk: ``values.cap`` with ``limit`` for ``MAX_REPR``."""

class LineSet:
    """A LINE callback: ``files.setdefault(code.co_filename, set()).add(line)``, then ``disable``; nothing in Python.
    Given ``offsets``, an INSTRUCTION callback: ``offsets[id(code)]`` is (a weak reference to ``code``, where its
    ranges of instructions start, their lines, -1 for none), both ``array("i")`` (``coverage.far_lines``), and the line
    is that of the range ``offset`` falls in (none: only ``disable``)."""

    def __init__(
        self,
        files: dict[str, set[int]],
        disable: object,
        offsets: dict[int, tuple[ReferenceType[CodeType], array[int], array[int]]] | None = None,
    ) -> None: ...
    def __call__(self, code: CodeType, line_or_offset: int) -> object: ...

class Tracer(Backend):
    label: int
    # the event hooks: a new callable per read, called through its vectorcall slot
    @property
    def py_start(self) -> Callable[[CodeType, int], object]: ...
    @property
    def py_return(self) -> Callable[[CodeType, int, object], object]: ...
    @property
    def py_yield(self) -> Callable[[CodeType, int, object], object]: ...
    @property
    def py_unwind(self) -> Callable[[CodeType, int, object], object]: ...
    @property
    def py_resume(self) -> Callable[..., object]: ...
    @property
    def line(self) -> Callable[[CodeType, int], object]: ...
    def close_stale(self) -> None: ...
    def ship_all(self) -> None: ...
    def keyed(self, tables: tuple[object, ...]) -> None:
        """The tables a keyed value's id is looked up in (``ValueIds.native_tables()``)."""

    def values_to(self, records: Callable[[bytes], None] | None) -> None:
        """New values' records go to ``records`` in batches, each before the next chunk (None: the keyed tables'
        writer, once per value)."""

    def id_of(self, value: object) -> int: ...
    def keyed_id(self, value: object) -> int | None:
        """The id the tracer finds for a keyed value without calling into Python, or None."""
    @property
    def thread_count(self) -> int:
        """Threads that recorded events."""
    @property
    def digested(self) -> int:
        """Keyed values whose ids are kept by a digest of their key (``_keymemo.c``)."""
    @property
    def remembered(self) -> int:
        """Objects and tuples whose ids are kept by what their key is made of (``_objectmemo.c``)."""

    def __init__(
        self,
        instrument: Callable[[CodeType], FunctionEntry | None],
        new_thread: Callable[[], int],
        chunk: Callable[[int, bytes], None],
        by_type: dict[type, int],
        by_value: dict[object, int],
        value_id: Callable[[object], int],
        capture: bool,
        budget: int,
        switch_lines: Callable[[CodeType, bool], None],
        line_budget: int,
        line_cap: int = 0,
    ) -> None: ...
    def reset(
        self,
        new_thread: Callable[[], int],
        chunk: Callable[[int, bytes], None],
        by_type: dict[type, int],
        by_value: dict[object, int],
        value_id: Callable[[object], int],
    ) -> None:
        """After fork, in the child: forget threads, suspended calls and the parent's value records not handed over,
        write through new bindings (``values_to`` again)."""
