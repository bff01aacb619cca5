"""A version's traces taken from its predecessor when none of its changes can reach a test.

A commit that edits a changelog, a workflow or the documentation leaves every
test as it was; tracing its suite again costs a whole traced run and finds
what the predecessor's run found. The predecessor's traced processes wrote
which files under the run's root they opened and which folders they listed
(``histeg.tracing.seen_files``). The version's traces are the predecessor's
(hard links, and ``runs.json`` saying ``reusedFrom``) when:

* both were traced alike: the same trace settings, formats and redaction
  key, the same per-version settings (sources, tests, ignores, build
  command), the same build and interpreter;
* every changed file is modified in place (no file added, removed or
  renamed: a test that only asks whether a file exists raises no audit
  event) and is not Python (Python files are what histeg analyses);
* no traced process of the predecessor opened a changed file, and every
  process heard everything: none was blind (a native module outside the
  standard library, ``ctypes``, ``exec``), and every child it started is a
  traced process of the same run, with a record of its own.

Anything else, or any doubt (a sidecar missing or unreadable, a run that did
not complete), traces the version as always; ``reasons`` says why not.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from histeg.engine.inputs import apart_from_commit
from histeg.engine.runner import read_states, results
from histeg.envs.runtime import runtime_of
from histeg.errors import HistegError
from histeg.processes.workdir import TRACES_SCRATCH
from histeg.records.build import Build
from histeg.records.history import FileChanges
from histeg.records.runs import Runs
from histeg.store import FILE_CHANGES, OutputStore, force_rmtree
from histeg.traces.reader import TraceFile
from histeg.tracing.seen_files import read_seen_files
from histeg.version import __version__

TRACES_STEP = "traces"


@dataclass
class Reuse:
    """Whether version ``index`` may take its predecessor's traces, and why not."""

    against: int | None
    runs: Runs | None = None
    reasons: list[str] = field(default_factory=list)

    @property
    def possible(self) -> bool:
        return self.runs is not None and not self.reasons


def candidate(store: OutputStore, index: int) -> bool:
    """Whether the version's own changes allow reuse at all (read before either version is traced, so that its traces
    can wait for its predecessor's): a predecessor, and only non-Python files modified in place."""
    against = store.version(index).comparing_against_index
    return against is not None and not _change_reasons(store, index)


def _change_reasons(store: OutputStore, index: int) -> list[str]:
    try:
        changes = FileChanges.read(store.file(index, FILE_CHANGES)).changes
    except HistegError as exc:
        return [str(exc)]
    if not changes:
        return []
    reasons = [f"{change.new_path or change.old_path} is {change.type}" for change in changes if change.type != "modified"]
    reasons += [f"{change.new_path} is a Python file" for change in changes if change.type == "modified" and change.python]
    return reasons


def _changed_paths(store: OutputStore, index: int) -> set[str]:
    return {change.new_path for change in FileChanges.read(store.file(index, FILE_CHANGES)).changes if change.new_path}


def decide(store: OutputStore, index: int, inputs: dict[str, Any]) -> Reuse:
    """``inputs``: what the version's traces step takes as inputs now (``histeg.runs.step``)."""
    against = store.version(index).comparing_against_index
    reuse = Reuse(against)
    if against is None:
        reuse.reasons.append("it has no predecessor")
        return reuse
    reuse.reasons += _change_reasons(store, index)
    if reuse.reasons:
        return reuse
    state = read_states(store, against).steps.get(TRACES_STEP)
    if TRACES_STEP not in results(store, against) or state is None:
        reuse.reasons.append(f"version {against} has no complete traces")
        return reuse
    try:
        runs = Runs.read(store.file(against, Runs.FILE))
    except HistegError as exc:
        reuse.reasons.append(str(exc))
        return reuse
    reuse.reasons += _tracing_differs(state.inputs, inputs)
    if runs.python != runtime_of(store.version_dir(index)).python or not _same_build(store, against, index):
        reuse.reasons.append(f"version {against} ran in another environment or install")
    if runs.errors:
        reuse.reasons.append(f"a run of version {against} did not complete")
    if not reuse.reasons:
        reuse.reasons += _unheard(store.version_dir(against), runs, _changed_paths(store, index))
    reuse.runs = runs
    return reuse


