"""What the value tables say about a class is kept in C once said (``_typefacts.c``), and never before.

A table that has no answer yet for a class (Python has not met it) is asked again the next time, and objects of one
class whose fields are other names (another attribute, a secret's name) get the id Python gives them, whatever the
objects met before them.
"""

from __future__ import annotations

from typing import Any

from histeg.tracing.value_ids import ValueIds
from tests.tracing.conftest import seen


class Token:
    __slots__ = ("value", "kind")

    def __init__(self, value: str) -> None:
        self.value = value
        self.kind = None


class Node:
    def __init__(self, text: str) -> None:
        self.text = text
        self.ratio = 1


class Empty:
    __slots__ = ()  # no state to show: one id for every instance


def test_a_class_python_has_not_met_yet_is_asked_again_until_it_has(pair: tuple[Any, ValueIds]) -> None:
    tracer, ids = pair
    first = Token("select")
    assert tracer.id_of(first) == ids.id_of(first)  # no table knows Token yet: Python answers, and classifies it
    assert tracer.digested == 0
    second = Token("from")
    expected = seen(ids, second)
    assert tracer.id_of(second) == expected and tracer.digested == 1  # now answered in C, by its key's digest
    assert tracer.id_of(Token("from")) == expected and tracer.digested == 1


def test_objects_of_one_class_with_other_field_names_get_python_s_ids(pair: tuple[Any, ValueIds]) -> None:
    tracer, ids = pair
    plain, other, secret, reordered = Node("a"), Node("a"), Node("a"), Node.__new__(Node)
    other.extra = "x"  # type: ignore[attr-defined]
    secret.password = "x"  # type: ignore[attr-defined]  # as many fields as `other`: a secret's name, never keyed
    reordered.ratio = 1  # type: ignore[attr-defined]
    reordered.text = "a"  # type: ignore[attr-defined]
    values = [plain, other, secret, reordered]
    expected = {id(value): seen(ids, value) for value in values}
    for value in [*values, secret, other, plain, secret, reordered, other]:
        assert tracer.id_of(value) == expected[id(value)], vars(value)
    assert len({expected[id(plain)], expected[id(other)], expected[id(secret)]}) == 3
    assert expected[id(reordered)] == expected[id(plain)]  # the same fields in another order show alike


def test_a_class_whose_values_all_look_alike_keeps_its_one_id(pair: tuple[Any, ValueIds]) -> None:
    tracer, ids = pair
    expected = seen(ids, Empty())
    assert ids.by_type[Empty] == expected
    assert [tracer.id_of(Empty()) for _ in range(3)] == [expected] * 3
    node = Node("n")
    assert tracer.id_of(node) == seen(ids, node)
    assert Node not in ids.by_type and tracer.id_of(node) == ids.id_of(node)

