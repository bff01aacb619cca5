"""Recorded values rebuilt as Python source (histeg.generate.literals), checked by round trips through the real tracer.

A carved test must repeat a recorded call exactly: each value here is abstracted by the tracer's own ``Abstraction``,
rebuilt by ``literal`` and evaluated, and must come back equal, of the same type and with the same ``repr``. What the
record does not hold in full (a capped, redacted or path-neutral text, an object shown by its type) must be refused
with its reason, never guessed.
"""

from __future__ import annotations

import array
import collections
import datetime
import decimal
import fractions
import ipaddress
import math
import pathlib
import re
import uuid
import zoneinfo

import pytest

from histeg.generate import literals
from histeg.generate.literals import BY_TYPE, CAPPED, PATH_NEUTRAL, REDACTED, UNREADABLE, Expression, Uncarvable
from histeg.tracing.values import Abstraction, temporary_directory

TRACER = Abstraction()
COLOR = Expression("Color", frozenset({"from pkg import Color"}))
DAY = datetime.date(2024, 1, 1)
PARIS = zoneinfo.ZoneInfo("Europe/Paris")
EST = datetime.timezone(datetime.timedelta(hours=-5), "EST")
PLUS_TWO = datetime.timezone(datetime.timedelta(hours=2))


def stable_id(value: object) -> str:
    """A test id without memory addresses: xdist's workers must collect the same ids."""
    return re.sub(r" at 0x[0-9a-f]+", "", repr(value))


class Plain:
    """An object of the project: below the top of a value it shows as its type name alone."""


def types(name: str) -> Expression:
    """The importable type references of a small project with one enum, ``pkg.Color``."""
    if name == "pkg.Color":
        return COLOR
    raise Uncarvable(BY_TYPE, name)


def evaluate(expression: Expression) -> object:
    namespace: dict[str, object] = {}
    for line in sorted(expression.imports):
        exec(line, namespace)  # noqa: S102 - the import lines literal() wrote, checked here
    return eval(expression.source, namespace)


def round_trip(value: object) -> object:
    return evaluate(literals.literal(*TRACER.abstract(value), types))


def refusal(value: object, abstraction: Abstraction = TRACER) -> str:
    with pytest.raises(Uncarvable) as caught:
        literals.literal(*abstraction.abstract(value), types)
    return caught.value.reason


