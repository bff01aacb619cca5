"""``traceDivergences.json`` in both layouts, read back as its record, and the user's ``traceMatching.json``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from histeg.compare.calls import CallDivergence
from histeg.compare.divergences import Confirmation, Divergence, VersionComparison, write_divergences
from histeg.compare.entry_points import read_manual_matching
from histeg.compare.noise import Unstable
from histeg.errors import EXIT_BAD_INPUT, HistegError
from histeg.records.divergences import EntryKey, ManualPair, TraceDivergences, TraceMatching
from histeg.store import OutputStore
from tests.conftest import validate_output
from tests.statics.versions import make_version, version_sha

TEST = EntryKey("pytest", "tests/test_m.py::test_f", "call", "tests.test_m:test_f", 0)
OTHER = EntryKey("pytest", "tests/test_m.py::test_g", "call", "tests.test_m:test_g", 0)


def _call(function: str, path: tuple[int, ...], **metrics: int) -> CallDivergence:
    chain = ("tests.test_m:test_f", "m:f", "m:g", "m:h")[: len(path) + 1]
    return CallDivergence(function, chain, path, **metrics)


@pytest.fixture
def comparison(tmp_path: Path) -> tuple[OutputStore, VersionComparison]:
    store = make_version(tmp_path / "out", {}, index=0)
    make_version(tmp_path / "out", {}, index=1, against=0)
    f = Divergence(TEST, _call("m:f", (0,), distance=2, sections=1, coverage=3), ("silent",))
    g = Divergence(TEST, _call("m:g", (0, 1), calls=1), ("silent",))
    h = Divergence(TEST, _call("m:h", (0, 1, 0), returns=1), ("exceptionOnlyInNew",))
    beside = Divergence(TEST, _call("m:k", (2,), parameters=1), ("silent",))
    other = Divergence(OTHER, _call("m:f", (0,), returns=1), ("outcomeChanged",))
    h.call.details["return"] = {"old": ["returned", "1"], "new": ["raised", "ValueError()"]}
    unstable = {(OTHER, "m:clock"): Unstable({"return"}, {"values"})}
    result = VersionComparison(1, 0, divergences=[other, h, beside, f, g], matched=2, only_new=[OTHER], unstable=unstable,
                               confirmation=Confirmation(2, entry_points=2, complete=(2, 1)))
    return store, result


def test_the_tree_nests_each_divergence_under_its_nearest_divergent_caller(comparison: tuple[OutputStore, VersionComparison]) -> None:
    store, result = comparison
    path = write_divergences(store, result, flat=False)
    validate_output(path)
    document = TraceDivergences.read(path)
    assert (document.identifier, document.comparing_against_version, document.layout) == (version_sha(1), version_sha(0), "tree")
    assert [(d.entry_point, d.function, d.call_path) for d in document.divergences] == [
        (TEST, "m:f", [0]), (TEST, "m:k", [2]), (OTHER, "m:f", [0])]
    [g] = document.divergences[0].children
    [h] = g.children
    assert (g.function, h.function, h.classes, h.children) == ("m:g", "m:h", ["exceptionOnlyInNew"], [])
    assert h.details["return"]["new"] == ["raised", "ValueError()"] and h.metrics.returns == 1
    assert document.entry_points.only_in_new == [OTHER] and document.entry_points.only_in_old == []
    assert (document.summary.divergences, document.summary.divergent_functions, document.summary.noisy_functions) == (5, 4, ["m:clock"])
    assert [(n.entry_point, n.function, n.kinds, n.natures) for n in document.noise] == [(OTHER, "m:clock", ["return"], ["values"])]
    assert (document.confirmation.entry_points, document.confirmation.complete_runs.old, document.confirmation.complete_runs.new) == (2, 2, 1)


def test_the_flat_layout_lists_every_divergence_unnested(comparison: tuple[OutputStore, VersionComparison]) -> None:
    store, result = comparison
    path = write_divergences(store, result, flat=True)
    validate_output(path)
    document = TraceDivergences.read(path)
    assert document.layout == "flat"
    assert [(d.entry_point, d.function, d.call_path) for d in document.divergences] == [(d.entry, d.call.function, list(d.call.path)) for d in result.divergences]
    assert all(d.children == [] for d in document.divergences)


def test_an_older_divergence_file_says_so(tmp_path: Path) -> None:
    path = tmp_path / "traceDivergences.json"
    path.write_text(json.dumps({"schemaVersion": 2, "layout": "tree"}))
    with pytest.raises(HistegError, match="has schema version 2, this histeg reads version 3"):
        TraceDivergences.read(path)


def test_a_matching_file_written_by_hand_is_read(tmp_path: Path) -> None:
    path = tmp_path / "traceMatching.json"
    entry = {"command": "pytest", "label": TEST.label, "phase": "call", "root": TEST.root, "occurrence": 0}
    path.write_text(json.dumps({"pairs": [{"old": entry, "new": entry | {"label": OTHER.label, "root": OTHER.root}}]}))
    assert read_manual_matching(path) == [(TEST, OTHER)]
    TraceMatching(pairs=[ManualPair(old=OTHER, new=TEST)]).write(path)
    assert read_manual_matching(path) == [(OTHER, TEST)]
    validate_output(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"pairs": [{"old": {"command": "pytest"}, "new": {}}]}', "missing required field `label` - at `$.pairs[0].old`"),
        ('{"pairs": [{"old": {"command": "pytest", "label": "", "phase": "", "root": "m:f", "occurrence": -1}}]}', "at `$.pairs[0].old.occurrence`"),
        ('{"pair": []}', "unknown field `pair`"),
        ('[{"old": 1}]', "Expected `object`, got `array`"),
        ('{"pairs": [', "corrupt JSON in"),
    ],
)
def test_a_bad_matching_file_is_one_line_naming_it(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "traceMatching.json"
    path.write_text(text)
    with pytest.raises(HistegError) as caught:
        read_manual_matching(path)
    assert message in str(caught.value) and str(path) in str(caught.value) and "\n" not in str(caught.value)
    assert caught.value.exit_code == EXIT_BAD_INPUT
