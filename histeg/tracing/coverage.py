"""Every line a traced process executed in the instrumented files, written beside its trace as ``<trace>.lines``.

Full runs only: a targeted re-run (a selection) tells noise from a change, and
the version's executed lines are its full runs' (``histeg.impact.untested``).
CPython keeps each instruction's line as a one-byte distance from where the
code object starts (grown by one every 16 instructions); a line beyond it
costs a scan of the line table (``PyCode_Addr2Line``) on every line event
there, so a long module or class body (a keyword table, a lexer's token
rules) costs time that grows with the square of its length: 0.44 G
instructions per process, a quarter of a short run, on a parser with a
1,700-line keyword table. Such a body (the tracer never instruments one) is
heard through ``INSTRUCTION`` events instead, each instruction's line found by
bisection in arrays made once from ``co_lines`` (found by the code object's id:
hashing a code object hashes all its instructions): the same lines, each
instruction disabled after its first run. Unless another tool hears its lines: a tool that
disables a line's event there takes the instruction event of that line's
first instruction with it (CPython 3.12), so the body keeps ``LINE``.

The trace's own line events stop at the line budget (the first N calls of a
function per entry point), so a branch only a later call takes is missing from
it. Diff coverage needs each line once, not each execution: a second
``sys.monitoring`` tool hears every line location once and then disables it
(``DISABLE``), so it costs one callback per distinct line and nothing on the
tracer's hot path. Module and class bodies count too (the tracer records
functions only), which is what makes a changed module-level value "executed".

Standard library only: it runs inside the traced process.
"""

from __future__ import annotations

import json
import os
import sys
import weakref
from array import array
from bisect import bisect_right
from collections.abc import Callable
from inspect import CO_OPTIMIZED
from types import CodeType

from histeg.tracing.selection import Selector

SUFFIX = ".lines"
"""Appended to the trace file's name."""
FORMAT = 1
"""``format`` of the sidecar JSON: ``{"format": 1, "files": {relative path: [line, ...]}}``."""
TOOL_NAME = "histeg-lines"
NEAR = range(-125, 128)
"""The distances (line, less the first line and the instruction's index over 16) CPython keeps without a scan (3.13's
bounds, the narrower)."""

_mon = sys.monitoring
_E = _mon.events
DISABLE = _mon.DISABLE


