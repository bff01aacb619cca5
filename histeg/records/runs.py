"""What tracing a version writes: ``runs.json``, ``confirmations.json``, the tracer's ``traceConfig.json``,
and the JSON header of every trace file.

The tracer itself (``histeg.tracing``) imports nothing but the standard library, so it reads its
config and writes the trace headers as plain JSON; these records are histeg's side of those files.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from histeg.records.base import Part, Record
from histeg.records.types import CommitId, Count, Seconds
from histeg.tracing.tracers import LINE_BUDGET, LINE_CAP
from histeg.tracing.values import DEFAULT_REDACT

Outcome = Annotated[
    Literal["passed", "failed", "error", "timeout", "truncated", "broken"],
    msgspec.Meta(
        description=(
            "failed: tests failed (or a non-zero exit of another command), traces still used; error: the version could not be run "
            "(pytest exit 2-5, cannot start, killed); timeout: stopped at the time limit; truncated: the traced process ended without "
            "closing its trace (os._exit, a signal); broken: the tracer lost its sys.monitoring tool id (a program under test freed, "
            "cleared or took it over). Only passed and failed runs are complete."
        )
    ),
]
NOT_COMPLETE: frozenset[str] = frozenset({"error", "timeout", "truncated", "broken"})
"""Outcomes whose runs fail their version and are never reused as good."""
CommandKind = Literal["pytest", "main", "shell"]
Purpose = Literal["all", "sample", "widened"]
"""What a batch of re-runs is for (``Batch.purpose``)."""
ValueMode = Annotated[
    Literal["structural", "repr", "off"],
    msgspec.Meta(
        description=(
            "structural: parameters, return values and exceptions are abstracted without running project code; "
            "repr: also repr() for the types named to be shown by their own repr; off: not recorded."
        )
    ),
]
Tracer = Annotated[
    Literal["auto", "c", "python"],
    msgspec.Meta(
        description=(
            "Collector implementation: c (sys.monitoring callbacks in C), python (the pure-Python reference collector), "
            "auto (c when the extension is built). Both write the same trace."
        )
    ),
]
Budget = Annotated[
    int,
    msgspec.Meta(
        ge=0,
        description=(
            "Lines are recorded for the first N calls of each function per entry point (0: every call); later calls keep their "
            "calls, returns and nesting, their lines count as unknown."
        ),
    ),
]
Label = Annotated[
    str, msgspec.Meta(pattern="^[A-Za-z0-9._-]+$", description="Names the run's log and config files; stored in its trace files' headers.")
]
RunTrace = Annotated[str, msgspec.Meta(pattern="^traces/run-[0-9]+/[^/]+\\.htrace$")]
RerunTrace = Annotated[str, msgspec.Meta(pattern="^traces/confirm-[0-9]+/run-[0-9]+/[^/]+\\.htrace$")]
TRACES_DESCRIPTION = "Complete trace files the run wrote (one per traced process), relative to the version directory."
INCOMPLETE_DESCRIPTION = (
    "Trace files left unclosed or broken (for instance by child processes ending through os._exit); not used for comparison."
)


class TraceCommand(Part, kw_only=True, frozen=True):  # type: ignore[misc]  # msgspec allows a frozen Struct on a non-frozen base; mypy applies the dataclass rule
    """A command whose runs produce a version's traces: its pytest suite, a module's ``__main__`` or a shell command."""

    kind: CommandKind
    label: Label
    args: Annotated[tuple[str, ...], msgspec.Meta(description="pytest: test directories and options; main: the module's arguments.")] = ()
    module: Annotated[str | None, msgspec.Meta(description="The module run as __main__ (kind main).")] = None
    shell: Annotated[str | None, msgspec.Meta(description="The shell command (kind shell), run with /bin/sh -c in the snapshot.")] = None


class TraceOptions(Part, kw_only=True, frozen=True):  # type: ignore[misc]  # msgspec allows a frozen Struct on a non-frozen base; mypy applies the dataclass rule
    """The tracing choices the runs were made with; a rerun with other choices re-traces."""

    values: ValueMode = "structural"
    repr_types: Annotated[
        tuple[str, ...], msgspec.Meta(description="Qualified type names (pkg.mod.Class) recorded by their own repr() in repr mode.")
    ] = ()
    redact: Annotated[
        tuple[str, ...],
        msgspec.Meta(
            description=(
                "Names of secrets, matched by words against dict keys, attribute, parameter and function names (api_key matches "
                "x-api-key and apiKey; =token matches the name token alone); their values are recorded as keyed digests."
            )
        ),
    ] = DEFAULT_REDACT
    tracer: Tracer = "auto"
    line_budget: Budget = LINE_BUDGET
    line_cap: Annotated[
        int,
        msgspec.Meta(
            ge=0, description="Lines are also recorded for the first N line events of each function per entry point; 0: no bound."
        ),
    ] = LINE_CAP


class Run(Part, kw_only=True):
    """One run of one trace command."""

    repetition: Annotated[int, msgspec.Meta(ge=1)]
    command: TraceCommand
    argv: Annotated[list[str], msgspec.Meta(min_length=1)]
    exit_code: Annotated[
        int | None, msgspec.Meta(description="null when the command could not be started; negative when killed by that signal.")
    ]
    outcome: Outcome
    message: str | None
    duration_seconds: Seconds
    timed_out: bool
    tests: Annotated[
        dict[str, Count] | None,
        msgspec.Meta(
            description=(
                "pytest's own counts of the run's tests, those of its final summary line (passed, failed, errors, skipped, xfailed, xpassed, "
                "deselected, warnings, subtestsPassed, subtestsFailed, ...), whatever the output's colours; null when not pytest or pytest "
                "reached no summary."
            )
        ),
    ]
    traces: Annotated[list[RunTrace], msgspec.Meta(description=TRACES_DESCRIPTION)]
    incomplete_traces: Annotated[list[RunTrace], msgspec.Meta(description=INCOMPLETE_DESCRIPTION)]
    log: Annotated[
        str, msgspec.Meta(description="Command line, exit code and tails of stdout and stderr, relative to the version directory.")
    ]
    output_truncated_bytes: Annotated[
        Count,
        msgspec.Meta(
            description=(
                "Bytes of the command's output (stdout and stderr) that were counted but not kept: of each stream the log keeps the "
                "beginning and the end; 0 when all of it is in the log."
            )
        ),
    ] = 0

    @property
    def complete(self) -> bool:
        return self.outcome not in NOT_COMPLETE


class Rerun(Run, kw_only=True):
    """A targeted re-run: its files lie in its batch's folder."""

    traces: Annotated[list[RerunTrace], msgspec.Meta(description=TRACES_DESCRIPTION)]
    incomplete_traces: Annotated[list[RerunTrace], msgspec.Meta(description=INCOMPLETE_DESCRIPTION)]


