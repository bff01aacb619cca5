"""Ranking weighs the evidence: a target charged with a changed test outcome or a new exception ranks above
targets charged only with silent divergences, whatever their values (``evidence-first``).

The project: a lexer whose two class-level tables every test reads, in loops, with assertions that hold
for any value (silent divergences by the dozen), and a function made off by one that two tests check
exactly (their outcome changes). By value alone the tables rank first; by evidence, the function does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo, run_histeg, validate_output

pytestmark = pytest.mark.slow  # two computes with re-runs (20 s): run by make test-slow

LIB = '''class Lexer:
    KEYWORDS = {"if": "IF", "else": "ELSE", "while": "WHILE", "for": "FOR", "def": "DEF"}
    OPERATORS = {"+": "PLUS", "-": "MINUS", "*": "TIMES", "/": "DIVIDE"}

    def kind(self, word):
        if word in self.KEYWORDS:
            return self.KEYWORDS[word]
        return self.OPERATORS.get(word, "NAME")


def total(values):
    result = 0
    for value in values:
        result += value
    return result
'''
CHANGED = (LIB.replace('"if": "IF", "else": "ELSE"', '"if": "KW_IF", "else": "KW_ELSE"')
           .replace('"while": "WHILE", "for": "FOR", "def": "DEF"', '"while": "KW_WHILE", "for": "KW_FOR", "def": "KW_DEF"')
           .replace('"+": "PLUS", "-": "MINUS"', '"+": "OP_PLUS", "-": "OP_MINUS"')
           .replace('"*": "TIMES", "/": "DIVIDE"', '"*": "OP_TIMES", "/": "OP_DIVIDE"')
           .replace("    result = 0\n", "    result = 1\n"))
TESTS = '''import pytest

from lib import Lexer, total

WORDS = ["if", "else", "while", "for", "def", "+", "-", "*", "/", "x"] * 4


@pytest.mark.parametrize("round_", range(6))
def test_every_word_has_a_kind(round_):
    lexer = Lexer()
    assert all(isinstance(lexer.kind(word), str) for word in WORDS)


def test_total():
    assert total([1, 2, 3]) == 6


def test_total_of_nothing():
    assert total([]) == 0
'''
TABLES = ["lib:Lexer.KEYWORDS", "lib:Lexer.OPERATORS"]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    return GitRepo.with_history(tmp_path_factory.mktemp("evidence") / "repo", ("base", {"lib.py": LIB, "tests/test_lib.py": TESTS}),
                                ("new token names; total starts at one", {"lib.py": CHANGED}))


def targets(project: GitRepo, out: Path, *options: str) -> dict[str, Any]:
    result = run_histeg("compute", "--repo", str(project.path), "--all", "--out", str(out), *options)
    assert result.code == 0, result.stderr
    return validate_output(out / "1" / "testingTargets.json")


def test_a_changed_outcome_ranks_above_silent_divergences_of_greater_value(project: GitRepo, tmp_path: Path) -> None:
    out = tmp_path / "out"
    by_value = targets(project, out, "--no-evidence-first")
    order = [t["identifier"] for t in by_value["targets"]]
    assert by_value["options"]["evidenceFirst"] == [] and all(t["evidence"] == [] for t in by_value["targets"])
    assert order.index("lib:total") > max(order.index(table) for table in TABLES), order  # the problem, reproduced

    document = targets(project, out)  # the same traces, ranked again with the default rule
    assert document["options"]["evidenceFirst"] == ["outcomeChanged", "exceptionOnlyInNew"]
    ranked = document["targets"]
    assert ranked[0]["identifier"] == "lib:total", [t["identifier"] for t in ranked]
    assert "outcomeChanged" in ranked[0]["evidence"] and ranked[0]["divergenceClasses"]["outcomeChanged"] >= 2
    values = {t["identifier"]: t["value"] for t in ranked}
    assert all(values[table] > values["lib:total"] for table in TABLES), values  # ranked first on evidence, not on value
    tables = [t for t in ranked if t["identifier"] in TABLES]
    assert len(tables) == 2 and all(t["evidence"] == [] and set(t["divergenceClasses"]) for t in tables)
    assert all(t["divergenceClasses"]["silent"] > 0 and t["divergenceClasses"]["outcomeChanged"] == 0 for t in tables)
    assert [t["rank"] for t in ranked] == list(range(1, len(ranked) + 1))


def test_the_rule_is_set_in_a_file_and_checked(project: GitRepo, tmp_path: Path) -> None:
    config = tmp_path / "histeg.toml"
    config.write_text('[tool.histeg]\nevidence-first = ["exceptionOnlyInOld"]\n')
    document = targets(project, tmp_path / "out", "--config", str(config))
    assert document["options"]["evidenceFirst"] == ["exceptionOnlyInOld"]
    assert all(t["evidence"] == [] for t in document["targets"])  # nothing stopped raising: by value alone
    assert document["targets"][0]["identifier"] in TABLES
    config.write_text('[tool.histeg]\nevidence-first = ["silent"]\n')
    bad = run_histeg("compute", "--repo", str(project.path), "--all", "--out", str(tmp_path / "bad"), "--config", str(config))
    assert bad.code == 2 and "setting 'evidence-first' must be a list of outcomeChanged, exceptionOnlyInNew, exceptionOnlyInOld" in bad.stderr
