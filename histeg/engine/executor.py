"""Versions worked on at once (``-j N``, ``--scheduler ADDRESS``): a step's per-version work as Dask tasks.

The serial loop of ``histeg.pipeline`` stays the reference; this module only
moves its body into worker processes, one task per version, and hands back
what the loop would have collected. A task receives plain data (the run's
settings, the index) and rebuilds the rest in the worker,
so it runs the same on a ``LocalCluster`` of this machine as on a cluster
of several machines sharing the output folder. The coordinator keeps the
output folder's lock and writes every run-level file; a task writes only
its version's files, and two tasks that would write the same version's
files (a comparison re-runs entry points of both its versions) never run at
the same time. Traced runs stay subprocesses of the worker, recorded under
``OUT/.histeg/processes`` by the worker's pid: when the coordinator is
interrupted it closes its local cluster and ends what the workers left.
Dask is an optional dependency (the ``cluster`` extra), imported only here.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import signal
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from histeg.console import Console
from histeg.errors import HistegError
from histeg.processes.groups import end_orphans
from histeg.settings.model import Settings
from histeg.version import __version__

CONNECT_SECONDS = 10.0
"""How long connecting to a ``--scheduler`` may take before it is an error."""
INSTALL_HINT = "install histeg's 'cluster' extra: pip install 'histeg[cluster]'"


@dataclass(frozen=True)
class Outcome:
    """What the serial loop would have collected for one version: per step its summary (none when the step raised),
    the versions it failed and in which step, and the warnings it said, for the coordinator to say."""

    results: dict[str, list[dict[str, Any]]]
    failed: dict[int, str]
    failed_in: dict[int, str]
    warnings: list[str]


class KeptConsole(Console):
    """A worker's console: silent, its warnings kept for the coordinator (a worker has no user to talk to)."""

    def __init__(self) -> None:
        super().__init__(0)
        self.warnings: list[str] = []

    def warn(self, message: str) -> None:
        self.warnings.append(message)


@dataclass(frozen=True)
class WorkerJob:
    """The run as a task carries it: the settings as plain data (``Settings.to_state``), with the output and
    environments folders made absolute where the run started, since a worker may have another working directory
    and environment."""

    settings: dict[str, Any]
    cwd: str
    failed: dict[int, str] = field(default_factory=dict)
    """Versions failed before the step started: a comparison with one of them is not made."""

    @classmethod
    def of(cls, settings: Settings, failed: dict[int, str]) -> WorkerJob:
        # a comparison's worker pool would be a child of a daemonic process, which Python forbids; the
        # versions run side by side instead, and the results do not depend on the number of workers
        settings = replace(settings, out=settings.output().absolute(), environments=settings.environments_root(), compare_jobs=1)
        return cls(settings=settings.to_state(), cwd=os.getcwd(), failed=dict(failed))

    def run_settings(self) -> Settings:
        with contextlib.suppress(OSError):  # relative paths the user gave mean what they meant where the run started
            if os.getcwd() != self.cwd:
                os.chdir(self.cwd)
        return Settings.from_state(self.settings)


Task = Callable[[int], Outcome]
"""One version's work; a picklable callable (a module-level function with its arguments bound)."""


@dataclass(frozen=True)
class Work:
    """One task to run: stage ``stage`` (a run of steps) of version ``index``."""

    stage: int
    index: int
    touches: frozenset[int]
    """The versions whose files it writes: two works that share one never run at once."""
    after: frozenset[tuple[int, int]] = frozenset()
    """The (stage, index) works that must have finished first: a comparison waits for the traces of its two versions,
    not for every version's."""

    @property
    def key(self) -> tuple[int, int]:
        return (self.stage, self.index)


class DaskExecutor:
    """Submits one task per version and yields each version's outcome as it finishes."""

    def __init__(self, client: Any, cap: int | None) -> None:
        self.client = client
        self.cap = cap
        """How many tasks are submitted at once (``None``: as many as may run; the scheduler queues them)."""
        self._submitted = 0

    def map(
        self, name: str, works: Sequence[Work], task_for: Callable[[Work], Task | None]
    ) -> Iterator[tuple[Work, Outcome | BaseException | None]]:
        """Every work, each once what it waits for has finished and no running work touches a version it touches; the
        earliest waiting work in ``works`` goes first. ``task_for`` makes a work's task as it is submitted, from what
        the caller knows by then (None: it is not run, counts as finished and is yielded with None). Yields ``(work, outcome
        or the error its task raised)`` as they finish; whatever still runs when the caller stops is cancelled."""
        from distributed import wait

        waiting = list(works)
        running: dict[Any, Work] = {}
        busy: set[int] = set()
        finished: set[tuple[int, int]] = set()

        def ready() -> Work | None:
            if self.cap is not None and len(running) >= self.cap:
                return None
            return next((work for work in waiting if work.after <= finished and not work.touches & busy), None)

        try:
            while waiting or running:
                while (work := ready()) is not None:
                    waiting.remove(work)
                    task = task_for(work)
                    if task is None:
                        finished.add(work.key)
                        yield work, None
                        continue
                    busy |= work.touches
                    self._submitted += 1
                    key = f"histeg-{name}-{work.stage}-{work.index}-{os.getpid()}-{self._submitted}"
                    running[self.client.submit(task, work.index, key=key, pure=False)] = work
                if not running:
                    if waiting:
                        raise RuntimeError(f"{len(waiting)} task(s) wait for work that is not among them")
                    break
                done, _ = wait(list(running), return_when="FIRST_COMPLETED")
                for future in sorted(done, key=lambda f: works.index(running[f])):
                    work = running.pop(future)
                    busy -= work.touches
                    finished.add(work.key)
                    try:
                        yield work, future.result()
                    except Exception as exc:  # noqa: BLE001 - the task's own error, or the worker that ran it died
                        yield work, exc
        finally:
            if running:
                self.client.cancel(list(running), force=True)


