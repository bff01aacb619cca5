"""Process groups histeg started, recorded on disk while they run, so that none outlives a histeg killed outright.

On SIGINT and SIGTERM histeg stops its groups itself (``histeg.processes.process``); SIGKILL gives it no
chance. So while a group runs, ``OUT/.histeg/processes/<pgid>.json`` names it, with the start time of
its leader and of the histeg that started it (``/proc/<pid>/stat``, field 22, clock ticks since boot):
a pid the kernel has since given to another process is never taken for theirs. At the start of the
next run on the output directory, ``end_orphans`` kills the groups whose histeg is gone and removes
what their runs left behind.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import orjson

from histeg.atomic import write_json
from histeg.processes.workdir import remove_leftovers

PROCESSES = Path(".histeg") / "processes"
"""Inside the output directory: one record per running process group."""
GONE_SECONDS = 5.0
"""How long ``end_orphans`` waits for killed groups to be gone before it removes their run folders."""


@dataclass(frozen=True)
class GroupRecord:
    """A running process group and the histeg that started it, each with its start time."""

    pgid: int
    started: int
    owner: int
    owner_started: int
    argv: list[str]

    def to_json(self) -> dict[str, object]:
        return {"pgid": self.pgid, "started": self.started, "owner": self.owner, "ownerStarted": self.owner_started, "argv": self.argv}


def records_folder(out: Path) -> Path:
    """Where the groups of runs on output directory ``out`` are recorded."""
    return out / PROCESSES


@dataclass(frozen=True)
class _Stat:
    state: str
    pgid: int
    session: int
    started: int


def _stat(pid: int | str) -> _Stat | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()  # the name may hold spaces and parentheses; fields 3 on follow it
    if len(fields) < 20:
        return None
    return _Stat(state=fields[0], pgid=int(fields[2]), session=int(fields[3]), started=int(fields[19]))


def start_time(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot, ``/proc/<pid>/stat`` field 22); None when there is no such process."""
    stat = _stat(pid)
    return stat.started if stat is not None else None


def _alive(pid: int, started: int) -> bool:
    """Process ``pid`` is the one that started at ``started`` and has not ended (a zombie has)."""
    stat = _stat(pid)
    return stat is not None and stat.started == started and stat.state != "Z"


def record(folder: Path, pid: int, argv: list[str]) -> Path | None:
    """Record the group that process ``pid`` leads; None when it was reaped already (nothing left to record)."""
    started, own = start_time(pid), start_time(os.getpid())
    if started is None or own is None:
        return None
    path = folder / f"{pid}.json"
    write_json(path, GroupRecord(pgid=pid, started=started, owner=os.getpid(), owner_started=own, argv=list(argv)).to_json())
    return path


def release(path: Path | None) -> None:
    """The group is gone: forget it."""
    if path is not None:
        path.unlink(missing_ok=True)


def end_orphans(out: Path) -> list[int]:
    """Kill the process groups a histeg that is gone left running on output directory ``out``, drop the
    records of groups that ended, and remove the run folders such a histeg left (``workdir.remove_leftovers``).
    Call it at the start of a run, before anything else uses the directory. Returns the groups killed."""
    folder = records_folder(out)
    ended: list[int] = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        found = _read(path)
        if found is not None and _alive(found.owner, found.owner_started):
            continue  # its histeg still runs and will stop it itself
        if found is not None and _runs(found):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(found.pgid, signal.SIGKILL)
                ended.append(found.pgid)
        path.unlink(missing_ok=True)
    deadline = time.monotonic() + GONE_SECONDS
    while any(group_exists(pgid) for pgid in ended) and time.monotonic() < deadline:
        time.sleep(0.05)
    remove_leftovers(out)
    return ended


def group_exists(pgid: int) -> bool:
    """Some process of group ``pgid`` has not ended (zombies, which only wait to be reaped, do not count)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return bool(_members(pgid))


def _read(path: Path) -> GroupRecord | None:
    try:
        data = orjson.loads(path.read_bytes())
        return GroupRecord(
            pgid=int(data["pgid"]),
            started=int(data["started"]),
            owner=int(data["owner"]),
            owner_started=int(data["ownerStarted"]),
            argv=[str(part) for part in data["argv"]],
        )
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None  # damaged: nothing in it can be trusted to name a process


def _runs(found: GroupRecord) -> bool:
    """The recorded group still has processes. Its leader, when it still runs, must be the recorded one; a group
    whose leader has ended is known by its members: in the leader's session, started no earlier than the leader."""
    leader = _stat(found.pgid)
    if leader is not None and leader.started != found.started:
        return False  # the pid is another process's now: the recorded group ended long ago
    return bool(_members(found.pgid, found.started))


def _members(pgid: int, since: int = 0) -> list[int]:
    """Live processes of group ``pgid`` in session ``pgid`` (histeg's groups lead their own session) started at ``since`` or later."""
    found = []
    for entry in os.scandir("/proc"):
        if (
            entry.name.isdigit()
            and (stat := _stat(entry.name)) is not None
            and stat.pgid == pgid
            and stat.session == pgid
            and stat.started >= since
            and stat.state != "Z"
        ):
            found.append(int(entry.name))
    return found


__all__ = ["GroupRecord", "end_orphans", "group_exists", "record", "records_folder", "release", "start_time"]
