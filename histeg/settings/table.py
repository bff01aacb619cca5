"""Every option of histeg, once: its key in a file, its flags, type, default, help and commands.

The command line's flags are generated from this table, files are read
through it, and ``histeg config`` prints it with the values in force. A key
is spelled as in TOML (``ignore-prefixes``); its flag is ``--`` and the key
unless ``flags`` says otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from histeg.settings.evidence import EVIDENCE, EVIDENCE_FIRST
from histeg.settings.kinds import (
    Boolean,
    Choice,
    Choices,
    Day,
    Kind,
    Number,
    PathName,
    Strings,
    Text,
    Weights,
    Whole,
)
from histeg.settings.scaling import METRICS, Scaling
from histeg.tracing.selection import DEFAULT_IGNORED_FUNCTIONS
from histeg.tracing.tracers import LINE_BUDGET, LINE_CAP, TRACERS
from histeg.tracing.values import DEFAULT_REDACT, MODES

Group = Literal["run", "trace", "target"]
"""Which commands have the option's flags: ``run`` every pipeline step, ``trace`` the steps that trace
(instrument, analyze, compute), ``target`` compute. A file may set any option, whatever the command."""
Step = Literal["traces", "compare", "targets"]
Heading = Literal["Which versions", "Where", "Build", "Tracing", "Comparison", "Ranking", "Output"]
HEADINGS: tuple[Heading, ...] = ("Which versions", "Where", "Build", "Tracing", "Comparison", "Ranking", "Output")
"""The sections of ``--help``, in this order."""
_STEP_HEADINGS: dict[Step, Heading] = {"traces": "Tracing", "compare": "Comparison", "targets": "Ranking"}


@dataclass(frozen=True)
class Preset:
    """A flag that sets its option to a fixed value: ``--no-tests`` is ``run-tests = false``."""

    flags: tuple[str, ...]
    value: Any
    help: str

    @property
    def name(self) -> str:
        """The click parameter: the long flag's name."""
        return max(self.flags, key=len).lstrip("-").replace("-", "_")


@dataclass(frozen=True)
class Option:
    key: str
    kind: Kind
    default: Any
    help: str
    group: Group = "run"
    flags: tuple[str, ...] | None = None
    """``None``: ``--<key>``; ``()``: no flag of its own (a file key, or set by ``presets``)."""
    metavar: str | None = None
    presets: tuple[Preset, ...] = ()
    per_version: bool = False
    """Also read from the analysed version's own ``pyproject.toml`` (``[tool.histeg]``)."""
    in_file: bool = True
    """False for what only a flag says: which file, what to print, whether to recompute."""
    step: Step | None = None
    """The results it changes: recorded in each version's ``settings.json`` by that step."""
    shown: bool = True
    """Listed by ``histeg config``: what decides results or where they go, not how messages look."""
    default_text: str | None = None
    """The default as ``--help`` words it when the value alone does not say it."""
    heading: Heading | None = None
    """Its section of ``--help``; ``None``: the one of its ``step``."""

    @property
    def section(self) -> Heading:
        if self.heading is not None:
            return self.heading
        assert self.step is not None, f"option {self.key} needs a heading"
        return _STEP_HEADINGS[self.step]

    @property
    def name(self) -> str:
        """The field of ``Settings`` and the click parameter."""
        return self.key.replace("-", "_")

    @property
    def option_flags(self) -> tuple[str, ...]:
        return (f"--{self.key}",) if self.flags is None else self.flags


def _run(key: str, kind: Kind, default: Any, help: str, **more: Any) -> Option:
    return Option(key, kind, default, help, "run", **more)


def _trace(key: str, kind: Kind, default: Any, help: str, **more: Any) -> Option:
    return Option(key, kind, default, help, "trace", **{"step": "traces", **more})


def _target(key: str, kind: Kind, default: Any, help: str, **more: Any) -> Option:
    return Option(key, kind, default, help, "target", **{"step": "targets", **more})


CONFIRM_SAMPLE = 4
"""Entry points re-run per (function, kind) of divergence before their sample has shown noise (``histeg.compare.sampling``)."""

