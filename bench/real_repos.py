"""Processes and scratch directories shared by the benchmarks on real repositories.

git with a fixed identity and date (seeded commits get the same SHAs on every
run), clones that leave the measured repository untouched, histeg's command
line in a child process, and the project's plain (untraced) test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def git(repo: Path, *args: str, clock: int = 0) -> str:
    """git with a fixed identity and date, so seeded commits get the same SHAs on every run."""
    date = f"2030-01-01T00:00:{clock % 60:02d}+00:00"
    env = {**os.environ, "GIT_AUTHOR_NAME": "Mutant Maker", "GIT_AUTHOR_EMAIL": "mutants@example.org",
           "GIT_COMMITTER_NAME": "Mutant Maker", "GIT_COMMITTER_EMAIL": "mutants@example.org",
           "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    result = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {repo}: {result.stderr.strip()}")
    return result.stdout.strip()


def clone(repo: str, destination: Path) -> Path:
    """A normal clone (work tree, local branches of every remote branch untouched) of ``repo``."""
    subprocess.run(["git", "clone", "-q", repo, str(destination)], check=True, capture_output=True)
    return destination


@dataclass
class HistegRun:
    code: int
    seconds: float
    summary: dict[str, Any] | None
    stderr: str


def run_histeg(*args: str, timeout: float = 3600) -> HistegRun:
    """The real command line in a child process, with ``--json``; messages stay on stderr.

    It runs in a process group of its own: at ``timeout`` the whole group (histeg's workers, the traced
    suite) is interrupted, then killed, and ``subprocess.TimeoutExpired`` is raised.
    """
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "histeg", *args, "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, cwd=ROOT, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        end_group(process)
        raise
    seconds = time.perf_counter() - started
    summary = json.loads(stdout) if stdout.strip() else None
    return HistegRun(process.returncode, seconds, summary, stderr)


def end_group(process: subprocess.Popen[str], grace: float = 30.0) -> None:
    """Interrupt a child's process group (histeg then ends what it started), and kill what is left after ``grace``."""
    for sig, wait in ((signal.SIGINT, grace), (signal.SIGKILL, None)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.communicate(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def suite_environment(root: Path, sources: Sequence[str]) -> dict[str, str]:
    """The project's sources first on PYTHONPATH, as histeg's traced runs have them."""
    paths = [str(root / source) for source in sources]
    existing = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {**os.environ, "PYTHONPATH": os.pathsep.join([*paths, *existing]), "PYTHONHASHSEED": "0",
            "PYTHONDONTWRITEBYTECODE": "1"}


def untraced_suite(root: Path, sources: Sequence[str], tests: Sequence[str], timeout: float = 600) -> tuple[int, float, str]:
    """Exit code, wall time and pytest's last line of the plain (untraced) test suite in ``root``."""
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests], cwd=root,
                            env=suite_environment(root, sources), capture_output=True, text=True, timeout=timeout, check=False)
    lines = result.stdout.strip().splitlines()
    return result.returncode, time.perf_counter() - started, lines[-1] if lines else ""


@contextmanager
def scratch_directory(prefix: str, work: Path | None, keep: bool, log: Any) -> Iterator[Path]:
    """A temporary directory under ``work`` (created when missing), removed at the end unless ``keep``."""
    if work is not None:
        Path(work).mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=prefix, dir=work))
    try:
        yield scratch
    finally:
        if keep:
            log(f"kept for inspection: {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    """The repository, its layout and where the scratch directory goes, shared by the real-project benchmarks."""
    parser.add_argument("repo", help="repository path or URL (only read)")
    parser.add_argument("--sources", action="append", help="sources directory (repeatable; default src)")
    parser.add_argument("--tests", action="append", help="tests directory (repeatable; default tests)")
    parser.add_argument("--work", type=Path, default=None, help="where the scratch directory goes (default: the system's)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory (clone, histeg's output) for inspection")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")


def add_harness_arguments(parser: argparse.ArgumentParser, python_help: str) -> None:
    """The options of the harnesses that seed commits in several projects and rank the truth."""
    parser.add_argument("repos", nargs="+", help="repository paths or URLs (only read: each is cloned)")
    parser.add_argument("--python", default=None, help=python_help)
    parser.add_argument("--histeg-arg", action="append", default=[], help="passed to histeg compute (repeatable), e.g. --histeg-arg=--repeat=2")
    parser.add_argument("--work", type=Path, default=None, help="where scratch directories go (default: the system's)")
    parser.add_argument("--keep", action="store_true", help="keep each scratch directory (clone, histeg's output)")
    parser.add_argument("--report", type=Path, default=None, help="also write every figure here as JSON")


def log_to_stderr(message: str) -> None:
    """Progress goes to stderr, so that stdout holds the figures alone."""
    print(message, file=sys.stderr, flush=True)


def each_project(repos: Sequence[str], measure: Callable[[str, str], Any]) -> Iterator[tuple[str, Any, str | None]]:
    """(name, figures, None) per repository, or (name, None, error): one project's failure must not cost the others."""
    for repo in repos:
        name = Path(repo.rstrip("/")).name
        try:
            figures = measure(name, repo)
        except Exception as exc:
            print(f"\n== {name}: not measured: {type(exc).__name__}: {exc}")
            yield name, None, str(exc)
            continue
        yield name, figures, None


def print_heading(title: str, header: str) -> None:
    """A project's title line, then a table's header underlined."""
    print()
    print(title)
    print(header)
    print("-" * len(header))


def rank_cells(rank: int | None, targets: int | None, failed: str | None) -> tuple[str, str]:
    """A row's rank and target count as printed: "-" for no rank or no count, "FAIL" for a version histeg could not finish."""
    return "-" if rank is None else str(rank), "FAIL" if failed else "-" if targets is None else str(targets)
