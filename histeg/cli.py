"""Command line: subcommands named after the pipeline steps.

Errors a user can fix are one line on stderr with exit code 2; ``--json``
puts a machine-readable summary on stdout and everything else on stderr.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from histeg import __version__
from histeg.errors import EXIT_BAD_INPUT, HistegError
from histeg.options import RunOptions
from histeg.tracing.session import TRACERS
from histeg.tracing.values import MODES

F = Callable[..., Any]

CONFIG_KEYS_FROM_FLAGS = (
    "sources", "tests", "build", "ignore_prefixes", "ignore_suffixes", "ignore_directories", "ignore_functions",
    "repeat", "timeout", "run_main", "run", "metric", "compare_jobs", "python", "environments", "pytest_args",
)
CONFIG_SWITCHES = ("restrict_syntax_mapping", "export_flat", "generate_for_syntax", "generate_for_divergence")


def _decorated(command: F, decorators: list[Callable[[F], F]]) -> F:
    """Apply option decorators so they appear in ``--help`` in the order listed."""
    for decorator in reversed(decorators):
        command = decorator(command)
    return command


def run_options(command: F) -> F:
    """The options every pipeline step shares."""
    decorators = [
        click.option("--repo", "repo", metavar="PATH|URL", help="Repository to analyse (a URL is cloned into the output directory)."),
        click.option("--versions", "versions", multiple=True, metavar="REV", help="Revisions or A..B ranges (first-parent, both ends included); more may follow as arguments. A single REV means REV and its predecessor."),
        click.argument("more_versions", nargs=-1, metavar="[REV]..."),
        click.option("--all", "all_versions", is_flag=True, help="Every first-parent version of the branch."),
        click.option("--branch", help="Branch to analyse (default: the repository's HEAD)."),
        click.option("--out", "out", type=click.Path(path_type=Path), help="Output directory (default: ./histeg-out)."),
        click.option("--override", is_flag=True, help="Recompute results that already exist."),
        click.option("--config", "config_file", type=click.Path(path_type=Path), help="A histeg.toml (default: ./histeg.toml if present)."),
        click.option("--sources", multiple=True, help="Sources directory inside the repository (repeatable)."),
        click.option("--tests", multiple=True, help="Tests directory inside the repository (repeatable)."),
        click.option("--build", help="Build command run in each version's snapshot ('python' and 'pip' mean the version's environment)."),
        click.option("--python", "python", metavar="PATH", help="Run every version with this interpreter or virtual environment, as it is (default: an environment per version, made with uv from what the version declares)."),
        click.option("--environments", "environments", metavar="DIR", help="Where the shared version environments are kept (default: ~/.cache/histeg/environments)."),
        click.option("--ignore-prefixes", multiple=True, help="Ignore modules starting with this prefix."),
        click.option("--ignore-suffixes", multiple=True, help="Ignore modules ending with this suffix."),
        click.option("--ignore-directories", multiple=True, help="Ignore files under this directory."),
        click.option("--ignore-functions", multiple=True, help="Ignore functions with this name (default: __repr__ __str__ __hash__ __eq__)."),
        click.option("-q", "--quiet", "verbosity", flag_value=0, help="Only errors."),
        click.option("-v", "--verbose", "verbosity", flag_value=2, help="Details of every step."),
        click.option("--json", "json_output", is_flag=True, help="Print a JSON summary on stdout."),
    ]
    return _decorated(command, decorators)


def trace_options(command: F) -> F:
    """How the versions are run under the tracer (analyze, compute)."""
    decorators = [
        click.option("--repeat", type=click.IntRange(min=1), help="Run each version's whole suite N times (default 1; the divergent entry points are re-run instead, see --confirm)."),
        click.option("--timeout", type=click.FloatRange(min=0, min_open=True), help="Seconds per trace command (default 600)."),
        click.option("--run-main", "run_main", multiple=True, metavar="MODULE", help="Also trace 'python -m MODULE' (repeatable)."),
        click.option("--run", "run", multiple=True, metavar="CMD", help="Also trace a shell command run in the snapshot (repeatable)."),
        click.option("--no-tests", "no_tests", is_flag=True, help="Do not run the version's pytest suite."),
        click.option("--pytest-arg", "pytest_args", multiple=True, metavar="ARG",
                     help="An option for the version's pytest run, e.g. --pytest-arg=--ignore=tests/slow (repeatable)."),
        click.option("--values", "values", type=click.Choice(MODES),
                     help="How parameters and return values are recorded: structural (default; runs no project code), "
                          "repr (repr() for the types in 'repr-types'), off."),
        click.option("--no-values", "no_values", is_flag=True, help="Same as --values off."),
        click.option("--tracer", type=click.Choice(TRACERS),
                     help="Collector: c (callbacks in C, the fast one), python (the reference), auto (default: c when built)."),
    ]
    return _decorated(command, decorators)


def target_options(command: F) -> F:
    """How divergences become ranked testing targets (compute)."""
    decorators = [
        click.option("--metric", multiple=True, type=click.Choice(["sections", "coverage", "distance"]),
                     help="Ranking metric (default sections); coverage and distance can be combined."),
        click.option("--restrict-syntax-mapping", is_flag=True, help="Charge a divergence only to the closest changed caller."),
        click.option("--export-flat", is_flag=True, help="Write traceDivergences.json as a flat list instead of trees."),
        click.option("--generate-for-syntax", is_flag=True, help="Also write syntaxTargets.json (targets from syntax changes alone)."),
        click.option("--generate-for-divergence", is_flag=True, help="Also write divergenceTargets.json (targets from divergences alone)."),
        click.option("--confirm", "confirm", type=click.IntRange(min=0), metavar="K",
                     help="Re-run the entry points that diverged K more times on both versions; what differs between runs of one version is noise (default 2; 0: no re-runs)."),
        click.option("--compare-jobs", "compare_jobs", type=click.IntRange(min=1), metavar="N",
                     help="Worker processes comparing entry points (default: one per core, up to 4; results do not depend on it)."),
    ]
    return _decorated(command, decorators)


def build_options(params: dict[str, Any]) -> RunOptions:
    from histeg.config import user_config

    config = user_config(params.pop("config_file", None))
    for key in CONFIG_KEYS_FROM_FLAGS:
        value = params.get(key)
        if value:  # flags win over the file
            config[key.replace("_", "-")] = list(value) if isinstance(value, tuple) else value
    for switch in CONFIG_SWITCHES:
        if params.get(switch):
            config[switch.replace("_", "-")] = True
    if params.get("no_tests"):
        config["run-tests"] = False
    if params.get("values"):
        config["values"] = params["values"]
    if params.get("no_values"):
        config["values"] = "off"
    if params.get("tracer"):
        config["tracer"] = params["tracer"]
    if params.get("confirm") is not None:  # 0 is a choice, not an absence
        config["confirm"] = params["confirm"]
    if config.get("tracer", "auto") not in TRACERS:
        raise HistegError(f"setting 'tracer' must be one of {', '.join(TRACERS)}, not {config['tracer']!r}")
    from histeg.pipeline import build_request, impact_options, trace_options

    trace_options(config)  # a bad value stops the run before any work
    impact_options(config)
    if build_request(config).python:
        from histeg.envs.interpreter import user_interpreter

        user_interpreter(config["python"], needs_pytest=config.get("run-tests", True) is not False)
    repo = params.get("repo") or config.get("repo")
    if not repo:
        raise HistegError("no repository given: use --repo PATH|URL or 'repo' in [tool.histeg]")
    versions = [*params.get("versions", ()), *params.get("more_versions", ())]
    all_versions = params.get("all_versions") or False
    if not versions and not all_versions:
        configured = config.get("versions")
        versions = [configured] if isinstance(configured, str) else list(configured or [])
        all_versions = not versions
    out = params.get("out") or Path(config.get("out", "histeg-out"))
    return RunOptions(
        repo=str(repo),
        out=Path(out),
        versions=versions,
        all_versions=all_versions,
        branch=params.get("branch") or config.get("branch"),
        override=params.get("override") or False,
        verbosity=1 if params.get("verbosity") is None else params["verbosity"],
        json_output=params.get("json_output") or False,
        config=config,
    )


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="histeg")
def cli() -> None:
    """histeg: what to test after each change of a Python project."""


def _step_command(step: str, doc: str, traced: bool = False, ranked: bool = False) -> None:
    def command(**params: Any) -> None:
        from histeg.pipeline import run_command

        sys.exit(run_command(build_options(params), until=step))

    command.__doc__ = doc
    decorated: F = command
    if ranked:
        decorated = target_options(decorated)
    if traced:
        decorated = trace_options(decorated)
    cli.command(name=step)(run_options(decorated))


_step_command("extract", "Step 1: history.json, snapshots and file-level changes.")
_step_command("build", "Step 2: run each version's build command (after extracting).")
_step_command("instrument", "Step 3: trace configuration, function table and static call graph per version.", traced=True)
_step_command("analyze", "Steps 4 and 5: syntax changes, and traces of each version's entry points.", traced=True)
_step_command("compute", "Every step: divergences mapped to syntax changes, ranked testingTargets.json per version.", traced=True, ranked=True)


@cli.command()
@click.option("--dir", "directory", type=click.Path(path_type=Path), help="Where to build the sample repository and results (default: a new temporary directory).")
@click.option("--sample", default="casino", show_default=True, help="Which bundled sample repository.")
@click.option("--json", "json_output", is_flag=True, help="Print a JSON summary on stdout.")
def demo(directory: Path | None, sample: str, json_output: bool) -> None:
    """Build a bundled sample repository and run the pipeline on it."""
    from histeg.demo import run_demo

    run_demo(directory, sample, json_output)


def main(argv: list[str] | None = None) -> None:
    try:
        cli.main(args=argv, prog_name="histeg", standalone_mode=False)
    except HistegError as exc:
        click.echo(f"histeg: error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("histeg: interrupted", err=True)
        sys.exit(130)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_BAD_INPUT)
    except KeyboardInterrupt:
        click.echo("histeg: interrupted", err=True)
        sys.exit(130)
    sys.exit(0)


from histeg.trace_cli import exec_command, trace  # noqa: E402

cli.add_command(trace)
cli.add_command(exec_command)

from histeg.syntax.command import diff  # noqa: E402

cli.add_command(diff)
