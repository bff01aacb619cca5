"""An object's or a tuple's id is found again by what its key is made of (``_objectmemo.c``), never wrongly.

Why: a parser records the same token in a dozen calls and builds the same tuple of token types in every call that
matches one; the memo answers those without making or digesting a key. Every answer is checked against
``ValueIds.id_of`` after each kind of change a key sees, and the memo must hold nothing the program could miss: no
object it could see freed later than untraced.
"""

from __future__ import annotations

import gc
import weakref
from typing import Any

from tests.tracing.conftest import seen
from tests.tracing.test_key_memo import KIND, Kind, Token


class Group:
    """A token list: its key shows its tokens (a list): their number, and each one's class."""

    __slots__ = ("tokens", "parent")

    def __init__(self, tokens: list[Any]) -> None:
        self.tokens = tokens
        self.parent = None


class Plain:
    def __init__(self, text: str) -> None:
        self.text = text
        self.size = 1


class Owner:
    """A class held by identity in a field: a key the memo never keeps."""


class Watched(Token):
    """A token that can be weakly referenced."""

    __slots__ = ("__weakref__",)


def test_an_object_seen_again_is_answered_by_the_memo_and_every_change_gets_python_s_id(pair: tuple[Any, Any]) -> None:
    tracer, ids = pair
    token = Token("select")
    known = seen(ids, token)
    assert tracer.id_of(token) == known
    assert tracer.remembered == 1
    digested = tracer.digested
    assert tracer.id_of(token) == known == tracer.id_of(Token("select"))  # another token of the same text object: found
    assert tracer.remembered == 1
    assert tracer.id_of(Token("select!"[:-1])) == known  # an equal text made apart: keyed, and remembered apart
    assert tracer.remembered == 2
    token.parent = Token("parent")
    known = seen(ids, token)
    assert tracer.id_of(token) == known
    remembered = tracer.remembered
    token.parent = Token("other")  # a field taken by its class: an object of the same class keys alike
    assert tracer.id_of(token) == ids.id_of(token) == known
    assert tracer.remembered == remembered  # found by the memo
    changes: list[tuple[str, object]] = [
        ("value", "selects"),
        ("value", 7),
        ("value", True),
        ("value", None),
        ("kind", KIND),  # a token type: its content, not its class alone
        ("parent", Plain("p")),  # a field of another class
        ("flag", True),
        ("count", 1 << 70),  # an int past 64 bits
    ]
    for name, new in changes:
        setattr(token, name, new)
        assert tracer.id_of(token) == seen(ids, token), (name, new)
        assert tracer.id_of(token) == ids.id_of(token), (name, new)
    del token.count  # an unset slot
    assert tracer.id_of(token) == seen(ids, token)
    assert tracer.digested >= digested


def test_objects_with_inline_attributes_are_answered_alike_and_a_new_attribute_changes_the_key(pair: tuple[Any, Any]) -> None:
    tracer, ids = pair
    plain = Plain("a")
    known = seen(ids, plain)
    assert tracer.id_of(plain) == known == tracer.id_of(plain)
    plain.extra = "b"  # type: ignore[attr-defined]
    assert tracer.id_of(plain) == seen(ids, plain) != known
    del plain.extra  # type: ignore[attr-defined]
    plain.size = 2
    assert tracer.id_of(plain) == seen(ids, plain) != known


def test_a_list_in_a_field_is_read_again_each_time(pair: tuple[Any, Any]) -> None:
    tracer, ids = pair
    group = Group([Token("a"), "word", 3])
    known = seen(ids, group)
    assert tracer.id_of(group) == known
    remembered = tracer.remembered
    group.tokens[0] = Token("z")  # another token in its place: taken by its class, the same key
    assert tracer.id_of(group) == ids.id_of(group) == known
    assert tracer.remembered == remembered
    changes = [
        lambda: group.tokens.append(Token("b")),  # the same list object, one more item
        lambda: group.tokens.__setitem__(1, "other"),  # a text in its place
        lambda: group.tokens.__setitem__(2, 4),
        lambda: group.tokens.__setitem__(0, Plain("p")),  # an item of another class
        lambda: setattr(group, "tokens", tuple(group.tokens)),  # a tuple of the same items
        lambda: setattr(group, "tokens", []),
    ]
    for change in changes:
        change()
        assert tracer.id_of(group) == seen(ids, group)
        assert tracer.id_of(group) == ids.id_of(group)


