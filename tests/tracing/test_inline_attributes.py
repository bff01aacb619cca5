"""Recording an object reads its attributes where the interpreter keeps them, without making its ``__dict__``.

Reading ``__dict__`` makes a dictionary that the object keeps: on 3.12 the program's own reads of its attributes are
then about four times slower (1.5 times on 3.13), for the rest of the object's life, which made the program itself
slower under tracing. ``_walk.inline_namespace`` reads the inline values instead (``_interpreter.c``); it must show
exactly what ``__dict__`` shows, in the same order, or answer None.
"""

from __future__ import annotations

import gc
import sys
from typing import Any

import pytest

from histeg.tracing import _walk
from histeg.tracing.values import Abstraction, native_walk


class Plain:
    def __init__(self, count: int = 3) -> None:
        for index in range(count):
            setattr(self, f"field_{index}", index)


class Derived(Plain):
    def __init__(self) -> None:
        super().__init__()
        self.extra = "text"


class SlotsAndDict:
    __slots__ = ("slot", "__dict__")

    def __init__(self) -> None:
        self.slot = 1
        self.loose = 2


def shapes() -> list[tuple[str, Any]]:
    reordered = Plain()
    del reordered.field_1
    reordered.added = "late"
    reordered.field_1 = "again"
    emptied = Plain()
    for name in ("field_0", "field_1", "field_2"):
        delattr(emptied, name)
    late = Plain(0)
    late.only = [1, 2]
    return [
        ("plain", Plain()),
        ("deleted and added again", reordered),
        ("every attribute deleted", emptied),
        ("attributes set after __init__", late),
        ("a subclass", Derived()),
        ("more attributes than a shared key table holds", Plain(40)),
        ("slots and a dict", SlotsAndDict()),
    ]


@pytest.mark.skipif(not native_walk(), reason="the C walk is not built")
@pytest.mark.parametrize("name", [name for name, _ in shapes()])
def test_the_inline_namespace_is_what_the_dict_shows_in_its_order(name: str) -> None:
    value = dict(shapes())[name]
    found = _walk.inline_namespace(value)
    shown = vars(value)  # made now, after the inline read
    if found is not None:
        assert list(found.items()) == list(shown.items())
    assert _walk.inline_namespace(value) is None, "once the dict is made, it is the one to read"


def test_values_that_are_not_instances_with_inline_attributes_have_no_inline_namespace() -> None:
    if not native_walk():
        pytest.skip("the C walk is not built")
    for value in (1, "text", [1], Plain, SlotsAndDict.__init__, object()):
        assert _walk.inline_namespace(value) is None


def has_a_dict(value: object) -> bool:
    """On 3.12 an object with its attributes inline shows them to the GC one by one; once made, its dict."""
    return any(type(referent) is dict for referent in gc.get_referents(value))


@pytest.mark.skipif(sys.version_info >= (3, 13), reason="3.13 shows the GC the inline values even once a dict is made")
def test_abstracting_an_object_makes_no_dict_for_it() -> None:
    abstraction = Abstraction("structural")
    value = Plain()
    assert not has_a_dict(value)
    text = abstraction.abstract(value)
    assert "field_2" in str(text)
    assert not has_a_dict(value)
    assert abstraction.fields_key(value, Plain) is not None
    assert not has_a_dict(value)


PROJECT = {
    "src/nodes.py": """
        class Node:
            def __init__(self, left, right):
                self.left = left
                self.right = right


        def weigh(node):
            return node.left + node.right
        """,
    "tests/test_nodes.py": """
        import gc
        import sys

        from nodes import Node, weigh


        def test_a_recorded_object_keeps_its_attributes_inline():
            node = Node(1, 2)
            for _ in range(3):
                assert weigh(node) == 3
            if sys.version_info < (3, 13):
                assert not any(type(referent) is dict for referent in gc.get_referents(node))
        """,
}


def test_a_traced_program_keeps_its_objects_attributes_inline(traced: Any) -> None:
    run = traced(PROJECT)
    assert run.proc.returncode == 0, run.proc.stdout + run.proc.stderr
    calls = run.calls("nodes:weigh")
    assert len(calls) == 3 and all(call.params[0] is not None for call in calls), "the node was recorded each time"
