"""The step commands (extract … compute) and ``histeg config``: options from the settings table, work by ``Project``."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import click
import orjson

from histeg.cli.sections import SectionedCommand
from histeg.settings.flags import MORE_VERSIONS, given_flags, option_decorators
from histeg.settings.load import load_settings
from histeg.settings.model import Settings

F = Callable[..., Any]

STEP_HELP = {
    "extract": "Step 1: history.json, snapshots and file-level changes.",
    "build": "Step 2: each version's environment and build command (after extracting).",
    "instrument": "Step 3: trace configuration, function table and static call graph per version.",
    "analyze": "Steps 4 and 5: syntax changes, and traces of each version's entry points.",
    "compute": "Every step: divergences mapped to syntax changes, ranked testingTargets.json per version.",
}
TRACED = ("instrument", "analyze", "compute")
RANKED = ("compute",)


def _decorated(command: F, group: str) -> F:
    """Apply a group's option decorators so they appear in ``--help`` in the table's order."""
    for decorator in reversed(option_decorators(group)):  # type: ignore[arg-type]  # the group names the table's literal groups
        command = decorator(command)
    return command


def _run_options(command: F) -> F:
    return click.argument(MORE_VERSIONS, nargs=-1, metavar="[REV]...")(_decorated(command, "run"))


def checked_settings(params: dict[str, Any]) -> Settings:
    """The settings of this command line, every one checked: a bad one stops the run before any work."""
    settings = load_settings(given_flags(click.get_current_context(), params))
    if settings.python is not None:
        from histeg.envs.interpreter import user_interpreter

        user_interpreter(str(settings.python), needs_pytest=settings.run_tests)
    return settings


def emit_json(summary: dict[str, Any]) -> None:
    sys.stdout.write(orjson.dumps(summary).decode() + "\n")


def _step_command(step: str) -> click.Command:
    def command(**params: Any) -> None:
        from histeg.console import Console
        from histeg.project import Project

        settings = checked_settings(params)
        console = Console(settings.verbosity)
        run = Project.of(settings).compute(until=step, console=console)
        if run.failed:
            console.info(f"{len(run.failed)} version(s) failed: " + ", ".join(str(i) for i in sorted(run.failed)))
        if settings.json:
            emit_json(run.to_json())
        sys.exit(run.exit_code)

    command.__doc__ = STEP_HELP[step]
    decorated: F = command
    if step in RANKED:
        decorated = _decorated(decorated, "target")
    if step in TRACED:
        decorated = _decorated(decorated, "trace")
    return click.command(name=step, cls=SectionedCommand)(_run_options(decorated))


def step_commands() -> list[click.Command]:
    return [_step_command(step) for step in STEP_HELP]


def _config(**params: Any) -> None:
    """The settings compute would use, each with where it came from: default, a file, or a flag (--json: as JSON)."""
    from histeg.settings.show import settings_json, settings_text

    settings = checked_settings(params)
    if settings.json:
        click.echo(json.dumps(settings_json(settings), indent=2))
    else:
        click.echo(settings_text(settings), nl=False)


config_command = click.command(name="config", cls=SectionedCommand)(_run_options(_decorated(_decorated(_config, "target"), "trace")))
