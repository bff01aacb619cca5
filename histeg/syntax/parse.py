"""Python source → histeg tree, through tree-sitter-python.

What is kept is what can change behaviour: comments and line continuations
are dropped, punctuation is dropped, and every other keyword or operator
becomes part of its parent's label (``binary_operator`` labelled ``+``,
``comparison_operator`` labelled ``>=``) so that ``a + b`` → ``a - b`` is an
update of one node. String quotes are normalised (``'a'`` equals ``"a"``).
Decorators are moved under the definition they decorate: a function keeps
its identity whether or not it is decorated.
"""

from __future__ import annotations

import io
import re
import tokenize
from bisect import bisect_left
from dataclasses import dataclass
from functools import cache

from tree_sitter import Language, Parser
from tree_sitter import Tree as TSTree

from histeg.errors import HistegError
from histeg.syntax.tree import Node, Tree

SKIPPED = frozenset({"comment", "line_continuation", "string_end"})
"""Named nodes without meaning for behaviour."""

PUNCTUATION = frozenset({"(", ")", "[", "]", "{", "}", ",", ":", ";"})
"""Anonymous tokens implied by the parent's type; any other token is kept in the label."""

WHOLE_TEXT = frozenset({"import_prefix", "string_start"})
"""Named nodes labelled by their text and not descended into."""

_NEWLINE = re.compile(rb"\n")

DEFAULT_MAX_BYTES = 4_000_000
"""Files above this are not compared node by node (about 100,000 lines of ordinary code)."""


class SourceTooLarge(HistegError):
    """A file above the size limit: reported, not diffed."""


@dataclass
class ParsedFile:
    tree: Tree
    parse_errors: bool
    """tree-sitter produced ERROR or MISSING nodes; the rest is still compared."""
    decode_errors: bool
    """The bytes were not valid in the declared encoding; decoded with replacement characters."""


@cache
def _parser() -> Parser:
    import tree_sitter_python

    return Parser(Language(tree_sitter_python.language()))


def decode_source(data: bytes) -> tuple[bytes, bool]:
    """UTF-8 bytes of the source (PEP 263 encoding honoured) and whether decoding needed replacements."""
    try:
        encoding = tokenize.detect_encoding(io.BytesIO(data).readline)[0]
    except SyntaxError:
        encoding = "utf-8"
    try:
        text = data.decode(encoding)
        bad = False
    except (UnicodeDecodeError, LookupError):
        text = data.decode("utf-8", "replace")
        bad = True
    text = text.removeprefix("\ufeff")
    if not bad and encoding == "utf-8" and not data.startswith(b"\xef\xbb\xbf"):
        return data, False
    return text.encode("utf-8", "replace"), bad


def parse_source(data: bytes, name: str = "<source>", max_bytes: int = DEFAULT_MAX_BYTES) -> ParsedFile:
    """Parse ``data`` (a whole file's bytes) into a histeg tree."""
    if len(data) > max_bytes:
        raise SourceTooLarge(f"{name} has {len(data)} bytes, above the limit of {max_bytes} for syntax comparison")
    source, decode_errors = decode_source(data)
    ts_tree = _parser().parse(source)
    root, errors = _convert(ts_tree, source)
    return ParsedFile(Tree(root, source), parse_errors=errors or ts_tree.root_node.has_error, decode_errors=decode_errors)


def _convert(ts_tree: TSTree, source: bytes) -> tuple[Node, bool]:
    """Walk tree-sitter's cursor once, building our nodes; iterative.

    ``stack[-1]`` is always our node for the cursor's parent. Lines come from
    byte offsets (1 + newlines before the first and the last byte).
    """
    newlines = [match.start() for match in _NEWLINE.finditer(source)]
    cursor = ts_tree.walk()
    ts_root = ts_tree.root_node
    root = Node(ts_root.type, "", ts_root.start_byte, ts_root.end_byte, 1, 1 + bisect_left(newlines, max(0, ts_root.end_byte - 1)))
    labels: dict[Node, list[str]] = {}
    decorated: list[Node] = []
    grouped: list[Node] = []
    stack = [root]
    errors = False
    if not cursor.goto_first_child():
        return root, errors
    while stack:
        ts = cursor.node
        assert ts is not None  # the cursor moves between existing nodes only
        parent = stack[-1]
        if ts.is_named:
            kind = ts.type
            if kind not in SKIPPED and not ts.is_missing:
                start, end = ts.start_byte, ts.end_byte
                leaf = ts.child_count == 0 or kind in WHOLE_TEXT
                if leaf:
                    text = source[start:end].decode("utf-8", "replace")
                    label = text.rstrip("'\"").lower() if kind == "string_start" else text
                else:
                    label = ""
                first = 1 + bisect_left(newlines, start)
                last = 1 + bisect_left(newlines, end - 1) if end > start else first
                node = Node(kind, label, start, end, first, last, cursor.field_name)
                node.parent = parent
                parent.children.append(node)
                if parent.type == "slice":
                    labels.setdefault(parent, []).append("_")
                if kind == "ERROR":
                    errors = True
                elif kind == "decorated_definition":
                    decorated.append(node)
                elif kind == "parenthesized_expression":
                    grouped.append(node)
                if not leaf and cursor.goto_first_child():
                    stack.append(node)
                    continue
            elif ts.is_missing:
                errors = True
        elif ts.is_missing:
            errors = True
        else:
            token = " ".join(source[ts.start_byte : ts.end_byte].decode("utf-8", "replace").split())
            if token not in PUNCTUATION or (parent.type == "slice" and token == ":"):
                labels.setdefault(parent, []).append(token)
        while not cursor.goto_next_sibling():
            cursor.goto_parent()
            stack.pop()
            if not stack:
                break
    for node, parts in labels.items():
        node.label = " ".join(parts)
    _flatten_decorators(decorated)
    _unwrap_parentheses(grouped)
    return root, errors


def _unwrap_parentheses(grouped: list[Node]) -> None:
    """``(expr)`` → ``expr``: grouping parentheses have no runtime meaning (the tree already holds
    precedence), so adding or dropping them is formatting, not a change."""
    for node in reversed(grouped):  # inner ones first
        if node.parent is None or len(node.children) != 1:
            continue
        (inner,) = node.children
        inner.parent = node.parent
        inner.field = node.field
        siblings = node.parent.children
        siblings[siblings.index(node)] = inner


def _flatten_decorators(decorated: list[Node]) -> None:
    """``decorated_definition(decorator*, def)`` → ``def(decorator*, ...)``."""
    for node in reversed(decorated):  # inner ones first: a replaced node is never revisited
        if node.parent is None or not node.children:
            continue
        definition = node.child("definition") or node.children[-1]
        decorators = [child for child in node.children if child is not definition]
        for decorator in decorators:
            decorator.parent = definition
            decorator.field = "decorator"
        definition.children[:0] = decorators
        definition.start_byte, definition.start_line = node.start_byte, node.start_line
        definition.field = node.field
        definition.parent = node.parent
        siblings = node.parent.children
        siblings[siblings.index(node)] = definition
