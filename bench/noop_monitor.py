"""Run pytest under a ``sys.monitoring`` tool whose callbacks do nothing: what CPython's dispatch of the tracer's
events costs on its own, before any tracer does any work.

    python bench/noop_monitor.py calls|lines ROOT SOURCES TESTS [pytest arguments...]

The tool takes the functions histeg's tracer takes (``histeg.tracing.selection.Selector``: functions of the files
under SOURCES and TESTS, not module or class bodies) and asks for the events it asks for: PY_START, PY_RETURN,
PY_YIELD, PY_RESUME and, globally, PY_UNWIND (``calls``), and LINE as well (``lines``). The callbacks are C builtins
that take the event's arguments and return at once (``operator.is_`` and ``slice``), so what is measured is the
interpreter's own work per event: instrumented opcodes, the arguments boxed, the callback's call. A second tool id
chooses the functions, once per code object, and then turns its own event off there. Every line event of a chosen
function is dispatched: histeg's line budget and cap leave some out, so for histeg's own event set the floor lies
between the two modes. Used by ``trace_bench.py --floor``.
"""

from __future__ import annotations

import operator
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from histeg.tracing.selection import Selector

TOOL, CHOOSER = 3, 4


def install(mode: str, root: str, sources: str, tests: str) -> None:
    monitoring = sys.monitoring
    events = monitoring.events
    wanted = events.PY_START | events.PY_RETURN | events.PY_YIELD | events.PY_RESUME
    if mode == "lines":
        wanted |= events.LINE
    elif mode != "calls":
        raise SystemExit(f"noop_monitor: mode is calls or lines, not {mode!r}")
    selector = Selector(root, [sources], [tests])

    def choose(code: object, offset: int) -> object:
        if selector.select(code) is not None:  # type: ignore[arg-type]
            monitoring.set_local_events(TOOL, code, wanted)  # type: ignore[arg-type]
        return monitoring.DISABLE

    monitoring.use_tool_id(CHOOSER, "histeg-bench-chooser")
    monitoring.use_tool_id(TOOL, "histeg-bench-noop")
    monitoring.register_callback(CHOOSER, events.PY_START, choose)
    monitoring.set_events(CHOOSER, events.PY_START)
    for event in (events.PY_START, events.PY_RESUME, events.LINE):  # (code, offset or line)
        monitoring.register_callback(TOOL, event, operator.is_)
    for event in (events.PY_RETURN, events.PY_YIELD, events.PY_UNWIND):  # (code, offset, value)
        monitoring.register_callback(TOOL, event, slice)
    monitoring.set_events(TOOL, events.PY_UNWIND)


def main() -> None:
    mode, root, sources, tests, *arguments = sys.argv[1:]
    install(mode, root, sources, tests)
    sys.path[:2] = [os.getcwd()]  # as ``python -m pytest`` has it: the working folder first, not this file's or histeg's
    import pytest

    raise SystemExit(pytest.main(arguments))


if __name__ == "__main__":
    main()
