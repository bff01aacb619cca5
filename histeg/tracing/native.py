"""The collector with its callbacks in C (``_ctracer``), when the extension is built.

Same trace, word for word, as the Python backend; only the per-event work
moves to C. The Python side still decides what is instrumented, allocates
thread streams, ships buffers and abstracts values the C side has not cached.
"""

from __future__ import annotations

from collections.abc import Callable

from histeg.tracing import format as fmt
from histeg.tracing.monitor import Collector
from histeg.tracing.protocol import Backend
from histeg.tracing.selection import Selector
from histeg.tracing.tracers import LINE_BUDGET, LINE_CAP, TRACERS, VALUE_BUDGET
from histeg.tracing.values import Abstraction

try:
    from histeg.tracing import _ctracer
except ImportError:  # not built (no compiler at install time): the Python collector is used
    _ctracer = None  # type: ignore[assignment]  # the module's name stands for "not built"


INTERFACE = 14
"""What ``_ctracer.INTERFACE`` must be: the Tracer's constructor and bindings as this module calls them. A build left
by another histeg (an in-place build for another interpreter, say) would take other arguments; it counts as not built."""


def available() -> bool:
    return _ctracer is not None and getattr(_ctracer, "INTERFACE", None) == INTERFACE


def file_ears() -> Callable[..., None] | None:
    """The audit hook of ``histeg.tracing.seen_files`` in C, where built: no frame of its own, so an audited operation near
    the recursion limit behaves as without it."""
    return _ctracer.hear_files if available() else None


class NativeCollector(Collector):
    implementation = "c"

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
        if not available():
            raise RuntimeError(
                "histeg: the C tracer is not built, or was built from another histeg "
                "(reinstall histeg with a C compiler, or use tracer 'python')"
            )
        super().__init__(selector, writer, abstraction, value_budget, tool, line_budget, line_cap)

    def _make_backend(self) -> Backend:
        tracer = _ctracer.Tracer(
            self.instrument,
            self.open_thread,
            self.chunk,
            self.value_ids.by_type,
            self.value_ids.by_value,
            self.value_ids.id_of,
            self.capture_values,
            self.value_budget,
            self.switch_lines,
            self.line_budget,
            self.line_cap,
        )
        tracer.keyed(self.value_ids.native_tables())
        tracer.values_to(self.writer.records)
        return tracer

    def _reset_backend(self) -> None:
        """After fork the C tracer keeps its function table and forgets threads and suspended calls."""
        backend = self.backend
        assert isinstance(backend, _ctracer.Tracer)  # made by _make_backend
        backend.reset(self.open_thread, self.chunk, self.value_ids.by_type, self.value_ids.by_value, self.value_ids.id_of)
        backend.keyed(self.value_ids.native_tables())
        backend.values_to(self.writer.records)


def resolve(implementation: str) -> str:
    """``auto``: ``c`` when built, else ``python``; ``c`` insists on C; ``python`` is the reference collector."""
    if implementation not in TRACERS:
        raise ValueError(f"unknown tracer {implementation!r} (expected one of {', '.join(TRACERS)})")
    if implementation == "auto":
        return "c" if available() else "python"
    return implementation


def make_collector(
    implementation: str,
    selector: Selector,
    writer: fmt.TraceWriter,
    abstraction: Abstraction | None = None,
    value_budget: int = VALUE_BUDGET,
    tool: int | None = None,
    line_budget: int = LINE_BUDGET,
    line_cap: int = LINE_CAP,
) -> Collector:
    kind = NativeCollector if resolve(implementation) == "c" else Collector
    return kind(selector, writer, abstraction, value_budget, tool, line_budget, line_cap)
