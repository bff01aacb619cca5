"""What building writes: ``<index>/build.json``, and the mark of a finished shared environment."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from histeg.records.base import Part, Record
from histeg.records.types import Index, Seconds

BuildStatus = Literal["succeeded", "failed", "timedOut"]


class Declarations(Part, kw_only=True, frozen=True):  # type: ignore[misc]  # msgspec allows a frozen Struct on a non-frozen base; mypy applies the dataclass rule
    """A version's declared needs, read from its own files; two versions with equal declarations share an environment."""

    requirements: Annotated[
        tuple[str, ...], msgspec.Meta(description="Sorted requirement strings for the environment (pytest added when absent).")
    ]
    requires_python: str | None
    name: str | None
    installable: Annotated[
        bool, msgspec.Meta(description=("It declares a build ([build-system], setup.py or setup.cfg): it is installed per version."))
    ]
    scm: Annotated[str | None, msgspec.Meta(description="The build tool deriving the version from git.")]
    sources: Annotated[tuple[str, ...], msgspec.Meta(description="The files the declarations were read from.")] = msgspec.field(name="from")


class Environment(Part, kw_only=True, frozen=True):  # type: ignore[misc]  # msgspec allows a frozen Struct on a non-frozen base; mypy applies the dataclass rule
    """Where a version's tests run: a shared environment, or the user's interpreter as it is."""

    python: Annotated[str, msgspec.Meta(description="The interpreter the version's commands run with.")]
    version: str = msgspec.field(name="pythonVersion")
    key: Annotated[
        str | None,
        msgspec.Meta(
            description=(
                "Name of the shared environment (hash of the declarations, the interpreter's version and the build command); "
                "null for the user's --python."
            )
        ),
    ]
    shared: bool
    created: Annotated[bool, msgspec.Meta(description="Made by this build (false: an existing one was reused).")]
    seconds: Seconds


class Project(Part, kw_only=True):
    installed: Annotated[bool, msgspec.Meta(description="Installed without dependencies into the version's site folder.")]
    version: Annotated[str | None, msgspec.Meta(description="The version string given to a git-derived build.")]
    generated: Annotated[
        list[str],
        msgspec.Meta(description=("Files the build generated in the source directories, copied into every run's copy of the snapshot.")),
    ]
    seconds: Seconds
    key: Annotated[
        str | None,
        msgspec.Meta(
            description=(
                "What the install depends on (the files at the snapshot's root and the interpreter): equal keys, equal installs. Null "
                "when it may depend on more: a setup.py, a version from git or from the sources, a backend that compiles."
            )
        ),
    ] = None
    reused_from: Annotated[
        Index | None, msgspec.Meta(description="The version whose install, with the same key, was copied instead of building again.")
    ] = None


class Neutralised(Part, kw_only=True):
    """A pytest option or setting that keeps the project's test configuration from writing into the run folder."""

    what: str
    how: str


class Build(Record, kw_only=True):
    """How the version was made runnable: its declarations, the environment its tests run in, the project installed per version, the user's build command, and what was neutralised. Versions whose build failed or timed out are skipped by later steps."""

    FILE = "build.json"
    TITLE = "<index>/build.json"
    schema_version: Literal[2] = 2
    index: Index
    status: BuildStatus
    reason: Annotated[str | None, msgspec.Meta(description="One line saying what failed; null when the build succeeded.")]
    command: Annotated[
        str | None, msgspec.Meta(description="The user's build command, run in the snapshot with the environment activated.")
    ]
    exit_code: Annotated[
        int | None, msgspec.Meta(description=("Of the build command; null when it timed out, did not run or none was configured."))
    ]
    seconds: Seconds
    log: Annotated[
        Literal["build.log"], msgspec.Meta(description=("File in the version directory with uv's output and the build command's."))
    ] = "build.log"
    environment: Environment | None
    declarations: Declarations | None
    project: Project | None
    neutralised: list[Neutralised]
    pytest_args: list[str]
    inputs: Annotated[
        str, msgspec.Meta(description=("Fingerprint of what the build depends on; a rerun reuses the build while it is the same."))
    ]


class EnvironmentMark(Record, kw_only=True):
    """Written last into a shared environment's folder: the folder is complete. Says what went into it."""

    FILE = "histeg-environment.json"
    TITLE = "<environments>/<key>/histeg-environment.json"
    schema_version: Literal[1] = 1
    key: str
    python: Annotated[str, msgspec.Meta(description="The interpreter the environment was made from.")]
    python_version: str
    declarations: Declarations
    build_command: Annotated[
        str | None, msgspec.Meta(description="Part of the key: what the build command installs stays in the environment.")
    ]
    seconds: Seconds


__all__ = ["Build", "BuildStatus", "Declarations", "Environment", "EnvironmentMark", "Neutralised", "Project"]
