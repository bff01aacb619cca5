"""Settings from layers, weakest first: the table's defaults, the user's file, the flags.

Everything is checked here, before any work starts: an unknown key (with the
closest known one), a value of the wrong type or out of range, options that
contradict each other. Each error is one line naming the setting and its file
or flag.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from histeg.errors import HistegError
from histeg.settings.files import read_toml_table, user_file
from histeg.settings.kinds import Invalid
from histeg.settings.model import DEFAULT, Settings
from histeg.settings.table import BY_KEY, OPTIONS, Option


@dataclass(frozen=True)
class FlagValue:
    """A flag the user typed: ``raw`` as click parsed it, or (``preset``) a value already typed: a preset's
    (``--no-tests``) or a Python argument's."""

    flag: str
    raw: Any
    preset: bool = False


def option_for(key: str, origin: str) -> Option:
    """The option a file's key names; an unknown key, or a flag's, is an error naming the file."""
    option = BY_KEY.get(key)
    if option is None:
        close = difflib.get_close_matches(key, [o.key for o in OPTIONS if o.in_file], n=1)
        hint = f"; did you mean '{close[0]}'?" if close else "; 'histeg config --help' lists the settings"
        raise HistegError(f"{origin}: unknown setting '{key}'{hint}")
    if not option.in_file:
        flags = " or ".join([*option.option_flags, *(max(p.flags, key=len) for p in option.presets)])
        raise HistegError(f"{origin}: '{key}' cannot be set in a file, only with {flags}")
    return option


def convert(option: Option, raw: Any, origin: str, from_flag: bool = False) -> Any:
    """The typed value of ``raw``, read from a file or (``from_flag``) as click parsed a flag."""
    try:
        return option.kind.from_flag(raw) if from_flag else option.kind.from_file(raw)
    except Invalid as exc:
        if exc.complete:
            raise HistegError(f"{origin}: {exc.expected}") from None
        shown = list(raw) if isinstance(raw, tuple) else raw
        raise HistegError(f"{origin}: setting '{option.key}' must be {exc.expected}, not {shown!r}") from None


def load_settings(flags: Mapping[str, FlagValue] | None = None, cwd: Path | None = None, read_file: bool = True) -> Settings:
    """``flags`` by option key. The file is ``--config``'s, else ``./histeg.toml`` (in ``cwd``) when
    ``read_file``; without it, only defaults and flags count (the demo's own settings)."""
    flags = flags or {}
    values: dict[str, Any] = {option.key: option.default for option in OPTIONS}
    origins: dict[str, str] = {}
    given = flags.get("config")
    explicit = None if given is None else given.raw if given.preset else convert(BY_KEY["config"], given.raw, given.flag, from_flag=True)
    path = user_file(explicit, cwd) if read_file or explicit is not None else None
    if path is not None:
        values["config"], origins["config"] = path, given.flag if given is not None else DEFAULT
        for key, raw in read_toml_table(path).items():
            values[key] = convert(option_for(key, str(path)), raw, str(path))
            origins[key] = str(path)
    for key, value in flags.items():
        if key != "config":
            values[key] = value.raw if value.preset else convert(BY_KEY[key], value.raw, value.flag, from_flag=True)
            origins[key] = value.flag
    _check_together(values, origins)
    return Settings(**{option.name: values[option.key] for option in OPTIONS}, origins=origins)


def python_arguments(values: Mapping[str, Any]) -> dict[str, FlagValue]:
    """Keyword arguments of the Python API (``build_timeout=60``), checked like a file's keys and taking
    precedence like flags; ``Path`` and tuples are accepted where a file has text and lists."""
    names = {option.name: option for option in OPTIONS}
    found: dict[str, FlagValue] = {}
    for name, raw in values.items():
        option = names.get(name)
        origin = f"argument {name}"
        if option is None:
            close = difflib.get_close_matches(name, list(names), n=1)
            raise HistegError(f"{origin}: unknown setting{f'; did you mean {close[0]!r}?' if close else ''}")
        plain = str(raw) if isinstance(raw, Path) else list(raw) if isinstance(raw, (tuple, set, frozenset)) else raw
        found[option.key] = FlagValue(origin, convert(option, plain, origin), preset=True)
    return found


def default_settings() -> Settings:
    """The table's defaults alone."""
    return load_settings(read_file=False)


def _check_together(values: Mapping[str, Any], origins: Mapping[str, str]) -> None:
    if values["repr-types"] and values["values"] != "repr":
        raise HistegError(f"{origins.get('repr-types', DEFAULT)}: setting 'repr-types' needs values = \"repr\"")
