"""A version that changes no Python file has its predecessor's static facts, under its own identifier."""

from __future__ import annotations

from pathlib import Path

import msgspec

from histeg.records.statics import Functions
from histeg.statics.export import export_static_facts
from histeg.store import OutputStore
from tests.conftest import validate_output

LIB = "def double(x):\n    return x + x\n"
TEST = "from lib import double\n\ndef test_double():\n    assert double(3) == 6\n"


def test_a_version_without_a_python_change_copies_its_predecessors_facts(make_repo, histeg, tmp_path: Path) -> None:
    repo = make_repo()
    commits = [
        repo.commit("library", {"lib.py": LIB, "tests/test_lib.py": TEST, "CHANGELOG": "- one\n"}),
        repo.commit("changelog", {"CHANGELOG": "- one\n- two\n"}),
        repo.commit("code", {"lib.py": LIB + "\n\ndef triple(x):\n    return 3 * x\n"}),
    ]
    out = tmp_path / "out"
    result = histeg("instrument", "--repo", str(repo.path), "--all", "--out", str(out))
    assert result.code == 0, result.stderr
    facts = [validate_output(out / str(index) / "functions.json") for index in range(3)]
    assert [fact["identifier"] for fact in facts] == commits
    assert facts[1]["functions"] == facts[0]["functions"]
    assert validate_output(out / "1" / "callGraph.json")["identifier"] == commits[1]
    # what is copied is the predecessor's file itself: a record only it holds shows up, where code changed it does not
    store = OutputStore(out)
    path = store.file(0, Functions.FILE)
    table = Functions.read(path)
    marker = msgspec.structs.replace(table.functions[0], qualname="marker", identifier="lib:marker")
    Functions(identifier=table.identifier, functions=[*table.functions, marker], skipped_files=table.skipped_files).write(path)
    export_static_facts(store, 1)
    assert "lib:marker" in {f["identifier"] for f in validate_output(out / "1" / "functions.json")["functions"]}
    export_static_facts(store, 2)
    identifiers = {f["identifier"] for f in validate_output(out / "2" / "functions.json")["functions"]}
    assert "lib:triple" in identifiers and "lib:marker" not in identifiers
