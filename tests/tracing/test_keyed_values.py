"""The C collector answers a keyed value's id itself (``keyed_id`` in _ctracer.c) exactly as ``ValueIds.id_of`` would.

Why: on a suite of short tests most values are a program's objects, tuples and token types whose key ValueIds
has seen before; making the key in C instead of Python is most of the tracer's saving there. A key made
differently would give a value another value's id, a wrong trace: every answer the C side gives is checked
against ``id_of``, on values that must be answered (so the test cannot pass by answering nothing) and values
that must not be (a secret, a long text, a field of an unkeyed kind), before and after a field changes.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest

from histeg.tracing.value_ids import ValueIds
from histeg.tracing.values import Abstraction
from tests.tracing.conftest import keyed_tracer, seen


class Node:
    def __init__(self, text: str, kids: list[Any] | None = None) -> None:
        self.text = text
        self.kids = kids or []
        self.parent: Node | None = None
        self.count = 3
        self.flag = True


class Slotted:
    __slots__ = ("first", "second")

    def __init__(self, first: object) -> None:
        self.first = first  # second stays unset


class TokenType(tuple):
    parent = None


class Secretive:
    def __init__(self) -> None:
        self.password = "hunter2"


class Measured:
    def __init__(self) -> None:
        self.ratio = 0.5  # a float field: shown by value, never keyed


class Attributes(dict):
    """A dict subclass with a field of its own, whose methods must never run while a key is made."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.source = "inline"

    def __len__(self) -> int:
        raise AssertionError("a key read the subclass's __len__")

    def __iter__(self) -> Any:
        raise AssertionError("a key read the subclass's __iter__")

    def items(self) -> Any:
        raise AssertionError("a key read the subclass's items")


class Row(list):
    def __len__(self) -> int:
        raise AssertionError("a key read the subclass's __len__")

    def __iter__(self) -> Any:
        raise AssertionError("a key read the subclass's __iter__")

    def __getitem__(self, index: Any) -> Any:
        raise AssertionError("a key read the subclass's __getitem__")


class Record(tuple):
    pass


KEYWORD = TokenType(("Keyword",))
KEYWORD.parent = TokenType(())  # type: ignore[misc]  # an instance attribute of the token type, as a lexer sets it


def keyable() -> list[Any]:
    leaf = Node("leaf")
    return [
        Node("a"),
        Node("a", [1, "two", None, True, leaf]),
        Node("long list", list(range(100))),
        Slotted("x"),
        Slotted(Node("inner")),
        KEYWORD,
        (KEYWORD, "select"),
        (1, "a", None, True, b"raw"),
        (True,),
        (1,),
        (leaf, 2),
        Node("dict", [{"a": 1}]),
        tuple(range(9)),
        [{"type": "name", "value": "foo", "start": 0, "end": 3}, {"type": "eof", "value": "", "start": 3, "end": 3}],
        {"a": [1, 2], "b": None, "c": {"d": (1, "x")}},
        [[[1]]],
        [[[[1]]]],  # deeper than texts go: the innermost list by its type and length, as texts show it
        {"type": "or", "children": [{"type": "and", "children": [{"type": "field", "children": []}]}]},  # a parser's tree
        list(range(100)),
        Node("methods", [{"visit": Node("v").__init__, "other": Slotted("s").__init__}]),  # type: ignore[misc]
        {},
        OrderedDict(a=1, b=[OrderedDict(c=None)]),  # a JSON document read with object_pairs_hook=OrderedDict
        (OrderedDict(a=1), "key"),
        [OrderedDict(), Row([1, 2]), Record(range(12))],
        Attributes(a=1),
        Row([1, Row([2])]),
        Record(range(12)),  # a tuple subclass too long for a token type's key
        [[[OrderedDict(a=1.5)]]],  # deeper than texts go: its type and length
    ]


def not_keyable() -> list[Any]:
    return [
        Secretive(),
        Measured(),
        Node("x" * 600),
        ("y" * 100,),
        (1.5,),
        Node("secret", [{"password": 1}]),  # a secret's digest needs its value
        {"api_key": "k"},
        [{"x": 1.5}],
        {1: "a number names it"},
        {"s": {1, 2}},
        [[[1.5]]],  # a float, at the deepest level texts show items of
        OrderedDict(password="hunter2"),
        [OrderedDict(a=1.5)],
        OrderedDict(a={1}),
        Record((1.5,) * 9),
    ]


