"""``histeg diff OLD.py NEW.py``: the classified syntax changes between two files."""

from __future__ import annotations

from pathlib import Path

import click
import msgspec

from histeg.atomic import dump_json
from histeg.errors import HistegError
from histeg.naming import module_name
from histeg.syntax.changes import SyntaxChange
from histeg.syntax.classify import FileContext
from histeg.syntax.diff import diff_sources
from histeg.syntax.moves import pair_moved_definitions
from histeg.syntax.options import SyntaxOptions


def _lines(lines: tuple[int, int] | None) -> str:
    if lines is None:
        return "-"
    return f"{lines[0]}" if lines[0] == lines[1] else f"{lines[0]}-{lines[1]}"


def _one_line(text: str | None, width: int = 60) -> str:
    if text is None:
        return ""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def describe_change(change: SyntaxChange) -> str:
    where = f"L{_lines(change.old_lines)}→L{_lines(change.new_lines)}"
    head = f"{change.type:<12} {change.code_type:<10} {change.significance:<8} {change.entity}  {where}"
    if change.type == "rename" and change.old_name is not None:
        return f"{head}  {change.old_name} → {change.new_name}"
    if change.before and change.after and change.type != "move":
        return f"{head}  {_one_line(change.before)} ⇒ {_one_line(change.after)}"
    code = change.after or change.before
    return f"{head}  {_one_line(code)}" if code else head


@click.command()
@click.argument("old", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("new", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "json_output", is_flag=True, help="Print the changes as JSON (the syntaxChanges.json file entry).")
@click.option("--no-renames", is_flag=True, help="Report renamed definitions as removal plus addition.")
@click.option("--module", help="Module name used in identifiers (default: NEW's file name).")
def diff(old: Path, new: Path, json_output: bool, no_renames: bool, module: str | None) -> None:
    """Syntax changes from OLD.py to NEW.py (step 4 on a single file pair)."""
    name = module or module_name(new.name)
    try:
        old_bytes, new_bytes = old.read_bytes(), new.read_bytes()
    except OSError as exc:
        raise HistegError(f"cannot read {exc.filename}: {exc.strerror}") from None
    context = FileContext(str(old), str(new), name, name)
    result = diff_sources(old_bytes, new_bytes, context, SyntaxOptions(renames=not no_renames))
    if result.result.too_large:
        raise HistegError(result.result.message or f"{new} is too large")
    pair_moved_definitions([result])
    if json_output:
        click.echo(dump_json(msgspec.to_builtins(result.result.record())).decode(), nl=False)
        return
    flags = [flag for flag, on in (("parse errors", result.result.parse_errors), ("decode errors", result.result.decode_errors)) if on]
    if flags:
        click.echo(f"note: {', '.join(flags)}; compared where possible", err=True)
    if not result.result.changes:
        click.echo("no syntax changes")
    for change in result.result.changes:
        click.echo(describe_change(change))
