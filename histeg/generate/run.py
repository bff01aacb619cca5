"""``histeg generate``: Pynguin on a version's top targets, the tests run on both versions, ``generation.json``.

Everything is made in a scratch folder of the version (``.run-generate``,
removed by the next run when histeg is killed) and replaces the earlier
``generated/`` and ``generation.json`` only once complete: an interrupted or
failed generation leaves the earlier results as they were.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import msgspec

from histeg.atomic import make_folders
from histeg.console import Console
from histeg.errors import HistegError
from histeg.generate.carve import CALLS_PER_TARGET, CARVED, carve, function_source, judge
from histeg.generate.coverage import GeneratedFunction, covered_targets, generated_tests
from histeg.generate.pynguin_run import (
    ASSERTION_GENERATION,
    PynguinRun,
    run_pynguin,
)
from histeg.generate.selection import (
    Chosen,
    ScopeKind,
    Selection,
    scope_names,
    select,
    split_budget,
)
from histeg.generate.sides import VersionSide, built_side
from histeg.generate.tool import PYNGUIN, Tool, pynguin_tool
from histeg.generate.verdicts import Role, SideRunResult, is_witness, run_tests, side_verdicts, witness_record
from histeg.processes.groups import end_orphans, records_folder
from histeg.processes.workdir import fresh_copy
from histeg.records.generation import (
    Carving,
    GeneratedTest,
    Generation,
    GenerationSettings,
    GenerationSummary,
    ModuleGeneration,
    Side,
    SideRun,
    SkippedTarget,
    TargetGeneration,
    Witness,
)
from histeg.records.targets import RankedTarget, TestingTargets
from histeg.store import OutputStore, force_rmtree

GENERATED = "generated"
CARVED_RUNS_AT_ONCE = 2
"""pytest runs of the carved tests at once: small files, where starting pytest is most of the time."""
CARVING = "carving"
"""In the scratch folder: the carved files (``carving/carved``), moved into ``generated/`` once the generation is complete."""
SCRATCH = ".run-generate"
"""Inside the version directory; a ``.run-*`` folder, so a run after a killed histeg removes it."""


@dataclass(frozen=True)
class GenerateOptions:
    budget: float = 60.0
    """Seconds of Pynguin search in all, split over the modules."""
    top: int = 5
    seed: int = 0
    runs: int = 2
    """pytest runs of the generated tests on each version: a witness needs every run of a side to agree."""
    carve_only: bool = False
    """Carving alone (``--carve``); otherwise carving first, then Pynguin for the targets still without a witness."""
    no_carve: bool = False
    """Pynguin alone (``--no-carve``), on every selected target."""
    calls: int = CALLS_PER_TARGET
    """Distinct recorded calls carved per target at most."""

    def check(self) -> None:
        if self.top < 1:
            raise HistegError(f"--top must be at least 1, not {self.top}")
        if self.budget < 1:
            raise HistegError(f"--budget must be at least 1 second, not {self.budget:g}")
        if self.seed < 0:
            raise HistegError(f"--seed must be 0 or more, not {self.seed}")
        if self.carve_only and self.no_carve:
            raise HistegError("--carve and --no-carve exclude each other")
        if self.calls < 1:
            raise HistegError(f"--calls must be at least 1, not {self.calls}")


def resolve_version(store: OutputStore, given: str) -> int:
    """A version by its index, or by the start of its commit's identifier."""
    indices = store.extracted_indices()
    if not indices:
        raise HistegError(f"{store.root} holds no histeg results: run histeg compute first")
    if given.isdigit() and int(given) in indices:
        return int(given)
    if len(given) >= 4 and all(c in "0123456789abcdef" for c in given.lower()):
        found = [index for index in indices if store.version(index).identifier.startswith(given.lower())]
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise HistegError(f"{given} names {len(found)} versions in {store.root}: give more of the identifier")
    raise HistegError(f"no version {given} in {store.root} (versions: {indices[0]}..{indices[-1]}, or a commit identifier)")