def test_keys_made_of_a_class_by_identity_or_of_nested_containers_are_never_remembered(pair: tuple[Any, Any]) -> None:
    tracer, ids = pair
    nested = Group([[Token("a")], {"k": 1}])
    known = seen(ids, nested)
    assert tracer.id_of(nested) == known
    nested.tokens[0].append(Token("b"))  # inside the inner list: the memo would not see it
    assert tracer.id_of(nested) == seen(ids, nested) != known
    holder = Token("h")
    holder.kind = Owner
    assert tracer.id_of(holder) == seen(ids, holder)
    holder.kind = Token  # another class in the same field: another key
    assert tracer.id_of(holder) == seen(ids, holder)
    for value in ([1, 2], {"a": 1}, (1, [2])):
        assert tracer.id_of(value) == seen(ids, value)
    remembered = tracer.remembered
    for value in (nested, holder, [1, 2], {"a": 1}, (1, [2])):
        tracer.id_of(value)
    assert tracer.remembered == remembered


def test_a_tuple_built_again_of_the_same_items_is_answered_by_the_memo(pair: tuple[Any, Any]) -> None:
    tracer, ids = pair
    word = "AS"
    first = (KIND, word)
    known = seen(ids, first)
    assert tracer.id_of(first) == known
    remembered = tracer.remembered
    again = (KIND, "A" + "S"[:1])  # another tuple, another text object: keyed again, then remembered too
    assert again is not first and tracer.id_of(again) == ids.id_of(again) == known
    rebuilt = (KIND, word)  # the same items in a new tuple (built at run time): found by its items
    assert rebuilt is not first and tracer.id_of(rebuilt) == known
    assert tracer.remembered == remembered + 1
    for other in ((KIND, "AT"), (word, KIND), (KIND,), (KIND, word, None), (Kind(("Name",)), word)):
        assert tracer.id_of(other) == seen(ids, other), other
        assert tracer.id_of(other) == ids.id_of(other), other


def test_the_memo_holds_nothing_the_program_sees_freed(pair: tuple[Any, Any]) -> None:
    tracer, ids = pair
    token = Token("t")
    token.parent = Plain("p")  # taken by its class: not held
    parent = weakref.ref(token.parent)
    seen(ids, token)
    tracer.id_of(token)
    assert tracer.remembered == 1
    token.parent = Plain("q")
    gc.collect()
    assert parent() is None
    item = Plain("i")  # a tuple item that can be weakly referenced: its tuple is never kept
    watched = weakref.ref(item)
    built = (item, "x")
    seen(ids, built)
    remembered = tracer.remembered
    assert tracer.id_of(built) == ids.id_of(built)
    assert tracer.remembered == remembered
    del built, item
    gc.collect()
    assert watched() is None


def test_tables_bound_again_empty_the_memo(pair: tuple[Any, Any]) -> None:
    from histeg.tracing.value_ids import ValueIds
    from histeg.tracing.values import Abstraction

    tracer, ids = pair
    token = Token("select")
    seen(ids, token)
    tracer.id_of(token)
    assert tracer.remembered == 1
    fresh = ValueIds(lambda *record: None, Abstraction())
    for _ in range(5):
        fresh.id_of(("padding", _))  # the new table numbers its values otherwise
    tracer.keyed(fresh.native_tables())
    assert tracer.remembered == 0
    tracer.reset(lambda: 0, lambda index, data: None, fresh.by_type, fresh.by_value, fresh.id_of)
    assert tracer.id_of(token) == seen(fresh, token)


def test_many_objects_and_tuples_sharing_slots_each_get_their_own_id(pair: tuple[Any, Any]) -> None:
    tracer, ids = pair
    tokens = [Token(f"w{k}", KIND) for k in range(20_000)]  # more than the memo has slots: entries meet and replace
    tuples = [(KIND, f"w{k}") for k in range(20_000)]
    for value in tokens[:2] + tuples[:2]:
        seen(ids, value)
    for _ in range(2):
        for token, pair_of in zip(tokens, tuples, strict=True):
            assert tracer.id_of(token) == ids.id_of(token)
            assert tracer.id_of(pair_of) == ids.id_of(pair_of)