OPTIONS: tuple[Option, ...] = (
    _run(
        "repo",
        Text(),
        None,
        "Repository to analyse (a URL is cloned into the output directory).",
        metavar="PATH|URL",
        heading="Which versions",
    ),
    _run(
        "versions",
        Strings(),
        (),
        "Revisions or A..B ranges (first-parent, both ends included); more may follow as arguments. "
        "A single REV means REV and its predecessor. One of --versions, --all, --since and --last is required.",
        metavar="REV",
        heading="Which versions",
    ),
    _run("all", Boolean(), False, "Every first-parent version of the branch.", in_file=False, heading="Which versions"),
    _run(
        "since",
        Day(),
        None,
        "The first-parent versions committed on or after DATE, and the one before them to compare with.",
        heading="Which versions",
    ),
    _run("last", Whole(1), None, "The last N first-parent versions (N-1 comparisons).", metavar="N", heading="Which versions"),
    _run("branch", Text(), None, "Branch to analyse.", default_text="the repository's HEAD", heading="Which versions"),
    _run(
        "out",
        PathName(),
        None,
        "Output directory; results of earlier runs there are reused.",
        default_text="a folder per repository in $XDG_CACHE_HOME/histeg/results (~/.cache/histeg/results)",
        heading="Where",
    ),
    _run("override", Boolean(), False, "Recompute results that already exist.", in_file=False, heading="Where"),
    _run(
        "config",
        PathName(),
        None,
        "A histeg.toml, or a pyproject.toml, whose [tool.histeg] table holds settings.",
        in_file=False,
        metavar="FILE",
        default_text="./histeg.toml if present",
        heading="Where",
    ),
    _run(
        "sources",
        Strings(directories=True),
        None,
        "Sources directory inside the repository (repeatable).",
        per_version=True,
        default_text="src/ if present, else the root",
        heading="Build",
    ),
    _run(
        "tests",
        Strings(directories=True),
        None,
        "Tests directory inside the repository (repeatable).",
        per_version=True,
        default_text="tests/ or test/ if present",
        heading="Build",
    ),
    _run(
        "build",
        Text(),
        None,
        "Build command run in each version's snapshot ('python' and 'pip' mean the version's environment).",
        per_version=True,
        heading="Build",
    ),
    _run("build-timeout", Number(), 1800.0, "Seconds the build of one version may take.", flags=(), heading="Build"),
    _run(
        "python",
        PathName(),
        None,
        "Run every version with this interpreter or virtual environment, as it is.",
        metavar="PATH",
        default_text="an environment per version, made with uv from what the version declares",
        heading="Build",
    ),
    _run(
        "environments",
        PathName(),
        None,
        "Where the shared version environments are kept.",
        metavar="DIR",
        default_text="$HISTEG_ENVIRONMENTS or ~/.cache/histeg/environments",
        heading="Where",
    ),
    _run("ignore-prefixes", Strings(), (), "Ignore modules starting with this prefix (repeatable).", per_version=True, heading="Tracing"),
    _run("ignore-suffixes", Strings(), (), "Ignore modules ending with this suffix (repeatable).", per_version=True, heading="Tracing"),
    _run("ignore-directories", Strings(), (), "Ignore files under this directory (repeatable).", per_version=True, heading="Tracing"),
    _run(
        "ignore-functions",
        Strings(),
        DEFAULT_IGNORED_FUNCTIONS,
        "Ignore functions with this name or qualified name (repeatable).",
        per_version=True,
        heading="Tracing",
    ),
    _run(
        "verbosity",
        Whole(0),
        1,
        "How much is said on stderr: 0 only errors, 1 steps, 2 details.",
        flags=(),
        in_file=False,
        shown=False,
        presets=(Preset(("-q", "--quiet"), 0, "Only errors."), Preset(("-v", "--verbose"), 2, "Details of every step.")),
        heading="Output",
    ),
    _run("json", Boolean(), False, "Print a JSON summary on stdout.", in_file=False, shown=False, heading="Output"),
    _run(
        "jobs",
        Whole(1),
        1,
        "Versions worked on at once, each in a Dask worker process (1: one after another, in this process; "
        "more needs the 'cluster' extra); results do not depend on it.",
        flags=("-j", "--jobs"),
        metavar="N",
        heading="Where",
    ),
    _run(
        "scheduler",
        Text(),
        None,
        "Address of a running Dask scheduler whose workers take the versions (--jobs, when given, "
        "caps how many run at once); results do not depend on it.",
        metavar="ADDRESS",
        default_text="a local cluster of --jobs workers",
        heading="Where",
    ),
    _trace(
        "repeat",
        Whole(1),
        1,
        "Run each version's whole suite N times (the divergent entry points are re-run instead, see "
        "--confirm: nondeterminism is found at a fraction of the cost).",
        metavar="N",
    ),
    _trace("timeout", Number(), 600.0, "Seconds per trace command.", metavar="SECONDS"),
    _trace("run-main", Strings(), (), "Also trace 'python -m MODULE' (repeatable).", metavar="MODULE"),
    _trace("run", Strings(), (), "Also trace a shell command run in the snapshot (repeatable).", metavar="CMD"),
    _trace(
        "run-tests",
        Boolean(),
        True,
        "Run the version's pytest suite.",
        flags=(),
        presets=(Preset(("--no-tests",), False, "Do not run the version's pytest suite."),),
    ),
    _trace(
        "pytest-args",
        Strings(),
        (),
        "An option for the version's pytest run, e.g. --pytest-arg=--ignore=tests/slow (repeatable).",
        flags=("--pytest-arg",),
        metavar="ARG",
    ),
    _trace(
        "values",
        Choice(MODES),
        "structural",
        "How parameters and return values are recorded: structural (runs no project "
        "code), repr (repr() for the types in 'repr-types'), off.",
        presets=(Preset(("--no-values",), "off", "Same as --values off."),),
    ),
    _trace("tracer", Choice(TRACERS), "auto", "Collector: c (callbacks in C, the fast one), python (the reference), auto (c when built)."),
    _trace("repr-types", Strings(), (), 'With values = "repr": qualified names of the types shown by their own repr().', flags=()),
    _trace(
        "redact",
        Strings(),
        DEFAULT_REDACT,
        "Names of secrets (dict keys, attributes, parameters, functions for their "
        "return value), matched by words: 'api_key' matches x-api-key and apiKey, '=token' the name token alone. Their "
        "values are written as keyed digests that still compare; replaces the default list.",
        flags=(),
    ),
    _trace(
        "line-budget",
        Whole(0),
        LINE_BUDGET,
        "Lines are recorded for the first N calls of a function per entry point (0: every call).",
        flags=(),
    ),
    _trace(
        "line-cap",
        Whole(0),
        LINE_CAP,
        "And for its first N line events per entry point (0: no bound): one call looping over a long input costs what its "
        "first N lines cost.",
        flags=(),
    ),
    _target("metric", Choices(METRICS), ("sections",), "Ranking metric; coverage and distance can be combined (repeatable)."),
    _target("restrict-syntax-mapping", Boolean(), False, "Charge a divergence only to the closest changed caller."),
    _target(
        "evidence-first",
        Choices(EVIDENCE, empty=True),
        EVIDENCE_FIRST,
        "Rank targets charged with a divergence of this class "
        "above every target charged with none, whatever the values (repeatable; replaces the default list).",
        presets=(Preset(("--no-evidence-first",), (), "Rank by value alone, whatever the divergences' classes."),),
    ),
    _target("export-flat", Boolean(), False, "Write traceDivergences.json as a flat list instead of trees.", step="compare"),
    _target("generate-for-syntax", Boolean(), False, "Also write syntaxTargets.json (targets from syntax changes alone)."),
    _target("generate-for-divergence", Boolean(), False, "Also write divergenceTargets.json (targets from divergences alone)."),
    _target(
        "confirm",
        Whole(0),
        2,
        "Re-run the entry points that diverged K more times on both versions; what differs between "
        "runs of one version is noise (0: no re-runs).",
        metavar="K",
        step="compare",
    ),
    _target(
        "confirm-sample",
        Whole(0),
        CONFIRM_SAMPLE,
        "Re-run at most N of the entry points in which one function diverged in one way, and all of them only when "
        "those N show noise (0: re-run every divergent entry point).",
        metavar="N",
        step="compare",
    ),
    _run(
        "merges",
        Boolean(),
        False,
        "Merge mode: also extract, build and trace each selected merge's second parent and merge base, "
        "and compare the merge with both parents and the base (behaviour lost or introduced, mergeDivergences.json).",
        step="targets",
        heading="Which versions",
    ),
    _target(
        "merge-distance",
        Whole(0),
        2,
        "Merge mode: call distance from both sides' changes that makes the merge's impact set "
        "(reported in mergeDivergences.json; every lost or introduced divergence is a target whatever it is).",
        metavar="D",
        heading="Comparison",
    ),
    _target(
        "compare-jobs",
        Whole(0),
        0,
        "Worker processes comparing entry points (0: one per core, up to 4; results do not depend on it).",
        metavar="N",
        step=None,
        heading="Comparison",
    ),
    _target("scaling", Weights(), Scaling(), "Weights of the ranking ([tool.histeg.scaling]: non-local-sections = 10, ...).", flags=()),
)

BY_KEY: dict[str, Option] = {option.key: option for option in OPTIONS}
PER_VERSION: tuple[Option, ...] = tuple(option for option in OPTIONS if option.per_version)
