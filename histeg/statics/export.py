"""Pipeline entry: write ``functions.json`` and ``callGraph.json`` of one version."""

from __future__ import annotations

import msgspec

from histeg.engine.inputs import apart_from_commit, snapshot_inputs
from histeg.engine.runner import read_states, results
from histeg.errors import HistegError
from histeg.records.history import FileChanges
from histeg.records.statics import CallGraph, Functions
from histeg.store import FILE_CHANGES, OutputStore
from histeg.version import __version__

STATICS_STEP = "statics"
STATICS_RULES = 1
"""Raised with any change to which functions are listed or which call edges are found (``Step.rules``)."""


def export_static_facts(store: OutputStore, index: int) -> None:
    """Function table and static call graph of version ``index``, each written atomically."""
    version = store.version(index)
    if _copied_from_predecessor(store, index):
        return
    from histeg.statics.callgraph import build_call_graph, call_graph_record  # networkx: imported when a graph is built
    from histeg.statics.functions import read_function_table

    settings = version.settings
    table = read_function_table(store.snapshot(index), settings)
    Functions(identifier=version.identifier, functions=table.records, skipped_files=table.skipped).write(store.file(index, Functions.FILE))
    call_graph_record(build_call_graph(table), version.identifier).write(store.file(index, CallGraph.FILE))


def _copied_from_predecessor(store: OutputStore, index: int) -> bool:
    """A version that changes no Python file of its predecessor's, analysed with the same settings, has its predecessor's
    static facts (under its own identifier): the same files make the same table and graph, so they are not parsed again.
    Whether the predecessor's are done yet (``-j N``) changes nothing but the time: the facts are made either way."""
    version = store.version(index)
    against = version.comparing_against_index
    if against is None or STATICS_STEP not in results(store, against):
        return False
    # made by this histeg, with these rules, from the same settings: not facts made otherwise
    made = apart_from_commit(read_states(store, against).steps[STATICS_STEP].inputs)
    if made != apart_from_commit({"histeg": __version__, "rules": STATICS_RULES, "version": snapshot_inputs(version)}):
        return False
    try:
        if any(change.python for change in FileChanges.read(store.file(index, FILE_CHANGES)).changes):
            return False
        functions = Functions.read(store.file(against, Functions.FILE))
        graph = CallGraph.read(store.file(against, CallGraph.FILE))
    except HistegError:
        return False
    if functions.identifier != store.version(against).identifier or graph.identifier != functions.identifier:
        return False
    msgspec.structs.replace(functions, identifier=version.identifier).write(store.file(index, Functions.FILE))
    msgspec.structs.replace(graph, identifier=version.identifier).write(store.file(index, CallGraph.FILE))
    return True