def test_keyed_values_get_the_id_python_gives(pair: tuple[Any, ValueIds]) -> None:
    tracer, ids = pair
    for value in keyable():
        expected = seen(ids, value)
        assert tracer.keyed_id(value) == expected, value
    for value in not_keyable():
        seen(ids, value)
        assert tracer.keyed_id(value) is None, value


def test_equal_values_share_an_id_and_one_is_not_true(pair: tuple[Any, ValueIds]) -> None:
    tracer, ids = pair
    first = seen(ids, Node("same", [1, 2]))
    assert tracer.keyed_id(Node("same", [1, 2])) == first  # another instance, seen by C alone
    assert ids.id_of((1,)) != ids.id_of((True,))
    assert tracer.keyed_id((1,)) == ids.id_of((1,)) and tracer.keyed_id((True,)) == ids.id_of((True,))


def test_a_changed_field_is_not_answered_with_the_old_id(pair: tuple[Any, ValueIds]) -> None:
    tracer, ids = pair
    node = Node("before")
    old = seen(ids, node)
    node.text = "after"
    assert tracer.keyed_id(node) is None  # a new key: Python abstracts it
    new = ids.id_of(node)
    assert new != old and tracer.keyed_id(node) == new
    node.kids.append(Node("child"))
    assert tracer.keyed_id(node) is None
    slotted = Slotted("x")
    seen(ids, slotted)
    slotted.second = 1  # type: ignore[attr-defined]  # the unset slot is set
    assert tracer.keyed_id(slotted) is None


def visit(node: Any) -> None:
    """A function passed around as a value (a visitor, a key function): keyed by its names."""


class Raw:
    """A class passed around as a value (``isinstance``'s second argument, a token class): keyed by itself."""


class Vague(type):
    """A metaclass whose classes compare by something else than identity: never keyed (its ``__eq__`` is the program's)."""

    def __eq__(cls, other: object) -> bool:
        return True

    __hash__ = type.__hash__


class Shifty(metaclass=Vague):
    pass


def test_functions_and_classes_are_answered_by_their_names(pair: tuple[Any, ValueIds]) -> None:
    tracer, ids = pair
    for value in (visit, Raw, Node, Abstraction.abstract, pytest.fixture, ValueIds):
        expected = seen(ids, value)
        assert tracer.keyed_id(value) == expected, value
    assert tracer.keyed_id(Raw) != tracer.keyed_id(Node)
    seen(ids, Shifty)
    assert tracer.keyed_id(Shifty) is None


def test_a_function_renamed_is_not_answered_with_its_old_id(pair: tuple[Any, ValueIds]) -> None:
    tracer, ids = pair

    def made() -> None:
        pass

    old = seen(ids, made)
    made.__qualname__ = "renamed"  # as functools.wraps does
    assert tracer.keyed_id(made) is None
    new = ids.id_of(made)
    assert new != old and tracer.keyed_id(made) == new
    made.__module__ = 3  # type: ignore[assignment]  # not a name: abstracted the long way, every time
    ids.id_of(made)
    assert tracer.keyed_id(made) is None


def test_new_values_get_the_ids_and_records_python_gives_them(pair: tuple[Any, ValueIds]) -> None:
    """A value whose key is new is abstracted and interned in C (``interned_id``): the same id, the same value record,
    in the same order as ``ValueIds.id_of`` alone, through every case where C hands over to Python (a long text, a
    type not named yet, a string too long for a key), and the tables C fills answer Python's later questions alike."""
    tracer, ids = pair
    written: list[tuple[int, str, str | None]] = []
    reference = ValueIds(lambda *record: written.append(record), Abstraction())
    recorded: list[tuple[int, str, str | None]] = []
    ids._write_value = lambda *record: recorded.append(record)  # type: ignore[method-assign]
    tracer.keyed(ids.native_tables())
    values: list[Any] = []
    for number in range(3):
        values += [
            f"word{number}",
            "x" * 200,
            f"{number}" * 70,
            (KEYWORD, f"w{number}"),
            (KEYWORD, "select"),
            Node(f"n{number}"),
            Node("same"),
            Slotted(f"s{number}"),
            [1, f"a{number}"],
            {"k": number},
            visit,
            Raw,
            Node("long", list(range(100))),
            (1.5, number),
            Secretive(),
            Measured(),
            ("y" * 100,),
            Node("x" * 600),
        ]
    for value in values * 2:
        assert tracer.id_of(value) == reference.id_of(value), value
    assert written[0] == (ids.redacted, "<redacted>", None)  # written when each table was made, before ``recorded`` was bound
    assert recorded == written[1:] and len(written) > 20
    for value in values:  # what C filled (ids by key, strings by value) answers as Python's own tables do
        assert ids.id_of(value) == reference.id_of(value), value
    assert recorded == written[1:]


