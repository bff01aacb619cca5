"""The types an option's value may have: how a TOML value or a flag's text becomes a typed value.

A kind raises ``Invalid`` and says nothing about where the value came from;
``histeg.settings.load`` adds the setting's name and its file or flag, so every
message has the same form.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

import msgspec

from histeg.errors import HistegError
from histeg.settings.scaling import Scaling


class Invalid(Exception):
    """A value the kind does not take: ``expected`` says what it should be, unless ``complete``
    (then the message is whole already, as the weights' check words it)."""

    def __init__(self, expected: str, complete: bool = False) -> None:
        super().__init__(expected)
        self.expected = expected
        self.complete = complete


@dataclass(frozen=True)
class Kind:
    """A string: a command, a branch, a URL. The other kinds refine it."""

    multiple = False
    """A repeatable flag, and a list in a file."""
    is_flag = False
    """A flag without a value."""

    @property
    def json_type(self) -> Any:
        """The value's type in JSON, for the schema of the files that record settings."""
        return str

    @property
    def expected(self) -> str:
        return "a string"

    @property
    def metavar(self) -> str | None:
        return None

    def from_file(self, raw: Any) -> Any:
        if not isinstance(raw, str):
            raise Invalid(self.expected)
        return raw

    def from_flag(self, raw: Any) -> Any:
        """``raw`` as click gives it: a string, a tuple of strings (``multiple``), or True (``is_flag``)."""
        return self.from_file(raw)


Text = Kind


@dataclass(frozen=True)
class PathName(Kind):
    """A file or directory; ``~`` is expanded where it is used."""

    @property
    def expected(self) -> str:
        return "a path"

    @property
    def metavar(self) -> str | None:
        return "PATH"

    def from_file(self, raw: Any) -> Path:
        if not isinstance(raw, str) or not raw:
            raise Invalid(self.expected)
        return Path(raw)


@dataclass(frozen=True)
class Day(Kind):
    """A date (``2024-05-01``) or a moment (``2024-05-01T02:00:00+02:00``), kept as ISO 8601 text."""

    @property
    def expected(self) -> str:
        return "a date such as 2024-05-01, or an ISO 8601 date and time"

    @property
    def metavar(self) -> str | None:
        return "DATE"

    def from_file(self, raw: Any) -> str:
        import datetime

        if isinstance(raw, (datetime.date, datetime.datetime)):  # TOML's own dates
            return raw.isoformat()
        if not isinstance(raw, str):
            raise Invalid(self.expected)
        try:
            return (
                datetime.datetime.fromisoformat(raw).isoformat()
                if "T" in raw or " " in raw
                else datetime.date.fromisoformat(raw).isoformat()
            )
        except ValueError:
            raise Invalid(self.expected) from None


@dataclass(frozen=True)
class Whole(Kind):
    minimum: int = 0

    @property
    def json_type(self) -> Any:
        return Annotated[int, msgspec.Meta(ge=self.minimum)]

    @property
    def expected(self) -> str:
        return f"a whole number >= {self.minimum}"

    def from_file(self, raw: Any) -> int:
        if type(raw) is not int or raw < self.minimum:
            raise Invalid(self.expected)
        return raw

    def from_flag(self, raw: Any) -> int:
        try:
            return self.from_file(int(raw))
        except ValueError:
            raise Invalid(self.expected) from None


@dataclass(frozen=True)
class Number(Kind):
    """A number of seconds and the like: above ``minimum``, finite."""

    minimum: float = 0.0

    @property
    def json_type(self) -> Any:
        return float

    @property
    def expected(self) -> str:
        return f"a number > {self.minimum:g}"

    def from_file(self, raw: Any) -> float:
        if type(raw) not in (int, float) or not math.isfinite(raw) or raw <= self.minimum:
            raise Invalid(self.expected)
        return float(raw)

    def from_flag(self, raw: Any) -> float:
        try:
            return self.from_file(float(raw))
        except ValueError:
            raise Invalid(self.expected) from None


@dataclass(frozen=True)
class Boolean(Kind):
    """A switch: ``true``/``false`` in a file, present or absent on the command line."""

    is_flag = True

    @property
    def json_type(self) -> Any:
        return bool

    @property
    def expected(self) -> str:
        return "true or false"

    def from_file(self, raw: Any) -> bool:
        if not isinstance(raw, bool):
            raise Invalid(self.expected)
        return raw

    def from_flag(self, raw: Any) -> bool:
        return True


@dataclass(frozen=True)
class Strings(Kind):
    """A list of strings; one string is a list of one (``run = "echo hi"``), as a repeated flag given once."""

    directories: bool = False
    """Directories of the analysed repository: relative to its root and inside it."""
    multiple = True

    @property
    def json_type(self) -> Any:
        return list[str]

    @property
    def expected(self) -> str:
        if self.directories:
            return "a list of directories relative to the repository root and inside it"
        return "a list of strings"

    def from_file(self, raw: Any) -> tuple[str, ...]:
        items = [raw] if isinstance(raw, str) else raw
        if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
            raise Invalid(self.expected)
        if self.directories and any(PurePosixPath(item).is_absolute() or ".." in PurePosixPath(item).parts for item in items):
            raise Invalid(self.expected)
        return tuple(items)

    def from_flag(self, raw: Any) -> tuple[str, ...]:
        return self.from_file(list(raw))


@dataclass(frozen=True)
class Chosen(Kind):
    """What one choice and several have in common: the names to choose from."""

    choices: tuple[str, ...] = ()

    @property
    def metavar(self) -> str | None:
        return f"[{'|'.join(self.choices)}]"


@dataclass(frozen=True)
class Choice(Chosen):
    @property
    def json_type(self) -> Any:
        return Literal[self.choices]

    @property
    def expected(self) -> str:
        return f"one of {', '.join(self.choices)}"

    def from_file(self, raw: Any) -> str:
        if raw not in self.choices or not isinstance(raw, str):
            raise Invalid(self.expected)
        return raw


@dataclass(frozen=True)
class Choices(Chosen):
    """Several of the choices; kept in the table's order, so the order given does not matter."""

    empty: bool = False
    """An empty list is a value: none of the choices (what it chooses is off)."""
    multiple = True

    @property
    def json_type(self) -> Any:
        return list.__class_getitem__(Literal[self.choices])

    @property
    def expected(self) -> str:
        return f"{'a list of' if self.empty else 'one or more of'} {', '.join(self.choices)}"

    def from_file(self, raw: Any) -> tuple[str, ...]:
        items = [raw] if isinstance(raw, str) else raw
        if (
            not isinstance(items, list)
            or not (items or self.empty)
            or any(item not in self.choices or not isinstance(item, str) for item in items)
        ):
            raise Invalid(self.expected)
        return tuple(choice for choice in self.choices if choice in items)

    def from_flag(self, raw: Any) -> tuple[str, ...]:
        return self.from_file(list(raw))


@dataclass(frozen=True)
class Weights(Kind):
    """``[tool.histeg.scaling]``: the ranking's weights by name; the weights' own check names the unknown one."""

    @property
    def json_type(self) -> Any:
        return dict[str, float]

    @property
    def expected(self) -> str:
        return "a table of weights ([tool.histeg.scaling])"

    def from_file(self, raw: Any) -> Scaling:
        if not isinstance(raw, Mapping):
            raise Invalid(self.expected)
        try:
            return Scaling.from_config(raw)
        except HistegError as exc:
            raise Invalid(str(exc), complete=True) from None


def to_json(value: Any) -> Any:
    """A typed value as JSON: paths as strings, tuples as lists, the weights as their table."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Scaling):
        return value.to_json()
    return value
