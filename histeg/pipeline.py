"""The pipeline: extraction, then the list of per-version steps in data-flow order.

Each step declares what its result depends on (the version, the settings it
reads, its upstream steps' results, the predecessor's results) and
``histeg.engine.runner`` alone decides, from the fingerprint of those inputs,
whether a stored result is reused or computed again. A step command runs the
steps before it too; what is still valid costs a fingerprint.
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from histeg.build import BUILD_STEP
from histeg.compare.step import COMPARE
from histeg.console import Console, listed
from histeg.engine.executor import (
    DaskExecutor,
    KeptConsole,
    Outcome,
    Task,
    Work,
    WorkerJob,
    executor_for,
)
from histeg.engine.runner import run_step
from histeg.errors import EXIT_OK, EXIT_SOME_VERSIONS_FAILED, HistegError, WriteError
from histeg.history.extract import (
    ExtractedVersion,
    ExtractResult,
    check_output_directory,
    extract_step,
    plan_extraction,
    record_merges,
)
from histeg.history.request import ExtractRequest
from histeg.impact.step import TARGETS
from histeg.merges.step import MERGES
from histeg.processes.groups import end_orphans
from histeg.runs.step import TRACE_CONFIG, TRACES, candidate_for_reuse
from histeg.settings.model import Settings
from histeg.statics.step import STATICS
from histeg.step import Step
from histeg.store import OutputStore
from histeg.syntax.step import SYNTAX

COMMANDS = ("extract", "build", "instrument", "analyze", "compute")
"""The step commands, each running the steps before it."""


@dataclass
class PipelineRun:
    """What a run did: per-step summaries and the versions that had to be skipped."""

    steps: dict[str, Any] = field(default_factory=dict)
    failed: dict[int, str] = field(default_factory=dict)
    failed_in: dict[int, str] = field(default_factory=dict)
    """The step each failed version failed in."""
    seconds: float = 0.0

    @property
    def exit_code(self) -> int:
        return EXIT_SOME_VERSIONS_FAILED if self.failed else EXIT_OK

    def versions(self) -> list[dict[str, Any]]:
        """Per version: ok or failed (and why), and per step whether it ran, was reused or skipped, and its time."""
        extracted = self.steps.get("extract", {}).get("versions", [])
        found = []
        for version in extracted:
            index = version["index"]
            steps = {
                name: _step_state(item)
                for name, items in self.steps.items()
                if name != "extract"
                for item in items
                if item["index"] == index
            }
            entry = {
                "index": index,
                "identifier": version["identifier"],
                "extraction": version["status"],
                "status": "failed" if index in self.failed else "ok",
                "steps": steps,
            }
            if index in self.failed:
                entry["reason"] = self.failed[index]
            found.append(entry)
        return found

    def to_json(self) -> dict[str, Any]:
        return {
            "seconds": round(self.seconds, 3),
            "versions": self.versions(),
            "steps": self.steps,
            "failedVersions": [{"index": i, "reason": r} for i, r in sorted(self.failed.items())],
        }


def _step_state(item: dict[str, Any]) -> dict[str, Any]:
    if "skipped" in item:
        return {"status": "skipped", "reason": item["skipped"]}
    return {"status": "reused" if item.get("reused") else "ran", "seconds": item.get("seconds", {}).get("total", 0.0)}


@dataclass
class Context:
    settings: Settings
    console: Console
    store: OutputStore
    run: PipelineRun
    versions: list[int]
    """Indices still in the running, in the user's order."""
    executor: DaskExecutor | None = None
    """Where versions are worked on at once (``-j N``, ``--scheduler``); ``None``: one after another, here."""

    def fail(self, index: int, reason: str, step: str | None = None) -> None:
        self.run.failed[index] = reason
        if step is not None:
            self.run.failed_in[index] = step
        self.console.warn(f"version {index}: {reason}; it is skipped by later steps")

    def traces_failed(self, index: int | None) -> bool:
        """Version ``index`` failed before its traces were done: nothing can be compared with it. A version whose own
        comparison failed keeps traces its successor can be compared with."""
        return index in self.run.failed and self.run.failed_in.get(index) not in COMPARISONS

    @property
    def override(self) -> bool:
        return self.settings.override

    def run_step(self, step: Step, index: int) -> dict[str, Any]:
        note = step.skip(self, index) if step.skip is not None else None
        if note is not None:
            return {"skipped": note}
        result = run_step(step, self, index)
        if result.failure is not None:
            self.fail(index, result.failure, step.name)
        return result.summary

    def usable(self) -> list[int]:
        return [index for index in self.versions if index not in self.run.failed]

    def each(self, description: str, action: Callable[[int], dict[str, Any]], step: str | None = None) -> list[dict[str, Any]]:
        """Apply ``action`` to every usable version; a version's HistegError fails only that version (in ``step``)."""
        results = []
        for index in self.console.progress(self.usable(), len(self.usable()), description):
            try:
                results.append({"index": index, **action(index)})
            except WriteError:  # nothing more can be written: the run stops, earlier results intact
                raise
            except HistegError as exc:
                self.fail(index, str(exc), step)
            except Exception as exc:  # noqa: BLE001  a defect must cost one version, not the run
                if self.console.verbosity >= 2:
                    traceback.print_exc()
                self.fail(index, f"internal error in {description}: {type(exc).__name__}: {exc}", step)
        return results

    def each_stages(self, group: list[tuple[Step, ...]]) -> dict[str, list[dict[str, Any]]]:
        """The steps of a group of consecutive stages on every usable version: in this loop, stage after stage and step after step,
        or as one task per stage and version on the executor, which runs a stage's steps in order for its version (see
        ``FUSED``). There a version's task of a stage waits for the tasks of the stage before of the versions it
        touches (a comparison: its own and its predecessor's traces), not for every version's: a version is compared
        while later ones are still traced, instead of every worker waiting for the last traced suite."""
        if self.executor is None or not spread(group[0]):
            return {
                step.name: self.each(step.doing, functools.partial(self.run_step, step), step.name) for stage in group for step in stage
            }
        usable = self.usable()
        touched = [{index: _stage_touches(self, stage, index) for index in usable} for stage in group]
        works = [
            Work(
                number,
                index,
                touched[number][index],
                (
                    frozenset((number - 1, other) for other in touched[number][index] if other in touched[number - 1])
                    if number
                    else frozenset()
                )
                | frozenset((number, other) for other in _stage_waits(self, group[number], index) if other in touched[number]),
            )
            for index in usable
            for number in range(len(group))
        ]
        names = [tuple(step.name for step in stage) for stage in group]

        def task_for(work: Work) -> Task | None:
            if work.index in self.run.failed:  # failed in an earlier stage: skipped by the later ones, as in the loop
                return None
            return functools.partial(version_task, WorkerJob.of(self.settings, _failing(self)), names[work.stage])

        found: dict[tuple[int, int], dict[str, list[dict[str, Any]]]] = {}
        doing = ", ".join(step.doing for stage in group for step in stage)
        outcomes = self.executor.map("+".join(name for stage in names for name in stage), works, task_for)
        for work, outcome in self.console.progress(outcomes, len(works), doing):
            if outcome is None:  # not run: its version failed in an earlier stage
                continue
            if isinstance(outcome, WriteError):  # nothing more can be written: the run stops, earlier results intact
                raise outcome
            if isinstance(outcome, BaseException):  # the worker died, or the task could not reach it
                self.fail(
                    work.index,
                    f"internal error in {', '.join(step.doing for step in group[work.stage])}: {type(outcome).__name__}: {outcome}",
                    names[work.stage][0],
                )
                continue
            for message in outcome.warnings:
                self.console.warn(message)
            self.run.failed.update(outcome.failed)
            self.run.failed_in.update(outcome.failed_in)
            found[work.key] = outcome.results
        return {
            name: [result for index in usable for result in found.get((number, index), {}).get(name, [])]
            for number, stage in enumerate(names)
            for name in stage
        }