LEXER = """
class TokenType(tuple):
    parent = None


KEYWORD = TokenType(("Keyword",))
NAME = TokenType(("Name",))
KEYWORD.parent = TokenType(())


class Token:
    def __init__(self, ttype, text):
        self.ttype = ttype
        self.text = text
        self.parent = None


class Lexer:
    def __init__(self):
        self.position = 0

    def tokens(self, text):
        for word in text.split():
            self.position += 1
            yield (KEYWORD if word.isupper() else NAME, word)


def parse(text):
    lexer = Lexer()
    return [describe(Token(ttype, word)) for ttype, word in lexer.tokens(text)]


def describe(item):
    item.parent = item if item.text == "a" else None
    return len(item.text)
"""

LEXER_TESTS = """
from pkg.lexer import parse


def test_statements():
    for text in ("SELECT a FROM t", "SELECT a FROM t", "SELECT b FROM u WHERE a", "select x"):
        assert parse(text)
"""


def test_both_collectors_record_the_same_keyed_values(tmp_path_factory: pytest.TempPathFactory, project_runner: Any) -> None:
    """Tokens, token types and the lexer's (type, text) pairs, repeated and new, as a real lexer yields them: the C
    collector (keyed values answered in C, new keys handed to ``_by_key``) records what the Python one records."""
    from tests.tracing.test_tracing_calls import canonical

    files = {"src/pkg/__init__.py": "", "src/pkg/lexer.py": LEXER, "tests/test_lexer.py": LEXER_TESTS}
    runs = {kind: project_runner(tmp_path_factory.mktemp(f"keyed-{kind}"), files, tracer=kind) for kind in ("c", "python")}
    for traced_run in runs.values():
        assert traced_run.proc.returncode == 0, traced_run.proc.stdout + traced_run.proc.stderr
    c_calls, python_calls = ([canonical(root) for root in runs[kind].roots] for kind in ("c", "python"))
    assert c_calls == python_calls
    described = runs["c"].calls("pkg.lexer:describe")
    texts = [str(call.params[0]) for call in described]
    assert len(texts) == 16 and len(set(texts)) == 9  # 16 tokens, 9 distinct (type, text)
    assert texts[0] == "pkg.lexer.Token {parent=None, text='SELECT', ttype=pkg.lexer.TokenType}" == texts[4]
    yielded = [str(value) for call in runs["c"].calls("pkg.lexer:Lexer.tokens") for value in call.yielded]
    assert yielded[:2] == ["tuple (pkg.lexer.TokenType(('Keyword',)), 'SELECT')", "tuple (pkg.lexer.TokenType(('Name',)), 'a')"]
    assert len(yielded) == 16 and yielded[:4] == yielded[4:8]


