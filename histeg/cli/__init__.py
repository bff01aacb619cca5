"""Command line: a thin layer over ``histeg.project``, one module per group of commands.

Errors a user can fix are one line on stderr with exit code 2; ``--json``
puts a machine-readable summary on stdout and everything else on stderr.
SIGINT and SIGTERM end a run with one line and exit code 130 or 143.
"""

from __future__ import annotations

import contextlib
import faulthandler
import sys
from typing import NoReturn

import click

from histeg.cli.demo import demo
from histeg.cli.diff import diff
from histeg.cli.generate import generate
from histeg.cli.report import report
from histeg.cli.steps import config_command, step_commands
from histeg.cli.trace import exec_command, trace
from histeg.errors import EXIT_BAD_INPUT, HistegError
from histeg.processes.interrupt import (
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    Terminated,
    handling_signals,
)
from histeg.version import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="histeg")
def cli() -> None:
    """histeg: what to test after each change of a Python project."""


for command in (*step_commands(), config_command, demo, trace, exec_command, diff, report, generate):
    cli.add_command(command)


def main(argv: list[str] | None = None) -> None:
    """SIGTERM is handled like Ctrl-C: what histeg started is stopped and its run folders removed on the way out.
    A fatal error in a C extension prints every thread's Python stack on stderr before the process dies."""
    with contextlib.suppress(AttributeError, OSError, ValueError):  # a stderr without a file descriptor (captured)
        if sys.__stderr__ is not None:
            faulthandler.enable(file=sys.__stderr__)
    with handling_signals():
        try:
            cli.main(args=argv, prog_name="histeg", standalone_mode=False)
        except HistegError as exc:
            click.echo(f"histeg: error: {exc}", err=True)
            sys.exit(exc.exit_code)
        except click.exceptions.Abort as exc:  # click's form of KeyboardInterrupt, which it turned into this
            _stopped(exc.__cause__)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            exc.show()
            sys.exit(EXIT_BAD_INPUT)
        except KeyboardInterrupt as exc:
            _stopped(exc)
    sys.exit(0)


def _stopped(cause: BaseException | None) -> NoReturn:
    if isinstance(cause, Terminated):
        click.echo("histeg: terminated", err=True)
        sys.exit(EXIT_TERMINATED)
    click.echo("histeg: interrupted", err=True)
    sys.exit(EXIT_INTERRUPTED)
