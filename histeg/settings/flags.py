"""The command line's options, generated from the table, and the flags a user typed, read back by option key."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import click
from click.core import ParameterSource

from histeg.settings.kinds import to_json
from histeg.settings.load import FlagValue
from histeg.settings.table import OPTIONS, Group, Heading, Option

F = Callable[..., Any]
MORE_VERSIONS = "more_versions"
"""The positional revisions after the options: more ``--versions``."""


def _shown_default(option: Option) -> str | None:
    if option.default_text is not None:
        return option.default_text
    value = to_json(option.default)
    if value in (None, False, ()) or option.kind.is_flag:
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return " ".join(value) if isinstance(value, list) else str(value)


def _help(option: Option) -> str:
    shown = _shown_default(option)
    return f"{option.help}  [default: {shown}]" if shown else option.help


def decorators_of(option: Option) -> list[Callable[[F], F]]:
    found: list[Callable[[F], F]] = []
    if option.option_flags:
        shape: dict[str, Any] = {"is_flag": True} if option.kind.is_flag else {"multiple": option.kind.multiple}
        # is_flag=False, given explicitly, would make click read a value such as '--weird' as an unknown option
        found.append(
            click.option(*option.option_flags, option.name, metavar=option.metavar or option.kind.metavar, help=_help(option), **shape)
        )
    for preset in option.presets:
        found.append(click.option(*preset.flags, preset.name, is_flag=True, help=preset.help))
    return found


def option_decorators(group: Group) -> list[Callable[[F], F]]:
    """Click options of one group, in the table's order (the order of ``--help``)."""
    return [decorator for option in OPTIONS if option.group == group for decorator in decorators_of(option)]


def param_headings() -> dict[str, Heading]:
    """The ``--help`` section of each click parameter the table makes, presets with their option."""
    return {name: option.section for option in OPTIONS for name in (option.name, *(preset.name for preset in option.presets))}


def given_flags(context: click.Context, params: Mapping[str, Any]) -> dict[str, FlagValue]:
    """The flags typed on the command line, by option key; a preset after its option's own flag wins."""
    typed = {name for name in params if context.get_parameter_source(name) == ParameterSource.COMMANDLINE}
    found: dict[str, FlagValue] = {}
    for option in OPTIONS:
        if option.name in typed:
            found[option.key] = FlagValue(option.option_flags[-1], params[option.name])
        for preset in option.presets:
            if preset.name in typed and params[preset.name]:
                found[option.key] = FlagValue(max(preset.flags, key=len), preset.value, preset=True)
    more = tuple(params.get(MORE_VERSIONS) or ())
    if more:
        earlier = found.get("versions")
        found["versions"] = FlagValue(earlier.flag if earlier else "arguments", (*(earlier.raw if earlier else ()), *more))
    return found
