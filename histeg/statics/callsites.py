"""Static call edges: every call site of the project resolved by name, or counted.

A call belongs to the innermost table entry whose code runs it (lambdas and
comprehensions count as their enclosing function). Besides explicit calls, a
definition's code also calls the body of every class it defines and every
plain decorator it applies, as the tracer will observe.
"""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass, field

import networkx as nx

from histeg.statics.functions import SCOPE_NODES, SCOPE_TYPES, Definition, FunctionTable
from histeg.statics.resolve import EXTERNAL, Function, Klass, ProjectIndex, Scope, identifier_of, scoped_nodes

CONSTRUCTION_METHODS = ("__new__", "__init__")


@dataclass
class EdgeSink:
    graph: nx.DiGraph
    counts: Counter[str] = field(default_factory=Counter)

    def add(self, caller: str, callee: str, line: int) -> None:
        if self.graph.has_edge(caller, callee):
            self.graph.edges[caller, callee]["lines"].add(line)
        else:
            self.graph.add_edge(caller, callee, kind="static", lines={line})


def add_static_edges(graph: nx.DiGraph, table: FunctionTable) -> Counter[str]:
    """Add the resolved edges of every table entry to ``graph``; return call site counts.

    Counts: ``total`` call sites, ``resolved`` (an edge), ``external`` (builtins,
    other libraries, ignored functions), ``unresolved`` (cannot tell by name).
    """
    index = ProjectIndex(table)
    sink = EdgeSink(graph)
    for parsed in table.modules:
        for definition in parsed.definitions:
            if definition.record is not None:
                _walk(index, sink, definition, index.scopes[id(definition.node)])
    return sink.counts


def _walk(index: ProjectIndex, sink: EdgeSink, definition: Definition, scope: Scope) -> None:
    assert definition.record is not None
    caller = definition.record.identifier
    for node, current in scoped_nodes(definition, scope):
        kind = type(node)  # ``ast`` makes no subclasses of its node classes: their type tells them, in one check
        if kind is ast.Call and isinstance(node, ast.Call):
            _call(index, sink, caller, node.func, current, node.lineno)
        elif kind in SCOPE_TYPES and isinstance(node, SCOPE_NODES):
            if isinstance(node, ast.ClassDef):
                sink.add(caller, identifier_of(index.definitions[id(node)]), node.lineno)
            for decorator in node.decorator_list:
                if not isinstance(decorator, ast.Call):
                    _call(index, sink, caller, decorator, current, decorator.lineno)


def _call(index: ProjectIndex, sink: EdgeSink, caller: str, func: ast.expr, scope: Scope, line: int) -> None:
    sink.counts["total"] += 1
    entity = index.expression(func, scope)
    if isinstance(entity, Function):
        targets = [entity.ident]
    elif isinstance(entity, Klass):
        members = [index.class_member(entity.ident, name) for name in CONSTRUCTION_METHODS]
        targets = [member.ident for member in members if isinstance(member, Function)]
    elif entity is EXTERNAL:
        targets = []
    else:
        sink.counts["unresolved"] += 1
        return
    targets = [target for target in targets if target in sink.graph]
    for target in targets:
        sink.add(caller, target, line)
    sink.counts["resolved" if targets else "external"] += 1
