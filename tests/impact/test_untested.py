"""Untested changes: changed executable lines no entry point ran, on a real repository traced under the real tracer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from histeg.impact.untested import executable_lines, spans, touched_lines
from histeg.records import targets as records
from histeg.samples import build_sample
from histeg.tracing.coverage import SUFFIX, read_lines
from tests.conftest import GitRepo, run_histeg, validate_output

PRICE = '''"""Prices."""


def total(items):
    return sum(items)


def discount(amount, rate):
    return amount * (1 - rate)


def label(amount):
    return f"{amount:.2f}"


def step(n):
    return n + 1
'''
CHANGED = '''"""Prices."""


def total(items):
    return sum(list(items))


def discount(amount, rate):
    if rate > 1:
        rate = 1
    return amount * (1 - rate)


def label(amount):
    if amount < 0:
        return "refund"
    return f"{amount:.2f}"


def step(n):
    if n == 99:
        n = n * 1
    return n + 1
'''
DOCUMENTED = CHANGED.replace("def discount(amount, rate):\n", 'def discount(amount, rate):\n    """Never more than all of it."""\n')
TESTS = '''from shop.price import label, step, total


def test_total():
    assert total([1, 2]) == 3


def test_label():
    assert label(2) == "2.00"


def test_step_many_times():
    assert [step(i) for i in range(100)] == list(range(1, 101))
'''


WORDS = '"""Keywords and their kinds."""\n\nKEYWORDS = {\n' + "".join(f'    "w{n:03}": {n % 7},\n' for n in range(300)) + \
    '}\n\n\ndef kind(word):\n    return KEYWORDS.get(word, -1)\n'
"""A 300-entry table: one entry removed or changed is a change of the one statement, not of its 300 lines."""
DROPPED = WORDS.replace('    "w150": 3,\n', "")
CHANGED_ENTRY = DROPPED.replace('    "w200": 4,\n', '    "w200": 5,\n')
WORD_TESTS = '''from shop.words import kind


def test_kind():
    assert kind("w001") == 1
'''


def line_of(source: str, text: str) -> int:
    return next(number for number, line in enumerate(source.splitlines(), 1) if text in line)


@pytest.fixture(scope="module")
def computed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("untested")
    repo = GitRepo.create(base / "repo")
    repo.commit("base", {"shop/__init__.py": "", "shop/price.py": PRICE, "tests/test_price.py": TESTS, "shop/words.py": WORDS,
                         "tests/test_words.py": WORD_TESTS})
    repo.commit("change three functions", {"shop/price.py": CHANGED})
    repo.commit("document discount", {"shop/price.py": DOCUMENTED})
    repo.commit("drop a keyword", {"shop/words.py": DROPPED})
    repo.commit("change a keyword", {"shop/words.py": CHANGED_ENTRY})
    out = base / "out"
    result = run_histeg("compute", "--repo", str(repo.path), "--all", "--out", str(out), "--sources", "shop", "--tests", "tests",
                        "--repeat", "1", "--override")
    assert result.code == 0, result.stderr
    assert "untested change(s)" in result.stderr + result.stdout
    return out


def targets(out: Path, index: int) -> dict[str, Any]:
    records.TestingTargets.read(out / str(index) / "testingTargets.json")
    return validate_output(out / str(index) / "testingTargets.json")


@pytest.mark.slow
def test_untested_function_and_untaken_branch_are_listed(computed: Path) -> None:
    document = targets(computed, 1)
    code = {c["identifier"].rpartition(":")[2]: c for c in document["changedCode"]}
    assert set(code) == {"total", "discount", "label", "step"}
    discount = [line_of(CHANGED, "if rate > 1"), line_of(CHANGED, "rate = 1")]
    label_if, refund = line_of(CHANGED, "if amount < 0"), line_of(CHANGED, 'return "refund"')
    step_lines = [line_of(CHANGED, "if n == 99"), line_of(CHANGED, "if n == 99") + 1]
    total_line = line_of(CHANGED, "sum(list(items))")
    assert (code["total"]["changedLines"], code["total"]["executedChangedLines"], code["total"]["state"]) == ([total_line], [total_line], "executed")
    assert (code["discount"]["changedLines"], code["discount"]["executedChangedLines"], code["discount"]["state"]) == (discount, [], "unexecuted")
    assert (code["label"]["changedLines"], code["label"]["executedChangedLines"]) == ([label_if, refund], [label_if])
    assert code["label"]["state"] == "diverged"  # the new condition runs: its lines differ from the old version's
    # the branch runs only in the 100th call of one test, past the trace's line budget: the line coverage still sees it
    assert code["step"]["changedLines"] == code["step"]["executedChangedLines"] == step_lines
    untested = document["untestedChanges"]
    assert [(u["rank"], u["qualname"], u["unexecutedLines"], u["changedLineCount"]) for u in untested] == [
        (1, "discount", discount, 2), (2, "label", [refund], 2)]
    assert untested[0]["notes"][0].startswith("no entry point executed any of its 2 changed line(s)")
    assert untested[1]["notes"][0].startswith("1 of its 2 changed lines never ran")
    assert all(u["origin"] == "untested change" and u["value"] > 0 and u["syntaxChangeCount"] >= 1 for u in untested)
    assert document["summary"]["untested"] == 2
    assert document["summary"]["diffCoverage"] == {"changedLines": 7, "executedLines": 4, "ratio": round(4 / 7, 4)}


@pytest.mark.slow
def test_a_docstring_only_change_lists_nothing(computed: Path) -> None:
    document = targets(computed, 2)
    assert document["changedCode"] == [] and document["untestedChanges"] == []
    assert document["summary"]["untested"] == 0
    assert document["summary"]["diffCoverage"] == {"changedLines": 0, "executedLines": 0, "ratio": None}


@pytest.mark.slow
def test_an_entry_removed_from_a_large_table_changes_the_lines_around_it(computed: Path) -> None:
    document = targets(computed, 3)
    [table] = [c for c in document["changedCode"] if c["qualname"] == "KEYWORDS"]
    around = [line_of(DROPPED, '"w149"'), line_of(DROPPED, '"w151"')]
    assert table["changedLines"] == table["executedChangedLines"] == around, "the table's other 298 lines did not change"
    assert table["state"] == "executed"
    assert document["summary"]["diffCoverage"] == {"changedLines": 2, "executedLines": 2, "ratio": 1.0}


@pytest.mark.slow
def test_an_entry_changed_in_a_large_table_is_one_changed_line(computed: Path) -> None:
    document = targets(computed, 4)
    [table] = [c for c in document["changedCode"] if c["qualname"] == "KEYWORDS"]
    assert table["changedLines"] == [line_of(CHANGED_ENTRY, '"w200": 5')]
    assert document["summary"]["diffCoverage"]["changedLines"] == 1


def test_changed_lines_come_from_the_line_diff() -> None:
    old = [b"a = {", b'    "x": 1,', b'    "y": 2,', b'    "z": 3,', b"}"]
    assert touched_lines(old, old) == frozenset()
    assert touched_lines(old, [old[0], old[1], old[3], old[4]]) == {2, 3}, "a removal: the lines either side of the gap"
    assert touched_lines(old, old[1:]) == {1}, "a removal at the start: the line after it"
    assert touched_lines(old, old[:-1]) == {4}, "a removal at the end: the line before it"
    assert touched_lines(old, [*old[:2], b'    "y": 5,', *old[3:]]) == {3}
    assert touched_lines(old, [*old[:2], b'    "w": 0,', *old[2:]]) == {3}
    assert touched_lines(None, old[:2]) == {1, 2}, "a file that had no old version: all of it"


@pytest.mark.slow
def test_each_trace_has_its_line_coverage(computed: Path) -> None:
    traces = sorted((computed / "1" / "traces").glob("run-*/*.htrace"))
    assert traces
    covered = read_lines(str(traces[0]) + SUFFIX)
    assert line_of(CHANGED, "if n == 99") + 1 in covered["shop/price.py"]
    assert line_of(CHANGED, "rate = 1") not in covered["shop/price.py"]
    assert line_of(TESTS, "assert total") in covered["tests/test_price.py"]


@pytest.mark.slow
def test_the_casino_change_no_test_runs_is_untested(tmp_path: Path) -> None:
    repo = build_sample("casino", tmp_path / "casino")
    out = tmp_path / "out"
    result = run_histeg("compute", "--repo", str(repo), "--last", "2", "--out", str(out), "--repeat", "1")
    assert result.code == 0, result.stderr
    document = validate_output(out / "8" / "testingTargets.json")
    assert [(u["identifier"], u["rank"]) for u in document["untestedChanges"]] == [("casino.__main__:main", 1)]
    assert [c["state"] for c in document["changedCode"]] == ["unexecuted"]
    assert document["summary"]["diffCoverage"]["executedLines"] == 0 < document["summary"]["diffCoverage"]["changedLines"]


def test_executable_lines_leave_out_headers_docstrings_and_blanks() -> None:
    source = 'X = 1\n\n\ndef f(a,\n      b):\n    """Doc\n    string."""\n    # note\n    return (a +\n            b)\n'
    assert executable_lines(source) == {1, 9, 10}  # an expression's later lines run too (and have line events)
    assert executable_lines("def broken(:\n") == frozenset()


def test_spans_name_runs_of_lines() -> None:
    assert spans([9, 3, 4, 5]) == "3-5, 9"
    assert spans([]) == ""
