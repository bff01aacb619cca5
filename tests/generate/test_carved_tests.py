"""Carved calls written as pytest files run as written: receivers rebuilt without ``__init__``, positional-only,
variadic and keyword arguments, a class method, an expected exception with its arguments, an object's attributes.

Each file is run with plain pytest against a small real module: what it asserts is what that module returns, so the
file passes; the same calls asserting another result fail, so a carved test can tell the versions apart."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from histeg.generate.carved_tests import carved_file
from histeg.generate.carving import Candidate, CarvedCall
from histeg.generate.literals import Expression
from histeg.records.divergences import EntryKey

SHOP = """
import datetime


class Cart:
    def __init__(self) -> None:
        raise AssertionError("carving never runs __init__")

    def total(self, discount=0):
        return sum(self.prices) - discount

    @classmethod
    def empty_label(cls, currency):
        return f"0 {currency}"


class Receipt:
    def __init__(self, total, day):
        self.total, self.day = total, day


def receipt(total, /, *extra, day, **notes):
    return Receipt(total + sum(extra), day)


def refund(amount):
    raise ValueError("no refund", amount)
"""


def call(qualname: str, **parts: object) -> CarvedCall:
    entry = EntryKey("pytest", "tests/test_shop.py::test_it", "call", "tests.test_shop:test_it", 0)
    candidate = Candidate("shop:Cart", f"shop:{qualname}", entry, (0,), 1, {}, ("returned", None))
    fields: dict[str, object] = {
        "candidate": candidate,
        "module": "shop",
        "qualname": qualname,
        "receiver": None,
        "state": {},
        "owner": None,
        "positional": (),
        "keywords": (),
        "expected": None,
        "expected_type": None,
        "expected_fields": {},
        "raises": None,
        "raised_args": None,
    }
    return CarvedCall(**{**fields, **parts})  # type: ignore[arg-type]  # the parts of a dataclass, by name


CART = Expression("Cart", frozenset({"from shop import Cart"}))
DAY = Expression("datetime.date(2024, 2, 1)", frozenset({"import datetime"}))


def calls(total: int, label: str, refunded: int) -> list[CarvedCall]:
    return [
        call(
            "Cart.total",
            receiver=Expression("Cart.__new__(Cart)", CART.imports),
            state={"prices": Expression("[3, 4]")},
            keywords=(("discount", Expression("2")),),
            expected=Expression(str(total)),
        ),
        call("Cart.empty_label", owner=CART, keywords=(("currency", Expression("'EUR'")),), expected=Expression(repr(label))),
        call(
            "receipt",
            positional=(Expression("10"), Expression("*(1, 2)")),
            keywords=(("day", DAY), ("**", Expression("{'note': 'x'}"))),
            expected_type="shop.Receipt",
            expected_fields={"total": Expression("13"), "day": DAY},
        ),
        call("refund", keywords=(("amount", Expression(str(refunded))),), raises="ValueError", raised_args=Expression("('no refund', 5)")),
    ]


def run(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "shop.py").write_text(SHOP)
    (tmp_path / "test_carved.py").write_text(source)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "test_carved.py"],
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_recorded_results_pass(tmp_path: Path) -> None:
    file = carved_file("shop:Cart", 1, calls(5, "0 EUR", 5), "Carved for a test.\n")
    assert file.name == "test_01_shop_cart.py"
    assert [name for name, _ in file.tests] == [
        "test_cart_total_keeps_old_result_1",
        "test_cart_empty_label_keeps_old_result_2",
        "test_receipt_keeps_old_result_3",
        "test_refund_raises_old_exception_4",
    ]
    for banned in ("pickle", "base64", "eval(", "exec("):
        assert banned not in file.source
    result = run(tmp_path, file.source)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 passed" in result.stdout


@pytest.mark.parametrize(("total", "label", "refunded"), [(6, "0 EUR", 5), (5, "0 USD", 5), (5, "0 EUR", 6)])
def test_another_result_fails(tmp_path: Path, total: int, label: str, refunded: int) -> None:
    result = run(tmp_path, carved_file("shop:Cart", 1, calls(total, label, refunded), "Carved for a test.\n").source)
    assert result.returncode == 1 and "1 failed, 3 passed" in result.stdout, result.stdout
