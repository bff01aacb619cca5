"""Matching tests whose node ids changed, on traces of a real project made by the real pipeline.

Versions of one small project, each traced by ``histeg analyze``:

0. base: ``test_scale`` parametrized with objects (automatic ids ``item0``...), ``test_double``
   with value-derived ids, a plain test and a test class with a parametrized method;
1. a case inserted in front of ``test_scale`` (every automatic id renumbers) and ``lib.scale``
   changed;
2. ``test_scale``'s cases reordered and its first one edited in place, a value-derived id changed;
3. a test renamed, the test class moved to another file with a case inserted in front, and a
   parametrized test function moved to another file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from histeg.compare.divergences import Comparer, load_run, run_directories
from histeg.compare.entry_points import EntryKey, EntryMatching, EntryRef, match_entry_points, read_manual_matching
from histeg.compare.test_matching import cases_of, pair_cases, read_renames, split_node_id, translate
from histeg.records.divergences import ManualPair, TraceMatching
from histeg.store import SYNTAX_CHANGES, OutputStore
from tests.conftest import GitRepo, run_histeg

LIB = '''class Item:
    def __init__(self, value):
        self.value = value


def scale(item, factor):
    return item.value * factor


def double(x):
    return x + x
'''
CONFTEST = '''import pytest


@pytest.fixture
def factor():
    return 2
'''
SCALE = '''import pytest

from lib import Item, scale


@pytest.mark.parametrize("item", [{cases}])
def test_scale(item, factor):
    assert scale(item, factor) == item.value * 2
'''
PAIRS = '''import pytest

from lib import double


@pytest.mark.parametrize("a,tag", [{cases}])
def test_double(a, tag):
    assert double(a) == 2 * a
'''
NAMES = '''from lib import double


def {name}():
    assert double(2) == 4
'''
WHOLE = '''import pytest

from lib import Item, double


class TestWhole:
    @pytest.mark.parametrize("item", [{cases}])
    def test_method(self, item):
        assert double(item.value) == 2 * item.value
'''


def items(*values: int) -> str:
    return ", ".join(f"Item({v})" for v in values)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> OutputStore:
    """The project's four versions, traced once for the whole module."""
    root = tmp_path_factory.mktemp("test-matching")
    repo = GitRepo.create(root / "repo")
    repo.commit("base", {
        "lib.py": LIB, "tests/conftest.py": CONFTEST,
        "tests/test_scale.py": SCALE.format(cases=items(1, 2, 3)),
        "tests/test_pairs.py": PAIRS.format(cases='(1, "x"), (3, "y")'),
        "tests/test_names.py": NAMES.format(name="test_before") + "\n\n" + WHOLE.format(cases=items(1, 2)),
    })
    repo.commit("a case in front; scale changed", {
        "lib.py": LIB.replace("    return item.value * factor", "    product = item.value * factor\n    return product"),
        "tests/test_scale.py": SCALE.format(cases=items(0, 1, 2, 3)),
    })
    repo.commit("cases reordered, one edited in place; a value-derived id changed", {
        "tests/test_scale.py": SCALE.format(cases=items(9, 2, 1, 3)),
        "tests/test_pairs.py": PAIRS.format(cases='(1, "x"), (3, "z")'),
    })
    repo.commit("a test renamed, a class and a test function moved", {
        "tests/test_names.py": NAMES.format(name="test_after"),
        "tests/test_moved.py": WHOLE.format(cases=items(0, 1, 2)),
        "tests/test_other.py": PAIRS.format(cases='(1, "x"), (3, "z")'),
    }, remove=("tests/test_pairs.py",))
    out = root / "out"
    result = run_histeg("analyze", "--repo", str(repo.path), "--all", "--out", str(out), "--repeat", "1")
    assert result.code == 0, result.stderr
    return OutputStore(out)


def run(store: OutputStore, index: int) -> dict[EntryKey, EntryRef]:
    return load_run(run_directories(store, index)[0])


def labels(matching: EntryMatching, phase: str = "call") -> dict[str, str]:
    return {a.label: b.label for a, b in matching.pairs if a.phase == phase and a.label}


