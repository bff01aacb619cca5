"""Runs the pipeline steps in order and reports what each produced.

Every step command runs the steps before it first; their results are cached
in the output directory, so this costs little when they are already there.
Static results (extraction, build, static facts, syntax changes) are reused
unless ``--override``; traces are reused while the trace options are the same.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from histeg.atomic import read_json
from histeg.build import BuildRequest, build_version
from histeg.envs.environment import default_root
from histeg.errors import EXIT_OK, EXIT_SOME_VERSIONS_FAILED, HistegError
from histeg.history.extract import ExtractResult, extract
from histeg.options import RunOptions
from histeg.report.console import Console
from histeg.settings.model import Settings
from histeg.settings.record import record_settings
from histeg.store import CALL_GRAPH, FUNCTIONS, OutputStore

STEPS = ("extract", "build", "instrument", "analyze", "compute")


def emit_json(summary: dict[str, Any]) -> None:
    sys.stdout.write(orjson.dumps(summary).decode() + "\n")


@dataclass
class PipelineRun:
    """What a run did: per-step summaries and the versions that had to be skipped."""

    steps: dict[str, Any] = field(default_factory=dict)
    failed: dict[int, str] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return EXIT_SOME_VERSIONS_FAILED if self.failed else EXIT_OK

    def to_json(self) -> dict[str, Any]:
        return {"steps": self.steps, "failedVersions": [{"index": i, "reason": r} for i, r in sorted(self.failed.items())]}


@dataclass
class Context:
    options: RunOptions
    console: Console
    store: OutputStore
    run: PipelineRun
    versions: list[int]
    """Indices still in the running, in the user's order."""

    def fail(self, index: int, reason: str) -> None:
        self.run.failed[index] = reason
        self.console.warn(f"version {index}: {reason}; it is skipped by later steps")

    def usable(self) -> list[int]:
        return [index for index in self.versions if index not in self.run.failed]

    def each(self, description: str, action: Callable[[int], dict[str, Any]]) -> list[dict[str, Any]]:
        """Apply ``action`` to every usable version; a version's HistegError fails only that version."""
        results = []
        for index in self.console.progress(self.usable(), len(self.usable()), description):
            try:
                results.append({"index": index, **action(index)})
            except HistegError as exc:
                self.fail(index, str(exc))
            except Exception as exc:  # a defect must cost one version, not the run
                if self.console.verbosity >= 2:
                    traceback.print_exc()
                self.fail(index, f"internal error in {description}: {type(exc).__name__}: {exc}")
        return results


def _extract_step(options: RunOptions, console: Console) -> ExtractResult:
    result = extract(options, console)
    reused = sum(1 for v in result.versions if v.status == "reused")
    console.info(
        f"extracted {len(result.versions) - reused} and reused {reused} version(s) of {result.repository} "
        f"({result.commits} commits on {result.branch}) into {result.out}"
    )
    return result


def build_request(settings: Settings) -> BuildRequest:
    environments = settings.environments
    return BuildRequest(python=str(settings.python) if settings.python is not None else None,
                        environments=environments.expanduser().absolute() if environments is not None else default_root(),
                        timeout=settings.build_timeout)


def _build(context: Context, index: int) -> dict[str, Any]:
    result = build_version(context.store, index, build_request(context.options.settings), override=context.options.override)
    if not result.usable:
        context.fail(index, f"build {result.status}: {result.reason} (see {context.store.file(index, 'build.log')})")
    summary: dict[str, Any] = {"status": result.status, "reused": result.reused}
    if result.environment is not None:
        summary |= {"environment": result.environment.key, "python": result.environment.version, "created": result.environment.created}
    return summary


def _instrument(context: Context, index: int) -> dict[str, Any]:
    from histeg.runs.runner import write_trace_config
    from histeg.statics.export import export_static_facts

    store = context.store
    reused = not context.options.override and store.file(index, FUNCTIONS).is_file() and store.file(index, CALL_GRAPH).is_file()
    if not reused:
        export_static_facts(store, index)
    wanted = _trace_settings(context.options)
    write_trace_config(store, index, wanted["options"])
    return {"reused": reused, "functions": len(read_json(store.file(index, FUNCTIONS)).get("functions", []))}


def _syntax(context: Context, index: int) -> dict[str, Any]:
    from histeg.records.syntax import SyntaxChanges
    from histeg.syntax.analysis import analyze_version, stored_changes

    stored = None if context.options.override else stored_changes(context.store, index)
    changes = stored or SyntaxChanges.read(analyze_version(context.store, index))
    return {"reused": stored is not None, "changes": changes.summary.changes}