class Runs(Record, kw_only=True):
    """Every traced run of one version's trace commands: repetition k wrote its traces, logs and configs into traces/run-<k>/."""

    FILE = "runs.json"
    TITLE = "<index>/runs.json"
    schema_version: Literal[1] = 1
    identifier: Annotated[CommitId, msgspec.Meta(description="Commit of the version.")]
    trace_format: Annotated[
        int, msgspec.Meta(ge=1, description="Version of the .htrace format the runs wrote; traces of another format are re-recorded.")
    ]
    trace_options: TraceOptions
    repeat: Annotated[int, msgspec.Meta(ge=1)]
    timeout_seconds: Annotated[float, msgspec.Meta(gt=0, description="Time limit of each command.")]
    python: Annotated[str, msgspec.Meta(description="Interpreter that ran pytest and --run-main commands.")]
    build: Annotated[
        str | None,
        msgspec.Meta(description="The build's inputs fingerprint (build.json) the runs used: traces of another build are not reused."),
    ]
    runs: list[Run]
    reused_from: Annotated[
        CommitId | None,
        msgspec.Meta(
            description=(
                "The version whose traces these are: every file this version changed is one that no traced process of that"
                " version read, so its tests behave as they did there and were not run again (histeg.runs.reuse)."
            )
        ),
    ] = None

    @property
    def errors(self) -> list[Run]:
        """Runs that say the version is broken (cannot start, pytest exit 2-5, killed, timed out)
        or whose traces cannot be trusted (truncated, the tracer lost its tool id)."""
        return [run for run in self.runs if not run.complete]

    @property
    def failures(self) -> list[Run]:
        """Runs whose tests failed: tolerated, their traces are used like any other."""
        return [run for run in self.runs if run.outcome == "failed"]

    @property
    def trace_files(self) -> list[str]:
        return [path for run in self.runs for path in run.traces]


class Batch(Part, kw_only=True):
    """Re-runs of a selection, made side by side with the other version's batch of the same comparison."""

    directory: Annotated[
        str,
        msgspec.Meta(
            pattern="^traces/confirm-[0-9]+$",
            description=("traces/confirm-<b>, relative to the version folder; its run-<k> folders hold the re-runs."),
        ),
    ]
    paired_with: Annotated[
        CommitId, msgspec.Meta(description="The version this batch was re-run side by side with: its comparison's other side.")
    ]
    selection: Annotated[
        dict[str, list[str] | None],
        msgspec.Meta(description=("Per trace command label: the pytest node ids re-run (sorted), or null for the whole command.")),
    ]
    round: Annotated[
        int,
        msgspec.Meta(
            ge=1,
            le=2,
            description=(
                "1: the re-runs of every entry point that diverged; 2: more re-runs of those whose divergence survived round 1 "
                "under entry points that ran no changed code, before they can become a target."
            ),
        ),
    ] = 1
    purpose: Annotated[
        Purpose,
        msgspec.Meta(
            description=(
                "all: every diverging entry point asked for; sample: at most a few entry points per (function, kind) of divergence; "
                "widened: the other entry points of the groups whose sample showed instability."
            )
        ),
    ] = "all"
    runs: list[Rerun]


