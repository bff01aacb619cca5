"""Runs the pipeline steps in order and reports what each produced."""

from __future__ import annotations

import sys
from typing import Any

import orjson

from histeg.history.extract import ExtractResult, extract
from histeg.options import RunOptions
from histeg.report.console import Console


def emit_json(summary: dict[str, Any]) -> None:
    sys.stdout.write(orjson.dumps(summary).decode() + "\n")


def _extract_step(options: RunOptions, console: Console) -> ExtractResult:
    result = extract(options, console)
    reused = sum(1 for v in result.versions if v.status == "reused")
    console.info(
        f"extracted {len(result.versions) - reused} and reused {reused} version(s) of {result.repository} "
        f"({result.commits} commits on {result.branch}) into {result.out}"
    )
    return result


def run_extract(options: RunOptions) -> ExtractResult:
    result = _extract_step(options, Console(options.verbosity))
    if options.json_output:
        emit_json(result.to_json())
    return result


def run_pipeline(options: RunOptions, console: Console) -> dict[str, Any]:
    """Every step that this release provides, in order; returns the summary."""
    extracted = _extract_step(options, console)
    return {"steps": {"extract": extracted.to_json()}}
