"""The call graph of a version: static edges from call sites, dynamic edges from traces.

Nodes are identifiers of the function table; an edge ``caller -> callee``
carries ``kind`` (``static``, ``dynamic`` or ``both``) and the caller's lines
of the static call sites. The static graph is stored as explicit JSON
(``callGraph.json``) rather than networkx's node-link format, whose keys change
between releases; dynamic edges are added when it is read
(``histeg.statics.observed``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import networkx as nx

from histeg.atomic import read_json
from histeg.errors import HistegError
from histeg.statics.callsites import add_static_edges
from histeg.statics.functions import FunctionTable

SCHEMA_VERSION = 1
CALL_SITE_COUNTS = ("total", "resolved", "external", "unresolved")


def build_call_graph(table: FunctionTable) -> nx.DiGraph:
    graph = nx.DiGraph()
    for record in table.records:
        if record.identifier not in graph:
            graph.add_node(record.identifier, kind=record.kind, file=record.file)
    counts = add_static_edges(graph, table)
    graph.graph["callSites"] = {key: counts.get(key, 0) for key in CALL_SITE_COUNTS}
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


def call_graph_to_json(graph: nx.DiGraph) -> dict[str, Any]:
    return {
        "schemaVersion": SCHEMA_VERSION,
        "nodes": [{"id": node, "kind": data.get("kind"), "file": data.get("file")} for node, data in graph.nodes(data=True)],
        "edges": [
            {"caller": caller, "callee": callee, "kind": data["kind"], "lines": sorted(data["lines"])}
            for caller, callee, data in graph.edges(data=True)
        ],
        "callSites": dict(graph.graph.get("callSites", {key: 0 for key in CALL_SITE_COUNTS})),
    }


def call_graph_from_json(data: Any, origin: str = "call graph") -> nx.DiGraph:
    if not isinstance(data, dict) or data.get("schemaVersion") != SCHEMA_VERSION:
        raise HistegError(f"{origin} is not a call graph of schema version {SCHEMA_VERSION}")
    graph = nx.DiGraph(callSites=dict(data.get("callSites", {})))
    try:
        for node in data["nodes"]:
            graph.add_node(node["id"], kind=node.get("kind"), file=node.get("file"))
        for edge in data["edges"]:
            graph.add_edge(edge["caller"], edge["callee"], kind=edge["kind"], lines=set(edge["lines"]))
    except (KeyError, TypeError) as exc:
        raise HistegError(f"{origin} is malformed: missing or wrong {exc}") from None
    return graph


def load_call_graph(path: Path) -> nx.DiGraph:
    return call_graph_from_json(read_json(path), str(path))
