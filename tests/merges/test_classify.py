"""Merge classes as pure functions: the four relations of a place, the impact set, the charge, the marked targets."""

from __future__ import annotations

import networkx as nx
import pytest

from histeg.impact.ranking import Layout
from histeg.impact.targets import FunctionInfo
from histeg.merges.classify import Observation, classify
from histeg.merges.charge import ProjectCode, charged_to
from histeg.merges.impact import impact_set, within
from histeg.merges.targets import ADDED, with_merge_classes
from histeg.records.divergences import CompleteRuns
from histeg.records.targets import (
    DiffCoverage,
    DivergenceCounts,
    NoiseSection,
    RankedTarget,
    RankingOptions,
    TargetedReruns,
    TargetSummary,
    TestData,
    TestingTargets,
    UnmatchedEntryPoints,
    ValueParts,
)

D, E, U = True, False, None  # differs, equal, unknown

# (merge vs first parent, merge vs second parent, first parent vs base, second parent vs base) -> classes, lost from
CASES = [
    ((E, D, E, D), ("lost",), ("secondParent",)),           # the merge kept main's side: the feature's change is gone
    ((D, E, D, E), ("lost",), ("firstParent",)),            # the mirror image
    ((D, D, E, E), ("introduced",), ()),                    # both parents as the base, the merge otherwise: a merge-time edit
    ((D, D, E, D), ("lost", "introduced"), ("secondParent",)),  # the merge rewrote what the feature changed
    ((E, D, D, E), (), ()),                                 # main's change kept: nothing lost
    ((E, D, D, D), (), ()),                                 # both sides changed it, the merge took main's: a decision, not a loss
    ((D, D, D, D), ("introduced",), ()),                    # both changed it, the merge has a third behaviour
    ((E, E, E, E), (), ()),
    ((E, U, E, D), (), ()),                                 # noise or an unmatched entry point against the second parent
    ((U, D, E, D), ("lost",), ("secondParent",)),           # the first parent is not needed to tell the second's loss
    ((E, D, U, D), (), ()),                                 # unknown whether the first parent kept the base
    ((E, D, E, U), (), ()),                                 # no base compared (unrelated histories): nothing can be lost
    ((D, U, E, E), (), ()),                                 # introduced needs both parents compared
]


@pytest.mark.parametrize(("relations", "classes", "lost_from"), CASES)
def test_classification(relations: tuple[bool | None, ...], classes: tuple[str, ...], lost_from: tuple[str, ...]) -> None:
    result = classify(Observation(*relations))
    assert result.classes == classes
    assert result.lost_from == lost_from


def _graph() -> nx.DiGraph:
    graph = nx.DiGraph()
    graph.add_edges_from([("m:test", "m:checkout"), ("m:checkout", "m:discount"), ("m:checkout", "m:tax"), ("m:checkout", "m:fee"),
                          ("m:report", "m:audit"), ("m:audit", "m:log")])
    return graph


def test_impact_set_is_what_both_sides_reach() -> None:
    graph = _graph()
    assert within(graph, ["m:tax"], 1) == {"m:tax", "m:checkout"}
    assert within(graph, ["m:tax"], 2) == {"m:tax", "m:checkout", "m:test", "m:discount", "m:fee"}
    assert impact_set(graph, {"m:tax"}, {"m:discount"}, 1) == {"m:checkout"}
    assert impact_set(graph, {"m:tax"}, {"m:discount"}, 2) == {"m:checkout", "m:test", "m:discount", "m:fee", "m:tax"}
    assert impact_set(graph, {"m:tax"}, {"m:log"}, 2) == {"m:tax", "m:log"}  # nothing near both: the changed functions
    assert impact_set(graph, {"m:gone"}, {"m:gone", "m:tax"}, 0) == {"m:gone"}  # a function absent from the graph is itself


def test_charge_goes_to_the_function_else_its_closest_project_caller_whatever_the_impact_set() -> None:
    project = ProjectCode({"m:checkout": FunctionInfo("function", "m.py", (1, 2)), "m:log": FunctionInfo("function", "m.py", (3, 4)),
                           "m:audit": FunctionInfo("function", "m.py", (5, 6)), "m:Box.__repr__": FunctionInfo("method", "m.py", (7, 8)),
                           "tests.test_m:test_a": FunctionInfo("function", "tests/test_m.py", (1, 2)),
                           "tests.test_m:key": FunctionInfo("function", "tests/test_m.py", (3, 4)),
                           "tools.gen:make": FunctionInfo("function", "tools/gen.py", (1, 2))},
                          Layout(("m.py",), ("tests",), frozenset({"__repr__"})))
    assert charged_to("m:log", ("tests.test_m:test_a", "m:audit"), project) == "m:log"  # far from every change: still itself
    assert charged_to("tests.test_m:key", ("tests.test_m:test_a", "m:checkout", "m:audit", "tests.test_m:key"), project) == "m:audit"
    assert charged_to("tools.gen:make", ("tests.test_m:test_a", "m:checkout"), project) == "m:checkout"  # outside the sources
    assert charged_to("m:Box.__repr__", ("tests.test_m:test_a", "m:checkout"), project) == "m:checkout"  # an ignored name
    assert charged_to("tests.test_m:test_a", (), project) == "tests.test_m:test_a"  # no project code above: itself, as test code


