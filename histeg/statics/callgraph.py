"""The call graph of a version: static edges from call sites, dynamic edges from traces.

Nodes are identifiers of the function table; an edge ``caller -> callee``
carries ``kind`` (``static``, ``dynamic`` or ``both``) and the caller's lines
of the static call sites. The static graph is stored as its own record
(``callGraph.json``, ``histeg.records.statics.CallGraph``) rather than
networkx's node-link format, whose keys change between releases; dynamic edges
are added when it is read (``histeg.statics.observed``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import networkx as nx

from histeg.records.statics import CallGraph, CallSites, Edge, Node
from histeg.statics.callsites import add_static_edges
from histeg.statics.functions import FunctionTable


def build_call_graph(table: FunctionTable) -> nx.DiGraph:
    graph = nx.DiGraph()
    for record in table.records:
        if record.identifier not in graph:
            graph.add_node(record.identifier, kind=record.kind, file=record.file)
    counts = add_static_edges(graph, table)
    graph.graph["callSites"] = CallSites(
        total=counts["total"], resolved=counts["resolved"], external=counts["external"], unresolved=counts["unresolved"]
    )
    return graph


def add_dynamic_edges(graph: nx.DiGraph, calls: Iterable[tuple[str, str]]) -> int:
    """Add caller -> callee pairs observed in traces; return how many edges are new.

    An edge already found statically becomes ``both``; callees unknown to the
    table (a lambda, say) become nodes without a kind.
    """
    added = 0
    for caller, callee in calls:
        if graph.has_edge(caller, callee):
            data = graph.edges[caller, callee]
            if data["kind"] == "static":
                data["kind"] = "both"
            continue
        for node in (caller, callee):
            if node not in graph:
                graph.add_node(node, kind=None, file=None)
        graph.add_edge(caller, callee, kind="dynamic", lines=set())
        added += 1
    return added


def call_distance(graph: nx.DiGraph, changed: str, divergent: str) -> int | None:
    """Fewest calls from ``changed`` down to ``divergent``; ``None`` when unreachable or unknown."""
    if changed not in graph or divergent not in graph:
        return None
    try:
        return int(nx.shortest_path_length(graph, changed, divergent))
    except nx.NetworkXNoPath:
        return None


def call_graph_record(graph: nx.DiGraph, identifier: str) -> CallGraph:
    """The stored form of a static graph (as ``build_call_graph`` made it) of the version ``identifier``."""
    return CallGraph(
        identifier=identifier,
        nodes=[Node(id=node, kind=data["kind"], file=data["file"]) for node, data in graph.nodes(data=True)],
        edges=[
            Edge(caller=caller, callee=callee, kind=data["kind"], lines=sorted(data["lines"]))
            for caller, callee, data in graph.edges(data=True)
        ],
        call_sites=graph.graph["callSites"],
    )


def call_graph_from_record(record: CallGraph) -> nx.DiGraph:
    graph = nx.DiGraph(callSites=record.call_sites)
    for node in record.nodes:
        graph.add_node(node.id, kind=node.kind, file=node.file)
    for edge in record.edges:
        graph.add_edge(edge.caller, edge.callee, kind=edge.kind, lines=set(edge.lines))
    return graph


def load_call_graph(path: Path) -> nx.DiGraph:
    return call_graph_from_record(CallGraph.read(path))
