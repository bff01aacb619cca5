"""The carving stage of ``histeg generate``: test files from the recorded calls under the top targets, and their verdicts.

Carving reads what the compare step kept (``comparison.msgpack``), the new
version's first traced run and its snapshot's definitions; it runs nothing.
The carved files are then run like Pynguin's (``verdicts.run_tests``): a test
that passes on the old version and fails on the new one in every run is a
witness, and every other one is discarded with its reason.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from histeg.atomic import make_folders, write_bytes
from histeg.compare.version import read_comparison
from histeg.generate.carved_tests import CarvedFile, carved_file
from histeg.generate.carving import CarvedCall, Carver, Refusal, TraceCalls, candidates
from histeg.generate.literals import Uncarvable
from histeg.generate.sides import VersionSide
from histeg.generate.verdicts import FAILING, PASSING, SideRunResult, Verdict, side_verdicts, witness_record
from histeg.records.generation import CarvedOutcome, CarvedTest, Carving, Side, Uncarved, Witness
from histeg.records.targets import RankedTarget

CARVED = "carved"
"""The folder of ``generated/`` that holds the carved files."""
CALLS_PER_TARGET = 3


@dataclass
class CarvedSet:
    """What carving made for one version, before any run."""

    targets: list[str]
    files: list[CarvedFile] = field(default_factory=list)
    candidates: int = 0
    refused: dict[tuple[str, str, str, str], list] = field(default_factory=dict)
    """(target, function, reason, detail) -> [count, an entry point]."""

    def refuse(self, target: str, function: str, reason: str, detail: str, entry_point: str) -> None:
        found = self.refused.setdefault((target, function, reason, detail), [0, entry_point])
        found[0] += 1

    def test_ids(self) -> list[str]:
        return [f"{CARVED}/{file.name}::{name}" for file in self.files for name, _ in file.tests]


def carve(new: VersionSide, old_index: int, ranked: Sequence[RankedTarget], calls_per_target: int, folder: Path) -> CarvedSet:
    """Carved files for ``ranked`` (the top targets) written to ``folder``; what could not be carved, with why."""
    comparison = read_comparison(new.store, new.index)
    carver = Carver(new.snapshot, new.source_file, new.settings.tests, TraceCalls(new.store, new.index))
    made = CarvedSet([target.identifier for target in ranked])
    header = _header(new, old_index)
    for target in ranked:
        chosen: list[CarvedCall] = []
        seen: set[str] = set()
        for found in candidates(target, comparison):
            if isinstance(found, Refusal):
                made.refuse(found.target, found.function, found.reason, found.detail, found.entry_point)
                continue
            made.candidates += 1
            if len(chosen) >= calls_per_target:
                continue
            try:
                call = carver.carve(found)
            except Uncarvable as refusal:
                made.refuse(
                    target.identifier, found.function, refusal.reason, refusal.detail, found.entry_point.label or found.entry_point.root
                )
                continue
            if call.key() not in seen:
                seen.add(call.key())
                chosen.append(call)
        if chosen:
            made.files.append(carved_file(target.identifier, target.rank or len(made.files) + 1, chosen, header))
    if made.files:
        make_folders(folder / CARVED)
        for file in made.files:
            write_bytes(folder / CARVED / file.name, file.source.encode())
    return made


def _header(new: VersionSide, old_index: int) -> str:
    old = new.version.comparing_against_version or ""
    return (
        f"Tests carved by histeg from the traces of version {new.index} ({new.version.identifier[:12]}) and version {old_index} "
        f"({old[:12]}).\n\n"
        f"Each test repeats one call recorded in a test run whose result changed between the two versions, with the arguments\n"
        f"of version {old_index}, and asserts what that call returned (or raised) there. It passes on version {old_index} and\n"
        f"fails on version {new.index} when it witnesses the change. Run it with plain pytest in a version's environment.\n"
    )


def judge(
    made: CarvedSet, side_runs: Sequence[SideRunResult], calls_per_target: int, seconds: float
) -> tuple[Carving, dict[str, list[Witness]]]:
    """The carved tests' verdicts and the ``carved`` section; per target, its carved witnesses."""
    ids = made.test_ids()
    old = side_verdicts(ids, [run for run in side_runs if run.side == "old"])
    new = side_verdicts(ids, [run for run in side_runs if run.side == "new"])
    tests: list[CarvedTest] = []
    witnesses: dict[str, list[Witness]] = {}
    reasons: dict[str, int] = {}
    for (_, _, reason, _), (count, _) in made.refused.items():
        reasons[reason] = reasons.get(reason, 0) + count
    for file in made.files:
        sources = _function_sources(file.source)
        for name, call in file.tests:
            test_id = f"{CARVED}/{file.name}::{name}"
            before, after = old[test_id], new[test_id]
            outcome = _outcome(before, after)
            if outcome != "witness":
                reasons[f"carved, then {outcome}"] = reasons.get(f"carved, then {outcome}", 0) + 1
            full_id = f"generated/{test_id}"
            tests.append(
                CarvedTest(
                    id=full_id,
                    target=call.candidate.target,
                    function=call.candidate.function,
                    entry_point=call.candidate.entry_point.label or call.candidate.entry_point.root,
                    call_path=list(call.candidate.call_path),
                    expects="exception" if call.raises is not None else "result",
                    old=Side(outcome=before.outcome, runs=before.runs, failure=before.failure),
                    new=Side(outcome=after.outcome, runs=after.runs, failure=after.failure),
                    outcome=outcome,
                )
            )
            if outcome == "witness":
                witnesses.setdefault(call.candidate.target, []).append(
                    witness_record(full_id, before, after, sources.get(name), carved=True)
                )
    uncarved = [
        Uncarved(target=target, function=function, reason=reason, detail=detail, divergences=count, example=example)
        for (target, function, reason, detail), (count, example) in made.refused.items()
    ]
    section = Carving(
        calls_per_target=calls_per_target,
        targets=made.targets,
        candidates=made.candidates,
        tests=tests,
        uncarved=uncarved,
        reasons=dict(sorted(reasons.items(), key=lambda item: (-item[1], item[0]))),
        witnesses=sum(test.outcome == "witness" for test in tests),
        seconds=round(seconds, 2),
    )
    return section, witnesses


def _outcome(old: Verdict, new: Verdict) -> CarvedOutcome:
    if "flaky" in (old.outcome, new.outcome):
        return "flaky"
    if old.outcome in PASSING and new.outcome in FAILING:
        return "witness"
    if old.outcome in PASSING and new.outcome in PASSING:
        return "passes on both"
    if old.outcome in FAILING:
        return "fails on both" if new.outcome in FAILING else "fails on the old version"
    return "no result"


def _function_sources(source: str) -> dict[str, str]:
    """Each test function's own source, with the file's imports left out: what a report shows of a witness."""
    tree = ast.parse(source)
    return {
        node.name: ast.get_source_segment(source, node) or ""
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test")
    }


def function_source(path: Path, name: str) -> str | None:
    """A test function's source in a generated file (Pynguin's), or None when the file does not parse."""
    try:
        return _function_sources(path.read_text(encoding="utf-8")).get(name)
    except (OSError, SyntaxError, ValueError):
        return None


__all__ = ["CALLS_PER_TARGET", "CARVED", "CarvedSet", "carve", "function_source", "judge"]
