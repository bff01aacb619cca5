"""Dynamic call edges: the caller/callee pairs the traces of a version actually show.

They are merged into the static graph when it is read, never written into
``callGraph.json``: that file is what the sources say and is written once, by
``instrument``, while the traces listed in ``runs.json`` are the one record of
what ran. A version traced again so brings its new edges and drops the old
ones, and neither step rewrites the other's file.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import networkx as nx

from histeg.records.runs import Runs
from histeg.records.statics import CallGraph
from histeg.statics.callgraph import add_dynamic_edges, load_call_graph
from histeg.store import OutputStore
from histeg.traces.reader import TraceFile


def observed_calls(trace_paths: Iterable[Path]) -> Iterator[tuple[str, str]]:
    """The caller/callee pairs in the traces' indexes (sealing wrote them; nothing is decoded here)."""
    for path in trace_paths:
        trace = TraceFile(path)
        functions = trace.definitions.functions
        for caller, callee in trace.edges:
            yield functions[caller].ident, functions[callee].ident


def observed_call_graph(store: OutputStore, index: int) -> nx.DiGraph:
    """The static call graph of version ``index`` with the calls of the traces its runs wrote."""
    graph = load_call_graph(store.file(index, CallGraph.FILE))
    traces = [store.version_dir(index) / path for path in Runs.read(store.file(index, Runs.FILE)).trace_files]
    add_dynamic_edges(graph, dict.fromkeys(observed_calls(traces)))
    return graph
