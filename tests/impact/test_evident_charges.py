"""Every failing test is explained: a removed override, a table copied into an object's state, a value a subclass overrides.

One real history, computed by the real command line under the real tracer; each change makes one test fail.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo, run_histeg, validate_output

LEXER = '''KEYWORDS = {"select": "KW", "from": "KW", "where": "KW"}


class Lexer:
    def __init__(self):
        self.table = dict(KEYWORDS)

    def kind(self, word):
        return self.table.get(word, "NAME")
'''
LOCALE = '''class Locale:
    phrases = {"now": "just now"}

    def describe(self, key):
        return self.phrases[key]


class French(Locale):
    phrases = {"now": "maintenant"}


class German(Locale):
    phrases = {"now": "jetzt"}
'''
SHAPES = '''class Shape:
    def area(self):
        return 0


class Square(Shape):
    def __init__(self, side):
        self.side = side

    def area(self):
        return self.side * self.side


def total(shapes):
    return sum(shape.area() for shape in shapes)
'''
REGISTRY = '''NAMES = ["ada", "grace", "alan"]


class Registry:
    default = None

    @classmethod
    def get(cls):
        if cls.default is None:
            cls.default = cls()
            cls.default.load()
        return cls.default

    def load(self):
        self.names = list(NAMES)

    def knows(self, name):
        return name in self.names
'''
TESTS = '''from lexer import Lexer
from registry import Registry
from locale_names import French, German, Locale
from shapes import Square, total


def test_kind():
    assert Lexer().kind("from") == "KW"


def test_french():
    assert French().describe("now") == "maintenant"


def test_german():
    assert German().describe("now") == "jetzt"


def test_base():
    assert Locale().describe("now") == "just now"


def test_total():
    assert total([Square(2)]) == 4


def test_registry_a():
    assert Registry.get().knows("ada")


def test_registry_b():
    assert Registry.get().knows("alan")
'''
REMOVED_AREA = '''
    def area(self):
        return self.side * self.side
'''


@pytest.fixture(scope="module")
def targets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    root = tmp_path_factory.mktemp("evident")
    repo = GitRepo.create(root / "repo")
    repo.commit("base", {"lexer.py": LEXER, "locale_names.py": LOCALE, "shapes.py": SHAPES, "registry.py": REGISTRY,
                         "tests/test_all.py": TESTS})
    repo.commit("three regressions", {
        "lexer.py": LEXER.replace(' "from": "KW",', ""),
        "locale_names.py": LOCALE.replace('"maintenant"', '"tout de suite"'),
        "shapes.py": SHAPES.replace(REMOVED_AREA, ""),
        "registry.py": REGISTRY.replace(', "alan"', ""),
    })
    result = run_histeg("compute", "--repo", str(repo.path), "--all", "--out", str(root / "out"), "--repeat", "1")
    assert result.code == 0, result.stderr
    document = validate_output(root / "out" / "1" / "testingTargets.json")
    return {target["identifier"]: target for target in document["targets"]}


def _charged(target: dict[str, Any]) -> set[str]:
    return {d["function"] for d in [*target["localDivergences"], *target["nonLocalDivergences"]]}


def _entries(target: dict[str, Any]) -> set[str]:
    return {d["entryPoint"] for d in [*target["localDivergences"], *target["nonLocalDivergences"]]}


def test_a_table_copied_into_state_when_made_is_charged_with_what_its_copy_changed(targets: dict[str, dict[str, Any]]) -> None:
    table = targets["lexer:KEYWORDS"]
    assert "lexer:Lexer.kind" in _charged(table)  # kind reads self.table, never KEYWORDS
    assert any("test_kind" in entry for entry in _entries(table))
    assert "lexer:Lexer.kind" not in targets or targets["lexer:Lexer.kind"]["origin"] != "unmapped divergence"


def test_a_value_a_subclass_overrides_is_charged_where_the_base_method_ran_on_the_subclass(targets: dict[str, dict[str, Any]]) -> None:
    french = targets["locale_names:French.phrases"]
    assert "locale_names:Locale.describe" in _charged(french)
    assert all("test_french" in entry for entry in _entries(french))  # German's and the base's tests did not diverge
    assert "locale_names:Locale.describe" not in targets


def test_a_removed_override_is_charged_for_the_calls_that_reached_it(targets: dict[str, dict[str, Any]]) -> None:
    removed = targets["shapes:Square.area"]
    assert _charged(removed), removed
    assert any("test_total" in entry for entry in _entries(removed))
    assert "changed but not executed by any traced entry point" not in removed["notes"]
    assert not any(t["origin"] == "unmapped divergence" for t in targets.values()), [
        t["identifier"] for t in targets.values() if t["origin"] == "unmapped divergence"]


def test_no_function_that_ran_under_a_changed_outcome_is_called_equivalent(targets: dict[str, dict[str, Any]]) -> None:
    for target in targets.values():
        assert not any("equivalent or not executed" in note for note in target["notes"]), target


def test_a_table_read_once_per_process_is_charged_in_the_tests_that_only_use_what_was_made(targets: dict[str, dict[str, Any]]) -> None:
    """The registry is made in the first test that asks for it; the second test only uses it, and fails."""
    names = targets["registry:NAMES"]
    assert any("test_registry_b" in entry for entry in _entries(names)), names
    assert "registry:Registry.knows" in _charged(names)


UNITS = '''def _label(word):
    return word.upper()


UNITS = [(1000, _label("thousand")), (1000000, _label("million"))]


def spoken(n):
    for power, label in reversed(UNITS):
        if n >= power:
            return f"{n / power:.1f} {label.lower()}"
    return str(n)
'''
UNITS_TESTS = '''from units import spoken


def test_spoken():
    assert spoken(2000000) == "2.0 million"


def test_small():
    assert spoken(12) == "12"
'''


def test_a_table_built_by_a_changed_function_while_the_tests_were_collected_is_charged_with_the_failure(tmp_path: Path) -> None:
    """``_label`` ran once, when the test module imported ``units``: ``test_spoken`` never calls it, and fails in
    ``spoken``, which did not change. The change is the only target, and the first."""
    repo = GitRepo.create(tmp_path / "repo")
    repo.commit("base", {"units.py": UNITS, "tests/test_units.py": UNITS_TESTS})
    repo.commit("labels lost", {"units.py": UNITS.replace("return word.upper()", "return None")})
    result = run_histeg("compute", "--repo", str(repo.path), "--all", "--out", str(tmp_path / "out"), "--repeat", "1")
    assert result.code == 0, result.stderr
    targets = validate_output(tmp_path / "out" / "1" / "testingTargets.json")["targets"]
    assert [target["identifier"] for target in targets] == ["units:_label"]
    assert "units:spoken" in _charged(targets[0])
    assert "tests/test_units.py::test_spoken" in _entries(targets[0])
