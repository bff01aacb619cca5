"""Step 4 over hand-made version directories: syntaxChanges.json, schema, cross-file moves."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import pytest

from histeg.errors import HistegError
from histeg.records.base import SchemaVersionError
from histeg.records.history import FileChange, FileChanges
from histeg.records.syntax import SyntaxChanges
from histeg.store import FILE_CHANGES, OutputStore
from histeg.syntax.analysis import analyze_version
from histeg.syntax.options import SyntaxOptions
from tests.conftest import validate_output
from tests.statics.versions import make_version, version_sha


def _version(store: OutputStore, index: int, files: dict[str, str | bytes], changes: list[FileChange], against: int | None, ignore_dirs: tuple[str, ...] = ()) -> None:
    make_version(store.root, files, index=index, against=against, ignore_directories=ignore_dirs)
    base = version_sha(against) if against is not None else None
    FileChanges(identifier=version_sha(index), comparing_against_version=base, changes=changes).write(store.file(index, FILE_CHANGES))

def _change(kind: Literal["added", "removed", "modified", "renamed"], old: str | None, new: str | None) -> FileChange:
    path = new or old or ""
    return FileChange(type=kind, old_path=old, new_path=new, python=path.endswith(".py"), binary=False, similarity=90 if kind == "renamed" else None)

HELPER = """
def helper(values, limit):
    kept = [v for v in values if v < limit]
    kept.sort()
    return kept[-1] if kept else None