def generate(store: OutputStore, given: str, options: GenerateOptions, console: Console) -> Generation:
    """Generate, run and judge; ``generation.json`` is written and returned. Checks come before any work."""
    options.check()
    store = OutputStore(store.root.resolve())
    started = time.monotonic()
    pynguin = PYNGUIN.partition("==")[2]
    index = resolve_version(store, given)
    new = built_side(store, index, "version")
    if new.version.comparing_against_index is None:
        raise HistegError(f"version {index} has no predecessor to compare with")
    targets_path = store.file(index, TestingTargets.FILE)
    if not targets_path.is_file():
        raise HistegError(f"version {index} has no testing targets yet: run histeg compute on it first")
    ranked = TestingTargets.read(targets_path).targets
    if not ranked:
        raise HistegError(f"version {index} has no testing targets: nothing to generate tests for")
    old = built_side(store, new.version.comparing_against_index, f"version {index}'s predecessor")
    top = ranked[: options.top]
    selection = select(ranked, options.top, _module_scopes(new, {target.module for target in top}))
    tool = None if options.carve_only else pynguin_tool(new.runtime.python)  # made once per interpreter, before any work
    with _private_files(), store.locked():
        ended = end_orphans(store.root)
        if ended:
            console.warn(f"ended {len(ended)} process group(s) that a killed histeg run left running: {', '.join(map(str, ended))}")
        with _scratch(new.directory / SCRATCH) as scratch:
            carving, carved_witnesses, seeds = (None, {}, {}) if options.no_carve else _carve(new, old, top, options, scratch, console)
            remaining = Selection([t for t in selection.chosen if t.identifier not in carved_witnesses], selection.passed)
            if tool is not None and not selection.chosen and (carving is None or not carving.tests):
                reasons = "; ".join(f"{p.identifier}: {p.reason}" for p in selection.passed[:3])
                raise HistegError(
                    f"none of version {index}'s top targets could be carved or is a function, method or class Pynguin can cover ({reasons})"
                )
            spent = carving.seconds if carving is not None else 0.0
            budget = max(float(len(remaining.modules())), options.budget - spent)  # carving never makes generate slower
            pynguin_stage = tool is not None and bool(remaining.chosen)
            record = _generate(
                new,
                old,
                remaining if pynguin_stage else Selection([], selection.passed),
                options,
                budget,
                pynguin,
                tool,
                scratch,
                console,
                started,
                seeds,
            )
            if carving is not None:
                record = _with_carving(record, carving, carved_witnesses, top, "pynguin" if pynguin_stage else None)
            if (scratch / CARVING / CARVED).is_dir():
                os.replace(scratch / CARVING / CARVED, scratch / GENERATED / CARVED)
            _publish(new, scratch / GENERATED, record)
    return record


def _carve(
    new: VersionSide, old: VersionSide, top: list[RankedTarget], options: GenerateOptions, scratch: Path, console: Console
) -> tuple[Carving, dict[str, list[Witness]], dict[str, Path]]:
    """The carving stage: files written under ``generated/carved``, run ``options.runs`` times on each side; per module, the
    first carved file of its functions (Pynguin's seeds)."""
    started = time.monotonic()
    root = scratch / CARVING
    made = carve(new, old.index, top, options.calls, root)
    console.info(
        f"version {new.index}: carved {len(made.test_ids())} test(s) from {made.candidates} changed result(s) under {len(top)} target(s)"
    )
    side_runs: list[SideRunResult] = []
    if made.files:

        def run(role: Role, side: VersionSide, number: int, tests: Path) -> SideRunResult:
            with _scratch(scratch / f"carved-{role}-{number}") as work:
                return run_tests(side, role, number, tests, work, root / CARVED / f"pytest-{role}-{number}.log")

        sides: tuple[tuple[Role, VersionSide], ...] = (("new", new), ("old", old))
        # the runs read a still copy: each writes its log beside the carved files while the others copy them
        with _scratch(scratch / "carved-tests") as tests, ThreadPoolExecutor(max_workers=CARVED_RUNS_AT_ONCE) as pool:
            shutil.copytree(root / CARVED, tests / CARVED)
            runs = [pool.submit(run, role, side, number, tests) for role, side in sides for number in range(1, options.runs + 1)]
            side_runs = [future.result() for future in runs]
    seeds: dict[str, Path] = {}
    for file in made.files:
        for _, call in file.tests:
            seeds.setdefault(call.module, root / CARVED / file.name)
    return (*judge(made, side_runs, options.calls, time.monotonic() - started), seeds)


