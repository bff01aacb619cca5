"""What the syntax step writes: ``syntaxChanges.json``, and ``histeg diff --json`` one file of it."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from histeg.records.base import Part, Record
from histeg.records.types import CommitId, Count

Level = Literal["function", "class", "module"]
ChangeType = Literal["addition", "removal", "modification", "move", "rename"]
Significance = Literal["none", "low", "medium", "high", "crucial"]
CodeType = Literal[
    "assertion",
    "assignment",
    "baseClass",
    "call",
    "class",
    "condition",
    "constant",
    "context",
    "decorator",
    "docstring",
    "exception",
    "function",
    "import",
    "loop",
    "module",
    "parameter",
    "return",
    "returnType",
    "statement",
]
FileStatus = Literal["added", "removed", "modified", "renamed"]

MAX_CODE = 400
"""Characters of code kept in ``before``/``after``."""
MAX_EDITS = 20
"""Edit actions listed per change."""

FilePath = Annotated[str, msgspec.Meta(min_length=1)]
"""A file's path as compared: inside the snapshot in ``syntaxChanges.json``, as given to ``histeg diff``."""
Entity = Annotated[
    str, msgspec.Meta(description="pkg.mod:Qual.name, pkg.mod:Class.NAME, pkg.mod:NAME, or pkg.mod: for a module's top level.")
]
Line = Annotated[int, msgspec.Meta(ge=1)]
Lines = Annotated[tuple[Line, Line], msgspec.Meta(description="First and last line (1-based, inclusive).")]
Code = Annotated[str, msgspec.Meta(max_length=MAX_CODE)]


class Change(Part, kw_only=True):
    """One classified change; ``oldName`` and ``newName`` are set for renames (and renamed moves)."""

    id: Annotated[Count, msgspec.Meta(description="Position of the change within its file entry.")]
    level: Level
    entity: Entity
    old_entity: Annotated[Entity | None, msgspec.Meta(description="The entity's identifier in the old version.")]
    function: Annotated[str | None, msgspec.Meta(description="Identifier of the enclosing (or changed) function.")]
    klass: Annotated[str | None, msgspec.Meta(description="Identifier of the enclosing (or changed) class.")] = msgspec.field(name="class")
    type: ChangeType
    code_type: CodeType
    significance: Significance
    before: Code | None
    after: Code | None
    old_lines: Lines | None
    new_lines: Lines | None
    old_path: FilePath | None
    new_path: FilePath | None
    old_name: str | None
    new_name: str | None
    edits: Annotated[list[str], msgspec.Meta(max_length=MAX_EDITS, description="The edit actions behind the change, for people.")]


class ChangedFile(Part, kw_only=True):
    status: FileStatus
    old_path: FilePath | None
    new_path: FilePath | None
    old_module: str | None
    new_module: str | None
    parse_errors: Annotated[bool, msgspec.Meta(description="The parser met syntax errors; the file was compared where possible.")]
    decode_errors: Annotated[bool, msgspec.Meta(description="Bytes invalid in the declared encoding were replaced.")]
    too_large: Annotated[bool, msgspec.Meta(description="Above the size limit: not compared node by node, reported as one module change.")]
    message: Annotated[str | None, msgspec.Meta(description="Why the file was not compared node by node, when it was not.")]
    edit_script_length: Count
    changes: list[Change]


class AnalysisOptions(Part, kw_only=True):
    """Matcher parameters and options the changes were computed with."""

    min_height: Annotated[int, msgspec.Meta(ge=1)]
    min_dice: Annotated[float, msgspec.Meta(ge=0, le=1)]
    max_size: Count
    renames: bool
    max_bytes: Count


class ChangeSummary(Part, kw_only=True):
    files: Count
    changes: Count


class SyntaxChanges(Record, kw_only=True):
    """Fine-grained syntax changes of a version against its predecessor (pipeline step 4), file by file."""

    FILE = "syntaxChanges.json"
    TITLE = "<index>/syntaxChanges.json"
    schema_version: Literal[2] = 2
    identifier: CommitId
    comparing_against_version: CommitId | None
    options: AnalysisOptions
    files: list[ChangedFile]
    summary: ChangeSummary


__all__ = [
    "AnalysisOptions",
    "Change",
    "ChangeSummary",
    "ChangeType",
    "ChangedFile",
    "CodeType",
    "FileStatus",
    "Level",
    "Significance",
    "SyntaxChanges",
]