def _extract(context: Context) -> ExtractResult:
    """The history read and the versions chosen, then each version's extract step, whose reuse the engine decides."""
    console = context.console
    plan = plan_extraction(ExtractRequest.of(context.settings), console)
    step = extract_step(plan)
    result = plan.result()
    for index in console.progress(list(plan.versions), len(plan.versions), step.doing):
        summary = run_step(step, context, index).summary
        status = "reused" if summary.get("reused") else summary["status"]
        planned = plan.versions[index]
        console.detail(f"{status} version {index} ({planned.commit.identifier[:12]})")
        predecessor = planned.predecessor.index if planned.predecessor is not None else None
        result.versions.append(ExtractedVersion(index, planned.commit.identifier, predecessor, status))
    record_merges(plan)
    reused = sum(1 for v in result.versions if v.status == "reused")
    console.info(
        f"extracted {len(result.versions) - reused} and reused {reused} version(s) of {result.repository} "
        f"({result.commits} commits on {result.branch}) into {result.out}"
    )
    return result


COMPARISONS = frozenset({"compare", "targets", "merges"})
"""The steps that compare a version with others: a version failing one still has traces to be compared with."""

FUSED: tuple[frozenset[str], ...] = (frozenset({"build", "statics", "traceConfig", "syntax", "traces"}), frozenset({"compare", "targets"}))
"""With ``-j N``, runs of consecutive steps that one task does for its version: a version goes on to its next step as
soon as its last one is done, instead of waiting at every step until every other version is done too (the workers idled
at each step's end). In a group a step reads only its own version's earlier steps and the snapshots; a comparison reads
its predecessor's traces, which that version's task of the first group made before the comparison's task starts
(``Context.each_stages``)."""

