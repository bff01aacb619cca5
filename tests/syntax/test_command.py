"""``histeg diff OLD.py NEW.py`` through the real command line."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from tests.conftest import SCHEMAS, run_histeg


def _files(tmp_path: Path, old: str, new: str) -> tuple[str, str]:
    (tmp_path / "old.py").write_text(old)
    (tmp_path / "new.py").write_text(new)
    return str(tmp_path / "old.py"), str(tmp_path / "new.py")


def test_human_readable_and_json(tmp_path: Path) -> None:
    old, new = _files(tmp_path, "WIN = 750\n\ndef pay(x):\n    return x\n", "WIN = 800\n\ndef pay(amount):\n    return amount\n")
    result = run_histeg("diff", old, new)
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("modification constant") and "new:WIN" in line and "WIN = 750 ⇒ WIN = 800" in line for line in lines)
    assert any(line.startswith("rename") and "x → amount" in line for line in lines)
    as_json = run_histeg("diff", "--json", "--module", "pkg.mod", old, new)
    data = json.loads(as_json.stdout)
    file_schema = json.loads((SCHEMAS / "syntaxChanges.schema.json").read_text())
    jsonschema.validate(data, {"$schema": file_schema["$schema"], "$defs": file_schema["$defs"], "$ref": "#/$defs/ChangedFile"})
    assert {c["entity"] for c in data["changes"]} == {"pkg.mod:WIN", "pkg.mod:pay"}
    assert {(c["type"], c["oldName"], c["newName"]) for c in data["changes"]} == {("modification", None, None), ("rename", "x", "amount")}
    no_renames = json.loads(run_histeg("diff", "--json", "--no-renames", old, new).stdout)
    assert "rename" not in {c["type"] for c in no_renames["changes"]}


def test_no_changes_and_bad_input(tmp_path: Path) -> None:
    old, new = _files(tmp_path, "x = 1  # one\n", "x = 1\n")
    assert run_histeg("diff", old, new).stdout == "no syntax changes\n"
    missing = run_histeg("diff", old, str(tmp_path / "absent.py"))
    assert missing.code == 2 and "absent.py" in missing.stderr and "Traceback" not in missing.stderr