def test_a_list_emptied_by_a_finalizer_while_its_object_is_keyed_is_read_as_python_reads_it(pair: tuple[Any, Any]) -> None:
    """Keying a new value allocates, an allocation may collect, and a finalizer may then change the list a field holds
    (or free its items) before the memo keeps what the key was made of: the memo holds those items meanwhile, and the
    next answer is Python's for the list as it is."""
    tracer, ids = pair
    seen(ids, Group([Watched("y")]))  # the classes are met: the next group's key is made in C, then walked as new
    group = Group([Watched(f"only-here-{k}") for k in range(5)])  # its tokens are held by the list alone
    alive = [weakref.ref(token) for token in group.tokens]

    cleared: list[bool] = []

    class Clearer:
        def __del__(self) -> None:
            group.tokens.clear()
            cleared.append(True)

    clearer = Clearer()
    clearer.cycle = clearer  # type: ignore[attr-defined]  # garbage only a collection finds
    del clearer
    threshold = gc.get_threshold()
    gc.set_threshold(1)
    remembered = tracer.remembered
    try:
        tracer.id_of(group)
    finally:
        gc.set_threshold(*threshold)
    assert cleared, "the finalizer ran while the group was keyed"
    assert tracer.remembered == remembered + 1, "kept: what its key was made of, held meanwhile"
    assert group.tokens == []
    assert tracer.id_of(group) == seen(ids, group)
    assert tracer.id_of(group) == ids.id_of(group)
    del group
    gc.collect()
    assert all(token() is None for token in alive)  # nothing the memo kept keeps them


def visitor(node: Any) -> Any:
    return node


class Visited:
    pass


def test_functions_and_classes_passed_as_values_are_found_by_their_names(pair: tuple[Any, Any]) -> None:
    """A visitor or a key function, a class `isinstance` is asked about: each is keyed by its name (a function by its
    module and qualified name as they are now, a class by itself), and the memo answers it by those alone; a function
    renamed gets its new name's id, a closure made anew at every call is not held."""
    tracer, ids = pair
    for value in (visitor, Visited, int):
        known = seen(ids, value)
        remembered = tracer.remembered
        assert tracer.id_of(value) == known
        assert tracer.remembered == remembered + 1, value  # kept by its name's parts
        assert tracer.id_of(value) == known and tracer.remembered == remembered + 1, value
    before = tracer.id_of(visitor)
    visitor.__qualname__ = "renamed"
    try:
        assert tracer.id_of(visitor) == seen(ids, visitor) != before
    finally:
        visitor.__qualname__ = "visitor"
    assert tracer.id_of(visitor) == before

    def make() -> Any:
        def post(token: Any) -> Any:
            return token

        return post

    first = make()
    first_id = seen(ids, first)
    assert tracer.id_of(first) == first_id
    remembered = tracer.remembered
    closures = [weakref.ref(first)]
    del first
    for _ in range(3):  # a new function object each time, of one name: found by it, and none kept alive
        made = make()
        assert tracer.id_of(made) == first_id == ids.id_of(made) and tracer.remembered == remembered
        closures.append(weakref.ref(made))
        del made
    gc.collect()
    assert all(closure() is None for closure in closures)
    nameless = make()
    nameless.__module__ = 5  # type: ignore[assignment]  # not a name key: answered the long way, as Python answers
    assert tracer.id_of(nameless) == seen(ids, nameless)


def test_a_token_type_is_found_by_its_items_and_its_fields_and_keyed_anew_when_they_change(pair: tuple[Any, Any]) -> None:
    """A lexer's token type: a tuple subclass keyed by its items and the fields of its own __dict__ (its parent, the
    subtypes made on it). The memo reads that dict where it is, and finds the type again while its fields stay so."""
    tracer, ids = pair
    keyword = Kind(("Keyword",))
    keyword.parent = Kind(())  # type: ignore[misc]
    dml = Kind(("Keyword", "DML"))
    dml.parent = keyword  # type: ignore[misc]
    keyword.DML = dml  # type: ignore[attr-defined]
    for value in (keyword, dml, KIND):
        known = seen(ids, value)
        remembered = tracer.remembered
        assert tracer.id_of(value) == known
        assert tracer.id_of(value) == known and tracer.remembered == remembered + 1, value
    changes: list[tuple[str, Any]] = [
        ("DDL", Kind(("Keyword", "DDL"))),  # a subtype made on it: a new field
        ("parent", "root"),  # a field of another class
        ("parent", None),
        ("DDL", [Kind(("x",)), 1]),  # a list: its length and items
    ]
    for name, new in changes:
        setattr(keyword, name, new)
        assert tracer.id_of(keyword) == seen(ids, keyword), (name, new)
        assert tracer.id_of(keyword) == ids.id_of(keyword), (name, new)
    keyword.DDL.append(2)  # type: ignore[attr-defined]  # the list changed in place
    assert tracer.id_of(keyword) == seen(ids, keyword)
    del keyword.DDL  # type: ignore[attr-defined]
    assert tracer.id_of(keyword) == seen(ids, keyword)
    odd = Kind(("Keyword", Kind(("nested",))))  # an item taken by more than its value: not kept, answered as Python does
    odd.parent = None  # type: ignore[misc]
    remembered = tracer.remembered
    assert tracer.id_of(odd) == seen(ids, odd) and tracer.remembered == remembered
