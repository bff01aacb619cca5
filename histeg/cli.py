"""Command line: subcommands named after the pipeline steps.

Errors a user can fix are one line on stderr with exit code 2; ``--json``
puts a machine-readable summary on stdout and everything else on stderr.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from histeg import __version__
from histeg.errors import EXIT_BAD_INPUT, HistegError
from histeg.options import RunOptions
from histeg.settings.flags import MORE_VERSIONS, given_flags, option_decorators
from histeg.settings.load import load_settings
from histeg.settings.model import Settings

F = Callable[..., Any]


def _decorated(command: F, decorators: list[Callable[[F], F]]) -> F:
    """Apply option decorators so they appear in ``--help`` in the order listed."""
    for decorator in reversed(decorators):
        command = decorator(command)
    return command


def run_options(command: F) -> F:
    """The options every pipeline step shares."""
    return _decorated(command, [click.argument(MORE_VERSIONS, nargs=-1, metavar="[REV]..."), *option_decorators("run")])


def trace_options(command: F) -> F:
    """How the versions are run under the tracer (instrument, analyze, compute)."""
    return _decorated(command, option_decorators("trace"))


def target_options(command: F) -> F:
    """How divergences become ranked testing targets (compute)."""
    return _decorated(command, option_decorators("target"))


def checked_settings(params: dict[str, Any]) -> Settings:
    """The settings of this command line, every one checked: a bad one stops the run before any work."""
    settings = load_settings(given_flags(click.get_current_context(), params))
    if settings.python is not None:
        from histeg.envs.interpreter import user_interpreter

        user_interpreter(str(settings.python), needs_pytest=settings.run_tests)
    return settings


def build_options(params: dict[str, Any]) -> RunOptions:
    return RunOptions.of(checked_settings(params))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="histeg")
def cli() -> None:
    """histeg: what to test after each change of a Python project."""


def _step_command(step: str, doc: str, traced: bool = False, ranked: bool = False) -> None:
    def command(**params: Any) -> None:
        from histeg.pipeline import run_command

        sys.exit(run_command(build_options(params), until=step))

    command.__doc__ = doc
    decorated: F = command
    if ranked:
        decorated = target_options(decorated)
    if traced:
        decorated = trace_options(decorated)
    cli.command(name=step)(run_options(decorated))


_step_command("extract", "Step 1: history.json, snapshots and file-level changes.")
_step_command("build", "Step 2: run each version's build command (after extracting).")
_step_command("instrument", "Step 3: trace configuration, function table and static call graph per version.", traced=True)
_step_command("analyze", "Steps 4 and 5: syntax changes, and traces of each version's entry points.", traced=True)
_step_command("compute", "Every step: divergences mapped to syntax changes, ranked testingTargets.json per version.", traced=True, ranked=True)


@cli.command(name="config")
@run_options
@trace_options
@target_options
def config_command(**params: Any) -> None:
    """The settings compute would use, each with where it came from: default, a file, or a flag (--json: as JSON)."""
    from histeg.settings.show import settings_json, settings_text

    settings = checked_settings(params)
    if settings.json:
        click.echo(json.dumps(settings_json(settings), indent=2))
    else:
        click.echo(settings_text(settings), nl=False)


@cli.command()
@click.option("--dir", "directory", type=click.Path(path_type=Path), help="Where to build the sample repository and results (default: a new temporary directory).")
@click.option("--sample", default="casino", show_default=True, help="Which bundled sample repository.")
@click.option("--json", "json_output", is_flag=True, help="Print a JSON summary on stdout.")
def demo(directory: Path | None, sample: str, json_output: bool) -> None:
    """Build a bundled sample repository and run the pipeline on it."""
    from histeg.demo import run_demo

    run_demo(directory, sample, json_output)


def main(argv: list[str] | None = None) -> None:
    try:
        cli.main(args=argv, prog_name="histeg", standalone_mode=False)
    except HistegError as exc:
        click.echo(f"histeg: error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("histeg: interrupted", err=True)
        sys.exit(130)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_BAD_INPUT)
    except KeyboardInterrupt:
        click.echo("histeg: interrupted", err=True)
        sys.exit(130)
    sys.exit(0)


from histeg.trace_cli import exec_command, trace  # noqa: E402

cli.add_command(trace)
cli.add_command(exec_command)

from histeg.syntax.command import diff  # noqa: E402

cli.add_command(diff)
