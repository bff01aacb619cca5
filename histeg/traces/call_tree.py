"""Traces as call trees: what ``reader.read_trace`` returns, for display, export and tests.

Comparisons read entry points as columns (``TraceFile.columns``) instead;
these objects are the nested view, and their JSON is the documented export
(output_schema/trace.schema.json).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from histeg.traces.records import Function, Value


@dataclass(eq=False)
class Call:
    """One call of an instrumented function (all activations of a generator or coroutine)."""

    function: Function
    thread: int
    lines: list[int] = field(default_factory=list)
    """Executed lines, as offsets from the function's first line (``co_firstlineno``)."""
    children: list[tuple[int, Call]] = field(default_factory=list)
    """Nested calls with the number of this call's lines executed before each started."""
    params: list[Value | None] = field(default_factory=list)
    returned: Value | None = None
    raised: Value | None = None
    yielded: list[Value | None] = field(default_factory=list)
    ended: bool = False
    """False when the call was still running (or suspended) when the trace ended."""
    left_by_exception: bool = False
    """True when it ended by an exception (``raised`` is None when its value was not recorded)."""
    label: str | None = None
    """The entry point's label (a pytest node id), on root calls only."""
    phase: str | None = None
    lines_complete: bool = True
    """False when some of its lines were not recorded (the function's line budget in the entry
    point was spent): its line sequence is unknown to comparisons."""

    def __repr__(self) -> str:
        """Shallow: the dataclass default would recurse into the children and fail on deep trees."""
        return f"Call({self.function.ident!r}, thread={self.thread}, lines={len(self.lines)}, children={len(self.children)})"

    def walk(self) -> Iterator[Call]:
        """This call and every call below it, in pre-order.

        Iterative: recursion thousands of calls deep is common in traces and would exceed Python's recursion limit.
        """
        stack = [self]
        while stack:
            call = stack.pop()
            yield call
            stack.extend(child for _, child in reversed(call.children))

    def segments(self) -> Iterator[tuple[list[int], Call | None]]:
        """Execution order: the lines run before each child call started, with that child; last the lines after it (``None``)."""
        start = 0
        for position, child in self.children:
            end = max(start, position)
            yield self.lines[start:end], child
            start = end
        yield self.lines[start:], None

    def to_json(self) -> dict[str, Any]:
        """The nested form of thesis figure 4.6: lines with the child calls in place.

        Built with an explicit stack, so that call trees of any depth convert.
        """
        root = self._json_node()
        stack = [(self, root["trace"])]
        while stack:
            call, trace = stack.pop()
            for lines, child in call.segments():
                trace.extend(lines)
                if child is not None:
                    node = child._json_node()
                    trace.append(node)
                    stack.append((child, node["trace"]))
        return root

    def _json_node(self) -> dict[str, Any]:
        """This call's own fields, with an empty ``trace`` for ``to_json`` to fill."""
        data: dict[str, Any] = {
            "called": self.function.ident,
            "kind": self.function.kind,
            "file": self.function.file,
            "firstLine": self.function.first_line,
            "thread": self.thread,
            "calledWithParameters": [_value_json(name, value) for name, value in zip(self.function.params, self.params, strict=False)],
            "trace": [],
            "returned": None if self.returned is None else self.returned.to_json(),
            "raised": None if self.raised is None else self.raised.to_json(),
            "ended": self.ended,
            "leftByException": self.left_by_exception,
        }
        if self.yielded:
            data["yielded"] = [None if value is None else value.to_json() for value in self.yielded]
        if not self.lines_complete:
            data["linesComplete"] = False
        if self.label is not None:
            data["entryPoint"] = {"label": self.label, "phase": self.phase}
        return data


def _value_json(name: str, value: Value | None) -> dict[str, Any]:
    return {"name": name, **({"type": None, "repr": None} if value is None else value.to_json())}


@dataclass
class Trace:
    """Everything one traced process recorded."""

    path: Path
    meta: dict[str, Any]
    version: int
    entry_points: list[Call]
    threads: dict[int, tuple[int, str]]
    """Thread index -> (thread ident, thread name)."""
    outcomes: dict[str, dict[str, str]]
    """pytest node id -> {phase: outcome}."""
    line_events: int
    truncated: bool
    broken: str | None = None
    """Why the trace is incomplete although closed: the tracer lost its sys.monitoring tool id."""

    def to_json(self) -> dict[str, Any]:
        """The nested form of the whole trace; call trees of any depth (``Call.to_json`` does not recurse)."""
        return {
            "schemaVersion": 1,
            "formatVersion": self.version,
            "meta": self.meta,
            "truncated": self.truncated,
            "broken": self.broken,
            "lineEvents": self.line_events,
            "threads": [{"index": index, "ident": ident, "name": name} for index, (ident, name) in sorted(self.threads.items())],
            "outcomes": self.outcomes,
            "traces": [call.to_json() for call in self.entry_points],
        }