def _same_build(store: OutputStore, one: int, other: int) -> bool:
    """The same environment and the same install of the project (one install key, nothing generated apart): a build
    fingerprint names its commit, so it is not compared."""

    def identity(index: int) -> tuple[Any, ...] | None:
        path = store.file(index, Build.FILE)
        if not path.is_file():
            return None
        build = Build.read(path)
        project = build.project
        if (
            build.environment is None
            or build.command is not None
            or (project is not None and project.installed and (project.key is None or project.generated))
        ):
            return None
        return (build.environment.key, project.key if project else None, tuple(build.pytest_args))

    mine = identity(other)
    return mine is not None and mine == identity(one)


def _tracing_differs(before: dict[str, Any], now: dict[str, Any]) -> list[str]:
    theirs, ours = apart_from_commit(before), apart_from_commit({**now, "histeg": __version__})
    return [f"its traces would differ in {key}" for key in sorted(theirs.keys() | ours.keys()) if theirs.get(key) != ours.get(key)]


def _unheard(version_dir: Path, runs: Runs, changed: set[str]) -> list[str]:
    """Why the predecessor's runs do not show that no test read a changed file: one reason per doubt."""
    reasons: list[str] = []
    for run in runs.runs:
        files = [version_dir / path for path in run.traces]
        pids: dict[int, int] = {}
        parents: list[tuple[Path, int, int]] = []
        for path in files:
            seen = read_seen_files(path)
            if seen is None:
                reasons.append(f"{path.name} has no record of the files it read")
                continue
            reasons += [f"{path.name} {why}" for why in seen["blind"]]
            reasons += [f"{path.name} read {name}" for name in sorted(changed & set(seen["opened"]))]
            try:
                meta = TraceFile(path).meta
            except HistegError as exc:
                reasons.append(str(exc))
                continue
            pid, ppid = meta.get("pid"), meta.get("ppid")
            if isinstance(pid, int) and isinstance(ppid, int):
                pids[ppid] = pids.get(ppid, 0) + 1
                parents.append((path, pid, seen["children"]))
        for path, pid, children in parents:
            if pids.get(pid, 0) < children:
                reasons.append(f"{path.name} started {children} process(es), {pids.get(pid, 0)} of them traced")
    return reasons


def take(store: OutputStore, index: int, reuse: Reuse, publish: Callable[[OutputStore, int, Path, Runs], None]) -> Runs:
    """The predecessor's runs as this version's: trace files hard-linked (copied across file systems), the rest
    copied, published as a traced run is (``publish``)."""
    assert reuse.runs is not None and reuse.against is not None
    source = store.traces(reuse.against)
    scratch = Path(tempfile.mkdtemp(prefix=f"{TRACES_SCRATCH}new-", dir=store.version_dir(index)))
    try:
        for run in {Path(path).parts[1] for path in reuse.runs.trace_files} | {Path(run.log).parts[1] for run in reuse.runs.runs}:
            shutil.copytree(source / run, scratch / run, symlinks=True, copy_function=_link_trace)
        for extra in source.iterdir():
            if extra.is_file():
                shutil.copy2(extra, scratch / extra.name)
        record = Runs(
            **{**{name: getattr(reuse.runs, name) for name in Runs.__struct_fields__}, "identifier": store.version(index).identifier}
        )
        record.reused_from = store.version(reuse.against).identifier
        publish(store, index, scratch, record)
    finally:
        if scratch.exists():
            force_rmtree(scratch)
    return record


def _link_trace(source: str, target: str) -> None:
    """A trace is never written once sealed: both versions may share its bytes. Anything else is copied."""
    if source.endswith(".htrace"):
        try:
            os.link(source, target)
            return
        except OSError:
            pass
    shutil.copy2(source, target)