@pytest.mark.parametrize(
    "value",
    [
        *(0, -7, True, None, 1.5, -0.0, float("inf"), -float("inf"), 1 + 2j, 10**30),
        *("", 'it\'s "quoted", with, commas\nand a newline', "a: b, c", b"\x00ab'", b""),
        *([], (), (1,), {}, set(), frozenset(), frozenset({1, 2}), {3, 1, 2}, [1, [2, (3,)], {"a": {1, 2}}], {"k": (1.5, None)}),
        *([float("inf"), DAY], [-float("inf"), DAY], [1 + 2j, set(), frozenset(), (), DAY], {"a: b, c": DAY, "d": (DAY,)}),
        *(DAY, datetime.datetime(2024, 2, 1, 9, 30), datetime.datetime(2021, 11, 7, 1, 30, fold=1)),
        *(datetime.datetime(2024, 2, 1, 9, 30, 0, 5, tzinfo=datetime.UTC), datetime.datetime(2024, 2, 1, tzinfo=EST)),
        datetime.datetime(2024, 2, 1, tzinfo=PLUS_TWO),
        *(datetime.datetime(2024, 7, 1, 9, 30, tzinfo=PARIS), datetime.datetime(2024, 1, 1, tzinfo=PARIS)),
        *(datetime.time(23, 59, 1, 7), datetime.time(1, 2, tzinfo=datetime.UTC), datetime.time(1, 2, tzinfo=PARIS)),
        *(datetime.timedelta(days=1, seconds=3, microseconds=7), datetime.timedelta(-1), datetime.UTC),
        *(PLUS_TWO, EST),
        *(decimal.Decimal("1.50"), decimal.Decimal("-0"), fractions.Fraction(1, 3), fractions.Fraction(-4, 2)),
        *(uuid.UUID("12345678-1234-5678-1234-567812345678"), pathlib.PurePosixPath("a/b"), pathlib.PurePosixPath("/x"), PARIS),
        *(ipaddress.ip_address("10.0.0.1"), ipaddress.ip_address("::1"), ipaddress.ip_network("1.0.0.0/8")),
        *(ipaddress.ip_interface("1.2.3.4/24"), collections.deque([1, "a"]), collections.deque([1, 2], maxlen=3), collections.deque()),
        *(range(1, 10, 2), range(5), slice(1, None, 2), slice(None), bytearray(b"ab"), array.array("i", [1, 2]), array.array("d")),
        *([DAY, decimal.Decimal(2)], {"d": datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)}, (uuid.UUID(int=5),)),
        *({fractions.Fraction(1, 2)}, [pathlib.PurePosixPath("a")], [datetime.datetime(2024, 7, 1, tzinfo=PARIS)]),
        *([collections.deque([1])], [bytearray(b"a")], [ipaddress.ip_network("::/0")], [zoneinfo.ZoneInfo("UTC")]),
        *([range(3)], [slice(1, 2)], [datetime.timedelta(1)], [datetime.UTC]),
        *([collections.deque([1], maxlen=2)], [array.array("i", [1])], [re.compile("a")]),
    ],
    ids=stable_id,
)
def test_a_recorded_value_is_rebuilt_exactly(value: object) -> None:
    got = round_trip(value)
    assert type(got) is type(value)
    assert got == value
    assert repr(got) == repr(value)


@pytest.mark.parametrize("pattern", [re.compile(r"a+b", re.IGNORECASE), re.compile(rb"x\d"), re.compile("", re.MULTILINE | re.VERBOSE)])
def test_a_pattern_is_rebuilt_with_its_flags(pattern: re.Pattern) -> None:
    got = round_trip(pattern)
    assert isinstance(got, re.Pattern)
    assert (got.pattern, got.flags) == (pattern.pattern, pattern.flags)


def test_nan_is_written_as_a_call() -> None:
    assert literals.literal("float", "nan", types) == Expression("float('nan')")
    got = round_trip([float("nan"), DAY])
    assert isinstance(got, list) and math.isnan(got[0]) and got[1] == DAY


REFUSED = {
    CAPPED: ("x" * 121, b"x" * 121, list(range(70)), set(range(70)), [[[[1]]]], collections.deque(range(70))),
    PATH_NEUTRAL: (temporary_directory() + "/data.csv", [temporary_directory() + "/data.csv"]),
    BY_TYPE: ([Plain()], Plain(), object()),
}


@pytest.mark.parametrize(("value", "reason"), [(value, reason) for reason, values in REFUSED.items() for value in values], ids=stable_id)
def test_what_the_record_does_not_hold_is_refused(value: object, reason: str) -> None:
    assert refusal(value) == reason


@pytest.mark.parametrize("key", [None, b"a redaction key"])
def test_a_secret_is_refused(key: bytes | None) -> None:
    assert refusal({"password": "hunter2", "user": "ada"}, Abstraction(key=key)) == REDACTED
    assert refusal("https://ada:hunter2@example.org/", Abstraction(key=key)) == REDACTED


RECORDS_REFUSED = [
    *(("datetime.date", "not a date", UNREADABLE), ("pkg.Thing", "garbage", UNREADABLE), ("list", "[1, 2", UNREADABLE)),
    *(
        ("pkg.Shade", "pkg.Shade.DARK", BY_TYPE),
        ("pkg.Thing", "{a=1}", BY_TYPE),
        ("datetime.time", "01:02:00 tz=pkg.Zone{name='X'}", BY_TYPE),
    ),
]


