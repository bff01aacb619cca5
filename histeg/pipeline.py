"""Runs the pipeline steps in order and reports what each produced.

Every step command runs the steps before it first; their results are cached
in the output directory, so this costs little when they are already there.
Static results (extraction, build, static facts, syntax changes) are reused
unless ``--override``; traces are reused while the trace options are the same.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from histeg.build import DEFAULT_BUILD_TIMEOUT, BuildRequest, build_version
from histeg.envs.environment import default_root
from histeg.errors import EXIT_OK, EXIT_SOME_VERSIONS_FAILED, HistegError
from histeg.history.extract import ExtractResult, extract
from histeg.options import RunOptions
from histeg.report.console import Console
from histeg.store import CALL_GRAPH, FUNCTIONS, SYNTAX_CHANGES, OutputStore, read_json

STEPS = ("extract", "build", "instrument", "analyze", "compute")
DEFAULT_REPEAT = 1
"""Whole-suite runs per version. Nondeterminism (time, unseeded randomness, temporary names) is
found by re-running only the entry points that diverged (``--confirm``), at a fraction of the cost."""


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


def build_request(config: dict[str, Any]) -> BuildRequest:
    """The typed build settings of a configuration; a bad value is a one-line error."""
    timeout = config.get("build-timeout", DEFAULT_BUILD_TIMEOUT)
    if type(timeout) not in (int, float) or timeout <= 0:
        raise HistegError(f"setting 'build-timeout' must be a positive number of seconds, not {timeout!r}")
    python, environments = config.get("python"), config.get("environments")
    for key, value in (("python", python), ("environments", environments)):
        if value is not None and (not isinstance(value, str) or not value):
            raise HistegError(f"setting '{key}' must be a path, not {value!r}")
    return BuildRequest(python=python, environments=Path(environments).expanduser().absolute() if environments else default_root(),
                        timeout=float(timeout))


def _build(context: Context, index: int) -> dict[str, Any]:
    result = build_version(context.store, index, build_request(context.options.config), override=context.options.override)
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
    from histeg.syntax.analysis import analyze_version

    path = context.store.file(index, SYNTAX_CHANGES)
    reused = path.is_file() and not context.options.override
    if not reused:
        analyze_version(context.store, index)
    return {"reused": reused, "changes": read_json(path)["summary"]["changes"]}


def trace_options(config: dict[str, Any]) -> Any:
    """The typed trace options of a configuration; a bad value is a one-line error."""
    from histeg.runs.runner import TraceOptions
    from histeg.tracing.values import DEFAULT_REDACT, MODES

    values = config.get("values", "structural")
    if values not in MODES:
        raise HistegError(f"setting 'values' must be one of {', '.join(MODES)}, not {values!r}")
    repr_types = _strings(config, "repr-types")
    redact = _strings(config, "redact") if "redact" in config else list(DEFAULT_REDACT)
    _strings(config, "pytest-args")
    if repr_types and values != "repr":
        raise HistegError("setting 'repr-types' needs values = \"repr\"")
    tracer = config.get("tracer", "auto")
    line_budget = config.get("line-budget", 64)
    if type(line_budget) is not int or line_budget < 0:
        raise HistegError(f"setting 'line-budget' must be a whole number >= 0 (0: every call), not {line_budget!r}")
    return TraceOptions(values=values, repr_types=tuple(repr_types), redact=tuple(redact), tracer=tracer, line_budget=line_budget)


def _strings(config: dict[str, Any], key: str) -> list[str]:
    value = config.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise HistegError(f"setting '{key}' must be a list of strings, not {value!r}")
    return value


def _trace_settings(options: RunOptions) -> dict[str, Any]:
    config = options.config
    return {
        "repeat": int(config.get("repeat", DEFAULT_REPEAT)),
        "timeout": float(config.get("timeout", 600)),
        "run-main": list(config.get("run-main", [])),
        "run": list(config.get("run", [])),
        "tests": bool(config.get("run-tests", True)),
        "pytest-args": _strings(config, "pytest-args"),
        "options": trace_options(config),
    }


def _traces(context: Context, index: int) -> dict[str, Any]:
    from histeg.envs.runtime import runtime_of
    from histeg.runs.commands import trace_commands
    from histeg.runs.outcome import NOT_COMPLETE
    from histeg.runs.runner import RUNS, run_traces, version_settings
    from histeg.statics.observed import add_observed_edges
    from histeg.tracing.format import FORMAT_VERSION

    store = context.store
    wanted = _trace_settings(context.options)
    _, settings = version_settings(store, index)
    commands = trace_commands(settings.tests, wanted["run-main"], wanted["run"], with_tests=wanted["tests"],
                              pytest_options=wanted["pytest-args"])
    if not commands:
        raise HistegError("nothing to trace: no tests directory and no --run/--run-main command")
    runs_path = store.file(index, RUNS)
    if runs_path.is_file() and not context.options.override:
        previous = read_json(runs_path)
        same_commands = sorted({orjson.dumps(r["command"]) for r in previous["runs"]}) == sorted(orjson.dumps(c.to_json()) for c in commands)
        same_tracing = previous.get("traceFormat") == FORMAT_VERSION and previous.get("traceOptions") == wanted["options"].to_json()
        complete = not any(run["outcome"] in NOT_COMPLETE for run in previous["runs"])
        same_build = previous.get("build") == runtime_of(store.version_dir(index)).build
        if previous.get("repeat") == wanted["repeat"] and same_commands and same_tracing and same_build and complete:
            return {"reused": True, "runs": len(previous["runs"])}
    summary = run_traces(
        store, index, commands, repeat=wanted["repeat"], timeout=wanted["timeout"], options=wanted["options"]
    )
    add_observed_edges(store, index, [store.version_dir(index) / path for run in summary.runs for path in run.traces])
    for run in summary.failures:
        context.console.warn(f"version {index}: {run.command.label} (run {run.repetition}) {run.outcome}: {run.message or 'some tests failed'}")
    if summary.errors:
        first = summary.errors[0]
        context.fail(index, f"trace run {first.command.label} {first.outcome}: {first.message} (see {store.version_dir(index) / first.log})")
    return {"reused": False, "runs": len(summary.runs), "outcomes": sorted({run.outcome for run in summary.runs})}


def impact_options(config: dict[str, Any]) -> Any:
    from histeg.impact.scaling import Scaling, parse_metrics
    from histeg.impact.step import ImpactOptions
    from histeg.runs.confirm import DEFAULT_CONFIRM_RUNS

    return ImpactOptions(
        scaling=Scaling.from_config(config.get("scaling")),
        metrics=parse_metrics(config.get("metric")),
        restrict=bool(config.get("restrict-syntax-mapping", False)),
        flat=bool(config.get("export-flat", False)),
        for_syntax=bool(config.get("generate-for-syntax", False)),
        for_divergence=bool(config.get("generate-for-divergence", False)),
        jobs=_compare_jobs(config.get("compare-jobs", 0)),
        confirm=_confirm_runs(config.get("confirm", DEFAULT_CONFIRM_RUNS)),
    )


def _confirm_runs(value: Any) -> int:
    if type(value) is not int or value < 0:
        raise HistegError(f"setting 'confirm' must be a whole number >= 0 (0: no re-runs), not {value!r}")
    return value


def _compare_jobs(value: Any) -> int:
    if type(value) is not int or value < 0:
        raise HistegError(f"setting 'compare-jobs' must be a whole number >= 0 (0: one per core, up to 4), not {value!r}")
    return value


def _targets(context: Context, index: int, settings: Any) -> dict[str, Any]:
    from histeg.impact.step import compute_targets
    from histeg.store import VERSION

    against = read_json(context.store.file(index, VERSION))["comparingAgainstIndex"]
    if against is None:
        return {"targets": None, "note": "first version in the list: nothing to compare with"}
    if against in context.run.failed:
        raise HistegError(f"its predecessor, version {against}, failed")
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
        settings = impact_options(options.config)
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
