"""Which module globals and class attributes each function reads, resolved by name.

Needed to map divergences to value-only changes (``WIN = 750`` -> ``800``),
which jHisteg's syntax differencing missed entirely: a divergence in a
function that reads a changed value, or below such a function, is attributed
to that value. Resolution is by name only: module globals of the function's
own module, names imported from project modules, ``module.NAME``, and
``self.X``/``cls.X``/``Class.X`` for attributes defined in a project class or
its project base classes.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field

from histeg.statics.functions import FunctionTable, ParsedModule

_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass
class _ModuleFacts:
    globals: set[str] = field(default_factory=set)
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    from_imports: dict[str, tuple[str, str]] = field(default_factory=dict)
    module_aliases: dict[str, str] = field(default_factory=dict)


def _assigned_names(body: list[ast.stmt]) -> set[str]:
    names: set[str] = set()
    for statement in body:
        targets: list[ast.expr] = []
        if isinstance(statement, ast.Assign):
            targets = statement.targets
        elif isinstance(statement, ast.AnnAssign | ast.AugAssign):
            targets = [statement.target]
        for target in targets:
            names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def _facts(parsed: ParsedModule) -> _ModuleFacts:
    facts = _ModuleFacts(globals=_assigned_names(parsed.tree.body))
    package = parsed.source.module if parsed.source.is_package else parsed.source.module.rpartition(".")[0]
    for statement in parsed.tree.body:
        if isinstance(statement, ast.ClassDef):
            facts.classes[statement.name] = statement
        elif isinstance(statement, ast.ImportFrom):
            base = statement.module or ""
            if statement.level:
                parts = package.split(".") if package else []
                parts = parts[: len(parts) - (statement.level - 1)] if statement.level > 1 else parts
                base = ".".join([*parts, *([statement.module] if statement.module else [])])
            for alias in statement.names:
                facts.from_imports[alias.asname or alias.name] = (base, alias.name)
        elif isinstance(statement, ast.Import):
            for alias in statement.names:
                facts.module_aliases[alias.asname or alias.name.partition(".")[0]] = alias.name if alias.asname else alias.name.partition(".")[0]
    return facts


class _Project:
    def __init__(self, table: FunctionTable) -> None:
        self.modules = {parsed.source.module: _facts(parsed) for parsed in table.modules}

    def class_of(self, module: str, name: str) -> tuple[str, ast.ClassDef] | None:
        """The project class a name denotes in ``module`` (defined there or imported)."""
        facts = self.modules.get(module)
        if facts is None:
            return None
        if name in facts.classes:
            return module, facts.classes[name]
        if name in facts.from_imports:
            source, original = facts.from_imports[name]
            target = self.modules.get(source)
            if target is not None and original in target.classes:
                return source, target.classes[original]
        return None

    def class_attribute(self, module: str, node: ast.ClassDef, attribute: str, qualname: str | None = None, depth: int = 0) -> str | None:
        """``mod:Class.attribute`` where the attribute is defined, searching project bases."""
        if attribute in _assigned_names(node.body):
            return f"{module}:{qualname or node.name}.{attribute}"
        if depth > 20:
            return None
        for base in node.bases:
            if isinstance(base, ast.Name) and (found := self.class_of(module, base.id)) is not None:
                if (owner := self.class_attribute(*found, attribute, depth=depth + 1)) is not None:
                    return owner
        return None

    def global_value(self, module: str, name: str) -> str | None:
        facts = self.modules.get(module)
        if facts is None:
            return None
        if name in facts.globals:
            return f"{module}:{name}"
        if name in facts.from_imports:
            source, original = facts.from_imports[name]
            if original in self.modules.get(source, _ModuleFacts()).globals:
                return f"{source}:{original}"
        return None


def _own_nodes(function: ast.AST) -> Iterator[ast.AST]:
    """Nodes of a definition's body, not descending into nested definitions (they have their own entries)."""
    stack = list(reversed(getattr(function, "body", [])))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _NESTED):
            stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _locals(function: ast.AST) -> set[str]:
    if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
        return set()
    declared_global = {name for node in _own_nodes(function) if isinstance(node, ast.Global) for name in node.names}
    arguments = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
    stored = {n.id for n in _own_nodes(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return (arguments | stored) - declared_global


def value_reads(table: FunctionTable) -> dict[str, set[str]]:
    """Function identifier -> the values (``mod:NAME``, ``mod:Class.NAME``) it reads."""
    project = _Project(table)
    reads: dict[str, set[str]] = {}
    for parsed in table.modules:
        module = parsed.source.module
        facts = project.modules[module]
        for definition in parsed.definitions:
            if definition.record is None:
                continue
            parent = definition.parent
            enclosing = parent if parent is not None and isinstance(parent.node, ast.ClassDef) else None
            local = _locals(definition.node)
            found: set[str] = set()
            for node in _own_nodes(definition.node):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in local:
                    if (value := project.global_value(module, node.id)) is not None:
                        found.add(value)
                elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name):
                    owner = node.value.id
                    qualname = None
                    if owner in ("self", "cls") and enclosing is not None:
                        klass: tuple[str, ast.ClassDef] | None = (module, enclosing.node)  # type: ignore[assignment]
                        qualname = enclosing.qualname
                    else:
                        klass = project.class_of(module, owner) if owner not in local else None
                    if klass is not None:
                        if (value := project.class_attribute(*klass, node.attr, qualname)) is not None:
                            found.add(value)
                    elif owner in facts.module_aliases and owner not in local:
                        if (value := project.global_value(facts.module_aliases[owner], node.attr)) is not None:
                            found.add(value)
            reads[definition.record.identifier] = found
    return reads
