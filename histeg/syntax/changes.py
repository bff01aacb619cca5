"""The changes of step 4 while they are found: what changed, where, how much it may matter.

They carry what pairing needs and the file never holds (the name a statement
binds, the definition's subtree, code not yet capped); ``record()`` gives
their form in ``syntaxChanges.json`` (:mod:`histeg.records.syntax`), where a
change names the entity it affects with the identifiers of
:mod:`histeg.naming` so that the impact mapping can join it with traces and
the call graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from histeg.records.syntax import MAX_CODE, MAX_EDITS, Change, ChangedFile, ChangeType, CodeType, FileStatus, Level, Significance


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
    code_type: CodeType
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

    def record(self) -> Change:
        return Change(
            id=self.id,
            level=self.level,
            entity=self.entity,
            old_entity=self.old_entity,
            function=self.function,
            klass=self.klass,
            type=self.type,
            code_type=self.code_type,
            significance=self.significance,
            before=cap(self.before),
            after=cap(self.after),
            old_lines=self.old_lines,
            new_lines=self.new_lines,
            old_path=self.old_path,
            new_path=self.new_path,
            old_name=self.old_name,
            new_name=self.new_name,
            edits=self.edits[:MAX_EDITS],
        )


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

    def record(self) -> ChangedFile:
        return ChangedFile(
            status=self.status,
            old_path=self.old_path,
            new_path=self.new_path,
            old_module=self.old_module,
            new_module=self.new_module,
            parse_errors=self.parse_errors,
            decode_errors=self.decode_errors,
            too_large=self.too_large,
            message=self.message,
            edit_script_length=self.edit_script_length,
            changes=[change.record() for change in self.changes],
        )
