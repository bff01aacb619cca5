"""The structural value abstraction, in-process: it reads state without running a line of project code."""

from __future__ import annotations

import enum
import os
import sys
from collections import OrderedDict, namedtuple
from pathlib import Path

import pytest

from histeg.tracing import values
from histeg.tracing.values import REDACTED, Abstraction, scrub

STRUCTURAL = Abstraction()


class Touchy:
    """Every hook that could run project code raises: the abstraction must never call one."""

    def __init__(self) -> None:
        self.items = (n for n in range(3))
        self.count = 2
        self.name = "touchy"

    def __repr__(self) -> str:
        raise AssertionError("repr called")

    def __str__(self) -> str:
        raise AssertionError("str called")

    def __eq__(self, other: object) -> bool:
        raise AssertionError("eq called")

    def __hash__(self) -> int:
        raise AssertionError("hash called")

    def __len__(self) -> int:
        raise AssertionError("len called")

    def __iter__(self):
        raise AssertionError("iter called")

    def __getattribute__(self, name: str):
        if name not in ("items", "count", "name", "__class__", "__dict__"):
            raise AssertionError(f"attribute {name} read")
        return object.__getattribute__(self, name)

    @property
    def side_effect(self) -> int:
        raise AssertionError("property read")


class Consuming:
    """A repr that consumes a generator the object holds (seen on a real suite)."""

    def __init__(self) -> None:
        self.source = iter([1, 2, 3])

    def __repr__(self) -> str:
        return f"Consuming({list(self.source)})"


class Slotted:
    __slots__ = ("a", "b", "unset")

    def __init__(self) -> None:
        self.a = 1
        self.b = [1, "x"]


class Color(enum.Enum):
    RED = 1


Point = namedtuple("Point", "x y")


def test_scalars_and_containers_by_value() -> None:
    assert STRUCTURAL.abstract(3) == ("int", "3")
    assert STRUCTURAL.abstract(None) == ("NoneType", "None")
    assert STRUCTURAL.abstract(1.5) == ("float", "1.5")
    assert STRUCTURAL.abstract([1, "a", (2.0, None)]) == ("list", "[1, 'a', (2.0, None)]")
    assert STRUCTURAL.abstract({"k": [1, {2}]}) == ("dict", "{'k': [1, {2}]}")
    assert STRUCTURAL.abstract((1,)) == ("tuple", "(1,)")
    assert STRUCTURAL.abstract(set()) == ("set", "set()")
    assert STRUCTURAL.abstract(10**5000) == ("int", "<repr failed: ValueError>")


def test_long_texts_are_capped_and_hashed() -> None:
    name, text = STRUCTURAL.abstract("ab" * 1000)
    assert name == "str" and "[len=2000 hash=" in text and len(text) < 200
    assert STRUCTURAL.abstract("ab" * 1000) == STRUCTURAL.abstract("ab" * 1000) != STRUCTURAL.abstract("ab" * 999 + "ac")
    big = list(range(1000))
    name, text = STRUCTURAL.abstract(big)
    assert name == "list" and "\u2026" in text and len(text) <= values.MAX_REPR + 40


def test_sets_are_sorted_whatever_the_insertion_order() -> None:
    words = [f"w{n}" for n in range(20)]
    assert STRUCTURAL.abstract(set(words)) == STRUCTURAL.abstract(set(reversed(words)))
    assert STRUCTURAL.abstract(frozenset({"b", "a"}))[1] == "{'a', 'b'}"


def test_objects_are_read_without_running_their_code() -> None:
    thing = Touchy()
    name, text = STRUCTURAL.abstract(thing)
    assert name == f"{__name__}.Touchy"
    assert text == "{count=2, items=generator, name='touchy'}"
    assert next(thing.items) == 0  # the generator was not advanced


def test_a_consuming_repr_is_never_called() -> None:
    thing = Consuming()
    assert STRUCTURAL.abstract(thing) == (f"{__name__}.Consuming", "{source=list_iterator}")
    assert repr(thing) == "Consuming([1, 2, 3])"


