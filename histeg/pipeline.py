"""Runs the pipeline steps in order and reports what each produced."""

from __future__ import annotations

import sys

import orjson

from histeg.history.extract import ExtractResult, extract
from histeg.options import RunOptions
from histeg.report.console import Console


def run_extract(options: RunOptions) -> ExtractResult:
    console = Console(options.verbosity)
    result = extract(options, console)
    reused = sum(1 for v in result.versions if v.status == "reused")
    console.info(
        f"extracted {len(result.versions) - reused} and reused {reused} version(s) of {result.repository} "
        f"({result.commits} commits on {result.branch}) into {result.out}"
    )
    if options.json_output:
        sys.stdout.write(orjson.dumps(result.to_json()).decode() + "\n")
    return result
