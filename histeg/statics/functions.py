"""The function table: every module body, class and named function of a version.

Qualified names and first lines follow what CPython puts in ``co_qualname`` and
``co_firstlineno``, so an entry of the table is exactly what the tracer reports
for the same code object: nested functions are ``outer.<locals>.inner``, a
function or class named in a ``global`` statement of its enclosing scope has
its bare name, and a decorated definition starts at its first decorator.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from histeg.history.git import display_path
from histeg.history.snapshot import Unreadable, read_snapshot_file
from histeg.naming import identifier
from histeg.records.history import VersionSettings
from histeg.records.statics import FunctionKind, FunctionRecord, SkippedFile
from histeg.statics.scope import SourceFile, source_files

DefinitionNode = ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
SCOPE_NODES = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
COMPREHENSIONS = (ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)
OWN_SCOPE_EXPRESSIONS = (ast.Lambda, *COMPREHENSIONS)


@dataclass
class Definition:
    """A table entry together with its syntax and its enclosing definition."""

    record: FunctionRecord | None
    """``None`` for a function left out by name: its body still defines nested code."""
    node: DefinitionNode
    parent: Definition | None
    source: SourceFile
    qualname: str
    nodes: list[ast.AST] = field(default_factory=list)
    """``scope_nodes`` of its body, walked once: the table, the bindings and the call sites all read them."""

    @property
    def is_function(self) -> bool:
        return isinstance(self.node, ast.FunctionDef | ast.AsyncFunctionDef)


@dataclass
class ParsedModule:
    source: SourceFile
    tree: ast.Module
    definitions: list[Definition]
    """The module body first, then every definition in source order."""


@dataclass
class FunctionTable:
    modules: list[ParsedModule] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)

    @property
    def records(self) -> list[FunctionRecord]:
        return [d.record for m in self.modules for d in m.definitions if d.record is not None]


def read_function_table(snapshot: Path, settings: VersionSettings) -> FunctionTable:
    """Parse every analysed file; files that do not parse, or are not source (a link out of the snapshot, a loop,
    binary, a Git LFS pointer, a name that is not UTF-8), are listed with the reason, not fatal."""
    table = FunctionTable()
    for source in source_files(snapshot, settings):
        try:
            text = read_snapshot_file(snapshot, source.relpath)
            tree = ast.parse(text, filename=source.relpath)
        except Unreadable as exc:
            table.skipped.append(SkippedFile(file=display_path(source.relpath), reason=str(exc)))
            continue
        except (SyntaxError, ValueError) as exc:
            table.skipped.append(SkippedFile(file=source.relpath, reason=_describe_parse_error(exc)))
            continue
        except OSError as exc:
            table.skipped.append(SkippedFile(file=source.relpath, reason=f"unreadable: {exc.strerror}"))
            continue
        table.modules.append(ParsedModule(source, tree, _definitions(source, tree, text, settings)))
    return table


def _describe_parse_error(exc: SyntaxError | ValueError) -> str:
    if isinstance(exc, SyntaxError):
        return f"syntax error at line {exc.lineno}: {exc.msg}"
    return f"cannot parse: {exc}"


def _definitions(source: SourceFile, tree: ast.Module, text: bytes, settings: VersionSettings) -> list[Definition]:
    line_count = text.count(b"\n") + (0 if text.endswith(b"\n") or not text else 1)
    module_record = FunctionRecord(
        identifier=identifier(source.module, ""),
        module=source.module,
        qualname="",
        kind="module",
        file=source.relpath,
        first_line=1,
        def_line=1,
        last_line=max(line_count, 1),
    )
    module = Definition(module_record, tree, None, source, "")
    found = [module]

    def visit(scope: Definition, body: list[ast.stmt]) -> None:
        nodes = scope.nodes = list(scope_nodes(body))
        few = [node for node in nodes if type(node) in SCOPE_TYPES or type(node) is ast.Global]  # one pass over them all
        declared_global = {name for node in few if isinstance(node, ast.Global) for name in node.names}
        for node in (node for node in few if isinstance(node, SCOPE_NODES)):
            qualname = _qualname(scope, node.name, declared_global)
            record = None
            if not (isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and settings.ignore.ignores(qualname=qualname)):
                record = _record(source, scope, node, qualname)
            definition = Definition(record, node, scope, source, qualname)
            found.append(definition)
            visit(definition, node.body)

    visit(module, tree.body)
    return found


def _record(
    source: SourceFile, scope: Definition, node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef, qualname: str
) -> FunctionRecord:
    if isinstance(node, ast.ClassDef):
        kind: FunctionKind = "class"
    else:
        kind = "method" if isinstance(scope.node, ast.ClassDef) else "function"
    first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
    return FunctionRecord(
        identifier=identifier(source.module, qualname),
        module=source.module,
        qualname=qualname,
        kind=kind,
        file=source.relpath,
        first_line=first,
        def_line=node.lineno,
        last_line=node.end_lineno or node.lineno,
        is_async=isinstance(node, ast.AsyncFunctionDef),
        decorators=tuple(ast.unparse(d) for d in node.decorator_list),
    )


def _qualname(scope: Definition, name: str, declared_global: set[str]) -> str:
    if scope.parent is None or name in declared_global:
        return name
    if scope.is_function:
        return f"{scope.qualname}.<locals>.{name}"
    return f"{scope.qualname}.{name}"


SCOPE_TYPES = frozenset(SCOPE_NODES)
"""``SCOPE_NODES`` for a test by exact type (``ast`` makes no subclasses of its node classes)."""
_NOT_ENTERED = frozenset(OWN_SCOPE_EXPRESSIONS)
_AST = ast.AST


def scope_nodes(body: Iterable[ast.AST]) -> Iterator[ast.AST]:
    """Every node whose code runs in this scope, in source order; nested definitions are yielded but not entered.

    Decorators, defaults and class bases of nested definitions run here and are
    entered; lambdas and comprehensions have scopes of their own and are yielded,
    not entered (``histeg.statics.resolve.scoped_nodes`` enters them).

    The children are ``ast.iter_child_nodes``'s, in its order, read here without a generator per node, and node
    classes are told by their exact type (``ast`` makes no subclasses of its own): on pygments' 404 modules
    (436 K nodes) this walk was the largest part of the 2 s the static facts of a version took.
    """
    stack: list[ast.AST] = list(body)
    stack.reverse()
    pop, extend = stack.pop, stack.extend
    while stack:
        node = pop()
        yield node
        kind = type(node)
        if kind in SCOPE_TYPES:
            extend(reversed(definition_time_expressions(node)))  # type: ignore[arg-type]  # a definition: told by its type
        elif kind not in _NOT_ENTERED:
            children: list[ast.AST] = []
            for name in node._fields:
                value = getattr(node, name, None)
                if isinstance(value, _AST):
                    children.append(value)
                elif isinstance(value, list):
                    children.extend(item for item in value if isinstance(item, _AST))
            children.reverse()
            extend(children)


def definition_time_expressions(node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr]:
    """Expressions of a definition evaluated by the enclosing scope when the definition runs."""
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]
    defaults = [d for d in node.args.kw_defaults if d is not None]
    return [*node.decorator_list, *node.args.defaults, *defaults]
