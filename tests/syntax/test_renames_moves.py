"""Renamed functions, methods and parameters; functions moved within and across files."""

from __future__ import annotations

from tests.syntax.helpers import changes, summary

BODY = """
    total = 0
    for item in items:
        if item > limit:
            total += item
    return total
"""


def _function(name: str, params: str = "items, limit", indent: str = "") -> str:
    body = "\n".join(indent + line for line in BODY.strip("\n").splitlines())
    return f"{indent}def {name}({params}):\n{body}\n"


def test_function_rename() -> None:
    found = changes(_function("total_above") + "\nX = 1\n", _function("sum_above") + "\nX = 1\n")
    assert [(c.type, c.code_type, c.entity, c.old_entity, c.old_name, c.new_name) for c in found] == [
        ("rename", "function", "m:sum_above", "m:total_above", "total_above", "sum_above")
    ]
    assert found[0].significance == "high"


def test_method_rename_with_a_change_inside() -> None:
    old = "class Basket:\n" + _function("total", "self, items, limit", "    ")
    new = "class Basket:\n" + _function("sum", "self, items, limit", "    ").replace("total += item", "total += 2 * item")
    found = changes(old, new)
    assert summary(found) == {("m:Basket.sum", "rename", "function"), ("m:Basket.sum", "modification", "assignment")}
    assert all(c.klass == "m:Basket" and c.function == "m:Basket.sum" for c in found)


def test_parameter_rename() -> None:
    old = _function("f")
    new = _function("f", "items, threshold").replace("item > limit", "item > threshold")
    found = changes(old, new)
    rename = [c for c in found if c.type == "rename"]
    assert [(c.code_type, c.old_name, c.new_name, c.entity) for c in rename] == [("parameter", "limit", "threshold", "m:f")]
    assert summary(found) == {("m:f", "rename", "parameter"), ("m:f", "modification", "condition")}


def test_renames_can_be_turned_off() -> None:
    found = changes(_function("total_above"), _function("sum_above"), renames=False)
    assert summary(found) == {("m:total_above", "removal", "function"), ("m:sum_above", "addition", "function")}
    old = _function("f")
    new = _function("f", "items, threshold").replace("item > limit", "item > threshold")
    assert ("m:f", "modification", "parameter") in summary(changes(old, new, renames=False))


def test_parameter_added_and_default_changed() -> None:
    found = changes("def f(a, b=1):\n    return a + b\n", "def f(a, b=2, c=None):\n    return a + b\n")
    assert sorted((c.type, c.code_type, c.after, c.significance) for c in found) == [
        ("addition", "parameter", "c=None", "crucial"),
        ("modification", "parameter", "b=2", "high"),
    ]


def test_function_moved_within_a_file() -> None:
    first, second = _function("first"), _function("second").replace("total", "acc")
    found = changes(f"{first}\n\n{second}\nX = 1\n", f"{second}\n\nX = 1\n\n{first}")
    moves = [c for c in found if c.type == "move"]
    assert [(c.entity, c.code_type, c.significance) for c in moves] == [("m:first", "function", "low")] or [
        (c.entity, c.code_type) for c in moves
    ] == [("m:second", "function")]
    assert all(c.type == "move" for c in found)


def test_function_moved_into_a_class_is_a_move_with_a_new_identifier() -> None:
    old = _function("helper") + "\nclass Tool:\n    def run(self):\n        return 1\n"
    new = "class Tool:\n    def run(self):\n        return 1\n\n" + _function("helper", "self, items, limit", "    ")
    found = changes(old, new)
    move = [c for c in found if c.type == "move"]
    assert [(c.entity, c.old_entity, c.significance) for c in move] == [("m:Tool.helper", "m:helper", "high")]
    assert {c.type for c in found} <= {"move", "addition"}  # the new self parameter


def test_nested_function_qualname() -> None:
    old = "def outer():\n    def inner(x):\n        return x\n    return inner\n"
    new = "def outer():\n    def inner(x):\n        return x + 1\n    return inner\n"
    found = changes(old, new)
    assert [(c.entity, c.function, c.level) for c in found] == [("m:outer.<locals>.inner", "m:outer.<locals>.inner", "function")]


def test_decorator_and_base_class_changes() -> None:
    old = "class A(Base):\n    @property\n    def size(self):\n        return 1\n"
    new = "class A(Base, Mixin):\n    @cached_property\n    def size(self):\n        return 1\n"
    found = changes(old, new)
    assert summary(found) == {("m:A", "modification", "baseClass"), ("m:A.size", "modification", "decorator")}
    assert {c.significance for c in found} == {"crucial", "high"}


def test_docstring_and_imports() -> None:
    old = '"""Old words."""\nimport os\n\ndef f():\n    """Doc."""\n    return os.sep\n'
    new = '"""New words."""\nimport os\nimport sys\n\ndef f():\n    """Better doc."""\n    return os.sep\n'
    found = changes(old, new)
    assert summary(found) == {("m:", "modification", "docstring"), ("m:", "addition", "import"), ("m:f", "modification", "docstring")}
    assert {c.significance for c in found if c.code_type == "docstring"} == {"none"}
