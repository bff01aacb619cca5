"""Dynamic call edges: the caller/callee pairs the traces of a version actually show."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from histeg.statics.callgraph import add_dynamic_edges, call_graph_to_json, load_call_graph
from histeg.store import CALL_GRAPH, OutputStore, read_json, write_json
from histeg.traces import TraceFile


def observed_calls(trace_paths: Iterable[Path]) -> Iterator[tuple[str, str]]:
    """The caller/callee pairs in the traces' indexes (sealing wrote them; nothing is decoded here)."""
    for path in trace_paths:
        trace = TraceFile(path)
        functions = trace.definitions.functions
        for caller, callee in trace.edges:
            yield functions[caller].ident, functions[callee].ident


def add_observed_edges(store: OutputStore, index: int, trace_paths: Iterable[Path]) -> int:
    """Merge the traces' call edges into ``callGraph.json``; returns how many were new."""
    path = store.file(index, CALL_GRAPH)
    graph = load_call_graph(path)
    added = add_dynamic_edges(graph, set(observed_calls(trace_paths)))
    identifier = read_json(path).get("identifier")
    write_json(path, {**call_graph_to_json(graph), "identifier": identifier})
    return added