SPREAD_STEPS = frozenset({"build", "statics", "syntax", "traces", "compare", "targets"})
"""The steps run as one task per version with ``-j N``: each writes only its version's files (``_touches`` says where a
comparison writes more). The others run in the coordinator when they make a stage of their own: a trace configuration
is too quick to be worth a task (it is written by its version's task, between statics and syntax, see ``FUSED``), and a
merge's comparisons write into several versions and read the failures of the step itself."""


def _failing(context: Context) -> dict[int, str]:
    """The versions a task must take as failed: those that failed before their traces were done. A failed comparison
    is not among them: its version's traces can still be compared with, in this run as in a serial one."""
    return {index: reason for index, reason in context.run.failed.items() if context.traces_failed(index)}


def stages(steps: tuple[Step, ...]) -> list[tuple[Step, ...]]:
    """``steps`` in order, consecutive ones of one group of ``FUSED`` together."""
    found: list[tuple[Step, ...]] = []
    for step in steps:
        if found and any(step.name in group and found[-1][-1].name in group for group in FUSED):
            found[-1] = (*found[-1], step)
        else:
            found.append((step,))
    return found


def spread(stage: tuple[Step, ...]) -> bool:
    """Whether ``stage`` runs as one task per version with ``-j N`` (``SPREAD_STEPS``: a lone quick step does not)."""
    return len(stage) > 1 or stage[0].name in SPREAD_STEPS


def stage_runs(steps: tuple[Step, ...]) -> list[list[tuple[Step, ...]]]:
    """The stages of ``steps``, consecutive ones that run as tasks together: the executor starts a version's task of a
    stage as soon as what it reads of the stage before is done."""
    found: list[list[tuple[Step, ...]]] = []
    for stage in stages(steps):
        if found and spread(stage) and spread(found[-1][-1]):
            found[-1].append(stage)
        else:
            found.append([stage])
    return found


def _stage_touches(context: Context, stage: tuple[Step, ...], index: int) -> frozenset[int]:
    return frozenset().union(*(_touches(context, step, index) for step in stage))


