"""Standard-library values are recorded by value, read through their own accessors: no project hook runs."""

from __future__ import annotations

import array
import collections
import datetime
import decimal
import fractions
import ipaddress
import pathlib
import re
import uuid
from typing import Any

import pytest

from histeg.tracing.value_ids import ValueIds
from histeg.tracing.values import Abstraction

ABSTRACTION = Abstraction(root="/srv/run")


class Paris(datetime.tzinfo):
    """A project's time zone: its methods must never run; its state (the name) is what is seen."""

    def __init__(self, name: str) -> None:
        self.name = name

    def utcoffset(self, dt: Any) -> datetime.timedelta:
        raise AssertionError("utcoffset called")

    def tzname(self, dt: Any) -> str:
        raise AssertionError("tzname called")

    def __repr__(self) -> str:
        raise AssertionError("repr called")


UTC = datetime.timezone.utc


def _named(cls: type) -> str:
    """pathlib's classes live in ``pathlib`` on 3.12 and in ``pathlib._local`` on 3.13."""
    return f"{cls.__module__}.{cls.__qualname__}"


# (value, an unequal value of the same type, the expected type name, the expected text)
CASES: list[tuple[Any, Any, str, str]] = [
    (datetime.datetime(2024, 2, 1, 9, 30), datetime.datetime(2024, 2, 2, 9, 30), "datetime.datetime", "2024-02-01T09:30:00"),
    (datetime.datetime(2024, 2, 1, 9, 30, 0, 5, tzinfo=UTC), datetime.datetime(2024, 2, 1, 9, 30, 0, 6, tzinfo=UTC), "datetime.datetime",
     "2024-02-01T09:30:00.000005+00:00 UTC"),
    (datetime.datetime(2021, 11, 7, 1, 30, fold=1), datetime.datetime(2021, 11, 7, 1, 30), "datetime.datetime", "2021-11-07T01:30:00 fold=1"),
    (datetime.time(1, 2, tzinfo=Paris("Europe/Paris")), datetime.time(1, 2, tzinfo=Paris("Europe/Rome")), "datetime.time",
     f"01:02:00 tz={__name__}.Paris{{name='Europe/Paris'}}"),
    (datetime.datetime(2024, 2, 1, tzinfo=Paris("Europe/Paris")), datetime.datetime(2024, 2, 1, tzinfo=Paris("Europe/Rome")),
     "datetime.datetime", f"2024-02-01T00:00:00 tz={__name__}.Paris{{name='Europe/Paris'}}"),
    (datetime.date(2024, 2, 1), datetime.date(2024, 2, 2), "datetime.date", "2024-02-01"),
    (datetime.time(23, 59, 1), datetime.time(23, 59, 2), "datetime.time", "23:59:01"),
    (datetime.timedelta(days=1, seconds=3), datetime.timedelta(days=1, seconds=4), "datetime.timedelta", "days=1, seconds=3, microseconds=0"),
    (datetime.timezone(datetime.timedelta(hours=2), "CEST"), datetime.timezone(datetime.timedelta(hours=1), "CEST"), "datetime.timezone",
     "days=0, seconds=7200, microseconds=0, name='CEST'"),
    (decimal.Decimal("1.10"), decimal.Decimal("1.1"), "decimal.Decimal", "1.10"),
    (fractions.Fraction(3, 4), fractions.Fraction(3, 5), "fractions.Fraction", "3/4"),
    (uuid.UUID(int=7), uuid.UUID(int=8), "uuid.UUID", "00000000-0000-0000-0000-000000000007"),
    (pathlib.PurePosixPath("/srv/run/data//a/./b.txt"), pathlib.PurePosixPath("/srv/run/data/b.txt"), _named(pathlib.PurePosixPath),
     "'<root>/data/a/b.txt'"),
    (pathlib.Path("/srv/run/x") / "y", pathlib.Path("/srv/run/x/z"), _named(pathlib.PosixPath), "'<root>/x/y'"),
    (ipaddress.ip_address("10.0.0.1"), ipaddress.ip_address("10.0.0.2"), "ipaddress.IPv4Address", "10.0.0.1"),
    (ipaddress.ip_address("::1"), ipaddress.ip_address("::2"), "ipaddress.IPv6Address", "::1"),
    (ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_network("10.0.0.0/16"), "ipaddress.IPv4Network", "10.0.0.0/8"),
    (re.compile(r"a+b", re.IGNORECASE), re.compile(r"a+b"), "re.Pattern", "'a+b', flags=34"),
    (range(1, 9, 2), range(1, 9, 3), "range", "1, 9, 2"),
    (slice(1, None, -1), slice(2, None, -1), "slice", "1, None, -1"),
    (array.array("i", [1, 2]), array.array("i", [1, 3]), "array.array", "'i', [1, 2]"),
    (collections.deque([1, "a"], maxlen=3), collections.deque([1, "b"], maxlen=3), "collections.deque", "[1, 'a'], maxlen=3"),
    (b"ab", b"ac", "bytes", "b'ab'"),
    (bytearray(b"ab"), bytearray(b"ac"), "bytearray", "b'ab'"),
    (memoryview(b"xy"), memoryview(b"xz"), "memoryview", "b'xy', format='B'"),
    (1 + 2j, 1 + 3j, "complex", "(1+2j)"),
]


