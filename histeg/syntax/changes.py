"""The records of step 4: what changed, where, how much it may matter.

``syntaxChanges.json`` is a list of files, each with its changes; a change
names the entity it affects with the identifiers of :mod:`histeg.naming`
so that the impact mapping can join it with traces and the call graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Level = Literal["function", "class", "module"]
ChangeType = Literal["addition", "removal", "modification", "move", "rename"]
Significance = Literal["none", "low", "medium", "high", "crucial"]

LEVELS: tuple[Level, ...] = ("function", "class", "module")
CHANGE_TYPES: tuple[ChangeType, ...] = ("addition", "removal", "modification", "move", "rename")
SIGNIFICANCES: tuple[Significance, ...] = ("none", "low", "medium", "high", "crucial")
CODE_TYPES = (
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
)

MAX_CODE = 400
"""Characters of code kept in ``before``/``after``."""
MAX_EDITS = 20
"""Edit actions listed per change."""


def cap(text: str | None, limit: int = MAX_CODE) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[: limit - 1] + "…"


@dataclass
class SyntaxChange:
    level: Level
    entity: str
    """What changed: ``pkg.mod:Qual.name``, ``pkg.mod:Class.NAME``, ``pkg.mod:NAME`` or ``pkg.mod``."""
    function: str | None
    """The enclosing (or changed) function's identifier."""
    klass: str | None
    """The enclosing (or changed) class's identifier."""
    type: ChangeType
    code_type: str
    significance: Significance
    before: str | None
    after: str | None
    old_lines: tuple[int, int] | None
    new_lines: tuple[int, int] | None
    old_path: str | None
    new_path: str | None
    old_entity: str | None = None
    """The entity's identifier in the old version (differs after renames and moves)."""
    old_name: str | None = None
    new_name: str | None = None
    edits: list[str] = field(default_factory=list)
    """The edit actions behind this change, for people (capped)."""
    id: int = -1
    defines: str | None = field(default=None, repr=False, compare=False)
    """Internal: the name this statement binds, to pair a removal with an addition of the same name."""
    fingerprint: Any = field(default=None, repr=False, compare=False)
    """Internal: the definition's subtree, to pair removed and added definitions across files."""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "level": self.level,
            "entity": self.entity,
            "oldEntity": self.old_entity,
            "function": self.function,
            "class": self.klass,
            "type": self.type,
            "codeType": self.code_type,
            "significance": self.significance,
            "before": cap(self.before),
            "after": cap(self.after),
            "oldLines": list(self.old_lines) if self.old_lines else None,
            "newLines": list(self.new_lines) if self.new_lines else None,
            "oldPath": self.old_path,
            "newPath": self.new_path,
        }
        if self.type == "rename" or self.old_name is not None:
            data["oldName"] = self.old_name
            data["newName"] = self.new_name
        data["edits"] = self.edits[:MAX_EDITS]
        return data


FileStatus = Literal["added", "removed", "modified", "renamed"]


@dataclass
class FileSyntaxChanges:
    status: FileStatus
    old_path: str | None
    new_path: str | None
    old_module: str | None
    new_module: str | None
    changes: list[SyntaxChange] = field(default_factory=list)
    parse_errors: bool = False
    decode_errors: bool = False
    too_large: bool = False
    message: str | None = None
    """Why the file was not compared node by node, when it was not."""
    edit_script_length: int = 0

    def number(self) -> None:
        """Stable ids: by position in the new version, then in the old one."""
        self.changes.sort(key=lambda c: (c.new_lines or (0, 0), c.old_lines or (0, 0), c.entity, c.type))
        for index, change in enumerate(self.changes):
            change.id = index

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "oldPath": self.old_path,
            "newPath": self.new_path,
            "oldModule": self.old_module,
            "newModule": self.new_module,
            "parseErrors": self.parse_errors,
            "decodeErrors": self.decode_errors,
            "tooLarge": self.too_large,
            "message": self.message,
            "editScriptLength": self.edit_script_length,
            "changes": [change.to_json() for change in self.changes],
        }
