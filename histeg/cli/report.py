"""``histeg report``: what was computed, as a report a reviewer reads; reads the output folder and runs no step.

The output folder and the versions are chosen as for ``histeg compute`` (``--out``, else the repository's folder in the
cache; ``--versions`` revisions, resolved in histeg's mirror), so the same command line with ``compute`` replaced by
``report`` shows what that run computed. Each format is one writer in ``FORMATS``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from histeg.settings.flags import MORE_VERSIONS, decorators_of
from histeg.settings.table import BY_KEY

REPORT_OPTIONS = (
    BY_KEY["repo"],
    BY_KEY["out"],
    BY_KEY["config"],
    replace(
        BY_KEY["versions"],
        help="Report only these versions: revisions or A..B ranges, as compute takes them; "
        "more may follow as arguments.  [default: every version in the output folder]",
    ),
)
"""The run options that say where the results are and which versions: read like ``histeg compute`` reads them."""


def _html(out: Path, versions: list[int] | None) -> Path:
    from histeg.report.html import write_report

    return write_report(out, versions)


def _markdown(out: Path, versions: list[int] | None) -> Path:
    """Written to ``OUT/report/report.md`` and printed on stdout, ready for a pull-request comment."""
    from histeg.report.markdown import render_markdown, write_markdown
    from histeg.report.model import load_run

    run = load_run(out, versions)
    path = write_markdown(run)
    click.echo(render_markdown(run), nl=False)
    return path


def _terminal(out: Path, versions: list[int] | None) -> None:
    from histeg.report.model import load_run
    from histeg.report.table import print_tables

    print_tables(load_run(out, versions))


FORMATS: dict[str, Callable[[Path, list[int] | None], Path | None]] = {"html": _html, "markdown": _markdown, "terminal": _terminal}
"""Format name -> writer of the report; an HTML writer returns the file to open (printed), the others print the report."""


def chosen_indices(out: Path, revisions: tuple[str, ...]) -> list[int] | None:
    """The version numbers of ``revisions`` (as ``--versions`` takes them, resolved in the output folder's mirror of the
    repository); ``None`` (every version) when none are given. A revision without results there is a one-line error."""
    if not revisions:
        return None
    from histeg.errors import HistegError
    from histeg.history.git import GitRepository
    from histeg.history.revisions import select_versions
    from histeg.history.source import MIRROR_DIR
    from histeg.records.history import History
    from histeg.store import OutputStore

    store = OutputStore(out)
    history = History.read(store.history_path)
    mirror = GitRepository.open(out / MIRROR_DIR)
    numbers = {commit.identifier: commit.index for commit in history.commits}
    indices = []
    for identifier in select_versions(mirror, revisions, history.repository.tip):
        index = numbers.get(identifier)
        if index is None or not store.has_version(index):
            raise HistegError(f"version {identifier[:12]} has no results in {out}: compute it first")
        indices.append(index)
    return indices


def _report(output_format: str, fail_on: tuple[str, ...], **params: Any) -> None:
    """Write a report of the computed versions (every version in the output folder unless --versions): HTML (its path is
    printed), Markdown for a pull-request comment (printed, and kept as OUT/report/report.md) or tables on the terminal.
    With --fail-on, exit code 4 when a condition holds for a reported version."""
    from histeg.cli.steps import checked_settings
    from histeg.project import Project
    from histeg.report.gate import EXIT_GATE, gate_failures, parse_condition
    from histeg.report.model import load_run

    conditions = [parse_condition(text) for text in fail_on]  # a bad condition stops before any work
    settings = checked_settings(params)
    out = Project.of(settings).store.root
    versions = chosen_indices(out, settings.versions)
    path = FORMATS[output_format](out, versions)
    if path is not None and output_format == "html":
        click.echo(str(path))
    failures = gate_failures(load_run(out, versions), conditions)
    for failure in failures:
        click.echo(f"histeg: gate: {failure}", err=True)
    if failures:
        sys.exit(EXIT_GATE)


def _command() -> click.Command:
    command: Callable[..., Any] = _report
    for option in reversed(REPORT_OPTIONS):
        for decorator in reversed(decorators_of(option)):
            command = decorator(command)
    command = click.option(
        "--format",
        "output_format",
        type=click.Choice(tuple(FORMATS)),
        default="html",
        show_default=True,
        help="html: OUT/report/index.html and a page per version; markdown: a pull-request comment on stdout "
        "(also OUT/report/report.md); terminal: tables of the top targets.",
    )(command)
    command = click.option(
        "--fail-on",
        "fail_on",
        multiple=True,
        metavar="CONDITION",
        help="Exit with code 4 when a reported version has 'untested' changes or more than N targets ('targets>N'); may be repeated.",
    )(command)
    command = click.argument(MORE_VERSIONS, nargs=-1, metavar="[REV]...")(command)
    return click.command(name="report")(command)


report = _command()
