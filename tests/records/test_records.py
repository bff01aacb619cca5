"""The records are the single source of the output files' JSON and of their schemas."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from histeg.errors import EXIT_BAD_INPUT
from histeg.records.base import SchemaVersionError
from histeg.records.history import FileChange, FileChanges, Version
from histeg.records.schemas import all_records, differing, schema_file_name
from histeg.store import OutputStore

ROOT = Path(__file__).resolve().parents[2]
SHA = "a" * 40


def test_checked_in_schemas_are_the_generated_ones() -> None:
    stale = differing(ROOT / "output_schema")
    assert not stale, f"regenerate with 'python -m histeg.records.schemas output_schema': {stale}"


def test_the_check_fails_when_a_schema_is_edited_by_hand(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "histeg.records.schemas", str(tmp_path)], check=True)
    name = schema_file_name(Version)
    (tmp_path / name).write_text((tmp_path / name).read_text().replace('"minimum": 1', '"minimum": 2'))
    check = subprocess.run([sys.executable, "-m", "histeg.records.schemas", "--check", str(tmp_path)], capture_output=True, text=True)
    assert check.returncode == 1 and name in check.stderr


def test_every_record_writes_camel_case_keys_only() -> None:
    for record in all_records().values():
        for field in record.__struct_encode_fields__:
            assert "_" not in field, f"{record.FILE}: {field}"


def _changes() -> FileChanges:
    change = FileChange(type="added", old_path=None, new_path="pkg/mod.py", python=True, binary=False, similarity=None)
    return FileChanges(identifier=SHA, comparing_against_version=None, changes=[change])


def test_a_record_reads_back_what_it_wrote(tmp_path: Path) -> None:
    path = tmp_path / "fileChanges.json"
    _changes().write(path)
    assert FileChanges.read(path) == _changes()
    assert b'"schemaVersion": 1' in path.read_bytes() and b'"newPath"' in path.read_bytes()


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b'{"schemaVersion": 7, "identifier": "x"}', "has schema version 7, this histeg reads version 1"),
        (b'{"identifier": "x"}', "has schema version None, this histeg reads version 1"),
        (b'{"schemaVersion": 1, "identifier": 5, "comparingAgainstVersion": null, "changes": []}', "at `$.identifier`"),
        (b'{"schemaVersion": 1, "identifier": "' + SHA.encode() + b'", "comparingAgainstVersion": null, "changes": [], "extra": 1}',
         "unknown field `extra`"),
        (b'{"schemaVersion": 1, ', "corrupt JSON in"),
    ],
)
def test_a_bad_file_is_one_line_naming_the_file_and_the_fault(tmp_path: Path, payload: bytes, message: str) -> None:
    path = tmp_path / "fileChanges.json"
    path.write_bytes(payload)
    with pytest.raises(Exception) as caught:
        FileChanges.read(path)
    text = str(caught.value)
    assert message in text and str(path) in text and "\n" not in text
    assert caught.value.exit_code == EXIT_BAD_INPUT  # type: ignore[attr-defined]


def test_an_older_version_file_is_a_schema_version_error(tmp_path: Path) -> None:
    store = OutputStore(tmp_path)
    store.version_dir(3).mkdir()
    store.file(3, "version.json").write_bytes(b'{"schemaVersion": 0}')
    with pytest.raises(SchemaVersionError, match="version.json has schema version 0"):
        store.version(3)
