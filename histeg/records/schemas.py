"""``output_schema/*.schema.json`` generated from the records, so a schema cannot drift from the code.

``python -m histeg.records.schemas DIR`` writes them; ``--check`` exits 1 and
names the files that differ (a test runs the check on the checked-in folder).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import sys
from pathlib import Path
from typing import Any

import msgspec

from histeg.records.base import RECORDS, Part, Record

RECORD_MODULES = (
    "histeg.records.history",
    "histeg.records.syntax",
    "histeg.records.divergences",
    "histeg.records.build",
    "histeg.records.runs",
    "histeg.records.steps",
    "histeg.records.statics",
    "histeg.records.targets",
    "histeg.records.generation",
    "histeg.records.registry",
    "histeg.records.settings",
    "histeg.records.merges",
)
"""Every module defining file records; importing them fills the registry."""

DRAFT = "https://json-schema.org/draft/2020-12/schema"


def all_records() -> dict[str, type[Record]]:
    for module in RECORD_MODULES:
        importlib.import_module(module)
    return dict(sorted(RECORDS.items()))


def schema_file_name(record: type[Record]) -> str:
    return record.FILE.removesuffix(".json") + ".schema.json"


def _omitting_defaults() -> set[str]:
    """Parts that leave a field out while it has its default (a mark that is rare and new, absent from older files)."""
    found, pending = set(), list(Part.__subclasses__())
    while pending:
        part = pending.pop()
        pending.extend(part.__subclasses__())
        if part.__struct_config__.omit_defaults:
            found.add(part.__name__)
    return found


def _every_property_required(definitions: dict[str, Any]) -> None:
    """histeg writes every field, defaults included; a reader may omit none, except where a part says otherwise."""
    omitting = _omitting_defaults()
    for name, definition in definitions.items():
        if definition.get("type") == "object" and "properties" in definition:
            if name not in omitting:
                definition["required"] = list(definition["properties"])
            for prop in definition["properties"].values():
                prop.pop("default", None)


def _clean_descriptions(node: Any) -> None:
    """Docstrings as one paragraph of text, whatever the interpreter: Python 3.13 strips their indentation when
    compiling, 3.12 keeps it, and the checked-in schemas must not depend on which one made them."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "description" and isinstance(value, str):
                node[key] = " ".join(inspect.cleandoc(value).split())
            else:
                _clean_descriptions(value)
    elif isinstance(node, list):
        for item in node:
            _clean_descriptions(item)


def schema_of(record: type[Record]) -> dict[str, Any]:
    body = msgspec.json.schema(record)
    _every_property_required(body["$defs"])
    _clean_descriptions(body)
    return {
        "$schema": DRAFT,
        "$id": f"histeg/output_schema/{schema_file_name(record)}",
        "title": record.TITLE or record.FILE,
        **body,
    }


def rendered() -> dict[str, str]:
    return {
        schema_file_name(record): json.dumps(schema_of(record), indent=2, ensure_ascii=False) + "\n" for record in all_records().values()
    }


def differing(directory: Path) -> list[str]:
    """Schema files in ``directory`` that are missing or differ from the records."""
    stale = []
    for name, text in rendered().items():
        path = directory / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            stale.append(name)
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m histeg.records.schemas", description=__doc__)
    parser.add_argument("directory", type=Path, help="the output_schema folder")
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    if args.check:
        stale = differing(args.directory)
        for name in stale:
            print(f"{args.directory / name} differs from the records; regenerate it", file=sys.stderr)
        return 1 if stale else 0
    for name, text in rendered().items():
        (args.directory / name).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
