"""Cost of comparing two traced versions (``histeg compute``) next to one traced test-suite run.

    python bench/compare_bench.py REPO [--python PROJECT_PYTHON] [--pytest-args "..."] [--mutate FILE:LINE]
                                       [--histeg HISTEG] [--rounds 1] [--sources DIR] [--tests DIR]
                                       [--memory-limit MIB] [--work DIR] [--keep] [--json FILE]
    python bench/compare_bench.py --synthetic 200 [--synthetic-scale 4] [--histeg HISTEG] ...

The version pair: REPO is cloned into a scratch directory (REPO itself is only
read) and one seeded commit goes on top of its HEAD: a small mutant (flipped
comparison, integer constant plus one, ``and``/``or`` swapped, negated
condition; the edit helpers of ``mutant_edits.py``) on a line the test suite
executes, in a function under the sources directory. The line is chosen
automatically (executed lines counted by ``mutant_edits.collect_lines``
under ``--python``; the mutant must let the untraced suite finish with exit 0
or 1) unless ``--mutate FILE:LINE`` names it. With ``--synthetic N`` the pair
is instead the two commits of a generated project (``synthetic_suite.py``)
with N tests; ``--synthetic-scale S`` measures N and S*N tests and prints the
peak-memory ratio (goal: at most 1.5x for 4x the tests).

The project's tests run with the project's own interpreter (``--python``, its
virtual environment): histeg traces the pair with ``histeg analyze --no-tests
--run "PYTHON -m pytest -q -p no:cacheprovider PYTEST_ARGS"`` (the default two
runs per version; ``--pytest-args`` defaults to the tests directory). Then, per round (``--rounds``, medians reported):

* ``histeg compute`` alone, with the same options, on the already-traced output
  directory (extraction, static facts and traces are reused; the bench checks
  that no version was traced again), so what it costs is the comparison of the
  pair, the mapping and the ranking. Measured: wall time; CPU time (user +
  system) of the process and all its descendants (``os.wait4``); peak memory of
  the main process (its own ``RUSAGE_SELF`` max RSS, read at exit by a
  wrapper that runs the ``histeg`` console script in-process with ``runpy``)
  and of its largest descendant (``VmHWM`` sampled from ``/proc`` every
  50 ms; a process must be seen twice to count, because a child between
  ``vfork`` and ``exec`` still shows the parent's memory; the kernel's
  ``RUSAGE_CHILDREN`` max RSS keeps that flaw, as ``exec`` records the memory
  it leaves, the parent's for a ``vfork`` child such as Python's subprocesses,
  so it is only kept in the JSON output). A compute that fails (killed by the
  OOM killer, or ``MemoryError`` under ``--memory-limit``, which caps its
  address space so that a shared machine is spared the OOM killer) is reported
  as FAILED with its figures up to the failure.
* one traced suite run: ``histeg exec`` on a copy of the newer version's
  directory (version.json and snapshot; exec runs the command in a fresh copy
  of the snapshot) around the same pytest command; wall and CPU of the tree.
  A histeg that seals its traces after a run is given ``--no-seal`` and the
  sealing is timed apart (printed under the table): the traced run then means
  the same for every histeg version measured.

One row per version pair: compare wall and CPU, peak MiB (main / largest
child), traced-run wall and CPU, and compare / traced ratios of wall and CPU.

``--histeg`` picks the histeg to measure (default: the ``histeg`` next to the
running interpreter), so one checkout of this bench measures any version.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mutant_edits import (  # noqa: E402
    VARIED, Edit, Execution, FunctionSite, apply_edit, candidate_edits, executed_lines, functions_in,
)
from real_repos import clone, git, scratch_directory, suite_environment  # noqa: E402
from synthetic_suite import build_synthetic_repository  # noqa: E402

PYTEST_FLAGS = "-q -p no:cacheprovider"
"""What histeg's own pytest command passes; the traced command passes it too."""
BRANCH = "compare-bench"
SAMPLE_SECONDS = 0.05
MUTANT_TRIALS = 8
MIB = 1024.0
LABEL_CHARACTERS = 60
WRAPPER = r"""
import atexit, json, os, resource, runpy, sys
report, script = sys.argv[1], sys.argv[2]
def _report():
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(report, "w") as handle:
        json.dump({"maxrssKiB": own.ru_maxrss, "childrenMaxrssKiB": kids.ru_maxrss}, handle)
atexit.register(_report)
sys.argv = sys.argv[2:]
sys.path[0] = os.path.dirname(os.path.abspath(script))
runpy.run_path(script, run_name="__main__")
"""
"""Runs a Python console script in this process and writes its own and its children's max RSS at exit."""