@contextlib.contextmanager
def _interrupts_ignored() -> Iterator[None]:
    """Workers started inside ignore SIGINT: Ctrl-C reaches the terminal's whole process group, and it is the
    coordinator that stops them, closing the cluster (their traced runs restore SIGINT for their own timeouts)."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


QUIET_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
}
"""A local cluster's housekeeping, slowed to what a run of whole versions needs. By default each worker samples its
threads' stacks every 10 ms (for a dashboard histeg does not show), checks its event loop every 20 ms and its memory
every 0.5 s: an idle cluster of two workers then burns about 17 % of a core, 0.7 % of a core with these."""


def _quiet_dask() -> None:
    for name in ("distributed", "tornado", "bokeh"):
        logging.getLogger(name).setLevel(logging.ERROR)


@contextlib.contextmanager
def executor_for(settings: Settings, out: Path, console: Console) -> Iterator[DaskExecutor | None]:
    """``None`` for ``-j 1`` without a scheduler (the serial loop); else a client of a local cluster of ``jobs``
    single-threaded worker processes, or of the scheduler at ``settings.scheduler``. On the way out the cluster is
    closed; when the run was interrupted, what the local workers' traced runs left is ended (their histeg is gone)."""
    if settings.jobs == 1 and settings.scheduler is None:
        yield None
        return
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        asked = f"--scheduler {settings.scheduler}" if settings.scheduler is not None else f"--jobs {settings.jobs}"
        raise HistegError(f"{asked} needs Dask: {INSTALL_HINT}") from None
    _quiet_dask()
    cluster = None
    if settings.scheduler is None:
        import dask

        with _interrupts_ignored(), dask.config.set(QUIET_CONFIG):
            cluster = LocalCluster(
                n_workers=settings.jobs,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=logging.ERROR,
                memory_limit=0,
            )
        client = Client(cluster)
        cap: int | None = settings.jobs
        console.detail(f"started a local Dask cluster of {settings.jobs} worker processes")
    else:
        try:
            client = Client(settings.scheduler, timeout=CONNECT_SECONDS)
        except (OSError, ValueError, TypeError) as exc:
            raise HistegError(f"cannot reach the Dask scheduler at {settings.scheduler}: {exc}") from None
        cap = settings.jobs if settings.given("jobs") else None
        try:
            _check_workers(client, out, settings.environments_root(), str(settings.scheduler))
        except BaseException:
            with contextlib.suppress(Exception):
                client.close()
            raise
        console.detail(f"connected to the Dask scheduler at {settings.scheduler} ({len(client.nthreads())} workers)")
    interrupted = True
    try:
        yield DaskExecutor(client, cap)
        interrupted = False
    finally:
        with contextlib.suppress(Exception):
            client.close()
        if cluster is not None:
            with contextlib.suppress(Exception):
                cluster.close()
            if interrupted:
                end_orphans(out)


def _check_workers(client: Any, out: Path, environments: Path, scheduler: str) -> None:
    """One line instead of a run that waits forever or fails every version: the scheduler has a worker, and every
    worker runs this histeg and sees the output and environments folders at the same paths (a shared file system)."""
    try:
        client.wait_for_workers(1, timeout=CONNECT_SECONDS)
    except (TimeoutError, OSError) as exc:
        raise HistegError(
            f"the Dask scheduler at {scheduler} has no worker (waited {CONNECT_SECONDS:g} s): start one with dask worker {scheduler}"
        ) from exc
    marker = out / ".histeg" / f"worker-probe-{os.getpid()}-{secrets.token_hex(4)}"
    nonce = secrets.token_hex(8)
    marker.parent.mkdir(parents=True, exist_ok=True)
    environments.mkdir(parents=True, exist_ok=True)  # made by the first build otherwise: a worker must see it all the same
    marker.write_text(nonce, encoding="utf-8")
    try:
        answers = client.run(worker_sees, str(marker), nonce, str(environments), __version__, on_error="return")
    finally:
        marker.unlink(missing_ok=True)
    for worker, answer in sorted(answers.items()):
        if isinstance(answer, BaseException):
            raise HistegError(
                f"worker {worker} of {scheduler} cannot run histeg's check: {type(answer).__name__}: {answer} (is histeg installed there?)"
            )
        if answer:
            raise HistegError(f"worker {worker} of {scheduler} {answer}")


def worker_sees(marker: str, nonce: str, environments: str, version: str) -> str:
    """Run on a worker: what it lacks, in a few words ('' when nothing)."""
    from histeg.version import __version__ as own

    if own != version:
        return f"runs histeg {own}, not {version}: every worker needs the same histeg"
    try:
        seen = Path(marker).read_text(encoding="utf-8")
    except OSError:
        seen = None
    if seen != nonce:
        return f"does not see the output folder at {Path(marker).parent.parent}: it must be on a file system every worker shares, at the same path"
    if not Path(environments).is_dir():
        return f"does not see the environments folder {environments}: it must be shared too (--environments)"
    return ""


__all__ = ["DaskExecutor", "KeptConsole", "Outcome", "WorkerJob", "executor_for"]