def test_slots_and_stateless_objects() -> None:
    assert STRUCTURAL.abstract(Slotted()) == (f"{__name__}.Slotted", "{a=1, b=[1, 'x']}")
    assert STRUCTURAL.abstract(object()) == ("object", None)
    assert STRUCTURAL.constant(object) and not STRUCTURAL.constant(Slotted) and not STRUCTURAL.constant(Touchy)
    assert STRUCTURAL.constant(type(n for n in ()))


def test_names_of_enums_functions_classes_modules_methods() -> None:
    assert STRUCTURAL.abstract(Color.RED) == (f"{__name__}.Color", f"{__name__}.Color.RED")
    assert STRUCTURAL.abstract(test_slots_and_stateless_objects)[1] == f"{__name__}:test_slots_and_stateless_objects"
    assert STRUCTURAL.abstract(Touchy) == ("type", f"{__name__}.Touchy")
    assert STRUCTURAL.abstract(os) == ("module", "os")
    assert STRUCTURAL.abstract(Slotted().__init__)[1] == f"{__name__}.Slotted.Slotted.__init__"
    assert STRUCTURAL.abstract(len) == ("builtin_function_or_method", "builtins:len")


def test_builtin_subclasses_show_their_builtin_content() -> None:
    assert STRUCTURAL.abstract(Point(1, 2)) == (f"{__name__}.Point", "(1, 2)")
    assert STRUCTURAL.abstract(OrderedDict(a=1)) == ("collections.OrderedDict", "{'a': 1}")


def test_exceptions_by_their_arguments() -> None:
    assert STRUCTURAL.abstract(ValueError("bad", 3)) == ("ValueError", "('bad', 3)")
    error = FileNotFoundError(2, "No such file", "/nowhere/x")
    assert STRUCTURAL.abstract(error)[1] == "(2, 'No such file')"


def test_secrets_are_redacted() -> None:
    class Account:
        def __init__(self) -> None:
            self.user = "ada"
            self.api_key = "k-123"

    assert STRUCTURAL.abstract({"password": "hunter2", "user": "ada"})[1] == f"{{'password': {REDACTED}, 'user': 'ada'}}"
    assert STRUCTURAL.abstract(Account())[1] == f"{{api_key={REDACTED}, user='ada'}}"
    assert STRUCTURAL.abstract("https://ada:hunter2@example.org/x")[1] == f"'https://ada:{REDACTED}@example.org/x'"
    assert Abstraction(redact=("user",)).abstract(Account())[1] == f"{{api_key='k-123', user={REDACTED}}}"


def test_paths_become_placeholders(tmp_path: Path) -> None:
    root = tmp_path / "run"
    abstraction = Abstraction(root=str(root))
    assert abstraction.abstract(str(root / "src" / "m.py"))[1] == "'<root>/src/m.py'"
    assert abstraction.abstract(os.path.expanduser("~/.config/x"))[1] == "'<home>/.config/x'"
    assert abstraction.abstract(values.temporary_directory() + "/tmpab0x12cd/f")[1] == "'<tmp>/tmp\u2026/f'"
    assert abstraction.abstract(str(root) + "fs/x")[1] != "'<root>fs/x'", "only whole path parts are replaced"
    other = Abstraction(root=str(tmp_path / "elsewhere"))
    assert other.abstract(str(tmp_path / "elsewhere" / "src" / "m.py")) == abstraction.abstract(str(root / "src" / "m.py"))


def test_hex_in_plain_strings_is_data_not_an_address() -> None:
    assert STRUCTURAL.abstract("0x1F")[1] == "'0x1F'" != STRUCTURAL.abstract("0x2A")[1]
    assert STRUCTURAL.abstract({"colour": "0xff00ff"})[1] == "{'colour': '0xff00ff'}"


def test_temporary_names_with_hex_digits_are_scrubbed_whole() -> None:
    assert scrub("/x/tmpab0x12cd/f") == "/x/tmp\u2026/f"
    assert scrub("/x/tmp0x1234ab/f") == "/x/tmp\u2026/f"
    assert scrub("at 0x7f00AbC1 and 0x1") == "at 0x\u2026 and 0x\u2026"
    assert scrub("pytest-83") == "pytest-\u2026" and scrub("tmpk3j_x9a2") == "tmp\u2026", "pathlib keeps parts as strings"
    assert STRUCTURAL.abstract(Path("/x/pytest-of-ada/pytest-83/t0"))[1] == STRUCTURAL.abstract(Path("/x/pytest-of-ada/pytest-84/t0"))[1]
    for name in ("tmpfile_abcdefgh", "/data/tmp/x", "attempt", "tmpabcdefghij", "pytest-x", "my-pytest-3"):
        assert scrub(name) == name