def trace_options(settings: Settings) -> Any:
    from histeg.runs.runner import TraceOptions

    return TraceOptions(values=settings.values, repr_types=settings.repr_types, redact=settings.redact, tracer=settings.tracer,
                        line_budget=settings.line_budget)


def _trace_settings(options: RunOptions) -> dict[str, Any]:
    settings = options.settings
    return {
        "repeat": settings.repeat,
        "timeout": settings.timeout,
        "run-main": list(settings.run_main),
        "run": list(settings.run),
        "tests": settings.run_tests,
        "pytest-args": list(settings.pytest_args),
        "options": trace_options(settings),
    }


def _traces(context: Context, index: int) -> dict[str, Any]:
    from histeg.runs.commands import trace_commands
    from histeg.runs.runner import reusable_runs, run_traces, version_settings

    store = context.store
    wanted = _trace_settings(context.options)
    record_settings(store, index, context.options.settings, "traces")
    _, settings = version_settings(store, index)
    commands = trace_commands(settings.tests, wanted["run-main"], wanted["run"], with_tests=wanted["tests"],
                              pytest_options=wanted["pytest-args"])
    if not commands:
        raise HistegError("nothing to trace: no tests directory and no --run/--run-main command")
    previous = None if context.options.override else reusable_runs(store, index, commands, wanted["repeat"], wanted["options"])
    if previous is not None:
        return {"reused": True, "runs": len(previous.runs)}
    summary = run_traces(
        store, index, commands, repeat=wanted["repeat"], timeout=wanted["timeout"], options=wanted["options"]
    )
    for run in summary.failures:
        context.console.warn(f"version {index}: {run.command.label} (run {run.repetition}) {run.outcome}: {run.message or 'some tests failed'}")
    if summary.errors:
        first = summary.errors[0]
        context.fail(index, f"trace run {first.command.label} {first.outcome}: {first.message} (see {store.version_dir(index) / first.log})")
    return {"reused": False, "runs": len(summary.runs), "outcomes": sorted({run.outcome for run in summary.runs})}


def impact_options(settings: Settings) -> Any:
    from histeg.impact.step import ImpactOptions

    return ImpactOptions(
        scaling=settings.scaling,
        metrics=settings.metric,
        restrict=settings.restrict_syntax_mapping,
        flat=settings.export_flat,
        for_syntax=settings.generate_for_syntax,
        for_divergence=settings.generate_for_divergence,
        jobs=settings.compare_jobs,
        confirm=settings.confirm,
    )


def _targets(context: Context, index: int, settings: Any) -> dict[str, Any]:
    from histeg.impact.step import compute_targets

    against = context.store.version(index).comparing_against_index
    if against is None:
        return {"targets": None, "note": "first version in the list: nothing to compare with"}
    if against in context.run.failed:
        raise HistegError(f"its predecessor, version {against}, failed")
    record_settings(context.store, index, context.options.settings, "targets")
    return compute_targets(context.store, index, settings)


def run_pipeline(options: RunOptions, console: Console, until: str = STEPS[-1]) -> PipelineRun:
    """Run the steps up to and including ``until``."""
    run = PipelineRun()
    extracted = _extract_step(options, console)
    run.steps["extract"] = extracted.to_json()
    context = Context(options, console, OutputStore(options.out), run, [v.index for v in extracted.versions])
    if STEPS.index(until) >= STEPS.index("build"):
        run.steps["build"] = context.each("building versions", lambda i: _build(context, i))
    if STEPS.index(until) >= STEPS.index("instrument"):
        run.steps["instrument"] = context.each("exporting static facts", lambda i: _instrument(context, i))
    if STEPS.index(until) >= STEPS.index("analyze"):
        run.steps["syntax"] = context.each("analysing syntax changes", lambda i: _syntax(context, i))
        run.steps["traces"] = context.each("tracing versions", lambda i: _traces(context, i))
    if STEPS.index(until) >= STEPS.index("compute"):
        settings = impact_options(options.settings)
        run.steps["targets"] = context.each("ranking testing targets", lambda i: _targets(context, i, settings))
        for item in run.steps["targets"]:
            if item.get("targets") is not None:
                top = ", ".join(item["top"]) or "none"
                console.info(f"version {item['index']}: {item['targets']} testing target(s); top: {top}")
    return run


def run_command(options: RunOptions, until: str) -> int:
    """Entry point of the step commands: run, print, return the exit code."""
    console = Console(options.verbosity)
    run = run_pipeline(options, console, until)
    if run.failed:
        console.info(f"{len(run.failed)} version(s) failed: " + ", ".join(str(i) for i in sorted(run.failed)))
    if options.json_output:
        emit_json(run.to_json())
    return run.exit_code