@pytest.mark.parametrize(("type_name", "text", "reason"), RECORDS_REFUSED)
def test_an_unreadable_record_is_refused_with_its_reason(type_name: str, text: str, reason: str) -> None:
    with pytest.raises(Uncarvable) as caught:
        literals.literal(type_name, text, types)
    assert caught.value.reason == reason


def test_an_enum_member_is_named_through_its_type() -> None:
    assert literals.literal("pkg.Color", "pkg.Color.RED", types) == Expression("Color.RED", COLOR.imports)
    assert literals.literal("list", "[pkg.Color(pkg.Color.RED), 1]", types) == Expression("[Color.RED, 1]", COLOR.imports)


def test_object_fields_rebuilds_what_it_can_and_says_why_not() -> None:
    rebuilt, refused = literals.object_fields("{a=1, b='x, y', c=pkg.Other, d=pkg.Color(pkg.Color.RED)}", types)
    assert {name: evaluate(expression) for name, expression in rebuilt.items() if name != "d"} == {"a": 1, "b": "x, y"}
    assert rebuilt["d"] == Expression("Color.RED", COLOR.imports)
    assert refused == {"c": BY_TYPE}
    assert literals.object_fields("{a=1, \u2026+3}", types) == ({"a": Expression("1")}, {"\u2026": CAPPED})
    assert literals.object_fields(None, types) == ({}, {})


def test_exception_arguments_are_its_args() -> None:
    assert literals.exception_arguments("('bad', 3)", types) == Expression("('bad', 3)")
    assert literals.exception_arguments(TRACER.abstract(KeyError("k"))[1], types) == Expression("('k',)")
    assert literals.exception_arguments("('bad', pkg.Other)", types) is None
    assert literals.exception_arguments(None, types) is None


def test_exception_arguments_are_read_before_its_fields() -> None:
    error = ValueError("bad")
    error.code = 3  # type: ignore[attr-defined]  # recorded as "('bad',) {code=3}"
    assert literals.exception_arguments(TRACER.abstract(error)[1], types) == Expression("('bad',)")


def test_an_attribute_holding_a_value_written_by_its_fields_makes_the_object_unreadable() -> None:
    """Traces of the first values format wrote a standard-library value held in an attribute without its type
    (``wait=days=1, seconds=0, ...``): no field is made up of its parts, the whole object is refused."""
    with pytest.raises(Uncarvable) as caught:
        literals.object_fields("{wait=days=1, seconds=0, microseconds=0}", types)
    assert caught.value.reason == literals.UNREADABLE


def test_standard_values_held_in_attributes_are_rebuilt_exactly() -> None:
    """The tracer writes them with their type (``price=decimal.Decimal(1.5)``): a Decimal never reads back as a float."""
    fields = {"price": decimal.Decimal("1.5"), "wait": datetime.timedelta(days=1, seconds=3), "at": datetime.date(2024, 2, 1)}
    vars(thing := Plain()).update(fields)
    rebuilt, refused = literals.object_fields(TRACER.abstract(thing)[1], types)
    assert set(rebuilt) | set(refused) == set(fields)
    assert all(repr(evaluate(expression)) == repr(fields[name]) for name, expression in rebuilt.items())


def test_a_capped_object_keeps_the_attributes_written_whole_before_the_cut() -> None:
    """The tracer caps a whole object's text: what was written in full is kept, the cut attribute and the rest are capped."""
    vars(thing := Plain()).update({"a_count": 57, "b_alphabet": [str(n) for n in range(57)], "c_zeta": 1})
    rebuilt, refused = literals.object_fields(TRACER.abstract(thing)[1], types)
    assert {name: evaluate(expression) for name, expression in rebuilt.items()} == {"a_count": 57}
    assert refused == {"b_alphabet": literals.CAPPED, "\u2026": literals.CAPPED}
