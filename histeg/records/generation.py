"""What ``histeg generate`` writes: ``<index>/generation.json``, Pynguin's tests for the top targets and their verdicts.

A generated test is run on the new version and on the old one (its
predecessor), twice each. A test that passes on one side and fails on the
other, with both runs of each side agreeing, witnesses the behaviour change.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from histeg.records.base import Part, Record
from histeg.records.targets import Identifier, TargetKind
from histeg.records.types import CommitId, Count, Index, Seconds

PynguinStatus = Annotated[
    Literal["ok", "failed", "timeout"],
    msgspec.Meta(
        description=(
            "ok: Pynguin wrote a test file; failed: it could not (reason says why in one line); timeout: stopped at the time limit."
        )
    ),
]
Outcome = Annotated[
    Literal["passed", "failed", "error", "skipped", "xfailed", "missing", "flaky"],
    msgspec.Meta(
        description=(
            "Of one test on one side. xfailed: Pynguin expected the exception it raised (counts as passing); error: it could not be "
            "collected or set up (the module is absent on that side, for instance); missing: no result (the run ended early); "
            "flaky: the two runs of that side disagree."
        )
    ),
]
TestId = Annotated[str, msgspec.Meta(description="generated/<module>/<file>::<test>, relative to the version directory.")]
GeneratedPath = Annotated[str, msgspec.Meta(pattern="^generated/", description="Relative to the version directory.")]
FirstLine = Annotated[str | None, msgspec.Meta(description="The first line of the failure message; null when the test passed.")]


class GenerationSettings(Part, kw_only=True):
    """The choices the tests were generated with."""

    budget: Annotated[Seconds, msgspec.Meta(description="Seconds of search shared by the modules.")]
    top: Annotated[int, msgspec.Meta(ge=1, description="How many of the ranked targets were asked for.")]
    seed: Annotated[int, msgspec.Meta(ge=0, description="Pynguin's --seed, the same for every module.")]
    module_seconds: Annotated[
        dict[str, int],
        msgspec.Meta(
            description=(
                "Pynguin's --maximum-search-time per module: one second each, the rest split by the weights of their targets' ranks "
                "(N for the best selected target, down to 1 for the N-th), largest remainders first."
            )
        ),
    ]
    assertion_generation: str
    runs_per_side: Annotated[int, msgspec.Meta(ge=1, description="pytest runs of the generated tests on each version.")]
    pynguin: Annotated[str, msgspec.Meta(description="Pynguin's version.")]
    stages: Annotated[
        list[Literal["carve", "pynguin"]],
        msgspec.Meta(description="What ran: carving first, then Pynguin for the targets still without a witness (--carve: carving only)."),
    ] = msgspec.field(default_factory=lambda: ["pynguin"])


class ModuleGeneration(Part, kw_only=True):
    """One Pynguin run: a module and the targets in it it was told to cover."""

    module: str
    targets: list[Identifier]
    only_cover: Annotated[list[str], msgspec.Meta(description="Pynguin's --only-cover: module-relative qualified names.")]
    seconds: Annotated[int, msgspec.Meta(ge=1, description="Pynguin's --maximum-search-time.")]
    status: PynguinStatus
    reason: Annotated[str | None, msgspec.Meta(description="One line saying why Pynguin failed; null when it did not.")]
    elapsed: Seconds
    test_files: list[GeneratedPath]
    tests: Annotated[Count, msgspec.Meta(description="Test functions in the test files.")]
    log: GeneratedPath
    seeded_with: Annotated[
        GeneratedPath | None,
        msgspec.Meta(description="The carved file Pynguin started its population from (--initial_population_data); null when none."),
    ] = None


class Side(Part, kw_only=True):
    """A test's outcome on one version."""

    outcome: Outcome
    runs: Annotated[list[Outcome], msgspec.Meta(description="Each run's outcome, in order.")]
    failure: FirstLine


class GeneratedTest(Part, kw_only=True):
    """A test Pynguin wrote, its outcomes on both versions, and the targets it covers."""

    __test__ = False
    """A record, not a pytest class."""

    id: TestId
    module: str
    targets: Annotated[
        list[Identifier],
        msgspec.Meta(description=("The targets whose name the test uses; every target of its module when it uses none of them by name.")),
    ]
    old: Side
    new: Side
    witness: Annotated[bool, msgspec.Meta(description="Passes on one version and fails on the other, both runs of each agreeing.")]


class Witness(Part, kw_only=True):
    """A test that tells the two versions apart."""

    test: TestId
    old: Outcome
    new: Outcome
    old_failure: FirstLine
    new_failure: FirstLine
    carved: Annotated[bool, msgspec.Meta(description="Carved from a recorded call (generated/carved/), not found by Pynguin.")] = False
    source: Annotated[str | None, msgspec.Meta(description="The test function's source, as a reviewer reads it.")] = None