def test_containers_share_a_key_only_when_their_texts_agree() -> None:
    """``container_key``'s promise, on near pairs: equal keys, equal texts (what makes a cached id right)."""
    abstraction = Abstraction()
    long = list(range(70))
    values: list[Any] = [
        [1, 2], [2, 1], [1, True], [1, 1], ["1"], [(1,)], [[1]], ({"a": 1},), [{"a": 1}], [{"a": True}], [{"b": 1}],
        {"a": 1}, {"a": 1, "b": 2}, {"b": 2, "a": 1}, long, [*long[:64], 0, 0, 0, 0, 0, 0], [*long[:63], -1, *long[64:]],
        [Node("x")], [Node("y")], [Slotted("x")], [None], [], (), {}, ["x" * 64], ["x" * 63 + "y"],
        [Node("x").__init__], [Slotted("x").__init__], [Node("y").__init__],  # type: ignore[misc]
        [[[[1]]]], [[[[2]]]], [[[[1, 2]]]], [[[{"a": 1}]]], [[[{"a": 1, "b": 2}]]], [[[(1,)]]], [[(1,)]],  # deeper than texts show
        [OrderedDict(a=1)], [OrderedDict(a=2)], [OrderedDict()], [Row()], [Row([1])], [Record()], [Record((1,))], (Record(),),
        [[[OrderedDict(a=1)]]], [[[OrderedDict(a=2)]]], [[[OrderedDict(a=1, b=2)]]], [[[Row([1])]]], [[[Record((1,))]]],
        [long[:40], long[:40]], [long[:40], [*long[:39], -1]], [long[:40], [*long[:20], -1, *long[21:40]]],  # past the budget
    ]  # fmt: skip
    keyed = [(abstraction.container_key(value, type(value)), abstraction.abstract(value)) for value in values]
    assert all(key is not None for key, _ in keyed)
    pairs = [(first, second) for first in keyed for second in keyed if first is not second]
    assert all(first[1] == second[1] for first, second in pairs if first[0] == second[0])
    # a node of another text, the unseen tail, a method, a list below what texts show, an OrderedDict below them, an
    # item past the walk's budget
    assert sum(first[0] == second[0] for first, second in pairs) == 6 * 2


def test_a_key_holds_no_more_than_its_text_can_show() -> None:
    """An object whose fields hold a lexer's tables (nine dicts of a hundred keywords each, fifty rules) makes a key of
    about what its text shows, not of every table's first 64 entries (2,300 parts, digested at every call, cost more
    than walking it); and values that differ only past the walk's budget share it."""

    class Tables:
        def __init__(self, last: int) -> None:
            self.keywords = [{f"keyword{table}_{entry}": ("Keyword", entry) for entry in range(100)} for table in range(9)]
            self.rules = [("rule", number) for number in range(49)] + [("rule", last)]

    abstraction = Abstraction()
    key = abstraction.fields_key(Tables(49), Tables)
    assert key is not None and len(key) < 3 * 64 + 64
    assert key == abstraction.fields_key(Tables(-1), Tables)
    assert abstraction.abstract(Tables(49)) == abstraction.abstract(Tables(-1))
    tracer, ids, asked = asking_tracer()
    seen(ids, Tables(0))
    assert tracer.keyed_id(Tables(-1)) == ids.id_of(Tables(-1))
    assert asked == []


def test_kept_keys_are_out_of_the_garbage_collectors_way(pair: tuple[Any, ValueIds]) -> None:
    """A hundred thousand kept keys, tracked, would be visited by every full collection of the traced program."""
    import gc

    _, ids = pair
    for value in keyable():
        seen(ids, value)
    assert len(ids._by_object) >= len(keyable()) - 1
    assert not any(gc.is_tracked(key) for key in ids._by_object) and not gc.is_tracked(ids._by_object)
    gc.collect()
    assert all(ids.id_of(value) == seen(ids, value) for value in keyable())  # nothing it holds was collected


def asking_tracer() -> tuple[Any, ValueIds, list[object]]:
    """A C tracer over fresh value tables, and the values it hands ``ValueIds.id_of`` (a call into Python each)."""
    asked: list[object] = []
    ids = ValueIds(lambda *record: None, Abstraction())

    def id_of(value: object) -> int:
        asked.append(value)
        return ids.id_of(value)

    tracer = keyed_tracer(ids)
    tracer.reset(lambda: 0, lambda index, data: None, ids.by_type, ids.by_value, id_of)
    tracer.keyed(ids.native_tables())
    return tracer, ids, asked


def test_an_object_without_a_key_is_walked_in_c_once_python_has_settled_that_it_has_none() -> None:
    """An object whose fields can never make a key (a float field, a secret) is walked and interned in C, as id_of would
    abstract it; one whose field is of a type Python has not classified yet goes to Python, which classifies it."""
    tracer, ids, asked = asking_tracer()
    seen(ids, Measured())
    seen(ids, Secretive())
    for value in (Measured(), Secretive()):
        assert tracer.id_of(value) == ids.id_of(value), value
    assert asked == []

    class Fresh:
        pass

    holder = Node("holds")
    holder.kids = Fresh()  # type: ignore[assignment]  # a field of a class Python has not met
    expected = seen(ids, Node("holds"))  # the class Node is known, its field's type is not
    assert tracer.id_of(holder) == ids.id_of(holder) != expected
    assert asked == [holder]


