"""The syntax changes of a version, indexed the way the impact mapping asks."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

VALUE_CODE_TYPES = frozenset({"constant", "assignment"})
ENTITY_CODE_TYPES = frozenset({"class", "function", "module"})


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


def index_changes(document: Mapping[str, Any]) -> ChangeIndex:
    """The changes of a ``syntaxChanges.json`` document that can explain behaviour: those without
    runtime meaning (docstrings, significance ``none``) stay in the file but never become targets
    nor absorb a divergence."""
    index = ChangeIndex()
    for file in document.get("files", []):
        for change in file.get("changes", []):
            if change.get("significance") != "none":
                _add(index, change)
    return index


def _add(index: ChangeIndex, change: dict[str, Any]) -> None:
    entity = change["entity"]
    index.by_entity[entity].append(change)
    index.files.setdefault(entity, change.get("newPath") or change.get("oldPath") or "")
    if change["level"] == "function" and change.get("function"):
        index.functions.add(change["function"])
    elif _is_value(change):
        index.values.add(entity)
    if change["type"] == "addition" and change["codeType"] in ENTITY_CODE_TYPES:
        index.new_entities.add(entity)
        if change["codeType"] == "class":
            index.new_classes.add(entity)


def _is_value(change: dict[str, Any]) -> bool:
    """A class- or module-level value edit; a class's own entity (its header) is no value."""
    entity = change["entity"]
    return (
        change["level"] in ("class", "module")
        and change["codeType"] in VALUE_CODE_TYPES
        and not entity.endswith(":")
        and entity != change.get("class")
    )