def scale_ids(pairs: dict[str, str]) -> dict[str, str]:
    return {split_node_id(a)[1]: split_node_id(b)[1] for a, b in pairs.items() if "test_scale" in a}


def test_a_case_inserted_in_front_matches_every_old_case_by_its_values(store: OutputStore) -> None:
    old, new = run(store, 0), run(store, 1)
    matching = match_entry_points(old, new)
    assert scale_ids(labels(matching)) == {"[item0]": "[item1]", "[item1]": "[item2]", "[item2]": "[item3]"}
    # the fixture's setup follows its test's case, not its old id
    assert scale_ids(labels(matching, "setup")) == scale_ids(labels(matching))
    assert {k.label for k in matching.only_new if k.label} == {"tests/test_scale.py::test_scale[item0]"}
    assert not matching.only_old
    # what the changed function does is seen under every matched case; the tests themselves did not change
    with Comparer() as comparer:
        found = comparer.divergences(old, new, matching.pairs)
    scale_calls = {key for key, _ in matching.pairs if "test_scale" in key.label and key.phase == "call"}
    under = {d.entry.label for d in found if d.call.function == "lib:scale"}
    assert under == {labels(matching)[key.label] for key in scale_calls}
    assert not [d for d in found if d.call.function == "tests.test_scale:test_scale" and "parameters" in d.call.kinds]
    # pairing by node ids alone compares different cases: the test's own parameters differ
    with Comparer() as comparer:
        by_ids = comparer.divergences(old, new, match_entry_points(list(old), list(new)).pairs)
    assert [d for d in by_ids if d.call.function == "tests.test_scale:test_scale" and "parameters" in d.call.kinds]


def test_reordered_and_edited_cases(store: OutputStore) -> None:
    matching = match_entry_points(run(store, 1), run(store, 2))
    # item1 (1) and item2 (2) swapped places; item3 (3) stayed; item0 kept its id with another value
    assert scale_ids(labels(matching)) == {"[item0]": "[item0]", "[item1]": "[item2]", "[item2]": "[item1]", "[item3]": "[item3]"}
    assert labels(matching)["tests/test_pairs.py::test_double[3-y]"] == "tests/test_pairs.py::test_double[3-z]"
    assert not matching.only_old and not matching.only_new


def test_renamed_and_moved_tests_match_through_the_syntax_changes(store: OutputStore) -> None:
    renames = read_renames(store.file(3, SYNTAX_CHANGES))
    assert renames["tests.test_names:test_before"] == "tests.test_names:test_after"
    assert translate("tests.test_names:TestWhole.test_method", renames) == "tests.test_moved:TestWhole.test_method"
    assert translate("tests.test_pairs:test_double", renames) == "tests.test_other:test_double"
    old, new = run(store, 2), run(store, 3)
    matching = match_entry_points(old, new, renames=renames)
    pairs = labels(matching)
    assert pairs["tests/test_names.py::test_before"] == "tests/test_names.py::test_after"
    assert pairs["tests/test_pairs.py::test_double[1-x]"] == "tests/test_other.py::test_double[1-x]"
    assert pairs["tests/test_pairs.py::test_double[3-z]"] == "tests/test_other.py::test_double[3-z]"
    # moved with a case inserted in front: matched across the move by values, ``self`` left out
    assert pairs["tests/test_names.py::TestWhole::test_method[item0]"] == "tests/test_moved.py::TestWhole::test_method[item1]"
    assert pairs["tests/test_names.py::TestWhole::test_method[item1]"] == "tests/test_moved.py::TestWhole::test_method[item2]"
    assert [k.label for k in matching.only_new if k.phase == "call"] == ["tests/test_moved.py::TestWhole::test_method[item0]"]
    assert not [k for k in matching.only_old if k.label]
    # without the syntax changes none of them is found
    without = labels(match_entry_points(old, new))
    assert "tests/test_names.py::test_before" not in without and "tests/test_pairs.py::test_double[1-x]" not in without