def _with_carving(
    record: Generation, carving: Carving, carved: dict[str, list[Witness]], top: list[RankedTarget], pynguin: str | None
) -> Generation:
    """The Pynguin record with the carved tests' witnesses on their targets (a carved target Pynguin was not pointed at is
    listed too), and the ``carved`` section."""
    targets = list(record.targets)
    listed = {target.identifier for target in targets}
    for target in top:
        if target.identifier in carved and target.identifier not in listed:
            targets.append(
                TargetGeneration(
                    rank=target.rank or len(targets) + 1,
                    identifier=target.identifier,
                    kind=target.kind,
                    module=target.module,
                    qualname=target.qualname,
                    cover="",
                    tests=[],
                    witnesses=[],
                )
            )
    targets = [msgspec.structs.replace(target, witnesses=[*carved.get(target.identifier, []), *target.witnesses]) for target in targets]
    targets.sort(key=lambda target: target.rank)
    skipped = [s for s in record.skipped if s.identifier not in carved]
    summary = msgspec.structs.replace(
        record.summary,
        witnesses=record.summary.witnesses + carving.witnesses,
        targets_with_witnesses=sum(bool(target.witnesses) for target in targets),
    )
    settings = msgspec.structs.replace(record.settings, stages=["carve", *([pynguin] if pynguin else [])])
    return msgspec.structs.replace(record, targets=targets, skipped=skipped, summary=summary, settings=settings, carved=carving)


def _module_scopes(side: VersionSide, modules: set[str]) -> dict[str, dict[str, ScopeKind] | str]:
    found: dict[str, dict[str, ScopeKind] | str] = {}
    for module in modules:
        path = side.source_file(module) if module else None
        if path is None:
            found[module] = "not a module of the sources directories"
            continue
        try:
            found[module] = scope_names(path.read_bytes())
        except OSError as exc:
            found[module] = f"cannot read {path.name}: {exc.strerror}"
    return found


def _generate(
    new: VersionSide,
    old: VersionSide,
    selection: Selection,
    options: GenerateOptions,
    budget: float,
    pynguin: str,
    tool: Tool | None,
    scratch: Path,
    console: Console,
    started: float,
    seeds: dict[str, Path] | None = None,
) -> Generation:
    """The Pynguin stage, on the targets of ``selection``: none when carving witnessed them all (or ``--carve``).
    ``seeds``: per module, the carved file of its functions that Pynguin starts from."""
    results = scratch / GENERATED
    make_folders(results)
    seeds = seeds or {}
    modules = selection.modules()
    positions = {module: [selection.chosen.index(target) + 1 for target in chosen] for module, chosen in modules.items()}
    seconds = split_budget(positions, budget)
    import_path = _import_path(new)
    runs: list[PynguinRun] = []
    for module, chosen in modules.items():
        assert tool is not None  # a selection with targets comes with Pynguin
        console.info(f"version {new.index}: Pynguin on {module} ({seconds[module]} s, covering {', '.join(t.cover for t in chosen)})")
        with fresh_copy(new.snapshot, scratch / "project") as project:
            new.runtime.prepare(project)
            roots = [str((project / source).resolve()) for source in new.settings.sources]
            run = run_pynguin(
                tool.python,
                Path(roots[0]),
                [*roots[1:], *import_path],
                module,
                sorted({t.cover for t in chosen}),
                seconds[module],
                options.seed,
                output=results / module,
                work=scratch / "pynguin",
                log=results / module / "pynguin.log",
                groups=records_folder(new.store.root),
                seeds=_seeds(seeds.get(module), module, scratch / "seeds"),
            )
        force_rmtree(scratch / "pynguin")
        console.info(f"version {new.index}: {module}: {run.status}" + (f" ({run.reason})" if run.reason else ""))
        runs.append(run)
    tests = {
        module: [
            (f"{module}/{path.name}::{test.name}", test)
            for run in runs
            if run.module == module
            for path in run.test_files
            for test in generated_tests(path.read_bytes())
        ]
        for module in modules
    }
    test_ids = [test_id for found in tests.values() for test_id, _ in found]
    side_runs: list[SideRunResult] = []
    if test_ids:
        sides: tuple[tuple[Role, VersionSide], ...] = (("new", new), ("old", old))
        for role, side in sides:
            for number in range(1, options.runs + 1):
                console.info(f"version {new.index}: generated tests on the {role} version {side.index}, run {number}/{options.runs}")
                with _scratch(scratch / f"pytest-{role}-{number}") as work:
                    side_runs.append(run_tests(side, role, number, results, work, results / f"pytest-{role}-{number}.log"))
    record = _record(new, old, selection, options, pynguin, seconds, runs, tests, side_runs, time.monotonic() - started)
    return msgspec.structs.replace(
        record,
        modules=[
            msgspec.structs.replace(m, seeded_with=f"{GENERATED}/{CARVED}/{seeds[m.module].name}" if m.module in seeds else None)
            for m in record.modules
        ],
    )


