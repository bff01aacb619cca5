"""``histeg demo``."""

from __future__ import annotations

from pathlib import Path

import click


@click.command()
@click.option(
    "--dir",
    "directory",
    type=click.Path(path_type=Path),
    help="Where to build the sample repository and results (default: a new temporary directory).",
)
@click.option("--sample", default="casino", show_default=True, help="Which bundled sample repository.")
@click.option("--json", "json_output", is_flag=True, help="Print a JSON summary on stdout.")
def demo(directory: Path | None, sample: str, json_output: bool) -> None:
    """Build a bundled sample repository, run the pipeline on it and write the HTML report."""
    from histeg.cli.steps import emit_json
    from histeg.console import Console
    from histeg.demo import run_demo

    repo, run, report = run_demo(directory, sample, Console(1))
    if json_output:
        emit_json({"repository": str(repo), "report": str(report), **run.to_json()})