def _stage_waits(context: Context, stage: tuple[Step, ...], index: int) -> frozenset[int]:
    """The versions whose work of the same stage must be done first: traces that may be the predecessor's wait for them."""
    if not any(step.name == TRACES.name for step in stage) or not candidate_for_reuse(context, index):
        return frozenset()
    against = context.store.version(index).comparing_against_index
    return frozenset() if against is None else frozenset({against})


def _touches(context: Context, step: Step, index: int) -> frozenset[int]:
    """The versions whose files ``step`` writes for ``index``: a comparison re-runs entry points of both its versions."""
    if step.name == "compare":
        against = context.store.version(index).comparing_against_index
        return frozenset({index} if against is None else {index, against})
    return frozenset({index})


def version_task(job: WorkerJob, step_names: tuple[str, ...], index: int) -> Outcome:
    """One version's steps in a worker process, in order: the serial loop's body over that version alone (a step it
    fails skips the steps after it, as in the loop)."""
    settings = job.run_settings()
    console = KeptConsole()
    before = {i: reason for i, reason in job.failed.items() if i != index}
    context = Context(settings, console, OutputStore(settings.output()), PipelineRun(failed=dict(before)), [index])
    results = {name: context.each(STEPS[name].doing, functools.partial(context.run_step, STEPS[name]), name) for name in step_names}
    failed = {i: reason for i, reason in context.run.failed.items() if i not in before}
    return Outcome(results, failed, {i: context.run.failed_in[i] for i in failed if i in context.run.failed_in}, console.warnings)


PIPELINE: dict[str, tuple[Step, ...]] = {
    "extract": (),
    "build": (BUILD_STEP,),
    "instrument": (BUILD_STEP, STATICS, TRACE_CONFIG),
    "analyze": (BUILD_STEP, STATICS, TRACE_CONFIG, SYNTAX, TRACES),
    "compute": (BUILD_STEP, STATICS, TRACE_CONFIG, SYNTAX, TRACES, COMPARE, TARGETS, MERGES),
}
"""What each command runs, in order; a version a step fails is skipped by the steps after it."""
STEPS: dict[str, Step] = {step.name: step for step in PIPELINE["compute"]}


@contextlib.contextmanager
def private_files() -> Iterator[None]:
    """Everything the run writes, and the processes it starts write, is the user's alone."""
    previous = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(previous)


def run_pipeline(settings: Settings, console: Console, until: str = COMMANDS[-1]) -> PipelineRun:
    """Extract, then run the steps of command ``until`` on every extracted version."""
    settings.repository(), settings.scope()  # a run names its repository and its versions: checked before any work
    run = PipelineRun()
    started = time.perf_counter()
    store = OutputStore(settings.output())
    check_output_directory(store)
    if not settings.out_chosen:
        console.info(f"results go to {store.root} (choose another folder with --out)")
    with private_files(), store.locked():
        ended = end_orphans(store.root)
        if ended:
            console.warn(f"ended {len(ended)} process group(s) that a killed histeg run left running: {', '.join(map(str, ended))}")
        steps = PIPELINE[until]
        with executor_for(settings, store.root, console) if steps else contextlib.nullcontext() as executor:
            context = Context(settings, console, store, run, [], executor)
            extracted = _extract(context)
            run.steps["extract"] = extracted.to_json()
            context.versions = [v.index for v in extracted.versions]
            serial: list[list[tuple[Step, ...]]] = [[(step,)] for step in steps]
            for stage_run in stage_runs(steps) if executor is not None else serial:
                run.steps.update(context.each_stages(stage_run))
    run.seconds = time.perf_counter() - started
    for item in run.steps.get("targets", []):
        if "targets" in item:
            untested = f", {item['untested']} untested change(s)" if "untested" in item else ""
            top = listed(item["top"], total=item["targets"])
            console.info(f"version {item['index']}: {item['targets']} testing target(s){untested}; top: {top}")
    return run