"""

V0 = {
    "src/shop/__init__.py": "",
    "src/shop/prices.py": "RATE = 3\n\n\ndef price(x):\n    return x * RATE\n" + HELPER,
    "src/shop/stock.py": "class Stock:\n    LIMIT = 10\n\n    def left(self):\n        return self.LIMIT\n",
    "tests/test_prices.py": "from shop.prices import price\n\n\ndef test_price():\n    assert price(1) == 3\n",
    "docs/notes.md": "notes\n",
}
V1 = {
    "src/shop/__init__.py": "",
    "src/shop/prices.py": "RATE = 4\n\n\ndef price(x):\n    return x * RATE\n",
    "src/shop/util.py": "import math\n" + HELPER,
    "src/shop/stock.py": "class Stock:\n    LIMIT = 10\n\n    def left(self):\n        return self.LIMIT - 1\n",
    "tests/test_prices.py": "from shop.prices import price\n\n\ndef test_price():\n    assert price(1) == 4\n",
    "docs/notes.md": "more notes\n",
}

@pytest.fixture
def store(tmp_path: Path) -> OutputStore:
    store = OutputStore(tmp_path / "out")
    _version(store, 0, V0, [_change("added", None, p) for p in sorted(V0)], None)
    _version(store, 1, V1, [
        _change("added", None, "src/shop/util.py"),
        _change("modified", "docs/notes.md", "docs/notes.md"),
        _change("modified", "src/shop/prices.py", "src/shop/prices.py"),
        _change("modified", "src/shop/stock.py", "src/shop/stock.py"),
        _change("modified", "tests/test_prices.py", "tests/test_prices.py"),
    ], 0)  # fmt: skip
    return store

def _all(data: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(c["entity"], c["type"], c["codeType"]) for f in data["files"] for c in f["changes"]}

def test_version_changes_validate_and_pair_a_cross_file_move(store: OutputStore) -> None:
    path = analyze_version(store, 1, SyntaxOptions())
    assert path == store.file(1, "syntaxChanges.json")
    data = validate_output(path)
    assert data["comparingAgainstVersion"] == f"{1:040x}"
    assert _all(data) == {
        ("shop.prices:RATE", "modification", "constant"),
        ("shop.util:", "addition", "module"),
        ("shop.util:helper", "move", "function"),
        ("shop.stock:Stock.left", "modification", "return"),
        ("tests.test_prices:test_price", "modification", "assertion"),
    }
    move = next(c for f in data["files"] for c in f["changes"] if c["type"] == "move")
    assert (move["oldPath"], move["newPath"], move["oldEntity"]) == ("src/shop/prices.py", "src/shop/util.py", "shop.prices:helper")
    assert move["significance"] == "high"
    assert [f["newPath"] for f in data["files"]] == ["src/shop/util.py", "src/shop/prices.py", "src/shop/stock.py", "tests/test_prices.py"]
    for entry in data["files"]:
        assert [c["id"] for c in entry["changes"]] == list(range(len(entry["changes"])))

def test_the_written_file_reads_back_as_its_record_and_an_older_one_is_refused(store: OutputStore) -> None:
    path = analyze_version(store, 1)
    stored = SyntaxChanges.read(path)
    assert stored.summary.changes == sum(len(f.changes) for f in stored.files) == 5
    move = next(c for f in stored.files for c in f.changes if c.type == "move")
    assert (move.old_entity, move.entity, move.old_name, move.new_name) == ("shop.prices:helper", "shop.util:helper", None, None)
    path.write_text(path.read_text().replace('"schemaVersion": 2', '"schemaVersion": 1'))
    with pytest.raises(SchemaVersionError, match="schema version 1"):
        SyntaxChanges.read(path)

def test_first_version_is_all_additions(store: OutputStore) -> None:
    data = validate_output(analyze_version(store, 0))
    assert _all(data) == {
        ("shop:", "addition", "module"),
        ("shop.prices:", "addition", "module"),
        ("shop.stock:", "addition", "module"),
        ("shop.stock:Stock", "addition", "class"),
        ("tests.test_prices:", "addition", "module"),
    }

def test_ignored_directories_and_flags(tmp_path: Path) -> None:
    store = OutputStore(tmp_path / "out")
    _version(store, 0, {"src/a.py": b"X = 1\n", "gen/b.py": b"Y = 1\n"}, [], None)
    _version(store, 1, {"src/a.py": b"X = '\xff'\ndef broken(:\n", "gen/b.py": b"Y = 2\n"}, [
        _change("modified", "src/a.py", "src/a.py"), _change("modified", "gen/b.py", "gen/b.py"),
    ], 0, ignore_dirs=("gen",))  # fmt: skip
    data = validate_output(analyze_version(store, 1))
    assert [f["newPath"] for f in data["files"]] == ["src/a.py"]
    entry = data["files"][0]
    assert (entry["parseErrors"], entry["decodeErrors"], entry["tooLarge"]) == (True, True, False)
    big = validate_output(analyze_version(store, 1, SyntaxOptions(max_bytes=5)))
    assert big["files"][0]["tooLarge"] and big["options"]["maxBytes"] == 5

def test_renamed_file_and_removed_file(tmp_path: Path) -> None:
    store = OutputStore(tmp_path / "out")
    _version(store, 0, {"src/old.py": "def f():\n    return 1\n", "src/gone.py": "class Gone:\n    pass\n"}, [], None)
    _version(store, 1, {"src/new.py": "def f():\n    return 2\n"}, [
        _change("renamed", "src/old.py", "src/new.py"), _change("removed", "src/gone.py", None),
    ], 0)  # fmt: skip
    data = validate_output(analyze_version(store, 1))
    assert _all(data) == {("new:f", "modification", "return"), ("gone:", "removal", "module"), ("gone:Gone", "removal", "class")}
    renamed = next(f for f in data["files"] if f["status"] == "renamed")
    assert (renamed["oldModule"], renamed["newModule"], renamed["changes"][0]["oldEntity"]) == ("old", "new", "old:f")

def test_missing_inputs_are_one_line_errors(tmp_path: Path) -> None:
    store = OutputStore(tmp_path / "out")
    with pytest.raises(HistegError, match="missing result file"):
        analyze_version(store, 3)
    _version(store, 0, {}, [], None)
    _version(store, 1, {}, [_change("modified", "src/a.py", "src/a.py")], 0)
    with pytest.raises(HistegError, match="cannot read"):
        analyze_version(store, 1)