def test_manual_pairs_come_first_and_are_left_out_of_value_matching(store: OutputStore, tmp_path: Path) -> None:
    old, new = run(store, 0), run(store, 1)
    key = EntryKey("pytest", "tests/test_scale.py::test_scale[item0]", "call", "tests.test_scale:test_scale", 0)
    assert key in old and key in new
    manual = tmp_path / "traceMatching.json"
    TraceMatching(pairs=[ManualPair(old=key, new=key)]).write(manual)
    matching = match_entry_points(old, new, read_manual_matching(manual))
    assert matching.pairs[0] == (key, key)
    assert scale_ids(labels(matching)) == {"[item0]": "[item0]", "[item1]": "[item2]", "[item2]": "[item3]"}
    assert [(k.label, k.phase) for k in matching.only_new if k.label] == [("tests/test_scale.py::test_scale[item1]", "call"),
                                                                ("tests/test_scale.py::test_scale[item1]", "setup")]


def test_runs_of_one_version_and_keys_without_refs(store: OutputStore) -> None:
    """Between runs of one version (noise) every entry point pairs with itself; given keys alone
    (no values to read), cases pair by their ids as before."""
    first = run(store, 1)
    same = match_entry_points(first, run(store, 1))
    assert all(a == b for a, b in same.pairs) and len(same.pairs) == len(first)
    old, new = run(store, 0), run(store, 1)
    keys_only = match_entry_points(list(old), list(new))
    assert scale_ids(labels(keys_only)) == {"[item0]": "[item0]", "[item1]": "[item1]", "[item2]": "[item2]"}


def test_value_rule_decodes_only_what_it_needs(store: OutputStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Cases with identical entry points under the same id are paired from the index; the rest
    are decoded once each for their values."""
    decoded: list[tuple[str, int]] = []
    from histeg.traces.reader import TraceFile

    columns = TraceFile.columns

    def counting(self: TraceFile, entry: int, *args: object, **kwargs: object) -> object:
        decoded.append((self.path.name, entry))
        return columns(self, entry, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(TraceFile, "columns", counting)
    old, new = run(store, 1), run(store, 2)

    def scale(entries: dict[EntryKey, EntryRef]) -> list:
        return [c for c in cases_of(entries, set()) if "test_scale" in c.key.label]

    old_cases, new_cases = scale(old), scale(new)
    pairs = {(a.case_id, b.case_id) for a, b in pair_cases(old_cases, new_cases)}
    assert pairs == {("[item0]", "[item0]"), ("[item1]", "[item2]"), ("[item2]", "[item1]"), ("[item3]", "[item3]")}
    # item3 is the same case with the same trace on both sides: never decoded
    assert len(decoded) == 6 and len(set(decoded)) == 6
    assert [c.params() for c in old_cases if c.case_id == "[item1]"][0][0][1].repr == "{value=1}"  # type: ignore[union-attr]


def test_value_rule_on_real_cases(store: OutputStore) -> None:
    old = [c for c in cases_of(run(store, 0), set()) if "test_scale" in c.key.label]
    new = [c for c in cases_of(run(store, 2), set()) if "test_scale" in c.key.label]
    # 0: Item(1), Item(2), Item(3); 2: Item(9), Item(2), Item(1), Item(3): equal values first, then the same id
    assert [(a.case_id, b.case_id) for a, b in pair_cases(old, new)] == [("[item1]", "[item1]"), ("[item0]", "[item2]"), ("[item2]", "[item3]")]
    # a case without a counterpart of equal values, id or shared value stays unmatched
    assert pair_cases([c for c in old if c.case_id == "[item2]"], [c for c in new if c.case_id == "[item0]"]) == []


def test_node_ids_and_identifiers() -> None:
    assert split_node_id("tests/t.py::TestX::test_y[a::b[1]]") == ("tests/t.py::TestX::test_y", "[a::b[1]]")
    assert split_node_id("tests/t.py::test_y") == ("tests/t.py::test_y", "")
    renames = {"a.b:Old": "a.c:New", "a.b:f": "a.b:g", "x.y": "x.z"}
    assert translate("a.b:Old.method", renames) == "a.c:New.method"
    assert translate("a.b:f", renames) == "a.b:g"
    assert translate("x.y:h", renames) == "x.z:h"
    assert translate("a.b:h", renames) == "a.b:h"
