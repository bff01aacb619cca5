"""Traces as text: the nested calls a person reads (thesis figure 4.6), and their JSON form written piece by piece."""

from __future__ import annotations

import json
from collections.abc import Iterator
from json.encoder import encode_basestring_ascii
from typing import Any

from histeg.traces.call_tree import Call, Trace

MAX_INDENT_DEPTH = 50
"""Calls nested deeper are indented like this depth and prefixed with their depth, ``[51] ...``:
runaway recursion would otherwise push the text thousands of columns to the right."""


def render(loaded: Trace, max_lines: int = 60) -> Iterator[str]:
    """Human-readable form of thesis figure 4.6: each call with its lines and nested calls in place.

    A call is indented four spaces more than its caller, up to ``MAX_INDENT_DEPTH``; deeper calls
    keep that indentation and show their depth (the root is depth 0) as ``[depth]`` on each of their rows.
    """
    note = ", TRUNCATED" if loaded.truncated else ""
    yield f"{loaded.path}: {len(loaded.entry_points)} entry points, {loaded.line_events} line events{note}"
    for number, root in enumerate(loaded.entry_points, 1):
        label = root.label if root.label is not None else "(no label)"
        phase = f" [{root.phase}]" if root.phase else ""
        thread = loaded.threads.get(root.thread, (0, ""))[1] or f"thread {root.thread}"
        yield ""
        yield f"trace {number}: {label}{phase} on {thread}"
        yield from _render_call(root, max_lines)
    if loaded.outcomes:
        yield ""
        yield "outcomes:"
        for nodeid, phases in loaded.outcomes.items():
            yield f"  {nodeid}: " + ", ".join(f"{phase} {outcome}" for phase, outcome in phases.items())


def _render_call(root: Call, max_lines: int) -> Iterator[str]:
    """The rows of a call tree, with an explicit stack: recursion thousands of calls deep is common in traces."""
    yield _header(root, 0)
    stack: list[tuple[Call, int, Iterator[tuple[list[int], Call | None]]]] = [(root, 0, root.segments())]
    while stack:
        call, depth, segments = stack[-1]
        segment = next(segments, None)
        if segment is None:
            stack.pop()
            yield from _ending(call, _pad(depth) + "  ")
            continue
        lines, child = segment
        if lines:
            yield _pad(depth) + "  " + _lines(lines, max_lines)
        if child is not None:
            yield _header(child, depth + 1)
            stack.append((child, depth + 1, child.segments()))


def _pad(depth: int) -> str:
    """Where the rows of a call at ``depth`` start (see ``MAX_INDENT_DEPTH``)."""
    if depth <= MAX_INDENT_DEPTH:
        return "  " + "    " * depth
    return "  " + "    " * MAX_INDENT_DEPTH + f"[{depth}] "


def _header(call: Call, depth: int) -> str:
    function = call.function
    params = ", ".join(f"{name}={value}" for name, value in zip(function.params, call.params, strict=False) if value is not None)
    return f"{_pad(depth)}{function.ident}({params})  {function.file}:{function.first_line}"


def _ending(call: Call, pad: str) -> Iterator[str]:
    if call.yielded:
        yield f"{pad}yielded {len(call.yielded)} times"
    if call.left_by_exception:
        yield f"{pad}raised {call.raised if call.raised is not None else '(not captured)'}"
    elif call.ended:
        yield f"{pad}returned {call.returned if call.returned is not None else '(not captured)'}"
    else:
        yield f"{pad}(did not end before the trace ended)"


def _lines(offsets: list[int], max_lines: int) -> str:
    shown = offsets if not max_lines or len(offsets) <= max_lines else offsets[:max_lines]
    rest = f" \u2026 ({len(offsets) - len(shown)} more)" if len(shown) < len(offsets) else ""
    return "lines " + " ".join(f"[{offset}]" for offset in shown) + rest


MAX_JSON_INDENT_LEVEL = 40
"""Nesting levels deeper than this are indented like it; each call nests two levels (its object and its ``trace``)."""


def json_pieces(value: Any, indent: int = 2) -> Iterator[str]:
    """``json.dumps(value, indent=indent)`` as pieces of text, written with an explicit stack.

    The json and orjson encoders recurse (or refuse deep nesting), and a trace of deep recursion nests
    thousands of levels. Indentation stops growing at ``MAX_JSON_INDENT_LEVEL`` so that deep output stays
    linear in size; up to there the text is exactly ``json.dumps``'s.
    """
    opened = _open(value)
    if opened is None:
        yield _leaf(value)
        return
    yield opened[0]
    stack: list[tuple[Iterator[tuple[str, Any]], str]] = [(opened[1], opened[2])]
    first = True
    while stack:
        items, close = stack[-1]
        entry = next(items, None)
        if entry is None:
            stack.pop()
            yield "\n" + " " * (indent * min(len(stack), MAX_JSON_INDENT_LEVEL)) + close
            first = False
            continue
        name, item = entry
        yield ("\n" if first else ",\n") + " " * (indent * min(len(stack), MAX_JSON_INDENT_LEVEL)) + name
        opened = _open(item)
        if opened is None:
            yield _leaf(item)
            first = False
        else:
            yield opened[0]
            stack.append((opened[1], opened[2]))
            first = True


def _open(value: Any) -> tuple[str, Iterator[tuple[str, Any]], str] | None:
    """The opening bracket, entries (``"key": `` or nothing, value) and closing bracket of a non-empty container; None for anything else."""
    if isinstance(value, dict) and value:
        return "{", ((_key(key), item) for key, item in value.items()), "}"
    if isinstance(value, (list, tuple)) and value:
        return "[", (("", item) for item in value), "]"
    return None


def _key(key: Any) -> str:
    """A member name as json writes it: keys that are not strings become the string of their JSON form."""
    return _leaf(key if isinstance(key, str) else json.dumps(key)) + ": "


def _leaf(value: Any) -> str:
    if isinstance(value, str):
        return encode_basestring_ascii(value)
    if value is None or isinstance(value, bool):
        return "null" if value is None else "true" if value else "false"
    if isinstance(value, int):
        return int.__repr__(value)
    return json.dumps(value)
