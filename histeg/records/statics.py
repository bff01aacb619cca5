"""What the static analysis writes: ``functions.json`` (the function table) and ``callGraph.json`` (static call edges)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from histeg.records.base import Part, Record
from histeg.records.types import CommitId, Count, RelativePath

FunctionKind = Literal["module", "class", "function", "method"]

FunctionId = Annotated[str, msgspec.Meta(pattern="^[^:]+:.*$", description="module:qualname; a module body has an empty qualname.")]
Line = Annotated[int, msgspec.Meta(ge=1)]


class FunctionRecord(Part, kw_only=True, frozen=True):  # type: ignore[misc]  # msgspec allows a frozen Struct on a non-frozen base; mypy applies the dataclass rule
    """A module body, class or named function, named as CPython names its code object."""

    identifier: FunctionId
    module: Annotated[str, msgspec.Meta(min_length=1)]
    qualname: Annotated[str, msgspec.Meta(description="co_qualname: Class.method, outer.<locals>.inner; empty for a module body.")]
    kind: FunctionKind
    file: Annotated[RelativePath, msgspec.Meta(description="POSIX path relative to the snapshot.")]
    first_line: Annotated[Line, msgspec.Meta(description="co_firstlineno: the first decorator's line for decorated definitions.")]
    def_line: Annotated[Line, msgspec.Meta(description="Line of the def/class keyword.")]
    last_line: Line
    is_async: bool = msgspec.field(default=False, name="async")
    decorators: Annotated[tuple[str, ...], msgspec.Meta(description="Decorator expressions as source text, outermost first.")] = ()


class SkippedFile(Part, kw_only=True, frozen=True):  # type: ignore[misc]  # msgspec allows a frozen Struct on a non-frozen base; mypy applies the dataclass rule
    """An analysed file that could not be parsed, and why."""

    file: RelativePath
    reason: str


class Functions(Record, kw_only=True):
    """Function table of one version: every module body, class and named function of its analysed Python files, named as CPython names the code object (co_qualname, co_firstlineno)."""

    FILE = "functions.json"
    TITLE = "<index>/functions.json"
    schema_version: Literal[1] = 1
    identifier: Annotated[CommitId, msgspec.Meta(description="Commit of the version.")]
    functions: list[FunctionRecord]
    skipped_files: list[SkippedFile]


class Node(Part, kw_only=True):
    id: FunctionId
    kind: FunctionKind
    file: RelativePath


class Edge(Part, kw_only=True):
    caller: FunctionId
    callee: FunctionId
    kind: Annotated[
        Literal["static"], msgspec.Meta(description="Only static edges are stored; the edges traces show are added when the graph is read.")
    ]
    lines: Annotated[list[Line], msgspec.Meta(description="Lines of the caller's static call sites.")]


class CallSites(Part, kw_only=True):
    """Static call sites: total = resolved (an edge) + external (builtins, other libraries, ignored functions) + unresolved (cannot tell by name)."""

    total: Count
    resolved: Count
    external: Count
    unresolved: Count


class CallGraph(Record, kw_only=True):
    """Static call graph of one version, written once by the instrument step: nodes are function-table identifiers, edges come from call sites resolved by name. The calls observed in the version's traces (runs.json) are not stored here; readers add them to the graph as it is loaded (kind dynamic, or both where a static edge agrees)."""

    FILE = "callGraph.json"
    TITLE = "<index>/callGraph.json"
    schema_version: Literal[1] = 1
    identifier: Annotated[CommitId, msgspec.Meta(description="Commit of the version.")]
    nodes: list[Node]
    edges: list[Edge]
    call_sites: CallSites


__all__ = ["CallGraph", "CallSites", "Edge", "FunctionId", "FunctionKind", "FunctionRecord", "Functions", "Node", "SkippedFile"]