def _target(identifier: str, value: float) -> RankedTarget:
    return RankedTarget(
        rank=1, identifier=identifier, kind="function", module="m", qualname=identifier.split(":")[1], file="m.py", lines=(1, 2),
        value=value, parts=ValueParts(local={}, non_local={}, call_distance=0, affected_functions=0, syntax_changes=value, new_class=0,
                                      traces=1),
        origin="syntax change", new=False, syntax_changes=[], syntax_change_count=1, local_divergences=[], local_divergence_count=0,
        non_local_divergences=[], non_local_divergence_count=0, affected_functions=[], entry_points=[], entry_point_count=0,
        divergence_classes=DivergenceCounts(exception_only_in_new=0, exception_only_in_old=0, outcome_changed=0, silent=0),
        new_test_entry_points=[], new_test_entry_point_count=0, notes=["changed"])


LAYOUT = Layout((".",), ("tests",))
"""Sources everywhere, tests in tests/: how the targets step would report each file."""


def _document() -> TestingTargets:
    targets = [_target("m:tax", 9.0), _target("m:fee", 5.0), _target("m:other", 1.0)]
    for rank, target in enumerate(targets, 1):
        target.rank = rank
    return TestingTargets(
        identifier="a" * 40, comparing_against_version="b" * 40,
        options=RankingOptions(metrics=["sections"], restrict_syntax_mapping=False, confirm_runs=2, scaling={}),
        targets=targets, test_code=[], other_code=[],
        noise=NoiseSection(functions=[], entry_points=[], divergences=0, unstable=[],
                           confirmation=TargetedReruns(runs=2, entry_points=0, complete_runs=CompleteRuns(old=0, new=0))),
        test_data=TestData(files=[], divergences=0, functions=[]), unmatched_entry_points=UnmatchedEntryPoints(only_in_old=[], only_in_new=[]),
        changed_code=[], untested_changes=[],
        summary=TargetSummary(targets=3, with_impact=0, unmapped=0, divergences=0, noise=0, untested=0,
                              diff_coverage=DiffCoverage(changed_lines=0, executed_lines=0, ratio=None)))


def test_marked_targets_rank_first_and_marking_again_gives_the_same_file() -> None:
    charged = {"m:fee": ({"introduced"}, set(), ["m:fee"], ["t::a"]),
               "m:discount": ({"lost"}, {"secondParent"}, ["m:discount"], ["t::a", "t::b"])}
    functions = {"m:discount": FunctionInfo("function", "m.py", (3, 4))}
    document = with_merge_classes(_document(), charged, functions, LAYOUT)
    assert [(t.rank, t.identifier, t.merge_classes) for t in document.targets] == [
        (1, "m:fee", ["introduced"]), (2, "m:discount", ["lost"]), (3, "m:tax", []), (4, "m:other", [])]
    added = document.targets[1]
    assert ADDED in added.notes and added.lines == (3, 4) and added.entry_point_count == 2 and added.value == 0
    assert any("second parent" in note for note in added.notes)
    assert document.summary.targets == 4
    again = with_merge_classes(document, charged, functions, LAYOUT)
    assert again.to_builtins() == with_merge_classes(_document(), charged, functions, LAYOUT).to_builtins()
    cleared = with_merge_classes(again, {}, functions, LAYOUT)  # nothing charged any more: the targets step's own order back
    assert [(t.identifier, t.merge_classes, t.notes) for t in cleared.targets] == [
        ("m:tax", [], ["changed"]), ("m:fee", [], ["changed"]), ("m:other", [], ["changed"])]


def test_a_charged_test_function_is_reported_as_test_code_never_ranked() -> None:
    charged = {"tests.test_m:test_a": ({"introduced"}, set(), ["tests.test_m:test_a"], ["tests/test_m.py::test_a"]),
               "m:fee": ({"introduced"}, set(), ["m:fee"], ["tests/test_m.py::test_a"])}
    functions = {"tests.test_m:test_a": FunctionInfo("function", "tests/test_m.py", (1, 2))}
    document = with_merge_classes(_document(), charged, functions, LAYOUT)
    assert [t.identifier for t in document.targets] == ["m:fee", "m:tax", "m:other"]
    assert [(t.identifier, t.rank, t.merge_classes) for t in document.test_code] == [("tests.test_m:test_a", None, ["introduced"])]
    again = with_merge_classes(document, charged, functions, LAYOUT)
    assert again.to_builtins() == with_merge_classes(_document(), charged, functions, LAYOUT).to_builtins()
    assert with_merge_classes(again, {}, functions, LAYOUT).test_code == []
