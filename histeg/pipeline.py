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
from histeg.runs.step import TRACE_CONFIG, TRACES
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

    def each_step(self, step: Step) -> list[dict[str, Any]]:
        """``step`` on every usable version: in this loop, or as one task per version on the executor."""
        if self.executor is None or step.name not in SPREAD_STEPS:
            return self.each(step.doing, lambda index: self.run_step(step, index), step.name)
        usable = self.usable()
        task = functools.partial(version_task, WorkerJob.of(self.settings, _failing(self)), step.name)
        found: dict[int, list[dict[str, Any]]] = {}
        outcomes = self.executor.map(step.name, usable, task, lambda index: _touches(self, step, index))
        for index, outcome in self.console.progress(outcomes, len(usable), step.doing):
            if isinstance(outcome, WriteError):  # nothing more can be written: the run stops, earlier results intact
                raise outcome
            if isinstance(outcome, BaseException):  # the worker died, or the task could not reach it
                self.fail(index, f"internal error in {step.doing}: {type(outcome).__name__}: {outcome}", step.name)
                continue
            for message in outcome.warnings:
                self.console.warn(message)
            self.run.failed.update(outcome.failed)
            self.run.failed_in.update(dict.fromkeys(outcome.failed, step.name))
            found[index] = outcome.results
        return [result for index in usable for result in found.get(index, [])]


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

SPREAD_STEPS = frozenset({"build", "statics", "syntax", "traces", "compare", "targets"})
"""The steps run as one task per version with ``-j N``: each writes only its version's files (``_touches`` says where a
comparison writes more). The others run in the coordinator: writing a trace configuration is too quick to be worth a
task, and a merge's comparisons write into several versions and read the failures of the step itself."""


def _failing(context: Context) -> dict[int, str]:
    """The versions a task must take as failed: those that failed before their traces were done. A failed comparison
    is not among them: its version's traces can still be compared with, in this run as in a serial one."""
    return {index: reason for index, reason in context.run.failed.items() if context.traces_failed(index)}


def _touches(context: Context, step: Step, index: int) -> frozenset[int]:
    """The versions whose files ``step`` writes for ``index``: a comparison re-runs entry points of both its versions."""
    if step.name == "compare":
        against = context.store.version(index).comparing_against_index
        return frozenset({index} if against is None else {index, against})
    return frozenset({index})


def version_task(job: WorkerJob, step_name: str, index: int) -> Outcome:
    """One version's step in a worker process: the serial loop's body over that version alone."""
    settings = job.run_settings()
    console = KeptConsole()
    before = {i: reason for i, reason in job.failed.items() if i != index}
    context = Context(settings, console, OutputStore(settings.output()), PipelineRun(failed=dict(before)), [index])
    step = STEPS[step_name]
    results = context.each(step.doing, lambda i: context.run_step(step, i), step.name)
    return Outcome(results, {i: reason for i, reason in context.run.failed.items() if i not in before}, console.warnings)


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
            for step in steps:
                run.steps[step.name] = context.each_step(step)
    run.seconds = time.perf_counter() - started
    for item in run.steps.get("targets", []):
        if "targets" in item:
            untested = f", {item['untested']} untested change(s)" if "untested" in item else ""
            top = listed(item["top"], total=item["targets"])
            console.info(f"version {item['index']}: {item['targets']} testing target(s){untested}; top: {top}")
    return run
