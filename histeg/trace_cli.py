"""Commands around traces: ``histeg trace show FILE`` and ``histeg exec TARGET -- CMD ...``."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click

from histeg.errors import HistegError
from histeg.traces import Call, Trace, read_trace

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
        click.echo(json.dumps(loaded.to_json(), indent=2))
    else:
        for line in render(loaded, max_lines):
            click.echo(line)
    if loaded.truncated:
        click.echo(f"histeg: note: {file} is truncated (the process ended before the trace was closed)", err=True)


def render(loaded: Trace, max_lines: int = 60) -> Iterator[str]:
    """Human-readable form of thesis figure 4.6: each call with its lines and nested calls in place."""
    note = ", TRUNCATED" if loaded.truncated else ""
    yield f"{loaded.path}: {len(loaded.entry_points)} entry points, {loaded.line_events} line events{note}"
    for number, root in enumerate(loaded.entry_points, 1):
        label = root.label if root.label is not None else "(no label)"
        phase = f" [{root.phase}]" if root.phase else ""
        thread = loaded.threads.get(root.thread, (0, ""))[1] or f"thread {root.thread}"
        yield ""
        yield f"trace {number}: {label}{phase} on {thread}"
        yield from _render_call(root, "  ", max_lines)
    if loaded.outcomes:
        yield ""
        yield "outcomes:"
        for nodeid, phases in loaded.outcomes.items():
            yield f"  {nodeid}: " + ", ".join(f"{phase} {outcome}" for phase, outcome in phases.items())


def _render_call(call: Call, pad: str, max_lines: int) -> Iterator[str]:
    function = call.function
    params = ", ".join(f"{name}={value}" for name, value in zip(function.params, call.params) if value is not None)
    yield f"{pad}{function.ident}({params})  {function.file}:{function.first_line}"
    inner = pad + "  "
    start = 0
    for position, child in [*call.children, (len(call.lines), None)]:
        if position > start:
            yield inner + _lines(call.lines[start:position], max_lines)
            start = position
        if child is not None:
            yield from _render_call(child, inner + "  ", max_lines)
    if call.yielded:
        yield f"{inner}yielded {len(call.yielded)} times"
    if call.raised is not None:
        yield f"{inner}raised {call.raised}"
    elif call.ended:
        yield f"{inner}returned {call.returned if call.returned is not None else '(not captured)'}"
    else:
        yield f"{inner}(did not end before the trace ended)"


def _lines(offsets: list[int], max_lines: int) -> str:
    shown = offsets if not max_lines or len(offsets) <= max_lines else offsets[:max_lines]
    rest = f" \u2026 ({len(offsets) - len(shown)} more)" if len(shown) < len(offsets) else ""
    return "lines " + " ".join(f"[{offset}]" for offset in shown) + rest


@click.command(name="exec", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.argument("target", type=click.Path(path_type=Path))
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def exec_command(target: Path, command: tuple[str, ...]) -> None:
    """Run CMD with tracing on. TARGET is a trace config file or a version directory OUT/<index>."""
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise HistegError("no command given: histeg exec TARGET -- CMD ...")
    config_path, cwd = _config_for(target)
    from histeg.tracing.activation import traced_environment

    try:
        completed = subprocess.run(list(command), env=traced_environment(config_path), cwd=cwd)
    except OSError as exc:
        raise HistegError(f"cannot run {command[0]}: {exc.strerror}") from None
    sys.exit(completed.returncode)


def _config_for(target: Path) -> tuple[Path, Path | None]:
    """The config file to use, and the directory to run in (the snapshot for a version directory)."""
    from histeg.tracing.activation import TraceConfig

    if target.is_file():
        try:
            TraceConfig.read(target)
        except (ValueError, TypeError, OSError) as exc:
            raise HistegError(f"invalid trace config {target}: {exc}") from None
        return target, None
    if target.is_dir():
        from histeg.runs.runner import write_trace_config
        from histeg.store import SNAPSHOT_DIR, VERSION, OutputStore

        if not (target / VERSION).is_file() or not target.name.isdigit():
            raise HistegError(f"{target} is not a version directory OUT/<index> (no {VERSION})")
        store = OutputStore(target.resolve().parent)
        return write_trace_config(store, int(target.name)), (target / SNAPSHOT_DIR).resolve()
    raise HistegError(f"{target} is neither a trace config file nor a version directory")
