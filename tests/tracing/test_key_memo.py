"""A keyed value's id is found again by a 128-bit digest of its key (``_keymemo.c``), never wrongly.

Why: making a program object's key (lists, tuples, their hashes) was most of what recording its value cost. The
digest takes the same parts: every answer ``id_of`` gives through it is checked against ``ValueIds.id_of``, on the
second sight of a value (answered by the digest alone) and after each kind of change a key sees.
"""

from __future__ import annotations

import gc
import weakref
from typing import Any

from histeg.tracing.value_ids import ValueIds
from histeg.tracing.values import Abstraction
from tests.tracing.conftest import keyed_tracer, seen


class Token:
    __slots__ = ("value", "kind", "parent", "flag", "count")

    def __init__(self, value: str, kind: object = None) -> None:
        self.value = value
        self.kind = kind
        self.parent: object = None
        self.flag = False
        self.count = 0


class Kind(tuple):
    parent = None


KIND = Kind(("Keyword", "DML"))


class Node:
    def __init__(self, text: str, kids: list[Any] | None = None) -> None:
        self.text = text
        self.kids = kids or []
        self.ratio = 1


def test_a_value_seen_again_is_answered_by_its_digest_with_the_id_python_gives(pair: tuple[Any, ValueIds]) -> None:
    tracer, ids = pair
    values = [Token("select"), Token("a", Token("kind")), Node("n", [1, "x", {"k": (1, "v")}]), keyed_tracer, Token, KIND]
    for value in values:
        seen(ids, value)
    for value in values:
        assert tracer.id_of(value) == ids.id_of(value), value
    kept = tracer.digested
    assert kept == len(values)
    for value in values:
        assert tracer.id_of(value) == ids.id_of(value), value
    assert tracer.digested == kept  # answered by the digest: nothing new kept
    for container in ([{"type": "name", "value": "x"}], {"a": [1, 2]}):  # keyed, but seldom the same twice
        assert tracer.id_of(container) == seen(ids, container)
    assert tracer.digested == kept
    pair_of = (KIND, "a" + str(len(values)))  # a lexer's (token type, text): yielded and matched again and again
    known = seen(ids, pair_of)
    assert tracer.id_of(pair_of) == known
    assert tracer.digested == kept + 1
    again = (KIND, "a" + str(len(values)))  # made apart: answered by the digest of its items
    assert again is not pair_of and tracer.id_of(again) == ids.id_of(pair_of)
    assert tracer.digested == kept + 1


def test_equal_values_made_apart_share_an_id_and_every_change_gets_python_s_new_id(pair: tuple[Any, ValueIds]) -> None:
    tracer, ids = pair
    text = "select!"[:-1]  # equal to "select", another string object
    assert text is not "select"  # noqa: F632
    first = Token("select")
    seen(ids, first)
    assert tracer.id_of(first) == tracer.id_of(Token(text)) == ids.id_of(first)
    changes = [
        ("value", "selects"),
        ("value", "sélect"),  # another kind of string
        ("flag", True),
        ("count", 1),
        ("count", True),  # 1 == True, but a bool is shown as one
        ("count", 2**70),  # past 64 bits: no digest, the key says
        ("kind", Token("kind")),
        ("parent", Node("p")),
    ]
    ids_seen = {tracer.id_of(first)}
    for name, changed in changes:
        token = Token("select")
        setattr(token, name, changed)
        expected = seen(ids, token)
        assert tracer.id_of(token) == expected and tracer.id_of(token) == expected, (name, changed)
        ids_seen.add(expected)
    assert len(ids_seen) == len(changes) + 1
    unset = Token("select")
    del unset.count
    assert tracer.id_of(unset) == seen(ids, unset) not in ids_seen


def test_values_without_a_key_keep_nothing_and_get_python_s_id(pair: tuple[Any, ValueIds]) -> None:
    tracer, ids = pair
    measured = Node("ratio")
    measured.ratio = 0.5  # type: ignore[assignment]  # a float field: shown by value, never keyed
    for value in (measured, Token("x" * 600), [{"x": 1.5}], {"password": "p"}):
        expected = seen(ids, value)
        assert tracer.id_of(value) == expected and tracer.id_of(value) == expected, value
    assert tracer.digested == 0