def test_repr_mode_only_for_named_types() -> None:
    named = Abstraction("repr", repr_types=[f"{__name__}.Consuming"])
    thing = Consuming()
    assert named.abstract(thing) == (f"{__name__}.Consuming", "Consuming([1, 2, 3])")
    assert named.abstract(Touchy())[1] == "{count=2, items=generator, name='touchy'}"


def test_a_bad_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="values mode"):
        Abstraction("false")


def test_no_project_code_runs_under_a_profiler() -> None:
    """sys.setprofile sees every Python-level call: abstracting must make none outside histeg."""
    seen: list[str] = []

    def profile(frame, event, arg):  # noqa: ANN001
        if event == "call" and not frame.f_code.co_filename.startswith(os.path.dirname(values.__file__)):
            seen.append(f"{frame.f_code.co_filename}:{frame.f_code.co_qualname}")

    things = [Touchy(), Consuming(), Slotted(), Color.RED, Point(1, 2), ValueError("x"), {"a": Touchy()}, [Consuming()]]
    abstraction = Abstraction()
    abstraction.abstract(things[0])  # warm the caches: imports are not project code either
    sys.setprofile(profile)
    try:
        for thing in things:
            abstraction.abstract(thing)
    finally:
        sys.setprofile(None)
    assert [call for call in seen if __file__ in call] == []


class Node:
    pass


class Leaf:
    pass


def test_tuples_cached_by_their_items_keep_apart_what_their_texts_keep_apart() -> None:
    from histeg.tracing.value_ids import ValueIds

    written: list[tuple[int, str, str | None]] = []
    ids = ValueIds(lambda value_id, type_name, text: written.append((value_id, type_name, text)), Abstraction())
    node = Node()
    node.name = "a"
    first = ids.id_of((1, node))
    assert ids.id_of((1, Node())) == first  # an object in a tuple shows as its type alone
    assert len({first, ids.id_of((True, node)), ids.id_of((1, Leaf())), ids.id_of((2, node)), ids.id_of((1, "a")), ids.id_of((1, [2]))}) == 6
    assert [text for _, _, text in written[-5:]] == [f"(True, {__name__}.Node)", f"(1, {__name__}.Leaf)", f"(2, {__name__}.Node)",
                                                      "(1, 'a')", "(1, [2])"]


class TokenType(tuple):
    """A lexer's token type: a tuple subclass with fields (shown only at the top), like sqlparse's."""

    parent = None


def test_tuples_holding_tuple_subclasses_are_cached_by_type_and_content() -> None:
    """``(ttype, value)`` pairs of a lexer: a cached id for each distinct pair, equal to what a fresh abstraction writes."""
    from histeg.tracing.value_ids import ValueIds

    written: dict[int, tuple[str, str | None]] = {}
    ids = ValueIds(lambda value_id, type_name, text: written.__setitem__(value_id, (type_name, text)), Abstraction())
    keyword, name = TokenType(("Keyword",)), TokenType(("Name",))
    keyword.parent = name  # a field: shown at the top only, never inside a pair
    pairs = [(keyword, "select"), (TokenType(("Keyword",)), "select"), (name, "select"), (keyword, "from"), (keyword, 1), (keyword, True)]
    found = [ids.id_of(pair) for pair in pairs]
    assert found[0] == found[1] and len(set(found)) == 5
    fresh = Abstraction()
    for pair, value_id in zip(pairs, found, strict=True):
        assert written[value_id] == fresh.abstract(pair)
    assert written[found[0]] == ("tuple", f"({__name__}.TokenType(('Keyword',)), 'select')")
    nested = (TokenType((TokenType(("Keyword",)),)), "x")  # two levels down: abstracted, not keyed
    assert written[ids.id_of(nested)] == fresh.abstract(nested)