class Confirmations(Record, kw_only=True):
    """Targeted re-runs of a version: the entry points that diverged in a comparison it took part in, run again alone to tell noise from a change. Removed with the version's traces when it is traced again."""

    FILE = "confirmations.json"
    TITLE = "<index>/confirmations.json"
    schema_version: Literal[3] = 3
    """3: re-runs made in stages (old, then new, then old again), so that no clock tick passes for a change;
    earlier batches were made side by side and are made again."""
    identifier: CommitId
    batches: list[Batch]


class TraceConfig(Record, kw_only=True):
    """What the tracer instruments in a run and where it writes the traces. Any process started with the tracer's hook directory first on PYTHONPATH and HISTEG_TRACE_CONFIG naming this file traces the version. Per-command copies (traces/run-<k>/<label>.traceConfig.json) differ in traceDir and label. The tracer reads this file with the standard library alone (histeg.tracing.activation.TraceConfig), key for key the same."""

    FILE = "traceConfig.json"
    TITLE = "<index>/traceConfig.json"
    schema_version: Literal[3] = 3
    root: Annotated[
        str,
        msgspec.Meta(
            description=(
                "Absolute path of the directory the run works in: a fresh copy of the version snapshot (<index>/.run). "
                "Recorded strings show it as <root>."
            )
        ),
    ]
    sources: Annotated[list[str], msgspec.Meta(description="Sources directories, relative to root.")]
    tests: Annotated[list[str], msgspec.Meta(description="Tests directories, relative to root.")]
    trace_dir: Annotated[str, msgspec.Meta(description="Absolute directory receiving one .htrace file per process.")]
    ignore_prefixes: list[str]
    ignore_suffixes: list[str]
    ignore_directories: list[str]
    ignore_functions: list[str]
    values: ValueMode
    repr_types: Annotated[
        list[str], msgspec.Meta(description="Qualified type names (pkg.mod.Class) recorded by their own repr() in repr mode.")
    ]
    redact: Annotated[
        list[str],
        msgspec.Meta(
            description=(
                "Names of secrets, matched by words against dict keys, attribute, parameter and function names (api_key matches "
                "x-api-key and apiKey; =token matches the name token alone). Their values are recorded as keyed digests, "
                "<redacted #1a2b3c4d5e6f>."
            )
        ),
    ]
    redaction_key: Annotated[
        str | None,
        msgspec.Meta(
            description=(
                "The file holding the key of the secrets' digests (OUT/.redaction.key, readable by its owner alone); null: every "
                "secret is recorded alike, as <redacted>."
            )
        ),
    ] = None
    value_budget: Annotated[
        int, msgspec.Meta(ge=0, description="Values are recorded for the first N calls of each function per entry point; 0: every call.")
    ]
    line_budget: Budget
    line_cap: Annotated[
        int,
        msgspec.Meta(
            ge=0,
            description=(
                "Lines are also recorded for the first N line events of each function per entry point; beyond them its "
                "lines go off as beyond the line budget. 0: no bound."
            ),
        ),
    ] = LINE_CAP
    label: Annotated[str | None, msgspec.Meta(description="Name of the run, stored in every trace file's header.")]
    tracer: Tracer
    select: Annotated[
        str | None,
        msgspec.Meta(
            description=(
                "A file of pytest node ids, one per line: the run is limited to those tests (targeted re-runs that confirm noise); "
                "null: the whole suite."
            )
        ),
    ]
    select_parent: Annotated[
        int | None,
        msgspec.Meta(
            description=(
                "The selection holds only in processes this process id started, so a test that runs pytest in a subprocess runs "
                "its inner session whole."
            )
        ),
    ]

    def __post_init__(self) -> None:
        if self.repr_types and self.values != "repr":
            raise ValueError("repr_types needs values = 'repr'")


class TraceHeader(Part, kw_only=True, omit_defaults=True):
    """The JSON header of a ``.htrace`` file (output_schema/trace-format.md), as the tracer writes it."""

    pid: int
    ppid: int
    python: str
    root: str
    label: str | None
    argv: list[str]
    values: ValueMode
    tracer: Literal["c", "python"]
    tool_id: int
    sealed: bool = False
    compression: Literal["xz", "zstd"] | None = None
    stream: Annotated[
        Literal["raw"] | None,
        msgspec.Meta(
            description=(
                "Unsealed files only: the body's records are written as they are, up to a 'Z' record after which the rest "
                "is one zlib stream; without it the whole body is one zlib stream (files of earlier versions)."
            )
        ),
    ] = None


__all__ = [
    "NOT_COMPLETE",
    "Batch",
    "CommandKind",
    "Confirmations",
    "Outcome",
    "Rerun",
    "Run",
    "Runs",
    "TraceCommand",
    "TraceConfig",
    "TraceHeader",
    "TraceOptions",
]
