"""Commands around traces: ``histeg trace show FILE`` and ``histeg exec TARGET -- CMD ...``."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import click

from histeg.errors import HistegError
from histeg.report.trace_text import json_pieces, render
from histeg.traces.reader import read_trace


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
        from histeg.processes.workdir import fresh_copy
        from histeg.runs.runner import (
            RUN_DIR,
            base_environment,
            version_settings,
            write_trace_config,
        )
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
    from histeg.traces.seal import seal
    from histeg.tracing.activation import TraceConfig
    from histeg.tracing.format import read_status

    directory = Path(TraceConfig.read(config).trace_dir) if config is not None else None
    before = set(directory.glob("*.htrace")) if directory is not None else set()
    try:
        code = subprocess.run(list(command), env=env, cwd=cwd, check=False).returncode
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
