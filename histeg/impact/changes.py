"""The syntax changes of a version, indexed the way the impact mapping asks."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from histeg.store import read_json

VALUE_CODE_TYPES = frozenset({"constant", "assignment"})


@dataclass
class ChangeIndex:
    by_entity: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    functions: set[str] = field(default_factory=set)
    """Functions with at least one syntax change (including added and removed ones)."""
    values: set[str] = field(default_factory=set)
    """Changed constants, class attributes and module globals (``mod:NAME``, ``mod:Class.NAME``)."""
    new_classes: set[str] = field(default_factory=set)
    new_entities: set[str] = field(default_factory=set)
    files: dict[str, str] = field(default_factory=dict)
    """Entity -> file in the new version (old version for removals)."""


def load_changes(path: Path) -> ChangeIndex:
    """The changes that can explain behaviour: those without runtime meaning (docstrings, significance
    ``none``) stay in syntaxChanges.json but never become targets nor absorb a divergence."""
    index = ChangeIndex()
    for file in read_json(path).get("files", []):
        for change in file.get("changes", []):
            if change.get("significance") == "none":
                continue
            entity = change["entity"]
            index.by_entity[entity].append(change)
            index.files.setdefault(entity, change.get("newPath") or change.get("oldPath") or "")
            if change["level"] == "function" and change.get("function"):
                index.functions.add(change["function"])
            elif change["level"] in ("class", "module") and change["codeType"] in VALUE_CODE_TYPES and not entity.endswith(":"):
                if entity != change.get("class"):
                    index.values.add(entity)
            if change["type"] == "addition" and change["codeType"] in ("class", "function", "module"):
                index.new_entities.add(entity)
                if change["codeType"] == "class":
                    index.new_classes.add(entity)
    return index
