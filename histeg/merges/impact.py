"""The impact set of a merge (TOM's selection of units under test, algorithm 3).

Each side of the merge is what changed along it: from the base to the parent,
and from the parent to the merge (a merge-time edit or a resolved conflict
changes the merge against both parents). A side impacts the functions within
call distance d of its changed functions, in the merge's call graph (static
and observed edges) in either direction: a changed callee changes what its
callers see, a changed caller what its callees are given. The impact set is
what both sides impact; when nothing is near both, it is the changed functions
of both sides, as the paper falls back to the changed methods.

It is reported with the merge's divergences, as where the two sides meet; it
does not decide what becomes a target: a loss can lie outside it (a side's
change dropped whole by the merge is far from the other side's), and every
lost or introduced divergence is charged (``charge.py``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from pathlib import Path

import msgspec
import networkx as nx

from histeg.impact.changes import index_changes
from histeg.naming import module_name
from histeg.store import OutputStore
from histeg.syntax.classify import FileContext
from histeg.syntax.diff import diff_sources


def _python_files(root: Path) -> dict[str, Path]:
    return {path.relative_to(root).as_posix(): path for path in root.rglob("*.py") if path.is_file() and not path.is_symlink()}


def changed_functions(store: OutputStore, old: int, new: int) -> set[str]:
    """Functions with a syntax change (of runtime meaning) between two versions' snapshots, the same way the syntax step finds them."""
    settings = store.version(new).settings
    old_settings = store.version(old).settings
    old_files, new_files = _python_files(store.snapshot(old)), _python_files(store.snapshot(new))
    files = []
    for path in sorted(old_files.keys() | new_files.keys()):
        before = old_files[path].read_bytes() if path in old_files else None
        after = new_files[path].read_bytes() if path in new_files else None
        if before == after:
            continue
        new_module = module_name(path, settings.sources)
        if settings.ignore.ignores(path, new_module):
            continue
        context = FileContext(
            path if before is not None else None,
            path if after is not None else None,
            module_name(path, old_settings.sources) if before is not None else None,
            new_module if after is not None else None,
        )
        files.append(msgspec.to_builtins(diff_sources(before, after, context).result.record()))
    return index_changes({"files": files}).functions


def within(graph: nx.Graph, changed: Iterable[str], distance: int) -> set[str]:
    """The changed functions and every function at most ``distance`` calls away from one, in either direction."""
    found = set(changed)
    undirected = graph.to_undirected(as_view=True) if graph.is_directed() else graph
    for function in list(found):
        if function in undirected:
            found.update(nx.single_source_shortest_path_length(undirected, function, cutoff=distance))
    return found


def impact_set(graph: nx.Graph, first: Collection[str], second: Collection[str], distance: int) -> set[str]:
    """What both sides impact within ``distance``; both sides' changed functions when that is empty."""
    common = within(graph, first, distance) & within(graph, second, distance)
    return common or set(first) | set(second)
