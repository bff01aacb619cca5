"""Texts of unchanged containers found again (``_textmemo.c``): every answer is the Python walk's, through every kind
of change a container's text can see, and the memo keeps no container of the program alive."""

from __future__ import annotations

import copy
import gc
import weakref
from collections.abc import Callable
from typing import Any

import pytest

from histeg.tracing import values
from histeg.tracing.values import MAX_ITEMS, Abstraction

pytestmark = pytest.mark.skipif(not values.native_walk(), reason="the C walk is not built here")


class Node:
    """An object inside a container: shown there by its class's name."""


class OtherNode:
    pass


class Holder:
    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


def parser_state(count: int = 12) -> dict[str, Any]:
    """What a parser keeps through a parse: a list of token dicts (more nodes than one walk's budget shows), a lexer's
    characters, and a few containers below them."""
    return {
        "tokens": [{"type": "unquoted_identifier", "value": f"p{i}", "start": i, "end": i + 2} for i in range(count)],
        "chars": list("foo.bar"),
        "nested": {"level": [{"deep": [1, 2, (3, [4])]}], "pair": (1.5, None, True)},
        "node": [Node(), Node()],
    }


def walker(native: Abstraction) -> Any:
    return native._text.__self__  # type: ignore[attr-defined]


def check_alike(native: Abstraction, python: Abstraction, value: Any, note: str) -> None:
    """The container itself and an object holding it, at every depth and every budget that runs out somewhere."""
    holder = Holder(_index=3, state=value, _buffer_size=2)
    for shown in (value, holder, [value], {"state": value}):
        assert native.abstract(shown) == python.abstract(shown), note
        for budget in (0, 1, 2, 5, 17, MAX_ITEMS, 500):
            for depth in (0, 1, 2):
                spent_c, spent_py = [budget], [budget]
                assert native._text(shown, type(shown), spent_c, depth) == python._text(shown, type(shown), spent_py, depth), (
                    note,
                    budget,
                    depth,
                )
                assert spent_c == spent_py, (note, budget, depth)


def _replace_value(state: dict[str, Any]) -> None:
    state["tokens"][0]["value"] = "changed"


def _equal_text_other_object(state: dict[str, Any]) -> None:
    state["tokens"][1]["value"] = "p1"  # equal to the text it replaces, made at run time: another object


def _append_token(state: dict[str, Any]) -> None:
    state["tokens"].append({"type": "eof", "value": "", "start": 99, "end": 99})


def _reorder_keys(state: dict[str, Any]) -> None:
    token = state["tokens"][0]
    token["type"] = token.pop("type")  # the same keys and values, in another order


def _item_becomes_an_object(state: dict[str, Any]) -> None:
    state["chars"][2] = Node()


def _class_reassigned(state: dict[str, Any]) -> None:
    state["node"][0].__class__ = OtherNode


def _item_becomes_a_list(state: dict[str, Any]) -> None:
    state["chars"][0] = ["f"]


def _deep_dict_grows(state: dict[str, Any]) -> None:
    state["nested"]["level"][0]["deeper"] = 1


def _list_in_a_tuple_changes(state: dict[str, Any]) -> None:
    state["nested"]["level"][0]["deep"][2][1][0] = 5


def _secret_key_appears(state: dict[str, Any]) -> None:
    state["tokens"][0]["password"] = "hunter2"


def _int_becomes_bool(state: dict[str, Any]) -> None:
    state["nested"]["level"][0]["deep"][0] = True


def _float_replaced(state: dict[str, Any]) -> None:
    state["nested"]["pair"] = (2.5, None, True)


def _list_emptied(state: dict[str, Any]) -> None:
    state["tokens"].clear()


def _list_swapped(state: dict[str, Any]) -> None:
    tokens = state["tokens"]
    tokens[0], tokens[1] = tokens[1], tokens[0]


CHANGES: list[Callable[[dict[str, Any]], None]] = [
    _replace_value, _equal_text_other_object, _append_token, _reorder_keys, _item_becomes_an_object, _class_reassigned,
    _item_becomes_a_list, _deep_dict_grows, _list_in_a_tuple_changes, _secret_key_appears, _int_becomes_bool, _float_replaced,
    _list_swapped, _list_emptied,
]  # fmt: skip


@pytest.mark.parametrize("change", CHANGES, ids=lambda change: change.__name__.strip("_"))
def test_a_container_changed_in_place_is_shown_as_it_is_now(change: Callable[[dict[str, Any]], None]) -> None:
    native, python = Abstraction(), Abstraction(native=False)
    state = parser_state()
    check_alike(native, python, state, "before")
    assert walker(native).remembered > 0  # the texts are kept: what follows reads them
    change(state)
    check_alike(native, python, state, f"after {change.__name__}")


def test_an_unchanged_container_is_found_again_in_each_new_state_that_holds_it() -> None:
    """A parser's states: each a new object with a new index, all holding the same token list."""
    native, python = Abstraction(), Abstraction(native=False)
    state = parser_state(30)
    for index in range(40):
        holder = Holder(_index=index, _tokens=state["tokens"], _chars=state["chars"])
        assert native.abstract(holder) == python.abstract(holder)
    assert walker(native).remembered > 0


@pytest.mark.parametrize("kind", ["parser state", "lexer table"])
def test_every_change_in_turn_on_one_structure(kind: str) -> None:
    """The changes one after another on the same objects, each walked: entries found stale are made again."""
    native, python = Abstraction(), Abstraction(native=False)
    state, changes = (parser_state(), CHANGES) if kind == "parser state" else (lexer_table(), TOKEN_TYPE_CHANGES)
    for change in changes:
        check_alike(native, python, state, f"before {change.__name__}")
        change(state)
    check_alike(native, python, state, "at the end")