# ---------------------------------------------------------------- measured processes

def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found += [int(part) for part in handle.read().split()]
    except OSError:
        pass
    return found


def _descendants(pid: int) -> Iterator[int]:
    stack = _children(pid)
    while stack:
        child = stack.pop()
        yield child
        stack += _children(child)


def _high_water_kib(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


class DescendantPeaks:
    """Samples the peak RSS (VmHWM) of a process's descendants from /proc while it runs."""

    def __init__(self, pid: int, interval: float = SAMPLE_SECONDS) -> None:
        self.pid, self.interval = pid, interval
        self.sightings: dict[int, int] = {}
        self.peaks: dict[int, int] = {}
        self.main_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> DescendantPeaks:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.main_kib = max(self.main_kib, _high_water_kib(self.pid) or 0)
            for pid in _descendants(self.pid):
                self.sightings[pid] = self.sightings.get(pid, 0) + 1
                peak = _high_water_kib(pid)
                if peak is not None and self.sightings[pid] > 1:  # past exec: not the parent's memory any more
                    self.peaks[pid] = max(self.peaks.get(pid, 0), peak)

    @property
    def largest_kib(self) -> int:
        return max(self.peaks.values(), default=0)


@dataclass
class Measured:
    code: int
    wall: float
    cpu: float
    """User + system seconds of the process and every descendant it waited for."""
    tree_maxrss_kib: int
    """The kernel's max RSS of the whole tree (os.wait4)."""
    main_kib: int | None = None
    """The main process's own peak (wrapper's RUSAGE_SELF, else the last VmHWM sample)."""
    child_kib: int = 0
    """The largest descendant's sampled peak."""
    children_rusage_kib: int | None = None
    """RUSAGE_CHILDREN max RSS as the kernel has it (includes the parent's peak at each exec)."""
    stdout: str = ""
    stderr: str = ""


def _address_space_limit(mib: int | None) -> Callable[[], None] | None:
    """A ``preexec_fn`` capping the child's address space (its children inherit the cap)."""
    if not mib:
        return None
    limit = mib * 1024 * 1024
    return lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def measure(argv: Sequence[str], cwd: Path, logs: Path, limit_mib: int | None = None) -> Measured:
    """Run ``argv`` to its end; wall, CPU and peak memory of the process tree; output kept in ``logs``.*"""
    out, err = logs.with_suffix(".stdout"), logs.with_suffix(".stderr")
    started = time.perf_counter()
    with open(out, "wb") as stdout, open(err, "wb") as stderr:
        child = subprocess.Popen(list(argv), cwd=cwd, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL,
                                 preexec_fn=_address_space_limit(limit_mib))
        with DescendantPeaks(child.pid) as peaks:
            _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    return Measured(child.returncode, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, peaks.main_kib or None,
                    peaks.largest_kib, None, out.read_text(errors="replace"), err.read_text(errors="replace"))


def script_interpreter(script: Path) -> str | None:
    """The Python interpreter of a console script's ``#!`` line (None: not a plain Python script)."""
    try:
        with open(script, "rb") as handle:
            first = handle.readline().decode(errors="replace").strip()
    except OSError:
        return None
    words = first[2:].split() if first.startswith("#!") else []
    return words[0] if len(words) == 1 and Path(words[0]).name.startswith("python") else None


def measure_histeg(histeg: Path, args: Sequence[str], cwd: Path, logs: Path, limit_mib: int | None = None) -> Measured:
    """``histeg ARGS`` measured; the main process's own peak comes from the in-process wrapper when possible
    (when the process is killed, from the last VmHWM sample)."""
    interpreter = script_interpreter(histeg)
    report = logs.with_suffix(".rusage.json")
    report.unlink(missing_ok=True)
    argv = [interpreter, "-c", WRAPPER, str(report), str(histeg), *args] if interpreter else [str(histeg), *args]
    result = measure(argv, cwd, logs, limit_mib)
    if report.is_file():
        own = json.loads(report.read_text())
        result.main_kib, result.children_rusage_kib = own["maxrssKiB"], own["childrenMaxrssKiB"]
    return result


SEAL_LATER = ["--no-seal"]
"""``histeg exec`` options that leave the traces as written, so that sealing is timed on its own."""


def seals(histeg: Path, cwd: Path) -> bool:
    """Whether this histeg seals traces after a run (then the traced run and sealing are timed apart)."""
    result = subprocess.run([str(histeg), "exec", "--help"], cwd=cwd, capture_output=True, text=True)
    return "--no-seal" in result.stdout


def measure_seal(histeg: Path, traces: Path, cwd: Path, logs: Path) -> Measured:
    """Sealing every trace file of a directory, as a pipeline run does after each traced run."""
    code = "import sys, pathlib\nfrom histeg.traces.seal import seal\nfor p in pathlib.Path(sys.argv[1]).glob('*.htrace'): seal(p)"
    return measure([script_interpreter(histeg) or sys.executable, "-c", code, str(traces)], cwd, logs)


def last_lines(text: str, count: int = 5) -> str:
    return "\n".join(text.strip().splitlines()[-count:])


# ---------------------------------------------------------------- the project and its seeded commit

@dataclass
class Project:
    label: str
    clone: Path
    python: str
    pytest_args: list[str]
    sources: list[str]
    tests: list[str]
    histeg_layout: list[str]
    """--sources / --tests given to histeg (empty: histeg's defaults, which the bench's own match)."""
    base: str = ""
    mutant: str = ""
    mutation: str = ""
    untraced_wall: float | None = None

    def pytest_command(self) -> list[str]:
        return [self.python, "-m", "pytest", *shlex.split(PYTEST_FLAGS), *self.pytest_args]


def default_layout(root: Path) -> tuple[list[str], list[str]]:
    """histeg's defaults: sources src/ if present, else the root; tests tests/ or test/."""
    sources = ["src"] if (root / "src").is_dir() else ["."]
    tests = [name for name in ("tests", "test") if (root / name).is_dir()][:1]
    return sources, tests


def plain_suite(project: Project, timeout: float) -> tuple[int | None, float, str]:
    """Exit code (None: timed out), wall time and last line of the untraced suite in the clone."""
    started = time.perf_counter()
    try:
        result = subprocess.run(project.pytest_command(), cwd=project.clone, env=suite_environment(project.clone, project.sources),
                                capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return None, time.perf_counter() - started, "timed out"
    return result.returncode, time.perf_counter() - started, last_lines(result.stdout, 1)


def executed_lines_with(project: Project, timeout: float) -> Execution:
    """Line counts per function, from the project's interpreter."""
    return executed_lines(project.clone, project.sources, project.pytest_args, timeout, project.python)


def source_files(project: Project) -> list[str]:
    """Python files under the sources directories, tests directories left out (POSIX, relative)."""
    tests = [project.clone / test for test in project.tests]
    files = {path for source in project.sources for path in (project.clone / source).rglob("*.py")
             if not any(path.is_relative_to(test) for test in tests) and ".git" not in path.parts}
    return sorted(path.relative_to(project.clone).as_posix() for path in files)


def _while_lines(site: FunctionSite) -> set[int]:
    """Lines of ``while`` conditions: a mutant there may loop for ever."""
    return {line for node in ast.walk(site.node) if isinstance(node, ast.While)
            for line in range(node.test.lineno, (node.test.end_lineno or node.test.lineno) + 1)}


def covered_edits(project: Project, executed: Execution) -> Iterator[tuple[FunctionSite, Edit]]:
    """Edits on executed lines of executed functions, starting from the middle of the sources."""
    sites = [s for path in source_files(project) for s in functions_in(project.clone, path, project.sources)
             if executed.lines.get(s.identifier)]
    middle = len(sites) // 2
    for site in sites[middle:] + sites[:middle]:
        lines, loops = executed.lines[site.identifier], _while_lines(site)
        for operator in VARIED:
            for edit in candidate_edits(site.node, operator):
                if str(edit.start[0]) in lines and edit.start[0] not in loops:
                    yield site, edit
                    break


def edits_at(project: Project, path: str, line: int) -> Iterator[tuple[FunctionSite, Edit]]:
    """``--mutate FILE:LINE``: edits starting on that line of the innermost function around it."""
    around = [s for s in functions_in(project.clone, path, project.sources)
              if s.node.lineno <= line <= (s.node.end_lineno or s.node.lineno)]
    if not around:
        raise SystemExit(f"no function around {path}:{line}")
    site = max(around, key=lambda s: s.node.lineno)
    for operator in VARIED:
        for edit in candidate_edits(site.node, operator):
            if edit.start[0] == line:
                yield site, edit


def try_mutant(project: Project, site: FunctionSite, edit: Edit, timeout: float) -> bool:
    """Apply the edit when the untraced suite still finishes (exit 0 or 1) with it; otherwise restore the file."""
    path = project.clone / site.path
    original = path.read_bytes()
    mutated = apply_edit(original, edit)
    try:
        ast.parse(mutated)
    except SyntaxError:
        return False
    path.write_bytes(mutated)
    code, seconds, last = plain_suite(project, timeout)
    print(f"  trying {site.identifier}: {edit.description}: suite exit {code} in {seconds:.1f}s ({last})", flush=True)
    if code in (0, 1):
        return True
    path.write_bytes(original)
    return False


def seed_mutant(project: Project, mutate: str | None) -> None:
    """Commit one mutant on top of the clone's HEAD, on branch ``BRANCH``."""
    project.base = git(project.clone, "rev-parse", "HEAD")
    code, seconds, last = plain_suite(project, timeout=3600)
    project.untraced_wall = seconds
    print(f"{project.label}: untraced suite at {project.base[:12]}: exit {code} in {seconds:.1f}s ({last})", flush=True)
    timeout = max(60.0, 3 * seconds + 30)
    if mutate:
        path, _, line = mutate.rpartition(":")
        candidates = edits_at(project, path, int(line))
    else:
        executed = executed_lines_with(project, timeout=max(600.0, 20 * seconds))
        if executed.exit_code not in (0, 1):
            raise SystemExit(f"{project.label}: the line counter could not run the suite (exit {executed.exit_code})")
        candidates = covered_edits(project, executed)
    for trial, (site, edit) in enumerate(candidates):
        if trial == MUTANT_TRIALS:
            break
        if try_mutant(project, site, edit, timeout):
            project.mutation = f"{site.identifier}: {edit.description}"
            git(project.clone, "checkout", "-q", "-b", BRANCH)
            git(project.clone, "commit", "-q", "-m", f"seeded mutant: {project.mutation}", "--", site.path, clock=1)
            project.mutant = git(project.clone, "rev-parse", "HEAD")
            return
    raise SystemExit(f"{project.label}: no usable mutant" + (f" at {mutate}" if mutate else ""))


# ---------------------------------------------------------------- histeg on the pair

def _label(command: str) -> str:
    """The label histeg gives a ``--run`` command (histeg/runs/commands.py)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", f"run-{command}").strip("._")[:LABEL_CHARACTERS]


def run_option(project: Project) -> str:
    """The ``--run`` text of the project's pytest command, shaped so that compute reuses analyze's traces.

    histeg cuts a label to 60 characters after stripping ``._`` from its ends and strips them again when it
    runs the command, so a label cut just after a ``_`` is stored differently from the one compute expects
    and the traces are never reused (histeg a77e8d8). A shell prefix that changes nothing shifts the cut.
    """
    command = " ".join(shlex.quote(part) for part in project.pytest_command())
    for prefix in ("", "exec ", "command ", "exec command "):
        if _label(prefix + command) == _label(prefix + command).strip("._"):
            return prefix + command
    return command


def pipeline_args(project: Project, out: Path) -> list[str]:
    """The options analyze and compute share (same options: compute reuses analyze's traces)."""
    command = run_option(project)
    return ["--repo", str(project.clone), "--branch", BRANCH, "--versions", project.base, project.mutant, "--out", str(out),
            "--no-tests", "--run", command, *project.histeg_layout, "--json"]


def summary_of(result: Measured) -> dict[str, Any]:
    try:
        return json.loads(result.stdout) if result.stdout.strip() else {}
    except json.JSONDecodeError:
        return {}


def failure(result: Measured) -> str:
    """Why a histeg run did not succeed: its failed versions, a signal, or its last messages."""
    if result.code < 0:
        return f"killed by signal {-result.code}"
    failed = summary_of(result).get("failedVersions")
    return f"exit {result.code}: " + (json.dumps(failed) if failed else last_lines(result.stderr, 2))


def version_index(out: Path, sha: str) -> int:
    for path in out.glob("*/version.json"):
        if json.loads(path.read_text()).get("identifier") == sha:
            return int(path.parent.name)
    raise SystemExit(f"no version directory for {sha} in {out}")


def retraced(summary: dict[str, Any]) -> list[int]:
    """Versions whose traces compute ran again instead of reusing analyze's."""
    return [item.get("index") for item in summary.get("steps", {}).get("traces", []) if not item.get("reused", True)]


def exec_copy(out: Path, index: int, scratch: Path) -> Path:
    """A version directory of its own (version.json and snapshot) for ``histeg exec``, outside histeg's output."""
    target = scratch / "exec-out" / str(index)
    shutil.rmtree(target.parent, ignore_errors=True)
    target.mkdir(parents=True)
    shutil.copy2(out / str(index) / "version.json", target / "version.json")
    shutil.copytree(out / str(index) / "snapshot", target / "snapshot", symlinks=True)
    return target


@dataclass
class PairFigures:
    label: str
    base: str
    mutant: str
    mutation: str
    rounds: int
    analyze_wall: float
    untraced_wall: float | None
    compare_wall: list[float] = field(default_factory=list)
    compare_cpu: list[float] = field(default_factory=list)
    main_mib: list[float] = field(default_factory=list)
    child_mib: list[float] = field(default_factory=list)
    children_rusage_mib: list[float | None] = field(default_factory=list)
    tree_maxrss_mib: list[float] = field(default_factory=list)
    traced_wall: list[float] = field(default_factory=list)
    traced_cpu: list[float] = field(default_factory=list)
    traced_code: list[int] = field(default_factory=list)
    seal_wall: list[float] = field(default_factory=list)
    """Sealing the traced run's traces (histeg versions that seal): after the run, in histeg's process."""
    seal_cpu: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    """Rounds whose compute did not succeed (killed, out of memory): their time and memory are up to the failure."""
    targets: int | None = None
    top_target: str | None = None
    mutant_rank: int | None = None

    def median(self, name: str) -> float:
        values = [v for v in getattr(self, name) if v is not None]
        return statistics.median(values) if values else float("nan")

    def peak_mib(self) -> float:
        """The highest peak of any process of compute (main or child), worst round."""
        return max([*self.main_mib, *self.child_mib], default=float("nan"))


def record_compute(figures: PairFigures, result: Measured) -> None:
    figures.compare_wall.append(result.wall)
    figures.compare_cpu.append(result.cpu)
    figures.main_mib.append((result.main_kib or result.tree_maxrss_kib) / MIB)
    figures.child_mib.append(result.child_kib / MIB)
    figures.children_rusage_mib.append(None if result.children_rusage_kib is None else result.children_rusage_kib / MIB)
    figures.tree_maxrss_mib.append(result.tree_maxrss_kib / MIB)


def read_targets(figures: PairFigures, out: Path, index: int, function: str) -> None:
    path = out / str(index) / "testingTargets.json"
    if not path.is_file():
        return
    targets = json.loads(path.read_text()).get("targets", [])
    figures.targets = len(targets)
    figures.top_target = targets[0].get("identifier") if targets else None
    figures.mutant_rank = next((t.get("rank") for t in targets if t.get("identifier") == function), None)


def measure_pair(project: Project, histeg: Path, rounds: int, scratch: Path, limit_mib: int | None) -> PairFigures:
    """Trace both versions, then per round time compute alone and one traced suite run."""
    out, logs = scratch / "out", scratch / "logs"
    logs.mkdir(exist_ok=True)
    analyzed = measure_histeg(histeg, ["analyze", *pipeline_args(project, out)], scratch, logs / "analyze")
    if analyzed.code != 0:
        raise SystemExit(f"{project.label}: histeg analyze failed, {failure(analyzed)}")
    print(f"{project.label}: histeg analyze (both versions traced) in {analyzed.wall:.1f}s", flush=True)
    index = version_index(out, project.mutant)
    figures = PairFigures(project.label, project.base, project.mutant, project.mutation, rounds, analyzed.wall, project.untraced_wall)
    copy = exec_copy(out, index, scratch)
    sealing = seals(histeg, scratch)
    for number in range(1, rounds + 1):
        computed = measure_histeg(histeg, ["compute", *pipeline_args(project, out)], scratch, logs / f"compute-{number}", limit_mib)
        if computed.code == 0 and retraced(summary_of(computed)):
            raise SystemExit(f"histeg compute traced versions {retraced(summary_of(computed))} again instead of reusing analyze's")
        record_compute(figures, computed)
        if computed.code != 0:
            figures.failures.append(f"round {number}: compute {failure(computed)}")
        traced = measure_histeg(histeg, ["exec", *SEAL_LATER, str(copy), "--", *project.pytest_command()] if sealing else
                                ["exec", str(copy), "--", *project.pytest_command()], scratch, logs / f"exec-{number}")
        figures.traced_wall.append(traced.wall)
        figures.traced_cpu.append(traced.cpu)
        figures.traced_code.append(traced.code)
        if sealing:
            sealed = measure_seal(histeg, copy / "traces", scratch, logs / f"seal-{number}")
            figures.seal_wall.append(sealed.wall)
            figures.seal_cpu.append(sealed.cpu)
        shutil.rmtree(copy / "traces", ignore_errors=True)
        print(f"  round {number}: compute {computed.wall:.1f}s wall, {computed.cpu:.1f}s cpu, main {figures.main_mib[-1]:.0f} MiB, "
              f"child {figures.child_mib[-1]:.0f} MiB; traced run {traced.wall:.1f}s wall, {traced.cpu:.1f}s cpu "
              f"(exit {traced.code})", flush=True)
    read_targets(figures, out, index, project.mutation.partition(": ")[0])
    return figures


# ---------------------------------------------------------------- the two kinds of pair

def real_pair(args: argparse.Namespace, histeg: Path, scratch: Path) -> PairFigures:
    repo = Path(args.repo).resolve()
    clone_dir = clone(str(repo), scratch / "clone")
    git(clone_dir, "checkout", "-q", "--detach", "HEAD")
    sources, tests = default_layout(clone_dir)
    layout = [*(f"--sources={s}" for s in args.sources or []), *(f"--tests={t}" for t in args.tests or [])]
    project = Project(repo.name, clone_dir, args.python, shlex.split(args.pytest_args or " ".join(tests)),
                      args.sources or sources, args.tests or tests, layout)
    seed_mutant(project, args.mutate)
    print(f"{project.label}: seeded {project.mutant[:12]} on {project.base[:12]}: {project.mutation}", flush=True)
    return measure_pair(project, histeg, args.rounds, scratch, args.memory_limit)


def synthetic_pair(tests: int, args: argparse.Namespace, histeg: Path, scratch: Path) -> PairFigures:
    repo = scratch / "synthetic"
    base, mutant, change = build_synthetic_repository(repo, tests)
    git(repo, "branch", "-q", BRANCH)
    project = Project(f"synthetic-{tests}", repo, args.python, shlex.split(args.pytest_args or "tests"), ["src"], ["tests"], [],
                      base, mutant, change)
    project.untraced_wall = plain_suite(project, timeout=3600)[1]
    print(f"{project.label}: {base[:12]} -> {mutant[:12]} ({change}); untraced suite {project.untraced_wall:.1f}s", flush=True)
    return measure_pair(project, histeg, args.rounds, scratch, args.memory_limit)


# ---------------------------------------------------------------- report

def ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}s"


def print_table(pairs: Sequence[PairFigures]) -> None:
    header = (f"{'pair':22s} {'cmp wall s':>10s} {'cmp CPU s':>10s} {'peak MiB main/child':>20s} "
              f"{'traced wall s':>13s} {'traced CPU s':>12s} {'cmp/traced wall':>15s} {'cmp/traced CPU':>14s}")
    print()
    print(header)
    print("-" * len(header))
    for p in pairs:
        peaks = f"{max(p.main_mib):.0f} / {max(p.child_mib):.0f}"
        label = p.label + (" (FAILED)" if p.failures else "")
        print(f"{label:22s} {p.median('compare_wall'):10.1f} {p.median('compare_cpu'):10.1f} {peaks:>20s} "
              f"{p.median('traced_wall'):13.1f} {p.median('traced_cpu'):12.1f} "
              f"{ratio(p.median('compare_wall'), p.median('traced_wall')):14.2f}x "
              f"{ratio(p.median('compare_cpu'), p.median('traced_cpu')):13.2f}x")
    for p in pairs:
        if p.seal_wall:
            print(f"{p.label}: sealing the traced run's traces {p.median('seal_wall'):.1f}s wall, {p.median('seal_cpu'):.1f}s cpu "
                  f"(not in the traced run above); compare / (traced run + sealing) wall "
                  f"{ratio(p.median('compare_wall'), p.median('traced_wall') + p.median('seal_wall')):.2f}x")
        print(f"{p.label}: {p.mutation}; {p.targets} target(s), top {p.top_target}, seeded function's rank {p.mutant_rank}; "
              f"analyze {p.analyze_wall:.0f}s; untraced suite {_seconds(p.untraced_wall)}; "
              f"traced run exit {sorted(set(p.traced_code))}; RUSAGE_CHILDREN max RSS {p.children_rusage_mib} MiB")
        for note in p.failures:
            print(f"  {p.label}: {note}; figures up to the failure")


def print_scaling(small: PairFigures, large: PairFigures) -> None:
    main = ratio(max(large.main_mib), max(small.main_mib))
    overall = ratio(large.peak_mib(), small.peak_mib())
    print(f"\npeak memory {large.label} / {small.label}: main process {main:.2f}x, any process {overall:.2f}x "
          f"({small.peak_mib():.0f} -> {large.peak_mib():.0f} MiB); goal <= 1.5x")


# ---------------------------------------------------------------- command line

def default_histeg() -> Path:
    return Path(sys.executable).parent / "histeg"


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", nargs="?", help="repository path (only read; cloned into the scratch directory)")
    parser.add_argument("--python", default=sys.executable, help="the project's interpreter (its virtual environment)")
    parser.add_argument("--pytest-args", default=None, help="pytest arguments (default: the tests directory)")
    parser.add_argument("--mutate", metavar="FILE:LINE", default=None, help="mutate this line (FILE relative to the repository)")
    parser.add_argument("--histeg", type=Path, default=default_histeg(), help="the histeg executable to measure")
    parser.add_argument("--rounds", type=int, default=1, help="compute and traced runs per pair (medians reported)")
    parser.add_argument("--sources", action="append", help="sources directory (repeatable; default: histeg's)")
    parser.add_argument("--tests", action="append", help="tests directory (repeatable; default: histeg's)")
    parser.add_argument("--synthetic", type=int, default=None, metavar="N", help="a generated project with N tests instead of REPO")
    parser.add_argument("--synthetic-scale", type=int, default=None, metavar="S", help="also measure S*N tests; print the memory ratio")
    parser.add_argument("--memory-limit", type=int, default=None, metavar="MIB",
                        help="cap compute's address space (RLIMIT_AS): it fails with MemoryError instead of meeting the OOM killer")
    parser.add_argument("--work", type=Path, default=None, help="where the scratch directory goes (default: the system's)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory for inspection")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    if (args.repo is None) == (args.synthetic is None):
        parser.error("give either REPO or --synthetic N")
    if args.synthetic_scale and args.synthetic is None:
        parser.error("--synthetic-scale needs --synthetic N")
    if not args.histeg.is_file():
        parser.error(f"no histeg executable at {args.histeg}")
    return args


def main() -> None:
    args = parse_arguments()
    histeg = args.histeg.absolute()
    print(f"histeg: {histeg}; project python: {args.python}", flush=True)
    pairs: list[PairFigures] = []
    if args.synthetic is None:
        with scratch_directory("histeg-compare-", args.work, args.keep, print) as scratch:
            pairs.append(real_pair(args, histeg, scratch))
    else:
        for tests in [args.synthetic, *([args.synthetic * args.synthetic_scale] if args.synthetic_scale else [])]:
            with scratch_directory(f"histeg-compare-{tests}-", args.work, args.keep, print) as scratch:
                pairs.append(synthetic_pair(tests, args, histeg, scratch))
    print_table(pairs)
    if len(pairs) == 2:
        print_scaling(*pairs)
    if args.json:
        args.json.write_text(json.dumps({"histeg": str(histeg), "pairs": [asdict(p) for p in pairs]}, indent=1))


if __name__ == "__main__":
    main()