def test_objects_of_a_class_that_had_no_key_are_walked_without_trying_one_and_tried_again_later() -> None:
    """After sixteen objects of a class without a key (a float field), its objects are walked in C without a key being
    made (a key that fails reads every field first); one in 64 tries again, and once one has a key the class is keyed
    as before. The ids stay id_of's all along: a walk gives the text a key would have given."""
    tracer, ids, asked = asking_tracer()
    seen(ids, Node("a"))
    seen(ids, Node(0.5))  # type: ignore[arg-type]
    for number in range(16):
        tracer.id_of(Node(number + 0.5))  # type: ignore[arg-type]
    before = tracer.digested
    walked = [Node(f"walked {number}") for number in range(10)]
    assert [tracer.id_of(value) for value in walked] == [ids.id_of(value) for value in walked]
    assert tracer.digested == before, "a key was made for a class whose objects had none"
    still_walked = [Node(f"still walked {number}") for number in range(53)]  # 63 walked in all
    assert [tracer.id_of(value) for value in still_walked] == [ids.id_of(value) for value in still_walked]
    assert tracer.digested == before
    retried = Node("retried")  # the 64th: tried, and it has a key
    assert tracer.id_of(retried) == ids.id_of(retried)
    after = tracer.digested
    assert after == before + 1, "no key was tried again"
    keyed = [Node(f"keyed {number}") for number in range(5)]
    assert [tracer.id_of(value) for value in keyed] == [ids.id_of(value) for value in keyed]
    assert tracer.digested == after + 5
    tracer.id_of(Node(9.5))  # type: ignore[arg-type]  # one object without a key starts a new count
    again = [Node(f"again {number}") for number in range(2)]
    assert [tracer.id_of(value) for value in again] == [ids.id_of(value) for value in again]
    assert tracer.digested == after + 7
    assert asked == []


def test_a_value_no_key_caches_is_walked_and_interned_in_c_once_python_has_met_its_type() -> None:
    """An exception, a set, a str subclass: no key of any kind caches them, so once id_of has met their type
    the C collector walks and interns them itself, with the ids id_of gives; a type it has not met goes to Python."""

    class Name(str):
        pass

    tracer, ids, asked = asking_tracer()
    first = [ValueError("bad", 1), {1, 2}, Name("b")]
    for value in first:
        assert tracer.id_of(value) == ids.id_of(value), value
    assert asked == first  # types not met yet: Python meets them
    asked.clear()
    later = [ValueError("bad", 1), ValueError("worse"), {1, 2}, {3}, Name("b"), Name("c")]
    given = [tracer.id_of(value) for value in later]
    assert asked == []
    assert given == [ids.id_of(value) for value in later]
    assert given[0] == tracer.id_of(first[0]) and given[2] == tracer.id_of(first[1])
    assert len(set(given)) == len(later)  # each abstraction its own id


def test_a_list_dict_or_tuple_no_key_caches_is_walked_and_interned_in_c() -> None:
    """A dict or tuple holding a float, a dict holding a secret, a list nested past the key's depth: no key caches them, and the C collector
    walks and interns them with the ids id_of gives; a dict whose names were never checked for secrets goes to Python."""
    tracer, ids, asked = asking_tracer()
    for met in ({"price": 0.25}, {"password": 1}, [[[0.5]]], (0.25,), ("c" * 70,)):  # the names checked for secrets, the types met
        seen(ids, met)
    unkeyed = [{"price": 1.5}, {"price": 2.5}, {"password": "hunter2"}, [[[1.5]]], [1.5, "a"], [{"price": 0.5}], (1.5, "a"), ("b" * 70,)]
    given = [tracer.id_of(value) for value in unkeyed]
    assert asked == []
    assert given == [ids.id_of(value) for value in unkeyed]
    assert len(set(given)) == len(unkeyed)
    unchecked = {"fresh_name": 1.5}
    assert tracer.id_of(unchecked) == ids.id_of(unchecked)
    assert asked == [unchecked]