def _seeds(carved: Path | None, module: str, folder: Path) -> Path | None:
    """A folder holding the carved file as ``test_<module's last name>.py``, the name Pynguin's seeding looks for."""
    if carved is None:
        return None
    target = folder / module / f"test_{module.rpartition('.')[2]}.py"
    make_folders(target.parent)
    shutil.copyfile(carved, target)
    return target.parent


def _import_path(side: VersionSide) -> list[str]:
    """What the version's code imports besides its sources: its installed project, its environment's packages."""
    site = [str(side.runtime.site)] if side.runtime.site is not None else []
    return [*site, *side.site_packages()]


def _record(
    new: VersionSide,
    old: VersionSide,
    selection: Selection,
    options: GenerateOptions,
    pynguin: str,
    seconds: dict[str, int],
    runs: list[PynguinRun],
    tests: dict[str, list[tuple[str, GeneratedFunction]]],
    side_runs: list[SideRunResult],
    elapsed: float,
) -> Generation:
    modules = selection.modules()
    generated, covering, witnesses = _judged_tests(selection, tests, side_runs, new.directory / SCRATCH / GENERATED)
    return Generation(
        index=new.index,
        identifier=new.version.identifier,
        comparing_against_index=old.index,
        comparing_against_version=old.version.identifier,
        settings=GenerationSettings(
            budget=options.budget,
            top=options.top,
            seed=options.seed,
            module_seconds=seconds,
            assertion_generation=ASSERTION_GENERATION,
            runs_per_side=options.runs,
            pynguin=pynguin,
        ),
        modules=[_module_record(run, modules[run.module], seconds[run.module], len(tests.get(run.module, []))) for run in runs],
        targets=[
            TargetGeneration(
                rank=t.rank,
                identifier=t.identifier,
                kind=t.kind,
                module=t.module,
                qualname=t.qualname,
                cover=t.cover,
                tests=covering[t.identifier],
                witnesses=witnesses[t.identifier],
            )
            for t in selection.chosen
        ],
        skipped=[SkippedTarget(rank=p.rank, identifier=p.identifier, reason=p.reason) for p in selection.passed],
        tests=generated,
        runs=[_side_run(run, new.directory) for run in side_runs],
        summary=GenerationSummary(
            modules=len(runs),
            modules_failed=sum(run.status != "ok" for run in runs),
            tests=len(generated),
            witnesses=sum(test.witness for test in generated),
            targets_with_witnesses=sum(bool(found) for found in witnesses.values()),
        ),
        seconds=round(elapsed, 2),
    )


