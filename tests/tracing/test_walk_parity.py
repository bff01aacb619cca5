"""The C walk of values says what the Python walk (its reference) says, value for value, budget for budget."""

from __future__ import annotations

import datetime
import decimal
import enum
import threading
import uuid
from collections import OrderedDict, namedtuple
from pathlib import PurePosixPath
from typing import Any

import pytest

from histeg.tracing import values
from histeg.tracing.values import MAX_ITEMS, Abstraction

pytestmark = pytest.mark.skipif(not values.native_walk(), reason="the C walk is not built here")


class Plain:
    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


class Slotted:
    __slots__ = ("a", "b", "unset")

    def __init__(self, a: Any, b: Any) -> None:
        self.a = a
        self.b = b


class Both(Plain):
    __slots__ = ("slot",)


class Shade(enum.Enum):
    DARK = 1


class Text(str):
    pass


class Items(list):
    pass


class TokenType(tuple):
    """A lexer's token type: a tuple subclass with attributes of its own, held in the tuples the lexer yields."""

    parent = None


KEYWORD = TokenType(("Keyword",))
KEYWORD.parent = TokenType(())  # type: ignore[misc]


class Broken:
    """A ``__dict__`` descriptor that raises: the walk shows no fields, in C as in Python."""

    @property
    def __dict__(self) -> dict:  # type: ignore[override]
        raise RuntimeError("no dict")


Pair = namedtuple("Pair", "left right")
Token = namedtuple("Token", "type value start end")


def tokens(expression: str) -> list[dict[str, Any]]:
    """A jmespath-like lexer's output: a list of token dicts, as a parser holds it."""
    return [{"type": "unquoted_identifier", "value": part, "start": i, "end": i + len(part)} for i, part in enumerate(expression.split("."))]


def parser_state(expression: str, index: int) -> Plain:
    return Plain(tokenizer=Plain(), _tokens=tokens(expression), _buffer_size=2, _index=index)


class Table(dict):
    """A dict subclass with a field of its own (a registry, say)."""


class Parser:
    def parse(self) -> None:
        pass

    @classmethod
    def create(cls) -> Parser:
        return cls()


class ParseError(ValueError):
    pass


def callables_and_exceptions() -> list[Any]:
    """Classes, functions, bound methods, exceptions, dict and list subclasses: what the C walk shows since it walks them itself."""
    nameless = (lambda: None)
    nameless.__module__ = None  # type: ignore[assignment]
    numbered = (lambda: None)
    numbered.__module__ = 5  # type: ignore[assignment]
    table = Table(a=1, b=OrderedDict(c=[1, 2]))
    table.origin = "registry"  # type: ignore[attr-defined]
    error = ParseError("unexpected token", 7)
    error.token = {"type": "eof"}  # type: ignore[attr-defined]
    error.api_key = "k"  # type: ignore[attr-defined]
    listed = Items([1, {"x": OrderedDict(y=2)}])
    listed.note = "n"  # type: ignore[attr-defined]
    registry = {"functions": {"abs": Parser().parse, "new": Parser.create}, "types": [Parser, ParseError, type]}
    return [
        Parser, type, ParseError, Parser().parse, Parser.create, [].append, nameless, numbered, corpus, table, Table(),
        OrderedDict(a=OrderedDict(b=OrderedDict(c=OrderedDict(d=1)))), [OrderedDict(x=1), {"k": OrderedDict()}], registry,
        Plain(registry=registry, handlers=[Parser().parse]), error, ParseError(), KeyError("k"), [error, (error,)],
        Plain(error=error), listed, [listed], Table({f"k{i}": i for i in range(80)}), ValueError(Table(a=1)),
        {"nested": Table(x=[Table(y=1)])}, RuntimeError(*range(70)), OrderedDict(password="p", user="u"),
    ]