def test_tuple_subclasses_are_cached_by_content_and_fields_exactly_when_their_texts_agree() -> None:
    """A token type at the top shows its fields too: equal content and fields share an id, and every id's text is
    what a fresh abstraction writes; a secret field or a container field is never keyed."""
    from histeg.tracing.value_ids import ValueIds

    written: dict[int, tuple[str, str | None]] = {}
    ids = ValueIds(lambda value_id, type_name, text: written.__setitem__(value_id, (type_name, text)), Abstraction(key=b"k" * 32))

    def token(*names: str, **fields: object) -> TokenType:
        made = TokenType(names)
        made.__dict__.update(fields)
        return made

    parent = token("Keyword")
    values = [token("Keyword", "DML", parent=parent), token("Keyword", "DML", parent=token("Name")),  # parents show by type
              token("Keyword", "DDL", parent=parent), token("Keyword", "DML", parent=None), token("Keyword", "DML", label="x"),
              token("Keyword", "DML", label="y"), token("Keyword", "DML", count=1), token("Keyword", "DML", count=True),
              token("Keyword", "DML", items=[1]), token("Keyword", "DML", items=[2]), token("Keyword", "DML", password="a"),
              token("Keyword", "DML", password="b"), token("Keyword", "DML")]
    found = [ids.id_of(value) for value in values]
    assert found[0] == found[1]
    assert len(set(found)) == len(values) - 1
    fresh = Abstraction(key=b"k" * 32)
    for value, value_id in zip(values, found, strict=True):
        assert written[value_id] == fresh.abstract(value), value


class SlottedNode:
    __slots__ = ("kind", "parent", "text", "value")


def test_objects_are_cached_by_their_fields_exactly_when_their_texts_agree() -> None:
    """A parser's nodes (slots or a dictionary, strings, flags, a parent shown by its type, a list of children):
    equal fields share an id, and every id's text is what a fresh abstraction writes; a long list is keyed by its
    length and the items a text can show; a secret, a float or a nested container is never keyed, and an unset slot
    is told from a slot holding None."""
    from histeg.tracing.value_ids import ValueIds

    written: dict[int, tuple[str, str | None]] = {}
    ids = ValueIds(lambda value_id, type_name, text: written.__setitem__(value_id, (type_name, text)), Abstraction(key=b"k" * 32))

    def slotted(**fields: object) -> SlottedNode:
        made = SlottedNode()
        for name, item in fields.items():
            setattr(made, name, item)
        return made

    def node(**fields: object) -> Node:
        made = Node()
        made.__dict__.update(fields)
        return made

    values = [
        slotted(kind=1, parent=Node(), text="select", value=True), slotted(kind=1, parent=Node(), text="select", value=True),
        slotted(kind=1, parent=Leaf(), text="select", value=True), slotted(kind=True, parent=None, text="select", value=1),
        slotted(kind=1, parent=None, text="select", value=True), slotted(kind=1, text="select", value=True),
        slotted(kind=1, parent=None, text="x" * 600, value=True), slotted(kind=1.5, parent=None, text="a", value=None),
        node(children=[Node(), Leaf(), "a", 1], text="a"), node(children=[Node(), Leaf(), "a", 1], text="a"),
        node(children=[Node(), Leaf(), "a", True], text="a"), node(children=(Node(), Leaf(), "a", 1), text="a"),
        node(children=[Node()] * 100, text="a"), node(children=[[1]], text="a"), node(children=[], text="a"),
        node(children=[Node()] * 100 + [Leaf()], text="a"), node(children=[Node()] * 101, text="a"),
        node(children=[Leaf()] + [Node()] * 99, text="a"), node(children=tuple([Node()] * 100), text="a"),
        node(password="a"), node(password="b"), node(text="a", count=1), node(count=1, text="a"), node(),
    ]
    found = [ids.id_of(value) for value in values]
    assert found[0] == found[1] and found[8] == found[9] and found[19] != found[20]  # two secrets
    assert found[15] == found[16] != found[12], "past the items a text shows, only the length tells long lists apart"
    assert found[17] != found[12] != found[18]
    assert len({found[0], found[2], found[3], found[4], found[5]}) == 5
    fresh = Abstraction(key=b"k" * 32)
    for value, value_id in zip(values, found, strict=True):
        assert written[value_id] == fresh.abstract(value), value
    again = [ids.id_of(value) for value in values]
    assert again == found