class LineCoverage:
    """Distinct executed lines per instrumented file of this process (a fork's child inherits its parent's)."""

    def __init__(self, selector: Selector, native: bool = False) -> None:
        """``native``: the C collector is built and in use; its ``LineSet`` then hears the lines, so that no Python code
        of histeg runs on a line event (a signal's handler would run there, in histeg's frame, not the program's)."""
        self.selector = selector
        self.native = native
        self.tool: int | None = None
        self.lines: dict[str, set[int]] = {}
        """By ``co_filename``; turned into version-relative paths when written."""
        self.offsets: dict[int, tuple[weakref.ref[CodeType], array[int], array[int]]] = {}
        """By the id of a body heard through ``INSTRUCTION`` events: the body (weakly), where its ranges of instructions
        start and their lines (``far_lines``)."""

    def start(self, tool_ids: tuple[int, ...]) -> bool:
        """Claim the first free tool id of ``tool_ids``; False (no coverage) when none is free."""
        for tool in tool_ids:
            if _mon.get_tool(tool) is None:
                _mon.use_tool_id(tool, TOOL_NAME)
                self.tool = tool
                break
        else:
            return False
        _mon.register_callback(self.tool, _E.PY_START, self._started)
        _mon.register_callback(self.tool, _E.LINE, self._line_callback())
        _mon.register_callback(self.tool, _E.INSTRUCTION, self._instruction_callback())
        _mon.set_events(self.tool, _E.PY_START)
        return True

    def _started(self, code: CodeType, offset: int) -> object:
        """Once per code object: line events for it when its file is instrumented."""
        tool = self.tool
        if tool is None or _mon.get_tool(tool) != TOOL_NAME:  # the program freed or took over the tool id: it is theirs now
            self.tool = None
            return DISABLE
        if self.selector.module_of(code.co_filename) is not None:
            ranges = None if code.co_flags & CO_OPTIMIZED else far_lines(code)
            if ranges is not None and not _lines_heard_by_another(tool, code):
                self.offsets[id(code)] = (weakref.ref(code), *ranges)
                _mon.set_local_events(tool, code, _E.INSTRUCTION)
            else:
                _mon.set_local_events(tool, code, _E.LINE)
        return DISABLE

    def _line_callback(self) -> Callable[[CodeType, int], object]:
        if self.native:
            from histeg.tracing import _ctracer

            return _ctracer.LineSet(self.lines, DISABLE)
        return self._line

    def _instruction_callback(self) -> Callable[[CodeType, int], object]:
        if self.native:
            from histeg.tracing import _ctracer

            return _ctracer.LineSet(self.lines, DISABLE, self.offsets)
        return self._instruction

    def _line(self, code: CodeType, line: int) -> object:
        found = self.lines.get(code.co_filename)
        if found is None:
            found = self.lines[code.co_filename] = set()
        found.add(line)
        return DISABLE

    def _instruction(self, code: CodeType, offset: int) -> object:
        found = self.offsets.get(id(code))
        if found is None or found[0]() is not code:
            return DISABLE
        starts, lines = found[1], found[2]
        at = bisect_right(starts, offset) - 1
        return self._line(code, lines[at]) if at >= 0 and lines[at] >= 0 else DISABLE

    def stop(self) -> None:
        tool, self.tool = self.tool, None
        if tool is None or _mon.get_tool(tool) != TOOL_NAME:  # the program took it over: leave it alone
            return
        _mon.set_events(tool, 0)
        _mon.register_callback(tool, _E.PY_START, None)
        _mon.register_callback(tool, _E.LINE, None)
        _mon.register_callback(tool, _E.INSTRUCTION, None)
        _mon.free_tool_id(tool)

    def write(self, trace_path: str) -> None:
        """``<trace_path>.lines``, renamed into place so a reader never sees half of it."""
        files: dict[str, list[int]] = {}
        for filename, lines in self.lines.items():
            found = self.selector.module_of(filename)
            if found is not None:
                files.setdefault(found[0], []).extend(lines)
        data = {"format": FORMAT, "files": {path: sorted(set(lines)) for path, lines in sorted(files.items())}}
        target = trace_path + SUFFIX
        partial = f"{target}.{os.getpid()}.tmp"
        with open(partial, "w", encoding="utf-8") as handle:
            json.dump(data, handle, separators=(",", ":"))
        os.replace(partial, target)


def far_lines(code: CodeType) -> tuple[array[int], array[int]] | None:
    """Where each range of instructions starts (a byte offset, as ``INSTRUCTION`` events give it) and its line (-1:
    none), when a line could cost CPython a scan of the line table on a line event; else None. Decided from the
    extremes (a line far past the start, or far before the last instruction's share of the distance)."""
    ranges = list(code.co_lines())
    known = [line for _, _, line in ranges if line is not None]
    first = code.co_firstlineno
    if not known or (max(known) - first < NEAR.stop and min(known) - first - (len(code.co_code) >> 5) >= NEAR.start):
        return None  # every distance fits
    return array("i", [start for start, _, _ in ranges]), array("i", [-1 if line is None else line for _, _, line in ranges])


def _lines_heard_by_another(tool: int, code: CodeType) -> bool:
    for other in range(6):
        if other != tool and _mon.get_tool(other) is not None and (_mon.get_events(other) | _mon.get_local_events(other, code)) & _E.LINE:
            return True
    return False


def read_lines(path: str | os.PathLike[str]) -> dict[str, set[int]]:
    """A sidecar's executed lines by version-relative file; ValueError when it is not one."""
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("files"), dict):
        raise ValueError(f"{path} is not a line coverage file of format {FORMAT}")
    return {str(file): {int(line) for line in lines} for file, lines in data["files"].items()}
