"""The C backend of the collector: ``sys.monitoring`` callbacks writing the event streams of format.py.

It implements ``histeg.tracing.protocol.Backend``; ``monitor.PyTracer`` is its pure-Python reference.
"""

from collections.abc import Callable

from histeg.tracing.protocol import FunctionEntry

class Tracer:
    label: int
    """Label id of the entry points that start from now on."""
    @property
    def thread_count(self) -> int:
        """Threads that recorded events."""

    def __init__(
        self,
        instrument: Callable[[object], FunctionEntry | None],
        new_thread: Callable[[], int],
        chunk: Callable[[int, bytes], None],
        by_type: dict[type, int],
        value_id: Callable[[object], int],
        capture: bool,
        budget: int,
    ) -> None: ...
    def py_start(self, code: object, offset: int) -> object: ...
    def py_return(self, code: object, offset: int, value: object) -> object: ...
    def py_yield(self, code: object, offset: int, value: object) -> object: ...
    def py_unwind(self, code: object, offset: int, exc: object) -> object: ...
    def py_resume(self, code: object, offset: int, exc: object = None) -> object: ...
    def line(self, code: object, line_number: int) -> object: ...
    def close_stale(self) -> None: ...
    def ship_all(self) -> None: ...
    def reset(
        self, new_thread: Callable[[], int], chunk: Callable[[int, bytes], None], by_type: dict[type, int], value_id: Callable[[object], int]
    ) -> None:
        """After fork, in the child: forget threads and suspended calls, write through new bindings."""
