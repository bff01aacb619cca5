"""Runs the pipeline steps in order and reports what each produced.

Every step command runs the steps before it first; their results are cached
in the output directory, so this costs little when they are already there.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

import orjson

from histeg.build import DEFAULT_BUILD_TIMEOUT, build_version
from histeg.errors import EXIT_OK, EXIT_SOME_VERSIONS_FAILED
from histeg.history.extract import ExtractResult, extract
from histeg.options import RunOptions
from histeg.report.console import Console
from histeg.store import OutputStore

STEPS = ("extract", "build")


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


def _extract_step(options: RunOptions, console: Console) -> ExtractResult:
    result = extract(options, console)
    reused = sum(1 for v in result.versions if v.status == "reused")
    console.info(
        f"extracted {len(result.versions) - reused} and reused {reused} version(s) of {result.repository} "
        f"({result.commits} commits on {result.branch}) into {result.out}"
    )
    return result


def run_pipeline(options: RunOptions, console: Console, until: str = STEPS[-1]) -> PipelineRun:
    """Run the steps up to and including ``until``."""
    run = PipelineRun()
    extracted = _extract_step(options, console)
    run.steps["extract"] = extracted.to_json()
    if until == "extract":
        return run
    store = OutputStore(options.out)
    timeout = float(options.config.get("build-timeout", DEFAULT_BUILD_TIMEOUT))
    builds = []
    for version in console.progress(extracted.versions, len(extracted.versions), "building versions"):
        result = build_version(store, version.index, timeout=timeout, override=options.override)
        builds.append(result.to_json() | {"reused": result.reused})
        if not result.usable:
            run.failed[version.index] = f"build {result.status} (see {store.file(version.index, 'build.log')})"
            console.warn(f"version {version.index}: build {result.status}; it is skipped by later steps")
    run.steps["build"] = builds
    return run


def run_command(options: RunOptions, until: str) -> int:
    """Entry point of the step commands: run, print, return the exit code."""
    console = Console(options.verbosity)
    run = run_pipeline(options, console, until)
    if options.json_output:
        emit_json(run.to_json())
    return run.exit_code
