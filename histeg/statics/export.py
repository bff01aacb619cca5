"""Pipeline entry: write ``functions.json`` and ``callGraph.json`` of one version."""

from __future__ import annotations

from histeg.records.statics import CallGraph, Functions
from histeg.statics.callgraph import build_call_graph, call_graph_record
from histeg.statics.functions import read_function_table
from histeg.store import OutputStore


def export_static_facts(store: OutputStore, index: int) -> None:
    """Function table and static call graph of version ``index``, each written atomically."""
    version = store.version(index)
    settings = version.settings
    table = read_function_table(store.snapshot(index), settings)
    Functions(identifier=version.identifier, functions=table.records, skipped_files=table.skipped).write(store.file(index, Functions.FILE))
    call_graph_record(build_call_graph(table), version.identifier).write(store.file(index, CallGraph.FILE))
