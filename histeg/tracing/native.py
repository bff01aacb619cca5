"""The collector with its callbacks in C (``_ctracer``), when the extension is built.

Same trace, word for word, as ``monitor.Collector``; only the per-event work
moves to C. The Python side still decides what is instrumented, allocates
thread streams, ships buffers and abstracts values the C side has not cached.
"""

from __future__ import annotations

from histeg.tracing import format as fmt
from histeg.tracing.monitor import _E, Collector
from histeg.tracing.selection import Selector
from histeg.tracing.session import TRACERS

try:
    from histeg.tracing import _ctracer
except ImportError:  # not built (no compiler at install time): the Python collector is used
    _ctracer = None


def available() -> bool:
    return _ctracer is not None


class NativeCollector(Collector):
    implementation = "c"

    def __init__(self, selector: Selector, writer: fmt.TraceWriter, capture_values: bool = True, value_budget: int = 64) -> None:
        if _ctracer is None:
            raise RuntimeError("histeg: the C tracer is not built (reinstall histeg with a C compiler, or use tracer 'python')")
        super().__init__(selector, writer, capture_values, value_budget)

    def _make_callbacks(self) -> dict[int, object]:
        """One C tracer per collector, made on the first call (from ``Collector.__init__``)."""
        tracer = getattr(self, "_tracer", None)
        if tracer is None:
            tracer = self._tracer = _ctracer.Tracer(
                self._instrument, self._open_thread, self._chunk, self.value_ids.by_type, self.value_ids.id_of,
                self.capture_values, self.value_budget,
            )
        return {
            _E.PY_START: tracer.py_start,
            _E.PY_RETURN: tracer.py_return,
            _E.PY_YIELD: tracer.py_yield,
            _E.PY_RESUME: tracer.py_resume,
            _E.PY_THROW: tracer.py_resume,
            _E.PY_UNWIND: tracer.py_unwind,
            _E.LINE: tracer.line,
        }

    def _chunk(self, index: int, data: bytes) -> None:
        self.writer.chunk(index, data)

    def _set_label_id(self, label: int) -> None:
        self._tracer.label = label

    def _close_stale_frames(self) -> None:
        self._tracer.close_stale()

    def _ship_all(self) -> None:
        self._tracer.ship_all()

    def _forget_threads(self) -> None:
        self._threads = 0
        self._tracer.reset(self._open_thread, self._chunk, self.value_ids.by_type, self.value_ids.id_of)


def resolve(implementation: str) -> str:
    """``auto``: ``c`` when built, else ``python``; ``c`` insists on C; ``python`` is the reference collector."""
    if implementation not in TRACERS:
        raise ValueError(f"unknown tracer {implementation!r} (expected one of {', '.join(TRACERS)})")
    if implementation == "auto":
        return "c" if available() else "python"
    return implementation


def make_collector(
    implementation: str, selector: Selector, writer: fmt.TraceWriter, capture_values: bool = True, value_budget: int = 64
) -> Collector:
    if resolve(implementation) == "c":
        return NativeCollector(selector, writer, capture_values, value_budget)
    return Collector(selector, writer, capture_values, value_budget)
