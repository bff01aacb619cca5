"""Pipeline entry: write ``functions.json`` and ``callGraph.json`` of one version."""

from __future__ import annotations

from histeg.atomic import write_json
from histeg.config import VersionSettings
from histeg.statics.callgraph import build_call_graph, call_graph_to_json
from histeg.statics.functions import read_function_table
from histeg.store import CALL_GRAPH, FUNCTIONS, OutputStore

SCHEMA_VERSION = 1


def export_static_facts(store: OutputStore, index: int) -> None:
    """Function table and static call graph of version ``index``, each written atomically."""
    version = store.version(index)
    settings = VersionSettings.of(version)
    table = read_function_table(store.snapshot(index), settings)
    graph = build_call_graph(table)
    functions = {"schemaVersion": SCHEMA_VERSION, "identifier": version.identifier, **table.to_json()}
    write_json(store.file(index, FUNCTIONS), functions)
    write_json(store.file(index, CALL_GRAPH), {**call_graph_to_json(graph), "identifier": version.identifier})