def test_container_subclasses_are_keyed_by_their_content_and_fields() -> None:
    """An OrderedDict, a dict subclass with a field, a list or a long tuple subclass, alone or held in a list, tuple or
    dict: keyed by the base's content (and, at the top, the fields), in C, with the ids id_of gives and without a call
    of the subclass's own methods; one that cannot be keyed (a float, a secret) is walked and interned in C."""
    tracer, ids, asked = asking_tracer()
    met_values = (OrderedDict(a=1), Attributes(a=1), Row([1]), Record(range(9)), [OrderedDict(a=1)], (Row([1]), 2), {"rows": Row()})
    for met in (*met_values, [OrderedDict(b=0.5)]):  # the types, the names checked for secrets
        seen(ids, met)
    values = [
        OrderedDict(a=1), OrderedDict(a=2), OrderedDict(b=OrderedDict(a=[1, 2])), Attributes(a=1), Attributes(a=2),
        Row([1, Row([2])]), Record(range(9)), Record(range(10)), [OrderedDict(a=1)], [OrderedDict(a=2)],
        (Row([1]), 2), (Row([1, 2]), 2), {"rows": Row([3])}, OrderedDict(a=1.5), [OrderedDict(a=1.5)],
    ]  # fmt: skip
    given = [tracer.id_of(value) for value in values]
    assert asked == []
    assert given == [ids.id_of(value) for value in values]
    assert len(set(given)) == len(values)  # each abstraction its own id
    assert [tracer.keyed_id(value) for value in values[:-2]] == given[:-2]  # kept under their keys
    changed = Attributes(a=1)
    changed.source = "file"  # the same content, another field
    assert tracer.keyed_id(changed) is None and tracer.id_of(changed) == ids.id_of(changed) != given[3]


def test_a_string_too_long_for_a_key_is_walked_and_interned_in_c() -> None:
    """A string longer than a key may be is walked, shortened and interned in C with the id id_of gives (a secret's
    scrubbing, a temporary path's and a long text's digest included), once Python has named its type."""
    tracer, ids, asked = asking_tracer()
    seen(ids, "named: " + "n" * 70)
    long_texts = ["a" * 65, "b" * 500, "é" * 300, "x\ud800" * 40, "https://user:hunter2@example.com/" + "p" * 60, "c" * 65]
    given = [tracer.id_of(text) for text in long_texts]
    assert asked == []
    assert given == [ids.id_of(text) for text in long_texts]
    assert len(set(given)) == len(long_texts)
    assert tracer.id_of("a" * 65) == given[0]


class Registry(type):
    """A metaclass that keeps type's hash and comparisons (as abc.ABCMeta does)."""


class Registered(metaclass=Registry):
    def __init__(self, name: str) -> None:
        self.name = name


class Visitor:
    def __init__(self, name: str) -> None:
        self.name = name
        self.functions = Registered("builtins")  # a field holding an object whose class has a metaclass


class Counting(type):
    hashed = 0

    def __hash__(cls) -> int:
        Counting.hashed += 1
        return type.__hash__(cls)

    def __eq__(cls, other: object) -> bool:
        return cls is other


class Weird(metaclass=Counting):
    pass


class HoldsWeird:
    def __init__(self) -> None:
        self.weird = Weird()


def test_classes_whose_metaclass_hashes_by_identity_are_keyed() -> None:
    """An object whose class has a metaclass keeping type's hash (abc.ABCMeta, a registry's metaclass), or whose field
    holds one, is keyed by its fields, in C, with the ids id_of gives; one in a list, a tuple or a dict too."""
    tracer, ids, asked = asking_tracer()
    for met in (Registered("a"), Visitor("v"), [Registered("a")], (Registered("a"),)):
        seen(ids, met)
    values = [Registered("a"), Registered("b"), Visitor("v"), Visitor("w"), [Registered("b")], (Registered("b"), 1)]
    given = [tracer.id_of(value) for value in values]
    assert asked == []
    assert given == [ids.id_of(value) for value in values]
    assert [tracer.keyed_id(value) for value in values] == given  # kept under their keys