def corpus() -> list[Any]:
    both = Both(x=1)
    both.slot = "s"
    cyclic: list[Any] = [1]
    cyclic.append(cyclic)
    deep: dict[str, Any] = {"a": {"b": {"c": {"d": {"e": 1}}}}}
    noted = Items([1, "a"])
    noted.note = "a list subclass's own field"  # type: ignore[attr-defined]
    return [
        None, True, False, 0, -5, 10**30, 10**200, 1.5, -0.0, float("nan"), 1e308, 2j, "", "x", "a" * 119, "a" * 121, "b" * 500,
        "x\ny'\"", "\u2026 é \U0001f600", b"bytes", b"b" * 200, [], (), {}, [1, "a", None, True, 2.5], (1,), (1, 2),
        {"a": 1, 2: "b", None: [1, 2], (1, 2): {"x": {1, 2}}}, {"": 1}, {"password": "hunter2", "user": "me"},
        {"items": list(range(100))}, list(range(100)), tuple(range(70)), [[[[[1]]]]], deep, cyclic, {1, 2, 3}, frozenset({"a"}),
        Plain(), Plain(a=1, b="two", c=None, d=[1, 2], e=Plain(), f=Shade.DARK, g=len, h=decimal.Decimal("1.5")),
        Plain(api_key="k-1", token="t", name="n"), Plain(**{f"f{i:03d}": i for i in range(80)}), Slotted(1, [1, "x"]),
        Slotted(Plain(), {"k": (1, 2)}), both, Broken(), Shade.DARK, Text("sub"), Items([1, 2]), Pair(1, "x"),
        Token("name", "foo", 0, 3), OrderedDict(a=1), datetime.date(2024, 2, 29), datetime.datetime(2024, 1, 1, 12, 30),
        decimal.Decimal("3.14"), uuid.UUID(int=7), PurePosixPath("/x/y"), ValueError("bad", 3), Plain, len, tokens,
        threading.Lock(), parser_state("foo.bar.baz", 1), parser_state(".".join(f"p{i}" for i in range(30)), 7),
        [Plain(a=1), Slotted(1, 2), Pair(1, 2)], {"token": Token("a", "b", 1, 2)}, [decimal.Decimal(1), datetime.date(2000, 1, 1)],
        {Shade.DARK: Plain()}, [{"a": [{"b": [1, 2]}]}] * 20, KEYWORD, (KEYWORD, "select"), [(KEYWORD, "x")] * 70,
        [noted, [noted]], (Pair(Items([1]), (KEYWORD,)),), *callables_and_exceptions(),
    ]


@pytest.mark.parametrize("key", [None, b"k" * 32])
def test_the_c_walk_answers_as_the_python_walk(key: bytes | None) -> None:
    native = Abstraction(key=key)
    python = Abstraction(key=key, native=False)
    assert native._text != native._walk and python._text == python._walk
    for value in corpus():
        assert native.abstract(value) == python.abstract(value), value
        for budget in (0, 1, 2, 5, MAX_ITEMS):  # the budget runs out at every place a small one can
            spent_c, spent_py = [budget], [budget]
            for depth in (0, 1, 3):
                assert native._text(value, type(value), spent_c, depth) == python._text(value, type(value), spent_py, depth), (value, budget, depth)
                assert spent_c == spent_py


def test_a_walk_in_c_runs_no_project_code() -> None:
    """The Touchy object of the structural tests, walked in C: none of its hooks runs."""
    from tests.tracing.test_values_structural import Touchy

    native = Abstraction()
    assert native._text != native._walk
    assert native.abstract(Touchy()) == Abstraction(native=False).abstract(Touchy())
    assert native.abstract([Touchy(), {"t": Touchy()}]) == Abstraction(native=False).abstract([Touchy(), {"t": Touchy()}])


def test_a_dict_that_changes_size_while_walked_fails_as_in_python() -> None:
    """A walk in Python (a secret's digest) lets another thread run: a dict that changes then is reported, not misread."""
    shared: dict[str, Any] = {"password": "x", "other": 1}

    class Growing(Abstraction):
        def secret(self, value: Any) -> str:
            shared[f"k{len(shared)}"] = 0
            return "<secret>"

    for native in (True, False):
        shared.clear()
        shared.update({"password": "x", "other": 1})
        assert Growing(native=native).abstract(shared) == ("dict", "<abstraction failed: RuntimeError>")


def test_texts_neutral_changes_or_whose_repr_is_capped_walk_as_in_python(tmp_path: Any) -> None:
    """A text with a path, a temporary name, an address or a URL's password in it, or whose repr is capped, walks as in
    Python at the top, as a field and as an item, and the cache the two walks share holds what Python puts there."""
    import os

    texts = [
        "select", "it's", "x" * 118 + "'", "\x00" * 40, "\u2026" * 119, "tab\there", str(tmp_path / "file.txt"), "a/b", "a\\b",
        os.path.expanduser("~") + "/notes", "tmpk3j_x9a2", "x tmpk3j_x9a2 y", "pytest-17", "<Token 'x' at 0x7f3d12345678>",
        "at 0x12", "https://user:secret@example.org/", "tmp", "pytest", "at 0", "a" * 480, "a" * 481,
    ]  # fmt: skip
    native = Abstraction(root=str(tmp_path))
    python = Abstraction(root=str(tmp_path), native=False)
    for text in texts:
        assert native.abstract(text) == python.abstract(text), text
        assert native.abstract(Plain(field=text)) == python.abstract(Plain(field=text)), text
        assert native.abstract([text, (text,)]) == python.abstract([text, (text,)]), text
    for text in texts:
        if text in native._strings:
            assert native._strings[text] == python._string(text), text