def test_copies_with_the_same_nodes_and_a_reused_address_are_shown_alike() -> None:
    """A container freed and another made where it was: its text is the memo's only when it has the same nodes."""
    native, python = Abstraction(), Abstraction(native=False)
    shared = ["a", "b", 7]
    for round in range(200):
        container = [shared[0], shared[1], shared[2] if round % 3 else round]
        assert native.abstract(container) == python.abstract(container)
        del container
    for round in range(50):
        state = copy.deepcopy(parser_state(round % 7))
        check_alike(native, python, state, f"copy {round}")


def test_the_memo_keeps_no_container_of_the_program_alive() -> None:
    """A list shown and then given an object with a finalizer: dropping the list frees it at once, as untraced."""
    native = Abstraction()
    finalized: list[str] = []

    class Finalized:
        def __del__(self) -> None:
            finalized.append("done")

    container: list[Any] = ["a", "b", {"c": [1, 2]}]
    for _ in range(3):
        native.abstract(Holder(items=container))
    assert walker(native).remembered > 0
    container.append(Finalized())
    probe = Finalized()
    seen = weakref.ref(probe)
    container[2]["c"].append(probe)
    del probe
    gc.disable()
    try:
        del container
        assert finalized == ["done", "done"] and seen() is None
    finally:
        gc.enable()


def test_new_tables_forget_the_memo() -> None:
    native = Abstraction()
    state = parser_state()
    for _ in range(2):
        native.abstract(Holder(state=state))
    memo = walker(native)
    assert memo.remembered > 0
    memo.__init__(native.walk_tables())
    assert memo.remembered == 0


def test_a_container_shown_partly_by_python_or_as_a_secret_is_not_kept() -> None:
    """What the walk hands Python (a Decimal, a date), a class shown by name, or a secret's item: the container's text
    is made again every time, and stays the Python walk's."""
    import datetime
    import decimal

    for shown in ([1, decimal.Decimal("1.5")], {"when": datetime.date(2024, 1, 1)}, [Node, 2], {"password": "x", "user": "u"}):
        native, python = Abstraction(), Abstraction(native=False)
        for _ in range(3):
            assert native.abstract(Holder(items=shown)) == python.abstract(Holder(items=shown))
        assert walker(native).remembered == 0, shown


class TokenType(tuple):
    """A lexer's token type (pygments' ``_TokenType``): a tuple subclass with fields, shown by its items below the top."""

    def __repr__(self) -> str:  # never called by the walk
        raise AssertionError("the walk ran the program's code")


class OtherTokenType(tuple):
    pass


class Rules(list):
    """A list subclass: its items are walked every time."""


def lexer_table() -> dict[str, Any]:
    """A lexer's rules, compiled state by state: (pattern, token type, next state), every token type a tuple subclass."""
    name, keyword = TokenType(("Name",)), TokenType(("Keyword", "Reserved"))
    name.subtypes = set()
    return {
        "root": [("[a-z]+", name, "#pop"), ("if|else", keyword, "root"), (r"\s+", TokenType(("Text",)), None)],
        "string": [('"', TokenType(("String", "Double")), "#pop"), (name, keyword)],
        "rules": Rules([("x", name)]),
    }


def _token_type_replaced_by_an_equal_one(table: dict[str, Any]) -> None:
    table["root"][0] = ("[a-z]+", TokenType(("Name",)), "#pop")


def _token_type_replaced_by_another(table: dict[str, Any]) -> None:
    table["root"][1] = ("if|else", TokenType(("Keyword", "Constant")), "root")


def _token_type_of_another_class(table: dict[str, Any]) -> None:
    table["string"][0] = ('"', OtherTokenType(("String", "Double")), "#pop")


def _token_type_class_reassigned(table: dict[str, Any]) -> None:
    table["string"][1][0].__class__ = OtherTokenType


def _token_type_field_changed(table: dict[str, Any]) -> None:
    table["root"][0][1].subtypes = {"Name.Builtin"}  # its fields are not shown below the top


def _list_subclass_item_changed(table: dict[str, Any]) -> None:
    table["rules"].append(("y", TokenType(("Other",))))


TOKEN_TYPE_CHANGES: list[Callable[[dict[str, Any]], None]] = [
    _token_type_replaced_by_an_equal_one, _token_type_replaced_by_another, _token_type_of_another_class,
    _token_type_class_reassigned, _token_type_field_changed, _list_subclass_item_changed,
]  # fmt: skip


@pytest.mark.parametrize("change", TOKEN_TYPE_CHANGES, ids=lambda change: change.__name__.strip("_"))
def test_token_types_below_the_top_are_kept_and_shown_as_they_are_now(change: Callable[[dict[str, Any]], None]) -> None:
    """A lexer's table holds token types everywhere: a tuple subclass below the top shows its items alone, which never
    change, so a table holding them is kept like any container (it was walked anew every time, most of the walks of
    pygments' suite); every answer stays the Python walk's through each change a token type can see."""
    native, python = Abstraction(), Abstraction(native=False)
    table = lexer_table()
    for shown in (table["root"], {"root": table["root"]}):  # token types shown by their items, then by their length
        rules = Abstraction()
        rules.abstract(shown)
        assert walker(rules).remembered > 0, f"rules holding token types are kept: {shown}"
    check_alike(native, python, table, "before")
    change(table)
    check_alike(native, python, table, f"after {change.__name__}")

