"""Commands around traces: ``histeg trace show FILE`` and ``histeg exec TARGET -- CMD ...``."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable, Iterator
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import Any

import click

from histeg.errors import HistegError
from histeg.tracing.call_tree import Call, Trace
from histeg.tracing.reader import read_trace

@click.group()
def trace() -> None:
    """Inspect trace files."""


@trace.command()
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the nested JSON form (output_schema/trace.schema.json).")
@click.option("--max-lines", default=60, show_default=True, help="Lines shown per segment of a call (0: all).")
def show(file: Path, as_json: bool, max_lines: int) -> None:
    """Print the entry points of a trace file as nested calls."""
    loaded = read_trace(file)
    if as_json:
        _echo_pieces(json_pieces(loaded.to_json()))
    else:
        for line in render(loaded, max_lines):
            click.echo(line)
    if loaded.truncated:
        click.echo(f"histeg: note: {file} is truncated (the process ended before the trace was closed)", err=True)


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
    params = ", ".join(f"{name}={value}" for name, value in zip(function.params, call.params) if value is not None)
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


def _echo_pieces(pieces: Iterable[str], size: int = 1 << 16) -> None:
    """Write text pieces in blocks of about ``size`` characters, with a final newline."""
    buffer: list[str] = []
    length = 0
    for piece in pieces:
        buffer.append(piece)
        length += len(piece)
        if length >= size:
            click.echo("".join(buffer), nl=False)
            buffer.clear()
            length = 0
    click.echo("".join(buffer))


@click.command(name="exec", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--no-seal", "no_seal", is_flag=True, help="Leave the traces as the tracer wrote them (sealing indexes them by entry point).")
@click.argument("target", type=click.Path(path_type=Path))
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def exec_command(target: Path, command: tuple[str, ...], no_seal: bool) -> None:
    """Run CMD with tracing on. TARGET is a trace config file or a version directory OUT/<index>
    (CMD then runs in a fresh copy of its snapshot, removed afterwards, with its sources importable).
    The traces it closes are sealed afterwards, as a pipeline run does."""
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise HistegError("no command given: histeg exec TARGET -- CMD ...")
    from histeg.tracing.activation import TraceConfig, traced_environment

    if target.is_file():
        try:
            TraceConfig.read(target)
        except (ValueError, TypeError, OSError) as exc:
            raise HistegError(f"invalid trace config {target}: {exc}") from None
        sys.exit(_run(command, traced_environment(target), None, None if no_seal else target))
    if target.is_dir():
        from histeg.envs.runtime import runtime_of
        from histeg.runs.runner import RUN_DIR, base_environment, version_settings, write_trace_config
        from histeg.runs.workdir import fresh_copy
        from histeg.store import VERSION, OutputStore

        if not (target / VERSION).is_file() or not target.name.isdigit():
            raise HistegError(f"{target} is not a version directory OUT/<index> (no {VERSION})")
        store = OutputStore(target.resolve().parent)
        index = int(target.name)
        config_path = write_trace_config(store, index)
        work = store.version_dir(index) / RUN_DIR
        runtime = runtime_of(store.version_dir(index))
        env = traced_environment(config_path, base_environment(work, version_settings(store, index)[1], runtime))
        with fresh_copy(store.snapshot(index), work):
            runtime.prepare(work)
            code = _run(command, env, work, None if no_seal else config_path)
        sys.exit(code)
    raise HistegError(f"{target} is neither a trace config file nor a version directory")


def _run(command: tuple[str, ...], env: dict[str, str], cwd: Path | None, config: Path | None) -> int:
    """Run the command, then seal the traces it closed (unless no ``config`` says where they are)."""
    from histeg.tracing.activation import TraceConfig
    from histeg.tracing.format import read_status
    from histeg.tracing.seal import seal

    directory = Path(TraceConfig.read(config).trace_dir) if config is not None else None
    before = set(directory.glob("*.htrace")) if directory is not None else set()
    try:
        code = subprocess.run(list(command), env=env, cwd=cwd).returncode
    except OSError as exc:
        raise HistegError(f"cannot run {command[0]}: {exc.strerror}") from None
    if directory is None:
        return code
    for path in sorted(set(directory.glob("*.htrace")) - before):
        if read_status(str(path)) != "truncated":
            try:
                seal(path)
            except ValueError as exc:
                click.echo(f"histeg: warning: {path} is damaged and left as it is: {exc}", err=True)
    return code
