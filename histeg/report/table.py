"""The report on a terminal: per compared version a table of the top targets with their reasons and the changed
code no test ran; every cut list says how much was left out."""

from __future__ import annotations

from typing import IO

from rich.console import Console as RichConsole
from rich.console import JustifyMethod
from rich.syntax import Syntax
from rich.table import Table

from histeg.report.model import RunReport, VersionReport
from histeg.report.reasons import left_out, plural, target_reason, untested_reason

TOP = 15
"""Rows per table."""


def _version(console: RichConsole, report: VersionReport, top: int) -> None:
    summary, counts = report.summary, report.summary.counts
    console.print(
        f"[bold]version {summary.index}[/bold] {summary.short_commit} {summary.subject}  (against version {summary.against_index})",
        markup=True,
        highlight=False,
    )
    if counts is not None:
        coverage = "-" if counts.diff_coverage is None else f"{counts.diff_coverage:.0%}"
        console.print(
            f"{plural(counts.targets, 'target')}, {plural(counts.untested, 'untested change')}, diff coverage {coverage}, "
            f"{plural(counts.noise, 'divergence')} set aside as noise",
            highlight=False,
        )
    if report.targets:
        table = Table(show_lines=False, expand=False)
        columns: tuple[tuple[str, JustifyMethod], ...] = (("#", "right"), ("target", "left"), ("value", "right"), ("why", "left"))
        for name, justify in columns:
            table.add_column(name, justify=justify, overflow="fold")
        for target in report.targets[:top]:
            table.add_row(str(target.rank), target.identifier, f"{target.value:.3g}", target_reason(target))
        console.print(table)
    cut = left_out(min(top, len(report.targets)), len(report.targets), "targets")
    if cut:
        console.print(cut, highlight=False)
    for target in report.targets[:top]:
        for witness in target.witnesses:
            how = "carved" if witness.carved else "Pynguin"
            console.print(
                f"witness of {target.identifier} ({how}): {witness.test}, old {witness.old}, new {witness.new}",
                highlight=False,
                markup=False,
            )
            if witness.source:
                console.print(Syntax(witness.source, "python", theme="ansi_dark", background_color="default"))
    if report.untested:
        console.print("changed code no test ran:", highlight=False)
        for change in report.untested[:top]:
            console.print(f"  {change.rank}. {change.identifier}: {untested_reason(change)}", highlight=False, markup=False)
        cut = left_out(min(top, len(report.untested)), len(report.untested), "untested changes")
        if cut:
            console.print(f"  {cut}", highlight=False)
    console.print()


def print_tables(run: RunReport, file: IO[str] | None = None, top: int = TOP) -> None:
    """Every compared version of ``run``, oldest first, as a terminal reads down."""
    console = RichConsole(file=file, soft_wrap=False)
    compared = 0
    for report in run.version_reports():
        compared += 1
        _version(console, report, top)
    if not compared:
        console.print("no compared version: a version is compared with its predecessor from the second one on", highlight=False)