def _judged_tests(
    selection: Selection, tests: dict[str, list[tuple[str, GeneratedFunction]]], side_runs: list[SideRunResult], results: Path
) -> tuple[list[GeneratedTest], dict[str, list[str]], dict[str, list[Witness]]]:
    """Each generated test with its verdict on both sides; per target, the tests that cover it and those that witness it."""
    modules = selection.modules()
    by_side = {role: [run for run in side_runs if run.side == role] for role in ("old", "new")}
    generated: list[GeneratedTest] = []
    covering: dict[str, list[str]] = {target.identifier: [] for target in selection.chosen}
    witnesses: dict[str, list[Witness]] = {target.identifier: [] for target in selection.chosen}
    for module, found in tests.items():
        ids = [test_id for test_id, _ in found]
        old_verdicts, new_verdicts = side_verdicts(ids, by_side["old"]), side_verdicts(ids, by_side["new"])
        for test_id, function in found:
            targets: list[Chosen] = covered_targets(function, modules[module])
            before, after = old_verdicts[test_id], new_verdicts[test_id]
            witness = is_witness(before, after)
            full_id = f"{GENERATED}/{test_id}"
            generated.append(
                GeneratedTest(
                    id=full_id,
                    module=module,
                    targets=[t.identifier for t in targets],
                    witness=witness,
                    old=Side(outcome=before.outcome, runs=before.runs, failure=before.failure),
                    new=Side(outcome=after.outcome, runs=after.runs, failure=after.failure),
                )
            )
            for target in targets:
                covering[target.identifier].append(full_id)
                if witness:
                    source = function_source(results / test_id.partition("::")[0], function.name)
                    witnesses[target.identifier].append(witness_record(full_id, before, after, source))
    return generated, covering, witnesses


def _module_record(run: PynguinRun, targets: list[Chosen], seconds: int, tests: int) -> ModuleGeneration:
    return ModuleGeneration(
        module=run.module,
        targets=[t.identifier for t in targets],
        only_cover=sorted({t.cover for t in targets}),
        seconds=seconds,
        status=run.status,
        reason=run.reason,
        elapsed=round(run.elapsed, 2),
        test_files=[f"{GENERATED}/{run.module}/{path.name}" for path in run.test_files],
        tests=tests,
        log=f"{GENERATED}/{run.module}/pynguin.log",
    )


def _side_run(run: SideRunResult, version_dir: Path) -> SideRun:
    return SideRun(
        side=run.side,
        index=run.index,
        run=run.run,
        exit_code=run.exit_code,
        timed_out=run.timed_out,
        seconds=round(run.seconds, 2),
        log=run.log.relative_to(version_dir / SCRATCH).as_posix(),
    )


def _publish(side: VersionSide, results: Path, record: Generation) -> None:
    """``generation.json`` written beside the new ``generated/`` first (a write error leaves the earlier results as they
    were), then both renamed into place; the earlier folder is removed only once the new one is there."""
    final = side.directory / GENERATED
    document = results.parent / Generation.FILE
    record.write(document)
    trash = side.directory / f"{SCRATCH}-old"
    if os.path.lexists(trash):
        force_rmtree(trash)
    if final.exists():
        os.replace(final, trash)
    try:
        os.replace(results, final)
    except OSError:
        if trash.exists():
            os.replace(trash, final)
        raise
    os.replace(document, side.store.file(side.index, Generation.FILE))
    if trash.exists():
        force_rmtree(trash)


@contextlib.contextmanager
def _scratch(folder: Path) -> Iterator[Path]:
    if folder.exists():
        force_rmtree(folder)
    make_folders(folder)
    try:
        yield folder
    finally:
        if folder.exists():
            force_rmtree(folder)


@contextlib.contextmanager
def _private_files() -> Iterator[None]:
    """What generation writes, and the processes it starts write, is the user's alone (as in a pipeline run)."""
    previous = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(previous)


__all__ = ["GENERATED", "GenerateOptions", "generate", "resolve_version"]