@pytest.mark.parametrize(("value", "other", "type_name", "text"), CASES, ids=[case[2] + f"-{n}" for n, case in enumerate(CASES)])
def test_a_standard_value_is_recorded_by_value(value: Any, other: Any, type_name: str, text: str) -> None:
    assert ABSTRACTION.abstract(value) == (type_name, text)
    assert ABSTRACTION.abstract(other) != ABSTRACTION.abstract(value)  # two unequal values never look alike
    assert not ABSTRACTION.constant(type(value))  # so a value id is never shared by the whole type


def test_equal_values_cached_by_value_keep_apart_what_their_texts_tell_apart() -> None:
    """Naive datetimes are cached by value: a fold (equal in comparisons) and an aware twin still get ids of their own."""
    ids = ValueIds(lambda *_: None, Abstraction())
    plain, folded = datetime.datetime(2021, 11, 7, 1, 30), datetime.datetime(2021, 11, 7, 1, 30, fold=1)
    assert plain == folded
    first = ids.id_of(plain)
    assert ids.id_of(datetime.datetime(2021, 11, 7, 1, 30)) == first
    assert ids.id_of(folded) != first
    assert ids.id_of(plain.replace(tzinfo=UTC)) != ids.id_of(plain.replace(tzinfo=datetime.timezone(datetime.timedelta(0), "Z")))


def test_a_standard_value_inside_a_container_and_an_object_shows_its_value() -> None:
    class Booking:
        def __init__(self) -> None:
            self.day = datetime.date(2024, 2, 1)
            self.price = decimal.Decimal("9.90")

    assert ABSTRACTION.abstract([datetime.date(2024, 2, 1)])[1] == "[datetime.date(2024-02-01)]"
    assert ABSTRACTION.abstract(Booking())[1] == "{day=datetime.date(2024-02-01), price=decimal.Decimal(9.90)}"  # 9.90 alone: a float?


class Touchy(datetime.datetime):
    """A project subclass: every hook it could offer raises, so the abstraction must read the base type's state."""

    def __repr__(self) -> str:
        raise AssertionError("repr called")

    def __str__(self) -> str:
        raise AssertionError("str called")

    def __eq__(self, other: object) -> bool:
        raise AssertionError("eq called")

    def __hash__(self) -> int:
        raise AssertionError("hash called")

    @property
    def year(self) -> int:  # type: ignore[override]
        raise AssertionError("property called")

    def isoformat(self, *args: Any) -> str:  # type: ignore[override]
        raise AssertionError("isoformat called")


class Money(decimal.Decimal):
    def __str__(self) -> str:
        raise AssertionError("str called")

    def __repr__(self) -> str:
        raise AssertionError("repr called")


class Stamp(pathlib.PurePosixPath):
    @property
    def parts(self) -> tuple[str, ...]:  # type: ignore[override]
        raise AssertionError("property called")

    def __str__(self) -> str:
        raise AssertionError("str called")


def test_a_project_subclass_shows_the_base_state_and_its_own_attributes_and_no_hook_runs() -> None:
    stamp = Touchy(2024, 2, 1, 8)
    stamp.source = "clock"
    assert ABSTRACTION.abstract(stamp) == (f"{__name__}.Touchy", "2024-02-01T08:00:00 {source='clock'}")
    assert ABSTRACTION.abstract(Touchy(2024, 2, 2, 8))[1] != ABSTRACTION.abstract(Touchy(2024, 2, 1, 8))[1]
    assert ABSTRACTION.abstract(Money("2.50")) == (f"{__name__}.Money", "2.50")
    assert ABSTRACTION.abstract(datetime.datetime(2024, 1, 1, tzinfo=Paris("Europe/Paris")))[1].endswith("{name='Europe/Paris'}")
    seen = ABSTRACTION.abstract(Stamp("/srv/run/a"))[1]  # a subclass of a type written in Python: its slots, read directly
    assert seen is not None and "<root>/a" in seen


def test_no_standard_value_fails_to_abstract() -> None:
    """A failure would be recorded as ``<abstraction failed>``, the same text for every value: blind again."""
    for value, *_ in CASES:
        type_name, text = ABSTRACTION.abstract(value)
        assert text is not None and "abstraction failed" not in text, (type_name, text)
