"""The trace steps: ``traceConfig.json``, then the version's suite run traced (``runs.json``, ``traces/``)."""

from __future__ import annotations

from typing import Any

from histeg.engine.fingerprint import file_digest
from histeg.engine.inputs import settings_values, snapshot_inputs, version_inputs
from histeg.errors import HistegError
from histeg.run_settings import record_settings
from histeg.step import Step, StepContext, StepResult
from histeg.tracing.format import FORMAT_VERSION
from histeg.tracing.values import VALUES_FORMAT


def _trace_config_inputs(context: StepContext, index: int) -> dict[str, Any]:
    from histeg.runs.runner import (
        trace_options,  # the runner is imported when a version needs it
    )

    return {**version_inputs(context, index), "options": trace_options(context.settings)}


def _trace_config(context: StepContext, index: int) -> StepResult:
    from histeg.runs.runner import trace_options, write_trace_config

    write_trace_config(context.store, index, trace_options(context.settings))
    return StepResult({})


def _traces_inputs(context: StepContext, index: int) -> dict[str, Any]:
    # a new redaction key makes every secret's digest new: traces made with another key no longer compare
    return {
        "version": snapshot_inputs(context.store.version(index)),
        "settings": settings_values(context.settings, "traces"),
        "traceFormat": FORMAT_VERSION,
        "values": VALUES_FORMAT,
        "redactionKey": file_digest(context.store.redaction_key()),
    }


def _traces(context: StepContext, index: int) -> StepResult:
    from histeg.runs.commands import trace_commands
    from histeg.runs.reuse import decide, take
    from histeg.runs.runner import publish, run_traces, trace_options

    store, settings = context.store, context.settings
    record_settings(store, index, settings, "traces")
    not_reused: dict[str, list[str]] = {}
    if candidate_for_reuse(context, index):
        reuse = decide(store, index, _traces_inputs(context, index))
        if reuse.possible:
            runs = take(store, index, reuse, publish)
            context.console.detail(f"version {index}: traces of version {reuse.against} reused: no test read a file it changed")
            return StepResult(
                {"runs": len(runs.runs), "outcomes": sorted({run.outcome for run in runs.runs}), "reusedFrom": runs.reused_from}
            )
        context.console.detail(f"version {index}: traced, not reused from version {reuse.against}: {'; '.join(reuse.reasons[:3])}")
        not_reused = {"notReusedBecause": reuse.reasons}  # in the summary too: a worker's details stay in the worker
    version_tests = store.version(index).tests_in
    commands = trace_commands(
        version_tests, settings.run_main, settings.run, with_tests=settings.run_tests, pytest_options=settings.pytest_args
    )
    if not commands:
        raise HistegError("nothing to trace: no tests directory and no --run/--run-main command")
    runs = run_traces(store, index, commands, repeat=settings.repeat, timeout=settings.timeout, options=trace_options(settings))
    for run in runs.failures:
        context.console.warn(
            f"version {index}: {run.command.label} (run {run.repetition}) {run.outcome}: {run.message or 'some tests failed'}"
        )
    summary = {"runs": len(runs.runs), "outcomes": sorted({run.outcome for run in runs.runs}), **not_reused}
    if runs.errors:
        first = runs.errors[0]
        return StepResult(
            summary, f"trace run {first.command.label} {first.outcome}: {first.message} (see {store.version_dir(index) / first.log})"
        )
    return StepResult(summary)


def candidate_for_reuse(context: StepContext, index: int) -> bool:
    """Whether the version may take its predecessor's traces (``histeg.runs.reuse``): then its traces wait for theirs."""
    from histeg.runs.reuse import candidate

    return candidate(context.store, index)


TRACE_CONFIG = Step(
    name="traceConfig", doing="writing trace configurations", outputs=("traceConfig.json",), inputs=_trace_config_inputs, run=_trace_config
)
TRACES = Step(
    name="traces", doing="tracing versions", outputs=("runs.json", "traces"), upstream=("build",), inputs=_traces_inputs, run=_traces
)
