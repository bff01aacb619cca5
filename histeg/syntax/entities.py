"""Python meaning of tree nodes: statements, definitions, qualified names.

An *anchor* is the smallest unit a change is reported for: a statement, a
clause (``elif``, ``except`` ...), a definition, a parameter, a decorator,
a class's base list or a return annotation. Every edit action is charged to
the anchor around it.
"""

from __future__ import annotations

from dataclasses import dataclass

from histeg.naming import identifier
from histeg.records.syntax import CodeType, Level
from histeg.syntax.tree import Node, Tree

FUNCTION = "function_definition"
CLASS = "class_definition"
DEFINITIONS = frozenset({FUNCTION, CLASS})
CLAUSES = frozenset({"elif_clause", "else_clause", "except_clause", "except_group_clause", "finally_clause", "case_clause"})
PARAMETER_PARENTS = frozenset({"parameters"})
BODY_TYPES = frozenset({"block"})
LITERALS = frozenset(
    {
        "integer",
        "float",
        "string",
        "string_start",
        "string_content",
        "escape_sequence",
        "concatenated_string",
        "true",
        "false",
        "none",
        "unary_operator",
        "tuple",
        "list",
        "set",
        "dictionary",
        "pair",
        "expression_list",
        "parenthesized_expression",
        "ellipsis",
    }
)

_CODE_TYPES: dict[str, CodeType] = {
    FUNCTION: "function",
    CLASS: "class",
    "decorator": "decorator",
    "import_statement": "import",
    "import_from_statement": "import",
    "future_import_statement": "import",
    "if_statement": "condition",
    "elif_clause": "condition",
    "else_clause": "condition",
    "match_statement": "condition",
    "case_clause": "condition",
    "for_statement": "loop",
    "while_statement": "loop",
    "try_statement": "exception",
    "except_clause": "exception",
    "except_group_clause": "exception",
    "finally_clause": "exception",
    "raise_statement": "exception",
    "return_statement": "return",
    "with_statement": "context",
    "assert_statement": "assertion",
    "module": "module",
}


def is_anchor(node: Node) -> bool:
    kind = node.type
    if kind in DEFINITIONS or kind.endswith("_statement") or kind in CLAUSES or kind == "decorator":
        return True
    parent = node.parent
    if parent is None:
        return True
    if parent.type in PARAMETER_PARENTS:
        return True
    if parent.type == CLASS and node.field == "superclasses":
        return True
    if parent.type == FUNCTION and node.field == "return_type":
        return True
    return kind == "ERROR" and parent.type in ("module", "block")


def anchor_of(node: Node) -> Node:
    current = node
    while not is_anchor(current):
        assert current.parent is not None
        current = current.parent
    return current


def definitions_around(node: Node) -> list[Node]:
    """Function and class definitions containing ``node`` (itself included), outermost first."""
    chain = [node] if node.type in DEFINITIONS else []
    chain.extend(ancestor for ancestor in node.ancestors() if ancestor.type in DEFINITIONS)
    chain.reverse()
    return chain


def name_of(definition: Node) -> str:
    name = definition.child("name")
    return name.label if name is not None else "<unknown>"


def qualname(chain: list[Node]) -> str:
    """``co_qualname`` of the innermost definition: ``Outer.method.<locals>.inner``."""
    parts: list[str] = []
    for index, definition in enumerate(chain):
        if index and chain[index - 1].type == FUNCTION:
            parts.append("<locals>")
        parts.append(name_of(definition))
    return ".".join(parts)


def assigned_name(anchor: Node) -> str | None:
    """``NAME`` for ``NAME = ...``, ``NAME: T = ...`` and ``NAME += ...``."""
    if anchor.type != "expression_statement" or len(anchor.children) != 1:
        return None
    inner = anchor.children[0]
    if inner.type not in ("assignment", "augmented_assignment"):
        return None
    left = inner.child("left")
    return left.label if left is not None and left.type == "identifier" else None


def is_docstring(anchor: Node) -> bool:
    if anchor.type != "expression_statement" or len(anchor.children) != 1:
        return False
    if anchor.children[0].type not in ("string", "concatenated_string"):
        return False
    parent = anchor.parent
    if parent is None or parent.children[0] is not anchor:
        return False
    return parent.type == "module" or (parent.type == "block" and parent.parent is not None and parent.parent.type in DEFINITIONS)


def _is_literal(tree: Tree, node: Node) -> bool:
    return all(part.type in LITERALS for part in tree.subtree(node))


def code_type(tree: Tree, anchor: Node, level: str) -> CodeType:
    kind = anchor.type
    if kind in _CODE_TYPES:
        return _CODE_TYPES[kind]
    parent = anchor.parent
    if parent is not None and parent.type in PARAMETER_PARENTS:
        return "parameter"
    if anchor.field == "superclasses":
        return "baseClass"
    if anchor.field == "return_type":
        return "returnType"
    if kind == "expression_statement" and anchor.children:
        if is_docstring(anchor):
            return "docstring"
        inner = anchor.children[0]
        if inner.type in ("assignment", "augmented_assignment"):
            name = assigned_name(anchor)
            value = inner.child("right")
            if level != "function" and name is not None and (name.isupper() or (value is not None and _is_literal(tree, value))):
                return "constant"
            return "assignment"
        if inner.type == "call" or (inner.type == "await" and inner.children and inner.children[0].type == "call"):
            return "call"
    return "statement"


def parameter_name(anchor: Node) -> Node | None:
    """The identifier naming a parameter anchor (``x``, ``x=1``, ``x: int``, ``*args``)."""
    if anchor.type == "identifier":
        return anchor
    named = anchor.child("name")
    if named is not None and named.type == "identifier":
        return named
    for child in anchor.children:
        if child.type == "identifier":
            return child
    return None


def header_end(anchor: Node) -> Node | None:
    """The body block of a compound anchor, whose start ends the header."""
    for child in anchor.children:
        if child.type in BODY_TYPES:
            return child
    return None


@dataclass(frozen=True)
class Place:
    """Where an anchor sits, in histeg's identifiers."""

    level: Level
    entity: str
    function: str | None
    klass: str | None
    defines: str | None
    """The identifier this anchor binds (a definition or a named assignment outside functions)."""


def module_entity(module: str) -> str:
    """A module's top level: ``pkg.mod:`` (empty qualname, as in :func:`histeg.naming.identifier`)."""
    return identifier(module, "")


def place_of(anchor: Node, module: str) -> Place:
    chain = definitions_around(anchor)
    function_at = max((i for i, d in enumerate(chain) if d.type == FUNCTION), default=-1)
    class_at = max((i for i, d in enumerate(chain) if d.type == CLASS), default=-1)
    function_id = identifier(module, qualname(chain[: function_at + 1])) if function_at >= 0 else None
    class_id = identifier(module, qualname(chain[: class_at + 1])) if class_at >= 0 else None
    if not chain:
        name = assigned_name(anchor)
        entity = identifier(module, name) if name else module_entity(module)
        return Place("module", entity, None, None, entity if name else None)
    innermost = chain[-1]
    own = identifier(module, qualname(chain))
    defines = own if anchor is innermost else None
    if innermost.type == FUNCTION:
        return Place("function", own, function_id, class_id, defines)
    name = assigned_name(anchor)
    if name is not None:
        entity = f"{own}.{name}"
        return Place("class", entity, function_id, class_id, entity)
    return Place("class", own, function_id, class_id, defines)
