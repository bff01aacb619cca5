"""The ranking core, function by function, over small hand-made records: each row states its expected result."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from histeg.compare.calls import CallDivergence
from histeg.compare.divergences import Divergence, VersionComparison
from histeg.compare.entry_points import EntryKey
from histeg.compare.noise import Unstable
from histeg.errors import HistegError
from histeg.impact import documents
from histeg.impact.changes import ChangeIndex, index_changes
from histeg.impact.mapping import Impact, ImpactMap, map_divergences
from histeg.impact.metrics import Value, averages, target_value
from histeg.impact.notes import notes_on
from histeg.impact.ranking import (
    Layout,
    RankingInputs,
    changed_test_data,
    ignored,
    partition,
    rank_version,
    ranked,
)
from histeg.impact.compute import ranking_options
from histeg.impact.targets import FunctionInfo, Target, build_targets, function_table
from histeg.records import targets as records
from histeg.records.statics import FunctionKind, FunctionRecord
from histeg.runs.confirm import DEFAULT_CONFIRM_RUNS
from histeg.settings.evidence import (
    EXCEPTION_ONLY_IN_NEW,
    EXCEPTION_ONLY_IN_OLD,
    OUTCOME_CHANGED,
    SILENT,
)
from histeg.settings.load import default_settings
from histeg.settings.scaling import Scaling, parse_metrics
from histeg.statics.reads import FunctionReads

TEST_A = EntryKey("pytest", "tests/test_lib.py::test_a", "call", "tests.test_lib:test_a", 0)
TEST_B = EntryKey("pytest", "tests/test_lib.py::test_b", "call", "tests.test_lib:test_b", 0)
NEW_TEST = EntryKey("pytest", "tests/test_lib.py::test_new", "call", "tests.test_lib:test_new", 0)
LAYOUT = Layout(sources=("src",), tests=("tests",))
NO_CHANGED_LINES = records.DiffCoverage(changed_lines=0, executed_lines=0, ratio=None)


def divergence(function: str, chain: tuple[str, ...] = (), path: tuple[int, ...] = (0,), entry: EntryKey = TEST_A,
               classes: tuple[str, ...] = (SILENT,), **metrics: int) -> Divergence:
    return Divergence(entry, CallDivergence(function, chain, path, **metrics), classes)


def change(entity: str, code_type: str = "condition", kind: str = "modification", level: str = "function", significance: str = "medium",
           lines: tuple[int, int] | None = (3, 4), path: str | None = "src/lib.py", owner: str | None = None) -> dict[str, Any]:
    """One change as syntaxChanges.json lists it."""
    return {"id": 0, "level": level, "entity": entity, "function": entity if level == "function" else None, "class": owner,
            "type": kind, "codeType": code_type, "significance": significance, "oldLines": lines, "newLines": lines,
            "oldPath": path, "newPath": path}


def changed(*changes: dict[str, Any]) -> ChangeIndex:
    return index_changes({"files": [{"changes": list(changes)}]})


def target(identifier: str, total: float = 0.0, file: str | None = "src/lib.py", kind: str = "function", **fields: Any) -> Target:
    return Target(identifier, kind, file, (1, 2), Value(total, {}), fields.pop("syntax_changes", []), fields.pop("impact", Impact()),
                  fields.pop("unmapped", False), fields.pop("new", False), **fields)


# ---------------------------------------------------------------- syntax changes

@pytest.mark.parametrize(("changes", "functions", "values", "new_classes", "new_entities", "files"), [
    pytest.param([], set(), set(), set(), set(), {}, id="empty"),
    pytest.param([change("lib:f")], {"lib:f"}, set(), set(), set(), {"lib:f": "src/lib.py"}, id="function"),
    pytest.param([change("lib:f", "docstring", significance="none")], set(), set(), set(), set(), {}, id="docstring-is-no-change"),
    pytest.param([change("lib:LIMIT", "assignment", level="module")], set(), {"lib:LIMIT"}, set(), set(), {"lib:LIMIT": "src/lib.py"},
                 id="module-value"),
    pytest.param([change("lib:C.X", "constant", level="class", owner="lib:C")], set(), {"lib:C.X"}, set(), set(), {"lib:C.X": "src/lib.py"},
                 id="class-attribute"),
    pytest.param([change("lib:C", "assignment", level="class", owner="lib:C")], set(), set(), set(), set(), {"lib:C": "src/lib.py"},
                 id="class-itself-is-no-value"),
    pytest.param([change("lib:", "assignment", level="module")], set(), set(), set(), set(), {"lib:": "src/lib.py"}, id="module-is-no-value"),
    pytest.param([change("lib:C", "class", "addition", level="module")], set(), set(), {"lib:C"}, {"lib:C"}, {"lib:C": "src/lib.py"},
                 id="new-class"),
    pytest.param([change("lib:g", "function", "addition", level="module")], set(), set(), set(), {"lib:g"}, {"lib:g": "src/lib.py"},
                 id="new-function"),
    pytest.param([{**change("lib:gone", "function", "removal", level="module", path="src/old.py"), "newPath": None}], set(), set(), set(),
                 set(), {"lib:gone": "src/old.py"}, id="removal-keeps-old-path"),
])
def test_index_changes(changes: list[dict[str, Any]], functions: set[str], values: set[str], new_classes: set[str], new_entities: set[str],
                       files: dict[str, str]) -> None:
    index = changed(*changes)
    assert (index.functions, index.values, index.new_classes, index.new_entities, index.files) == (
        functions, values, new_classes, new_entities, files)
    assert sorted(index.by_entity) == sorted(files)


# ---------------------------------------------------------------- mapping

CHAIN = ("tests.test_lib:test_a", "lib:report", "lib:compute")
"""test_a calls report calls compute, which calls helper."""
HELPER = divergence("lib:helper", CHAIN, (0, 0, 0))
READS = {"lib:threshold": FunctionReads(resolved={"lib:LIMIT": "name"}),
         "lib:colour": FunctionReads(candidates={"lib:Palette.COLOURS": frozenset({"lib:Palette.__init__"})})}
GRAPH = {("lib:compute", "lib:helper"): 5}


def charged(mapped: ImpactMap) -> dict[str, tuple[list[str], list[tuple[str, int | None]]]]:
    return {identifier: ([d.call.function for d in impact.local], [(d.call.function, hops) for d, hops in impact.non_local])
            for identifier, impact in mapped.targets.items()}


@pytest.mark.parametrize(("divergences", "changes", "options", "expected", "unmapped", "by_test_data"), [
    pytest.param([], changed(change("lib:f")), {}, {}, set(), [], id="empty"),
    pytest.param([divergence("lib:f")], changed(change("lib:f")), {}, {"lib:f": (["lib:f"], [])}, set(), [], id="local"),
    pytest.param([HELPER], changed(change("lib:compute"), change("lib:report")), {},
                 {"lib:compute": ([], [("lib:helper", 5)]), "lib:report": ([], [("lib:helper", 2)])}, set(), [],
                 id="every-changed-caller-graph-distance-else-chain"),
    pytest.param([HELPER], changed(change("lib:compute"), change("lib:report")), {"restrict": True},
                 {"lib:compute": ([], [("lib:helper", 5)])}, set(), [], id="restrict-closest-caller"),
    pytest.param([HELPER], changed(change("lib:report")), {"restrict": True}, {"lib:report": ([], [("lib:helper", 2)])}, set(), [],
                 id="restrict-skips-unchanged-callers"),
    pytest.param([divergence("lib:report", CHAIN[:1], (0,)), divergence("lib:helper", CHAIN, (0, 0, 0), returns=1)],
                 changed(change("lib:helper")), {},
                 {"lib:helper": (["lib:helper"], [("lib:report", 2)])}, set(), [], id="changed-callee-returned-otherwise"),
    pytest.param([divergence("lib:report", CHAIN[:1], (0,)), divergence("lib:b", CHAIN[:2], (0, 1), returns=1),
                  divergence("lib:a", CHAIN[:2], (0, 0), returns=1), divergence("lib:deep", (*CHAIN[:2], "lib:a"), (0, 0, 0), returns=1)],
                 changed(change("lib:a"), change("lib:b"), change("lib:deep")), {},
                 {"lib:b": (["lib:b"], [("lib:report", 1)]), "lib:a": (["lib:a"], [("lib:report", 1)]), "lib:deep": (["lib:deep"], [])},
                 set(), [], id="returning-callees-tie-nearest-only"),
    pytest.param([divergence("lib:report", CHAIN[:1], (0,)), divergence("lib:helper", CHAIN, (0, 0, 0), distance=1)],
                 changed(change("lib:helper")), {}, {"lib:report": (["lib:report"], []), "lib:helper": (["lib:helper"], [])}, {"lib:report"},
                 [], id="callee-with-same-return-explains-nothing"),
    pytest.param([divergence("lib:threshold", CHAIN[:1]), divergence("lib:check", (*CHAIN[:1], "lib:threshold"), (0, 0))],
                 changed(change("lib:LIMIT", "assignment", level="module")), {},
                 {"lib:LIMIT": ([], [("lib:threshold", 0), ("lib:check", 1)])}, set(), [], id="reader-of-changed-value"),
    pytest.param([divergence("lib:colour", CHAIN[:1])], changed(change("lib:Palette.COLOURS", "constant", level="class", owner="lib:Palette")),
                 {"entry_functions": {TEST_A: {"lib:Palette.__init__", "lib:colour"}}},
                 {"lib:Palette.COLOURS": ([], [("lib:colour", 0)])}, set(), [], id="candidate-read-confirmed-by-trace"),
    pytest.param([divergence("lib:colour", CHAIN[:1])], changed(change("lib:Palette.COLOURS", "constant", level="class", owner="lib:Palette")),
                 {"entry_functions": {TEST_B: {"lib:Palette.__init__"}}},
                 {"lib:colour": (["lib:colour"], [])}, {"lib:colour"}, [], id="candidate-read-not-confirmed-under-this-test"),
    pytest.param([divergence("lib:threshold", ("lib:report",))], changed(change("lib:report"), change("lib:LIMIT", "assignment", level="module")),
                 {}, {"lib:report": ([], [("lib:threshold", 1)])}, set(), [], id="changed-caller-before-value"),
    pytest.param([divergence("lib:Counter.__init__", CHAIN[:1], (0,)), divergence("lib:Counter.describe", CHAIN[:1], (1,))],
                 changed(change("lib:Counter.__init__")), {},
                 {"lib:Counter.__init__": (["lib:Counter.__init__"], [("lib:Counter.describe", 2)])}, set(), [],
                 id="through-state-changed-call-before"),
    pytest.param([divergence("lib:Counter.describe", CHAIN[:1], (0,)), divergence("lib:Counter.__init__", CHAIN[:1], (1,))],
                 changed(change("lib:Counter.__init__")), {},
                 {"lib:Counter.describe": (["lib:Counter.describe"], []), "lib:Counter.__init__": (["lib:Counter.__init__"], [])},
                 {"lib:Counter.describe"}, [], id="changed-call-after-explains-nothing"),
    pytest.param([HELPER], changed(change("tests.test_lib:test_a")), {"tests": frozenset({"tests.test_lib:test_a"})},
                 {"tests.test_lib:test_a": ([], [("lib:helper", 3)])}, set(), [], id="changed-test-above"),
    pytest.param([HELPER], changed(change("tests.test_lib:test_a"), change("lib:report")), {"tests": frozenset({"tests.test_lib:test_a"})},
                 {"lib:report": ([], [("lib:helper", 2)])}, set(), [], id="code-under-test-before-test"),
    pytest.param([HELPER], changed(change("lib:other")), {"test_data_changed": True}, {}, set(), ["lib:helper"], id="test-data"),
    pytest.param([HELPER], changed(change("lib:other")), {}, {"lib:helper": (["lib:helper"], [])}, {"lib:helper"}, [], id="unmapped"),
])
def test_map_divergences(divergences: list[Divergence], changes: ChangeIndex, options: dict[str, Any],
                         expected: dict[str, tuple[list[str], list[tuple[str, int]]]], unmapped: set[str], by_test_data: list[str]) -> None:
    mapped = map_divergences(divergences, changes, READS, lambda a, b: GRAPH.get((a, b)), **options)
    assert charged(mapped) == expected
    assert mapped.unmapped == unmapped
    assert [d.call.function for d in mapped.by_test_data] == by_test_data


# ---------------------------------------------------------------- metrics and scaling

LOCAL = divergence("lib:f", distance=4, sections=2, coverage=3, returns=1)
NON_LOCAL = divergence("lib:g", ("lib:f",), (0, 0), distance=2, sections=1, coverage=5, parameters=1, calls=2)
IMPACT = Impact([LOCAL], [(NON_LOCAL, 2)])
EXTRA = {"callDistance": 7.0, "affectedFunctions": 0.01, "syntaxChanges": 0.0, "newClass": 0.0}
"""Of IMPACT with the default scaling, one trace, no syntax change: hops 2 x 3.5, one affected function x 0.01."""


@pytest.mark.parametrize(("divergences", "traces", "expected"), [
    pytest.param([], 0, dict.fromkeys(("sections", "distance", "coverage", "returns", "parameters", "calls"), 0.0), id="empty"),
    pytest.param([LOCAL, NON_LOCAL], 2, {"sections": 1.5, "distance": 3.0, "coverage": 4.0, "returns": 0.5, "parameters": 0.5, "calls": 1.0},
                 id="per-trace"),
    pytest.param([LOCAL], 0, {"sections": 2.0, "distance": 4.0, "coverage": 3.0, "returns": 1.0, "parameters": 0.0, "calls": 0.0},
                 id="no-trace-counts-as-one"),
])
def test_averages(divergences: list[Divergence], traces: int, expected: dict[str, float]) -> None:
    assert averages(divergences, traces) == expected


@pytest.mark.parametrize(("metrics", "local", "non_local", "total"), [
    pytest.param(("sections",), {"returns": 0.1, "parameters": 0.0, "calls": 0.0, "sections": 0.2, "distance": 0.0},
                 {"returns": 0.0, "parameters": 1.0, "calls": 2.0, "sections": 10.0, "distance": 0.6}, 20.91, id="sections"),
    pytest.param(("coverage",), {"returns": 0.1, "parameters": 0.0, "calls": 0.0, "coverage": 0.3},
                 {"returns": 0.0, "parameters": 1.0, "calls": 2.0, "coverage": 5.0}, 15.41, id="coverage"),
    pytest.param(("distance",), {"returns": 0.1, "parameters": 0.0, "calls": 0.0, "distance": 0.4},
                 {"returns": 0.0, "parameters": 1.0, "calls": 2.0, "distance": 2.0}, 12.51, id="distance"),
    pytest.param(("sections", "coverage", "distance"),
                 {"returns": 0.1, "parameters": 0.0, "calls": 0.0, "sections": 0.2, "distance": 0.4, "coverage": 0.3},
                 {"returns": 0.0, "parameters": 1.0, "calls": 2.0, "sections": 10.0, "distance": 2.6, "coverage": 5.0}, 28.61,
                 id="all-three-distance-adds-up"),
])
def test_each_metric_and_their_combination(metrics: tuple[str, ...], local: dict[str, float], non_local: dict[str, float],
                                           total: float) -> None:
    value = target_value(IMPACT, 1, 0, False, Scaling(), metrics)
    assert msgspec.to_builtins(value.parts) == {"local": local, "nonLocal": non_local, **EXTRA, "traces": 1}
    assert value.total == total


@pytest.mark.parametrize(("impact", "traces", "syntax_changes", "new_class", "scaling", "total", "extra"), [
    pytest.param(IMPACT, 1, 0, False, Scaling(), 20.91, {}, id="defaults"),
    pytest.param(IMPACT, 1, 2, False, Scaling(), 22.71, {"syntaxChanges": 2.0}, id="own-lines-of-a-changed-function-count-nothing"),
    pytest.param(IMPACT, 1, 2, False, Scaling(changed_own_lines=1.0), 22.91, {"syntaxChanges": 2.0}, id="own-lines-counted-as-jhisteg"),
    pytest.param(IMPACT, 1, 0, True, Scaling(), 32.91, {"newClass": 12.0}, id="new-class"),
    pytest.param(IMPACT, 1, 0, True, Scaling(new_class=3.0), 23.91, {"newClass": 3.0}, id="new-class-weight"),
    pytest.param(IMPACT, 1, 0, False, Scaling(call_distance=0.0, affected_functions=0.0), 13.9,
                 {"callDistance": 0.0, "affectedFunctions": 0.0}, id="no-distance-nor-spread"),
    pytest.param(IMPACT, 1, 0, False, Scaling(non_local_sections=0.0), 10.91, {}, id="non-local-sections-off"),
    pytest.param(IMPACT, 2, 0, False, Scaling(), 13.96, {}, id="two-traces-halve-divergences-not-distance"),
    pytest.param(Impact([], [(NON_LOCAL, None), (NON_LOCAL, 4)]), 1, 0, False, Scaling(), 41.21, {"callDistance": 14.0, "affectedFunctions": 0.01},
                 id="unknown-distance-left-out-of-mean"),
    pytest.param(Impact(), 0, 0, False, Scaling(), 0.0, {"callDistance": 0.0, "affectedFunctions": 0.0}, id="nothing"),
])
def test_scaling_variants(impact: Impact, traces: int, syntax_changes: int, new_class: bool, scaling: Scaling, total: float,
                          extra: dict[str, float]) -> None:
    value = target_value(impact, traces, syntax_changes, new_class, scaling, ("sections",))
    assert value.total == total
    parts = msgspec.to_builtins(value.parts)
    assert {key: parts[key] for key in EXTRA} == EXTRA | extra
    assert value.parts.traces == traces


@pytest.mark.parametrize(("given", "expected"), [
    pytest.param(None, ("sections",), id="default"),
    pytest.param("coverage", ("coverage",), id="one"),
    pytest.param(["distance", "sections", "coverage"], ("sections", "coverage", "distance"), id="canonical-order"),
    pytest.param("lines", HistegError, id="unknown"),
])
def test_parse_metrics(given: Any, expected: tuple[str, ...] | type[Exception]) -> None:
    if isinstance(expected, tuple):
        assert parse_metrics(given) == expected
    else:
        with pytest.raises(expected, match="unknown metric 'lines'"):
            parse_metrics(given)


@pytest.mark.parametrize(("table", "expected"), [
    pytest.param(None, Scaling(), id="none"),
    pytest.param({"non-local-sections": 5, "new-class": 0}, Scaling(non_local_sections=5.0, new_class=0.0), id="overrides"),
    pytest.param({"no-such-weight": 1}, "unknown scaling 'no-such-weight'", id="unknown-key"),
    pytest.param({"new-class": True}, "scaling 'new-class' must be a number", id="bool"),
    pytest.param({"new-class": "12"}, "scaling 'new-class' must be a number", id="text"),
])
def test_scaling_from_config(table: dict[str, Any] | None, expected: Scaling | str) -> None:
    if isinstance(expected, Scaling):
        assert Scaling.from_config(table) == expected
    else:
        with pytest.raises(HistegError, match=expected):
            Scaling.from_config(table)


# ---------------------------------------------------------------- targets and notes

TABLE = {"lib:f": FunctionInfo("method", "src/lib.py", (10, 20)), "lib:g": FunctionInfo("function", "src/other.py", (1, 5))}


@pytest.mark.parametrize(("changes", "mapped", "entry_functions", "expected"), [
    pytest.param(ChangeIndex(), ImpactMap(), {}, [], id="empty"),
    pytest.param(changed(change("lib:f", lines=(12, 13))), ImpactMap(), {TEST_A: {"lib:f"}, TEST_B: {"lib:f"}},
                 [("lib:f", "method", "src/lib.py", (10, 20), False, False, 2)], id="from-function-table"),
    pytest.param(changed(change("lib:LIMIT", "assignment", level="module", lines=(3, 3)), change("lib:LIMIT", "assignment", level="module",
                                                                                                    lines=(7, 9))),
                 ImpactMap(), {}, [("lib:LIMIT", "value", "src/lib.py", (3, 9), False, False, 0)], id="value-lines-span-its-changes"),
    pytest.param(changed(change("lib:", "import", level="module", lines=None)), ImpactMap(), {},
                 [("lib:", "module", "src/lib.py", None, False, False, 0)], id="module"),
    pytest.param(changed(change("lib:C", "class", "addition", level="module", lines=(1, 8))), ImpactMap(), {},
                 [("lib:C", "class", "src/lib.py", (1, 8), True, False, 0)], id="new-class"),
    pytest.param(ChangeIndex(), ImpactMap({"lib:h": Impact([divergence("lib:h"), divergence("lib:h", entry=TEST_B)])}, {"lib:h"}), {},
                 [("lib:h", "function", None, None, False, True, 2)], id="unmapped-traces-from-its-divergences"),
])
def test_build_targets(changes: ChangeIndex, mapped: ImpactMap, entry_functions: dict[EntryKey, set[str]], expected: list[tuple[Any, ...]]) -> None:
    comparison = VersionComparison(1, 0, entry_functions=entry_functions)
    targets = build_targets(changes, mapped, comparison, TABLE, Scaling(), ("sections",))
    assert [(t.identifier, t.kind, t.file, t.lines, t.new, t.unmapped, t.value.parts.traces) for t in targets] == expected


def test_new_tests_running_a_target_are_listed() -> None:
    comparison = VersionComparison(1, 0, new_entry_functions={NEW_TEST: {"lib:f"}, TEST_B: {"lib:g"}})
    targets = build_targets(changed(change("lib:f")), ImpactMap(), comparison, TABLE, Scaling(), ("sections",))
    assert [(t.identifier, t.new_tests) for t in targets] == [("lib:f", [NEW_TEST])]


UNMAPPED_NOTE = "diverged without a syntax change in it or above it in the call chain: probably a consequence of changed state"
SILENT_NOTE = "its divergences are silent: no existing test's outcome changed"
SYNTAX = [change("lib:f")]


@pytest.mark.parametrize(("made", "traces_seen", "expected"), [
    pytest.param(target("lib:h", impact=Impact([divergence("lib:h")]), unmapped=True), 1, [UNMAPPED_NOTE, SILENT_NOTE], id="unmapped"),
    pytest.param(target("lib:C", kind="class", new=True, syntax_changes=SYNTAX), 0,
                 ["new class", "changed; no divergence was attributed to it"], id="new-class"),
    pytest.param(target("lib:f", new=True, syntax_changes=SYNTAX), 0, ["new function"], id="new-function"),
    pytest.param(target("lib:f", syntax_changes=SYNTAX,
                        impact=Impact([divergence("lib:f", returns=1, classes=(EXCEPTION_ONLY_IN_NEW, OUTCOME_CHANGED))])), 1,
                 ["raises where the old version did not (1 divergence(s)): regression candidate",
                  "a test's outcome changed with it: the suite sees this change"], id="regression"),
    pytest.param(target("lib:f", syntax_changes=SYNTAX, impact=Impact([divergence("lib:f", returns=1, classes=(EXCEPTION_ONLY_IN_OLD,))] * 2)),
                 1, ["no longer raises where the old version did (2 divergence(s)): a fix?"], id="fix"),
    pytest.param(target("lib:f", syntax_changes=SYNTAX, new_tests=[NEW_TEST]), 0,
                 [("its behaviour is observed only by tests this version adds or renames (1 entry point(s)): "
                   "the existing tests cannot tell old from new")], id="only-new-tests-see-it"),
    pytest.param(target("lib:f", syntax_changes=SYNTAX, impact=Impact([divergence("lib:f", distance=3)])), 1,
                 [SILENT_NOTE, "changed; only its own lines differ (same returns, parameters and calls): likely an equivalent change"],
                 id="equivalent"),
    pytest.param(target("lib:f", syntax_changes=SYNTAX, impact=Impact([divergence("lib:f", distance=3, calls=1)])), 1, [SILENT_NOTE],
                 id="observable-local"),
    pytest.param(target("lib:f", syntax_changes=SYNTAX), 0, ["changed but not executed by any traced entry point"], id="not-executed"),
    pytest.param(target("lib:f", syntax_changes=SYNTAX), 3, ["changed but no local impact observed: equivalent or not executed"],
                 id="executed-no-divergence"),
    pytest.param(target("lib:f", syntax_changes=SYNTAX, impact=Impact([], [(divergence("lib:g"), 1)])), 1,
                 [SILENT_NOTE, "no local impact observed; the change shows in the functions it calls"], id="non-local-only"),
    pytest.param(target("lib:X", kind="value", syntax_changes=SYNTAX, impact=Impact([], [(divergence("lib:g"), 0)])), 1, [SILENT_NOTE],
                 id="value-with-readers"),
    pytest.param(target("lib:h"), 0, [], id="nothing-to-say"),
])
def test_notes(made: Target, traces_seen: int, expected: list[str]) -> None:
    assert notes_on(made, traces_seen) == expected


# ---------------------------------------------------------------- ordering and where code lives

@pytest.mark.parametrize(("values", "expected"), [
    pytest.param([], [], id="empty"),
    pytest.param([("lib:b", 1.0), ("lib:a", 1.0), ("lib:c", 2.0)], ["lib:c", "lib:a", "lib:b"], id="ties-by-identifier"),
    pytest.param([("lib:a", 0.5), ("lib:b", 12.0), ("lib:c", 0.0)], ["lib:b", "lib:a", "lib:c"], id="highest-first"),
])
def test_ranked(values: list[tuple[str, float]], expected: list[str]) -> None:
    assert [t.identifier for t in ranked(target(identifier, total) for identifier, total in values)] == expected


FILES = {"lib:f": "src/lib.py", "test:t": "tests/test_lib.py", "pkg.tests:t": "pkg/tests/test_x.py", "bench:b": "bench/run.py",
         "setup:s": "setup.py", "gone:g": None}


@pytest.mark.parametrize(("layout", "product", "tests", "other"), [
    pytest.param(LAYOUT, ["lib:f"], ["test:t"], ["pkg.tests:t", "bench:b", "setup:s", "gone:g"], id="src-and-tests"),
    pytest.param(Layout((".",), ("tests",)), ["lib:f", "pkg.tests:t", "bench:b", "setup:s", "gone:g"], ["test:t"], [], id="sources-at-root"),
    pytest.param(Layout(("pkg",), ("pkg/tests",)), [], ["pkg.tests:t"], ["lib:f", "test:t", "bench:b", "setup:s", "gone:g"],
                 id="tests-inside-sources"),
    pytest.param(Layout(("src",), ()), ["lib:f"], [], ["test:t", "pkg.tests:t", "bench:b", "setup:s", "gone:g"], id="no-tests"),
])
def test_partition(layout: Layout, product: list[str], tests: list[str], other: list[str]) -> None:
    split = partition([target(identifier, file=file) for identifier, file in FILES.items()], layout)
    assert [[t.identifier for t in part] for part in split] == [product, tests, other]


@pytest.mark.parametrize(("identifier", "names", "expected"), [
    pytest.param("lib:C.close", frozenset({"close"}), True, id="method"),
    pytest.param("lib:close", frozenset({"close"}), True, id="function"),
    pytest.param("lib:closer", frozenset({"close"}), False, id="whole-name-only"),
    pytest.param("lib.close:run", frozenset({"close"}), False, id="module-name-is-no-function-name"),
    pytest.param("lib:f", frozenset(), False, id="none-ignored"),
])
def test_ignored(identifier: str, names: frozenset[str], expected: bool) -> None:
    assert ignored(identifier, names) == expected


def file_change(old: str | None, new: str | None, python: bool = False) -> dict[str, Any]:
    return {"type": "modified", "oldPath": old, "newPath": new, "python": python, "binary": False, "similarity": None}


@pytest.mark.parametrize(("changes", "tests", "expected"), [
    pytest.param([], ["tests"], [], id="empty"),
    pytest.param([file_change("tests/data/in.txt", "tests/data/in.txt"), file_change("tests/test_a.py", "tests/test_a.py", python=True),
                  file_change("README.md", "README.md")], ["tests"], ["tests/data/in.txt"], id="non-python-in-tests"),
    pytest.param([file_change("tests/old.csv", "data/new.csv"), file_change(None, "tests/added.json")], ["tests"],
                 ["tests/added.json", "tests/old.csv"], id="either-path"),
    pytest.param([file_change("tests/in.txt", "tests/in.txt")], ["."], [], id="root-is-no-tests-directory"),
])
def test_changed_test_data(changes: list[dict[str, Any]], tests: list[str], expected: list[str]) -> None:
    assert changed_test_data(changes, tests) == expected


def row(identifier: str, kind: FunctionKind, file: str, first: int, last: int) -> FunctionRecord:
    module, qualname = identifier.split(":")
    return FunctionRecord(identifier=identifier, module=module, qualname=qualname, kind=kind, file=file, first_line=first, def_line=first,
                          last_line=last)


def test_function_table_new_version_first() -> None:
    new = [row("lib:f", "function", "src/lib.py", 3, 9)]
    old = [row("lib:f", "function", "src/old.py", 1, 2), row("lib:gone", "method", "src/old.py", 4, 5)]
    assert function_table(new, old) == {"lib:f": FunctionInfo("function", "src/lib.py", (3, 9)),
                                        "lib:gone": FunctionInfo("method", "src/old.py", (4, 5))}
    assert function_table() == {}


# ---------------------------------------------------------------- one version, end to end

FUNCTIONS = {
    "lib:compute": FunctionInfo("function", "src/lib.py", (5, 6)),
    "lib:helper": FunctionInfo("function", "src/lib.py", (1, 3)),
    "lib:report": FunctionInfo("function", "src/lib.py", (8, 12)),
    "lib:close": FunctionInfo("function", "src/lib.py", (14, 15)),
    "lib:alpha": FunctionInfo("function", "src/lib.py", (17, 18)),
    "lib:zeta": FunctionInfo("function", "src/lib.py", (20, 21)),
    "tests.test_lib:test_a": FunctionInfo("function", "tests/test_lib.py", (1, 2)),
    "bench.run:run": FunctionInfo("function", "bench/run.py", (1, 2)),
}
VERSION_CHANGES = changed(*(change(identifier, path=info.file) for identifier, info in FUNCTIONS.items()
                            if identifier not in ("lib:helper", "lib:report")))
HELPER_DIVERGES = divergence("lib:helper", CHAIN, (0, 0, 0), distance=2, sections=1, coverage=4)


def inputs(comparison: VersionComparison, changes: ChangeIndex = VERSION_CHANGES, **fields: Any) -> RankingInputs:
    return RankingInputs(comparison, changes, FUNCTIONS, Layout(("src",), ("tests",), frozenset({"close"})), **fields)


@pytest.mark.parametrize(("metrics", "restrict", "expected"), [
    pytest.param(("sections",), False, [("lib:compute", 15.11), ("lib:alpha", 1.0), ("lib:zeta", 1.0)], id="sections"),
    pytest.param(("coverage",), False, [("lib:compute", 8.51), ("lib:alpha", 1.0), ("lib:zeta", 1.0)], id="coverage"),
    pytest.param(("distance",), False, [("lib:compute", 6.51), ("lib:alpha", 1.0), ("lib:zeta", 1.0)], id="distance"),
    pytest.param(("sections", "coverage", "distance"), True, [("lib:compute", 21.11), ("lib:alpha", 1.0), ("lib:zeta", 1.0)], id="combined"),
])
def test_rank_version(metrics: tuple[str, ...], restrict: bool, expected: list[tuple[str, float]]) -> None:
    """compute is charged with helper below it (one hop); the changed test above is not (code under test first);
    close is ignored by name; alpha and zeta tie on their one syntax change each."""
    comparison = VersionComparison(1, 0, divergences=[HELPER_DIVERGES], entry_functions={TEST_A: {*CHAIN, "lib:helper"}})
    ranking = rank_version(inputs(comparison), Scaling(), metrics, restrict)
    assert [(t.identifier, t.value.total) for t in ranking.targets] == expected
    assert [t.identifier for t in ranking.test_code] == ["tests.test_lib:test_a"]
    assert [t.identifier for t in ranking.other_code] == ["bench.run:run"]
    assert [t.identifier for t in ranking.syntax_targets()] == ["lib:compute", "lib:alpha", "lib:zeta"]
    assert [t.identifier for t in ranking.divergence_targets()] == ["lib:compute"]
    assert documents.summary(ranking.targets, comparison) == records.TargetSummary(targets=3, with_impact=1, unmapped=0, divergences=1, noise=0, untested=0, diff_coverage=NO_CHANGED_LINES)


def test_rank_version_without_inputs() -> None:
    ranking = rank_version(inputs(VersionComparison(1, 0), ChangeIndex()), Scaling(), ("sections",))
    assert (ranking.targets, ranking.test_code, ranking.other_code) == ([], [], [])
    assert (ranking.mapped.targets, ranking.mapped.unmapped, ranking.mapped.by_test_data) == ({}, set(), [])


def test_noise_is_never_ranked() -> None:
    """Divergences set aside as noise charge nothing: the changed function they ran in is a target by its change alone."""
    noisy = divergence("lib:compute", CHAIN[:2], (0, 0), returns=1)
    comparison = VersionComparison(1, 0, noise=[noisy, divergence("lib:helper", CHAIN, (0, 0, 0), returns=1)],
                                   unstable={(TEST_A, "lib:compute"): Unstable({"return"}, {"values"}),
                                             (TEST_B, "lib:helper"): Unstable({"return"}, {"path"})},
                                   entry_functions={TEST_A: {*CHAIN, "lib:helper"}})
    ranking = rank_version(inputs(comparison, changed(change("lib:compute"))), Scaling(), ("sections",))
    assert [(t.identifier, t.value.total, t.notes) for t in ranking.targets] == [
        ("lib:compute", 1.0, ["changed but no local impact observed: equivalent or not executed"])]
    assert ranking.mapped.unmapped == set()
    assert documents.summary(ranking.targets, comparison) == records.TargetSummary(targets=1, with_impact=0, unmapped=0, divergences=0, noise=2, untested=0, diff_coverage=NO_CHANGED_LINES)
    section = documents.noise_section(comparison)
    assert (section.functions, section.entry_points, section.divergences) == (
        ["lib:compute", "lib:helper"], ["tests/test_lib.py::test_a", "tests/test_lib.py::test_b"], 2)
    assert section.unstable == [
        records.UnstablePair(entry_point="tests/test_lib.py::test_a", function="lib:compute", natures=["values"]),
        records.UnstablePair(entry_point="tests/test_lib.py::test_b", function="lib:helper", natures=["path"]),
    ]


def test_changed_test_data_takes_what_nothing_else_explains() -> None:
    comparison = VersionComparison(1, 0, divergences=[divergence("lib:helper", ("lib:report",), (0, 0))])
    ranking = rank_version(inputs(comparison, ChangeIndex(), test_data=["tests/data/in.txt"]), Scaling(), ("sections",))
    assert ranking.targets == []
    document = documents.testing_targets("a" * 40, "b" * 40, ranking_options(default_settings(), DEFAULT_CONFIRM_RUNS), ranking, comparison, ["tests/data/in.txt"])
    assert document.test_data == records.TestData(files=["tests/data/in.txt"], divergences=1, functions=["lib:helper"])
    assert document.summary == records.TargetSummary(targets=0, with_impact=0, unmapped=0, divergences=1, noise=0, untested=0, diff_coverage=NO_CHANGED_LINES)
    assert records.TestingTargets.decode(msgspec.json.encode(document), "testingTargets.json") == document