def test_new_tables_let_go_of_what_the_digests_held() -> None:
    """Each entry holds its key, so that no class a digest took the address of is freed and its address reused while
    the entry is kept; a trace file's new tables (after a fork) empty them."""
    ids = ValueIds(lambda *record: None, Abstraction())
    tracer = keyed_tracer(ids)
    made = type("Made", (), {"__init__": lambda self: setattr(self, "text", "t")})
    value = made()
    seen(ids, value)
    assert tracer.id_of(value) == ids.id_of(value) and tracer.digested == 1
    alive = weakref.ref(made)
    del made, value
    ids = ValueIds(lambda *record: None, Abstraction())
    tracer.reset(lambda: 0, lambda index, data: None, ids.by_type, ids.by_value, ids.id_of)  # as after a fork
    tracer.keyed(ids.native_tables())
    gc.collect()
    assert tracer.digested == 0 and alive() is None


def test_a_tuple_holding_a_token_type_python_never_met_is_digested_with_python_s_id(pair: tuple[Any, ValueIds]) -> None:
    """A lexer's (token type, text) whose token type Python has not keyed yet: the C collector keys the token type's
    content as Python would and keeps it where Python keeps it, so the tuple is digested (it was keyed by its container
    every time, Python never meeting that token type again) and gets the id Python gives."""
    tracer, ids = pair
    seen(ids, (Kind(("Other",)), "x"))  # the class met: its tables are settled
    fresh = Kind(("Name", "Builtin"))
    kept = tracer.digested
    value = (fresh, "len")
    known = tracer.id_of(value)
    assert ids._contents[id(fresh)] == (fresh, ids._tuple_key(fresh, nested=True))
    assert tracer.digested == kept + 1, "digested, not keyed by its container"
    assert known == ids.id_of(value) == tracer.id_of((fresh, "len"))
    assert tracer.id_of((fresh, "other")) == ids.id_of((fresh, "other"))
    for _ in range(3):  # new token types at reused addresses: never another's content
        again = Kind(("Name", "Other"))
        assert tracer.id_of((again, "len")) == ids.id_of((again, "len")) != known
        del again


def test_lists_and_dicts_seen_again_are_answered_by_their_digest_and_every_change_gets_python_s_id(
    pair: tuple[Any, ValueIds],
) -> None:
    """An interpreter's AST nodes and the document it searches (dicts and lists) are passed to every visit: their keys
    are digested from the same parts as ``container_key`` makes them (they were made and looked up each time), and a
    container changed in place is never answered with its old id."""
    tracer, ids = pair
    node = {"type": "field", "children": [], "value": "foo"}
    document = {"foo": [1, "x", None], "bar": {"baz": 2}}
    tokens = [{"type": "lbracket", "start": 0}, {"type": "number", "start": 1, "value": 3}]
    for container in (node, document, tokens):
        seen(ids, container)  # the tables settled: the names met, none a secret
    kept = tracer.digested
    for container in (node, document, tokens):
        assert tracer.id_of(container) == ids.id_of(container)
    assert tracer.digested == kept + 3
    for container in (node, document, tokens, dict(node), list(tokens)):  # again, and equal copies: by their digests
        assert tracer.id_of(container) == ids.id_of(container)
    assert tracer.digested == kept + 3
    changes = [
        lambda: node.__setitem__("value", "bar"),
        lambda: node["children"].append({"type": "field"}),
        lambda: document["foo"].__setitem__(1, "y"),
        lambda: document["bar"].__setitem__("baz", 3),
        lambda: document.update(qux=True),
        lambda: tokens.reverse(),
        lambda: tokens[0].update(start=1),
        lambda: tokens.append(1.5),  # a float: no key
        lambda: node.update(password="hunter2"),  # a secret's name: no key
    ]
    for change in changes:
        change()
        for container in (node, document, tokens):
            assert tracer.id_of(container) == seen(ids, container)
    reordered = {"value": "bar", "type": "field"}
    same_items = {"type": "field", "value": "bar"}
    assert tracer.id_of(reordered) == seen(ids, reordered) != seen(ids, same_items) == tracer.id_of(same_items)
