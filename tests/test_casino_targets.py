"""End to end on the casino sample: every commit's targets agree with histeg/sample_data/casino/expected.toml."""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from histeg.samples import SAMPLES_ROOT, build_sample
from tests.conftest import run_histeg, validate_output

pytestmark = pytest.mark.slow  # every casino version traced twice and ranked

EXPECTED = tomllib.loads((SAMPLES_ROOT / "casino" / "expected.toml").read_text())["step"]
COMPARED = [step for step in EXPECTED if step["compared"]]


@pytest.fixture(scope="module")
def casino_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("casino")
    repo = build_sample("casino", base / "casino")
    out = base / "out"
    # The croupier's small talk is an unseeded coin flip: with two runs and two re-runs per side it looks stable on both
    # sides in about 1 of 64 comparisons (every run alike on each side), in three steps of the table; four re-runs make
    # that about 1 in 1000, so the table is checked, not the dice.
    result = run_histeg("compute", "--repo", str(repo), "--all", "--out", str(out), "--repeat", "2", "--confirm", "4", "--export-flat",
                        "--json")
    assert result.code == 0, result.stderr
    return out


def targets_of(out: Path, index: int) -> dict[str, Any]:
    return validate_output(out / str(index) / "testingTargets.json")


@pytest.mark.parametrize("step", COMPARED, ids=[s["folder"] for s in COMPARED])
def test_targets_agree_with_the_sample_table(casino_out: Path, step: dict[str, Any]) -> None:
    index = int(step["folder"][:2])
    document = targets_of(casino_out, index)
    divergences = validate_output(casino_out / str(index) / "traceDivergences.json")
    ranked = [t["identifier"] for t in document["targets"]]
    by_id = {t["identifier"]: t for t in document["targets"]}
    if step["no_targets"]:
        assert ranked == []
    for identifier in step["targets"]:
        assert identifier in ranked
    for identifier in step["not_targets"]:
        assert identifier not in ranked
    top = set(step["targets_top"])
    if top:
        assert set(ranked[: len(top)]) == top, ranked
    assert set(step["noise"]) <= set(document["noise"]["functions"])
    for noisy in step["noise"]:
        assert all(t["origin"] != "unmapped divergence" for t in document["targets"] if t["identifier"] == noisy)
        assert all(noisy not in t["affectedFunctions"] for t in document["targets"])
    flat = {d["function"]: set() for d in divergences["divergences"]}
    for divergence in divergences["divergences"]:
        flat[divergence["function"]].update(divergence["kinds"])
    for expected in step["divergent"]:
        assert set(expected["kinds"]) <= flat.get(expected["function"], set()), (expected, flat)
    for expected in step["local"]:
        kinds = {k for d in by_id[expected["target"]]["localDivergences"] for k in d["kinds"]}
        assert set(expected["kinds"]) <= kinds
    for expected in step["non_local"]:
        matches = [d for d in by_id[expected["changed"]]["nonLocalDivergences"] if d["function"] == expected["divergent"]]
        assert matches, by_id[expected["changed"]]["nonLocalDivergences"]
        assert {d["callDistance"] for d in matches} == {expected["distance"]}
        assert set(expected["kinds"]) <= {k for d in matches for k in d["kinds"]}
    for identifier in step["unmapped"]:
        assert by_id[identifier]["origin"] == "unmapped divergence"
    for identifier in step["equivalent"]:
        target = by_id[identifier]
        assert target["nonLocalDivergenceCount"] == 0
        assert all(set(d["kinds"]) == {"lines"} for d in target["localDivergences"])
        assert any("equivalent" in note for note in target["notes"])
        assert target["value"] < max(t["value"] for i in range(1, 9) for t in targets_of(casino_out, i)["targets"])
    for identifier in step["new_classes"]:
        assert by_id[identifier]["parts"]["newClass"] > 0


def test_reversing_the_order_swaps_additions_and_removals(casino_out: Path, tmp_path: Path) -> None:
    """Metamorphic: analysing 4 -> 3 instead of 3 -> 4 swaps additions with removals; the same entry points diverge."""
    repo = casino_out.parent / "casino"
    ids = subprocess.run(["git", "-C", str(repo), "rev-list", "--reverse", "HEAD"], capture_output=True, text=True, check=True).stdout.split()
    out = tmp_path / "reversed"
    result = run_histeg("compute", "--repo", str(repo), "--versions", ids[4], ids[3], "--out", str(out), "--export-flat")
    assert result.code == 0, result.stderr

    def changes(path: Path) -> set[tuple[str, str]]:
        data = json.loads(path.read_text())
        return {(c["entity"], c["type"]) for f in data["files"] for c in f["changes"]}

    def divergent_entries(path: Path) -> set[str]:
        return {d["entryPoint"]["label"] for d in json.loads(path.read_text())["divergences"]}

    forward, backward = changes(casino_out / "4" / "syntaxChanges.json"), changes(out / "3" / "syntaxChanges.json")
    swap = {"addition": "removal", "removal": "addition"}
    assert {(entity, swap.get(kind, kind)) for entity, kind in forward} == backward
    assert divergent_entries(casino_out / "4" / "traceDivergences.json") == divergent_entries(out / "3" / "traceDivergences.json")


def test_worker_processes_give_byte_identical_divergences(casino_out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Entry points compared in two worker processes: the same divergences, in the same order, as in one process."""
    import msgspec

    from histeg.compare import divergences as module
    from histeg.store import OutputStore

    store = OutputStore(casino_out)
    busiest = sorted(COMPARED, key=lambda s: -len(json.loads((casino_out / str(int(s["folder"][:2])) / "traceDivergences.json").read_text())["divergences"]))[:2]
    monkeypatch.setattr(module, "PARALLEL_FROM", 1)
    for step in busiest:
        index = int(step["folder"][:2])
        serial = module.compare_with_predecessor(store, index, jobs=1)
        parallel = module.compare_with_predecessor(store, index, jobs=2)
        assert serial.divergences, "a step with divergences"
        assert msgspec.json.encode([d.record() for d in parallel.divergences]) == msgspec.json.encode([d.record() for d in serial.divergences])
        assert parallel.noise_keys == serial.noise_keys and parallel.entry_functions == serial.entry_functions
