"""The casino sample: extract its history and check every commit's syntax changes against expected.toml."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest
from tests.conftest import run_histeg, validate_output

from histeg.samples import build_sample, sample_dir
from histeg.store import OutputStore
from histeg.syntax.analysis import analyze_version

EXPECTED = tomllib.loads((sample_dir("casino") / "expected.toml").read_text(encoding="utf-8"))["step"]


@pytest.fixture(scope="module")
def analysed(tmp_path_factory: pytest.TempPathFactory) -> dict[int, dict[str, Any]]:
    root = tmp_path_factory.mktemp("casino")
    repository = build_sample("casino", root / "repo")
    out = root / "out"
    result = run_histeg("extract", "--repo", str(repository), "--all", "--out", str(out), "-q")
    assert result.code == 0, result.stderr
    store = OutputStore(out)
    return {index: validate_output(analyze_version(store, index)) for index in store.extracted_indices()}


def _changes(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [change for entry in data["files"] for change in entry["changes"]]


@pytest.mark.parametrize("step", [s for s in EXPECTED if s["compared"]], ids=lambda s: s["folder"])
def test_casino_syntax_changes(step: dict[str, Any], analysed: dict[int, dict[str, Any]]) -> None:
    index = int(step["folder"][:2])
    found = _changes(analysed[index])
    is_test = lambda change: (change["newPath"] or change["oldPath"]).startswith("tests/")  # noqa: E731
    functions = {c["entity"] for c in found if c["level"] == "function" and not is_test(c)}
    entities = {c["entity"] for c in found if c["level"] != "function" and not is_test(c)}
    tests = {c["entity"] for c in found if is_test(c)}
    assert functions == set(step["syntax_functions"])
    assert entities == set(step["syntax_entities"])
    assert tests == set(step["syntax_tests"])
    new_classes = {c["entity"] for c in found if c["codeType"] == "class" and c["type"] == "addition"}
    assert new_classes == set(step["new_classes"])
    for row in step["change"]:
        mine = [c for c in found if c["entity"] == row["identifier"]]
        assert {c["level"] for c in mine} == {row["level"]}, row
        assert {c["type"] for c in mine} & set(row["types"]), (row, mine)
        assert {c["codeType"] for c in mine} & set(row["code_types"]), (row, mine)


def test_first_commit_lists_every_python_file_as_added(analysed: dict[int, dict[str, Any]]) -> None:
    first = _changes(analysed[0])
    assert {c["type"] for c in first} == {"addition"}
    assert "casino.casino:" in {c["entity"] for c in first}
