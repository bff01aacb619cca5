"""The C backend of the collector: ``sys.monitoring`` callbacks writing the event streams of format.py.

It implements ``histeg.tracing.protocol.Backend`` (the callbacks, ``label``,
``close_stale``, ``ship_all``); ``monitor.PyTracer`` is its pure-Python reference.
"""

from collections.abc import Callable

from histeg.tracing.protocol import Backend, FunctionEntry

class Tracer(Backend):
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
        switch_lines: Callable[[object, bool], None],
        line_budget: int,
    ) -> None: ...
    def reset(
        self, new_thread: Callable[[], int], chunk: Callable[[int, bytes], None], by_type: dict[type, int], value_id: Callable[[object], int]
    ) -> None:
        """After fork, in the child: forget threads and suspended calls, write through new bindings."""
