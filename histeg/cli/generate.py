"""``histeg generate VERSION``: Pynguin tests for a computed version's top targets, with the witnesses of its behaviour change."""

from __future__ import annotations

import sys
from typing import Any

import click

from histeg.cli.steps import emit_json
from histeg.errors import EXIT_SOME_VERSIONS_FAILED, HistegError
from histeg.settings.load import FlagValue, load_settings
from histeg.settings.table import BY_KEY


def _table_option(key: str, metavar: str) -> Any:
    """An option of the settings table, with its help, read back through the settings like ``compute`` reads it."""
    return click.option(f"--{key}", key, default=None, metavar=metavar, help=BY_KEY[key].help)


@click.command(name="generate")
@click.argument("version")
@_table_option("out", "DIR")
@_table_option("repo", "PATH|URL")
@click.option(
    "--budget",
    type=click.FloatRange(min=1),
    default=60.0,
    show_default=True,
    help="Seconds of Pynguin search in all, split over the targets' modules (the better ranked get more).",
)
@click.option(
    "--top", type=click.IntRange(min=1), default=5, show_default=True, help="How many of the ranked targets to generate tests for."
)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Pynguin's random seed.")
@click.option(
    "--carve",
    "carve_only",
    is_flag=True,
    help="Carve tests from the traces alone: the recorded calls whose result changed, with the old result asserted (no Pynguin).",
)
@click.option("--no-carve", is_flag=True, help="Pynguin alone, on every selected target: no test is carved from the traces.")
@click.option(
    "--calls", type=click.IntRange(min=1), default=3, show_default=True, help="Distinct recorded calls carved per target at most."
)
@click.option("--json", "as_json", is_flag=True, help="Print generation.json on stdout instead of the table.")
@click.option("-q", "--quiet", is_flag=True, help="Only errors on stderr.")
def generate(
    version: str,
    out: str | None,
    repo: str | None,
    budget: float,
    top: int,
    seed: int,
    carve_only: bool,
    no_carve: bool,
    calls: int,
    as_json: bool,
    quiet: bool,
) -> None:
    """Tests for the top testing targets of VERSION (an index or a commit identifier) in an output folder made by compute.
    First carved from the traces: each recorded call whose result changed becomes a test asserting the old result
    (OUT/<index>/generated/carved/). Then Pynguin, for the targets still without a witness. Every test runs on VERSION
    and on its predecessor; one that passes on one and fails on the other witnesses the behaviour change. Writes
    OUT/<index>/generation.json. Exit code 1 when no test at all was carved or generated."""
    from histeg.console import Console
    from histeg.generate.run import GenerateOptions
    from histeg.generate.run import generate as run_generate
    from histeg.project import Project

    flags = {key: FlagValue(f"--{key}", value) for key, value in (("out", out), ("repo", repo)) if value is not None}
    store = Project.of(load_settings(flags)).store
    if not store.root.is_dir():
        raise HistegError(f"no output folder {store.root}: run histeg compute first (or give --out)")
    record = run_generate(
        store,
        version,
        GenerateOptions(budget=budget, top=top, seed=seed, carve_only=carve_only, no_carve=no_carve, calls=calls),
        Console(0 if quiet else 1),
    )
    if as_json:
        emit_json(record.to_builtins())
    else:
        for line in table(record):
            click.echo(line)
    carved = len(record.carved.tests) if record.carved is not None else 0
    if not carved and record.summary.modules_failed == record.summary.modules:
        sys.exit(EXIT_SOME_VERSIONS_FAILED)


def table(record: Any) -> list[str]:
    """Targets with their tests and witnesses (a witness's source below it), what carving could not carve, then the modules
    Pynguin failed on."""
    carving = record.carved
    carved = f"{len(carving.tests)} carved test(s), " if carving is not None else ""
    head = (
        f"version {record.index} against {record.comparing_against_index}: {carved}{record.summary.tests} generated test(s), "
        f"{record.summary.witnesses} witness(es)"
    )
    lines = [head, f"{'rank':>4}  {'tests':>5}  {'witn.':>5}  target"]
    for target in record.targets:
        lines.append(f"{target.rank:>4}  {len(target.tests):>5}  {len(target.witnesses):>5}  {target.identifier}")
        for witness in target.witnesses[:3]:
            failure = witness.new_failure if witness.new_failure is not None else witness.old_failure
            lines.append(f"{'':>18}{witness.test}: old {witness.old}, new {witness.new}" + (f" ({failure})" if failure else ""))
            lines.extend(f"{'':>20}{line}" for line in (witness.source or "").splitlines())
    for skipped in record.skipped:
        lines.append(f"{skipped.rank:>4}  {'-':>5}  {'-':>5}  {skipped.identifier}: skipped, {skipped.reason}")
    if carving is not None and not carving.candidates:
        lines.append("carving: no divergence under these targets changed a call's result (lines, calls or arguments only)")
    if carving is not None and carving.reasons:
        lines.append(
            "not carved, or carved and not a witness: " + "; ".join(f"{count} {reason}" for reason, count in carving.reasons.items())
        )
    for module in record.modules:
        if module.status != "ok":
            lines.append(f"Pynguin {module.status} on {module.module}: {module.reason}")
    return lines
