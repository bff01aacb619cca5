"""Pipeline step 2: run a version's build command in its snapshot.

A failing or hanging build is recorded in ``build.json`` and the version is
skipped by later steps; the other versions go on (thesis section 4.2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from histeg.config import VersionSettings
from histeg.runs.process import pinned_environment, run_process
from histeg.store import VERSION, OutputStore, read_json, write_bytes, write_json

BUILD = "build.json"
BUILD_LOG = "build.log"
DEFAULT_BUILD_TIMEOUT = 1800.0
SUCCEEDED, FAILED, TIMED_OUT, NOTHING_TO_DO = "succeeded", "failed", "timedOut", "nothingToDo"


@dataclass(frozen=True)
class BuildResult:
    index: int
    status: str
    command: str | None
    exit_code: int | None
    seconds: float
    reused: bool = False

    @property
    def usable(self) -> bool:
        return self.status in (SUCCEEDED, NOTHING_TO_DO)

    def to_json(self) -> dict[str, Any]:
        return {"schemaVersion": 1, "index": self.index, "status": self.status, "command": self.command,
                "exitCode": self.exit_code, "seconds": round(self.seconds, 3), "log": BUILD_LOG if self.command else None}


def build_version(store: OutputStore, index: int, timeout: float = DEFAULT_BUILD_TIMEOUT, override: bool = False) -> BuildResult:
    settings = VersionSettings.from_json(read_json(store.file(index, VERSION)))
    command = settings.build_command
    record = store.file(index, BUILD)
    if record.is_file() and not override:
        previous = read_json(record)
        if previous.get("command") == command:
            return BuildResult(index, previous["status"], command, previous.get("exitCode"), previous.get("seconds", 0.0), reused=True)
    if not command:
        result = BuildResult(index, NOTHING_TO_DO, None, None, 0.0)
    else:
        process = run_process(["/bin/sh", "-c", command], store.snapshot(index), pinned_environment(), timeout)
        log = f"$ {command}\n--- stdout (tail) ---\n{process.stdout_tail}\n--- stderr (tail) ---\n{process.stderr_tail}\n"
        write_bytes(store.file(index, BUILD_LOG), log.encode())
        exit_code = None if process.timed_out else process.exit_code
        status = TIMED_OUT if process.timed_out else SUCCEEDED if exit_code == 0 else FAILED
        result = BuildResult(index, status, command, exit_code, process.duration)
    write_json(record, result.to_json())
    return result