class TargetGeneration(Part, kw_only=True):
    """A selected target: the tests that cover it and the witnesses among them."""

    rank: Annotated[int, msgspec.Meta(ge=1)]
    identifier: Identifier
    kind: TargetKind
    module: str
    qualname: str
    cover: Annotated[
        str, msgspec.Meta(description=("The name given to --only-cover: the qualname, or the class holding a class-level value."))
    ]
    tests: list[TestId]
    witnesses: list[Witness]


class SkippedTarget(Part, kw_only=True):
    """A target ranked among the first ones that Pynguin cannot be pointed at."""

    rank: Annotated[int, msgspec.Meta(ge=1)]
    identifier: Identifier
    reason: str


class SideRun(Part, kw_only=True):
    """One pytest run of the generated tests on one version."""

    side: Literal["old", "new"]
    index: Index
    run: Annotated[int, msgspec.Meta(ge=1)]
    exit_code: Annotated[int | None, msgspec.Meta(description="pytest's; null when it could not start or timed out.")]
    timed_out: bool
    seconds: Seconds
    log: GeneratedPath


class GenerationSummary(Part, kw_only=True):
    modules: Count
    modules_failed: Count
    tests: Count
    witnesses: Count
    targets_with_witnesses: Count


CarvedOutcome = Annotated[
    Literal["witness", "passes on both", "fails on both", "fails on the old version", "flaky", "no result"],
    msgspec.Meta(
        description=(
            "witness: passes on the old version and fails on the new one in every run; passes on both: the call repeated alone "
            "keeps its old result on the new version (what changed was its context); fails on both: the rebuilt call does not "
            "repeat the recorded one; fails on the old version: nor does it there, though it passes on the new one; flaky: runs of a side disagree; no result: pytest reported nothing for it."
        )
    ),
]


class CarvedTest(Part, kw_only=True):
    """A test carved from one recorded call whose result changed, with its verdicts."""

    __test__ = False
    """A record, not a pytest class."""

    id: TestId
    target: Identifier
    function: Identifier
    entry_point: Annotated[str, msgspec.Meta(description="The test (pytest node id) under which the call was recorded.")]
    call_path: Annotated[list[Count], msgspec.Meta(description="Child positions from the entry point down to the call (new trace).")]
    expects: Annotated[Literal["result", "exception"], msgspec.Meta(description="What the test asserts of the old version.")]
    old: Side
    new: Side
    outcome: CarvedOutcome


class Uncarved(Part, kw_only=True):
    """Divergences charged to a target that no test was carved from, grouped by function and reason."""

    target: Identifier
    function: Identifier
    reason: str
    detail: Annotated[str, msgspec.Meta(description="The first value or name the reason is about; empty when none.")]
    divergences: Annotated[int, msgspec.Meta(ge=1)]
    example: Annotated[str, msgspec.Meta(description="One test under which such a divergence was recorded.")]


class Carving(Part, kw_only=True):
    """Tests carved from the traces: recorded calls whose result changed, repeated with the old version's result asserted."""

    calls_per_target: Annotated[int, msgspec.Meta(ge=1, description="Distinct calls carved per target at most.")]
    targets: Annotated[list[Identifier], msgspec.Meta(description="The targets carving looked at, best rank first.")]
    candidates: Annotated[Count, msgspec.Meta(description="Divergences under them whose result changed.")]
    tests: list[CarvedTest]
    uncarved: list[Uncarved]
    reasons: Annotated[
        dict[str, Count],
        msgspec.Meta(description="Divergences not carved and carved tests not kept as witnesses, counted by reason."),
    ]
    witnesses: Count
    seconds: Annotated[Seconds, msgspec.Meta(description="Carving and the carved tests' runs.")]


class Generation(Record, kw_only=True):
    """Tests Pynguin generated for a version's top testing targets (one run per module, in the version's environment), run on the version and on its predecessor: per target the tests covering it and the witnesses of the behaviour change."""

    FILE = "generation.json"
    TITLE = "<index>/generation.json"
    schema_version: Literal[1] = 1
    index: Index
    identifier: CommitId
    comparing_against_index: Index
    comparing_against_version: CommitId
    settings: GenerationSettings
    modules: list[ModuleGeneration]
    targets: Annotated[list[TargetGeneration], msgspec.Meta(description="Best rank first.")]
    skipped: list[SkippedTarget]
    tests: list[GeneratedTest]
    runs: list[SideRun]
    summary: GenerationSummary
    seconds: Seconds
    carved: Annotated[Carving | None, msgspec.Meta(description="Null when carving did not run (files made before it existed).")] = None


__all__ = [
    "GeneratedTest",
    "Generation",
    "GenerationSettings",
    "GenerationSummary",
    "ModuleGeneration",
    "Outcome",
    "PynguinStatus",
    "Side",
    "SideRun",
    "SkippedTarget",
    "TargetGeneration",
    "Witness",
]