def test_a_class_whose_metaclass_hashes_in_python_is_never_hashed_for_a_key() -> None:
    """A metaclass's own __hash__ is project code: a field, an item or a tuple holding an instance of such a class
    makes no key, and making the key never calls it."""
    tracer, ids, _ = asking_tracer()
    for met in (HoldsWeird(), [Weird()], (Weird(),)):
        seen(ids, met)
    before = Counting.hashed
    for value in (HoldsWeird(), [Weird()], (Weird(),)):
        assert tracer.keyed_id(value) is None
    assert ids.abstraction.fields_key(HoldsWeird(), HoldsWeird) is None
    assert ids._tuple_key((Weird(),)) is None
    assert ids.abstraction.container_key([Weird()], list) is None
    assert Counting.hashed == before


def random_value(rng: Any, depth: int) -> Any:
    """Nested lists, tuples, dicts and nodes, up to six levels, over a few scalars: many near pairs."""
    kind = rng.randrange(1 if depth < 3 else 0, 10 if depth < 6 else 3)
    if kind < 3:
        return rng.choice([0, 1, True, None, "a", "b", ""])
    items = [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if kind == 3:
        return items
    if kind == 4:
        return tuple(items)
    if kind == 5:
        return dict(zip("abc", items, strict=False))
    if kind == 6:
        return OrderedDict(zip("abc", items, strict=False))
    if kind == 7:
        return Row(items)
    if kind == 8:
        attributes = Attributes(zip("ab", items, strict=False))
        attributes.source = rng.choice(["x", "y"])
        return attributes
    return Node(rng.choice("xy"), items)


def test_keys_of_deep_values_are_equal_only_where_their_texts_are() -> None:
    """The promise behind every cached id, on random values nested deeper than texts show: equal keys, equal texts;
    and values that differ only below what texts show do share a key."""
    import random

    rng = random.Random(11)
    abstraction = Abstraction()
    texts_by_key: dict[Any, set[str | None]] = {}
    values_by_key: dict[Any, list[Any]] = {}
    for _ in range(3000):
        value = random_value(rng, 0)
        cls = type(value)
        key = (
            abstraction.fields_key(value, cls) if cls is Node
            else abstraction.container_key(value, cls) if cls in (list, tuple, dict)
            else abstraction.content_key(value, cls)
        )  # fmt: skip
        if key is not None:
            texts_by_key.setdefault(key, set()).add(abstraction.abstract(value)[1])
            values_by_key.setdefault(key, []).append(value)
    assert len(texts_by_key) > 300
    assert all(len(texts) == 1 for texts in texts_by_key.values()), [t for t in texts_by_key.values() if len(t) > 1][:2]

    def shape(value: Any) -> Any:
        if isinstance(value, Node):
            return ("Node", value.text, shape(value.kids))
        if isinstance(value, (list, tuple)):
            return (type(value).__name__, *map(shape, list.__iter__(value) if isinstance(value, list) else value))
        if isinstance(value, dict):
            return (type(value).__name__, getattr(value, "source", None), *((name, shape(item)) for name, item in dict.items(value)))
        return (type(value).__name__, value)

    shared = [values for values in values_by_key.values() if len({shape(value) for value in values}) > 1]
    assert len(shared) > 10, "values that differ only below what texts show did not share a key"


def wide_value(rng: Any, depth: int) -> Any:
    """Lists, tuples, dicts and OrderedDicts of up to 40 items, three levels deep, over two scalars: the walk's budget
    runs out inside them at every depth, and values often differ only past it."""
    if depth == 3 or rng.random() < 0.6:
        return rng.choice([0, 1])
    items = [wide_value(rng, depth + 1) for _ in range(rng.randrange(41))]
    kind = rng.randrange(4)
    if kind == 0:
        return items
    if kind == 1:
        return tuple(items)
    names = [f"n{number}" for number in range(len(items))]
    return dict(zip(names, items, strict=True)) if kind == 2 else OrderedDict(zip(names, items, strict=True))


def test_keys_of_wide_values_are_equal_only_where_their_texts_are() -> None:
    """The budget a key spends, on random wide values: equal keys, equal texts, in Python and in C; and values that
    differ only past what their texts show share a key."""
    import random

    rng = random.Random(5)
    tracer, ids, _ = asking_tracer()
    abstraction = ids.abstraction
    seen(ids, {f"n{number}": OrderedDict() for number in range(41)})
    texts_by_key: dict[Any, set[str | None]] = {}
    for _ in range(1500):
        value = [wide_value(rng, 1), wide_value(rng, 1)]
        key = abstraction.container_key(value, list)
        assert key is not None
        texts_by_key.setdefault(key, set()).add(abstraction.abstract(value)[1])
        assert tracer.id_of(value) == ids.id_of(value)
    assert len(texts_by_key) > 500
    assert all(len(texts) == 1 for texts in texts_by_key.values())
    wide = [list(range(40)), [*range(39), 7]]  # the last item past the budget
    assert abstraction.container_key(wide, list) == abstraction.container_key([list(range(40)), list(range(40))], list)


class Holds:
    """An object whose field holds a class: a factory, the node class a parser picks."""

    def __init__(self, kind: object) -> None:
        self.kind = kind


def test_a_field_holding_a_class_shows_which_class(pair: tuple[Any, ValueIds]) -> None:
    """By type alone every class in a field was ``type``: an object holding another class looked the same. It shows the
    class now, apart from an instance of it, in Python and in C alike; a class whose metaclass compares in project code
    makes no key (its text is made each time)."""
    tracer, ids = pair
    made = [Holds(Raw), Holds(Node), Holds(Raw()), Holds(Shifty)]
    expected = [seen(ids, value) for value in made]
    assert len(set(expected)) == 4
    assert ids.abstraction.abstract(Holds(Raw))[1] == f"{{kind=type({Raw.__module__}.Raw)}}"
    assert ids.abstraction.abstract(Holds(Raw()))[1] == f"{{kind={Raw.__module__}.Raw}}"
    assert [tracer.keyed_id(value) for value in (Holds(Raw), Holds(Node), Holds(Raw()))] == expected[:3]
    assert tracer.keyed_id(Holds(Shifty)) is None
    assert ids.abstraction.fields_key(Holds(Shifty), Holds) is None
    reference = Abstraction(native=False)  # the Python walk, which the C one must match
    for value in made:
        assert reference.abstract(value) == ids.abstraction.abstract(value), value


SECRET_LEXER = """
class Token:
    __slots__ = ("ttype", "value")

    def __init__(self, ttype, value):
        self.ttype = ttype
        self.value = value


def consume(token):
    return len(token.value)


def show(item):  # the same tokens, not secret here: their keys are known to the keyed tables too
    return item.value


def run(words):
    tokens = [Token("Name", word) for word in words]
    shown = [show(token) for token in tokens]
    seen = [consume(token) for token in tokens]
    tokens[0].value = "changed"  # the same object, another secret
    seen.append(consume(tokens[0]))
    return seen if shown else None
"""

SECRET_TESTS = """
from pkg.lexer import run


def test_tokens():
    assert run(["a", "b", "a", "b", "c"]) == [1, 1, 1, 1, 1, 7]
"""


def test_a_secret_with_a_key_is_remembered_by_its_key_and_only_equal_ones_share_it(
    tmp_path_factory: pytest.TempPathFactory, project_runner: Any
) -> None:
    """A parameter named ``token`` is a secret; the C collector remembers a keyed value's secret by the digest of its
    key (``secret_id``): equal tokens share their digest, others and a token changed since do not, as in Python."""
    files = {"src/pkg/__init__.py": "", "src/pkg/lexer.py": SECRET_LEXER, "tests/test_lexer.py": SECRET_TESTS}
    texts = {}
    for kind in ("c", "python"):
        folder = tmp_path_factory.mktemp(f"secrets-{kind}")
        (folder / "key").write_bytes(b"k" * 32)
        traced_run = project_runner(folder / "project", files, tracer=kind, redaction_key=str(folder / "key"))
        assert traced_run.proc.returncode == 0, traced_run.proc.stdout + traced_run.proc.stderr
        texts[kind] = [str(call.params[0]) for call in traced_run.calls("pkg.lexer:consume")]
    assert texts["c"] == texts["python"]
    first = texts["c"]
    assert len(first) == 6 and all("redacted #" in text for text in first) and "'a'" not in "".join(first)
    assert first[0] == first[2] and first[1] == first[3]
    assert len({first[0], first[1], first[4], first[5]}) == 4
    assert any("value='a'" in str(call.params[0]) for call in traced_run.calls("pkg.lexer:show"))
