"""What one new version costs, against the CPU of its untraced suite: a core mutant and a leaf mutant on a real project.

    python bench/version_cost_bench.py REPO [--python PY] [--rounds 3] [--work DIR] [--keep]

The repository is only read: a clone is made in a scratch folder. ``histeg
instrument`` of its last commit says the layout and makes the environment (as
``ground_truth`` does); the suite runs in it untraced ``--rounds`` times (the median CPU of the pytest process tree is the
reference; then, after a run that writes the bytecode a checkout keeps, ``--rounds`` times again with it in
place), then once under a line counter of its own (``mutant_edits``) to
find the function whose code runs most (the core: a lexer, a parser's step) and
one that runs least (a leaf). In each, single-operator edits are tried, untraced,
until one makes a test fail: a seeded mutant with a runtime meaning.

``histeg compute`` first computes the base version alone. Its output folder is
copied once per mutant; each mutant is committed on top of the base in a branch
of its own, and ``histeg compute`` over base..mutant then computes the new
version only (the base's results are reused). Printed per mutant: the CPU of
histeg's whole process tree for that version (build, statics, traced suite,
comparison, confirmation re-runs, ranking) as a ratio to the untraced suite's
CPU, the base's and the mutated version's own (goal <= 2.5x), how much of it histeg's own process took and how much the
processes it started, the wall seconds of each step as histeg recorded them, the
divergences, and the mutated function's rank among the testing targets.
Not part of ``make test``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ground_truth import Suite, probe  # noqa: E402
from mutant_edits import VARIED, Edit, FunctionSite, apply_edit, candidate_edits, executed_lines, functions_in  # noqa: E402
from real_repos import ROOT, clone, git, log_to_stderr, scratch_directory  # noqa: E402
from trace_bench import timed_plugins_off  # noqa: E402

MAX_TRIES = 12
"""Edits tried per kind of mutant before giving up (each costs one untraced run of the suite)."""


def tree_cpu(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[int, float, str]:
    """Exit code, CPU seconds of the whole process tree (``wait4``: the child and every descendant it waited for), stdout.
    A failure's last lines of stderr go to this process's stderr."""
    code, cpu, output, _ = tree_run(command, cwd, env)
    return code, cpu, output


def tree_run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[int, float, str, str]:
    """``tree_cpu`` and the run's stderr."""
    with tempfile.TemporaryFile() as errors, subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=errors, text=True) as process:
        output = process.stdout.read() if process.stdout else ""
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        errors.seek(0)
        stderr = errors.read().decode(errors="replace")
        if process.returncode:
            shown = ["histeg", *command[3:5]] if command[1:2] == ["-c"] else command[:3]
            log_to_stderr(f"  exit {process.returncode}: {' '.join(shown)} ...: {stderr.strip()[-600:]}")
    return process.returncode, usage.ru_utime + usage.ru_stime, output, stderr


OWN_CPU = "histeg-own-cpu"
SPLIT_CPU = f"""
import atexit, os, resource, sys
def _report():  # registered first, so it runs last: after histeg's own handlers have ended and reaped its helpers
    own, waited = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    os.write(2, f"{OWN_CPU} {{own.ru_utime + own.ru_stime:.3f}} {{waited.ru_utime + waited.ru_stime:.3f}}\\n".encode())
atexit.register(_report)
from histeg.cli import main
sys.argv = ["histeg", *sys.argv[1:]]
sys.exit(main())
"""
"""``histeg`` run as its console script runs it, saying at exit what CPU its own process took and what its children
(the traced suite, the re-runs, git) took: where a new version's CPU goes."""


def split_cpu(stderr: str) -> tuple[float, float] | None:
    for line in reversed(stderr.splitlines()):
        if line.startswith(OWN_CPU + " "):
            own, waited = line.split()[1:3]
            return float(own), float(waited)
    return None


@dataclass
class Mutant:
    kind: str
    site: FunctionSite
    edit: Edit
    lines: int
    """Line events of the mutated function in one untraced run of the suite."""
    sha: str = ""
    untraced: float = 0.0
    """Median CPU of the mutated version's own untraced suite (a mutant that fails hundreds of tests can make pytest's
    reporting alone cost more than the suite did)."""
    cpu: float = 0.0
    code: int = 0
    steps: dict[str, float] = field(default_factory=dict)
    divergences: int | None = None
    targets: list[str] = field(default_factory=list)
    split: tuple[float, float] | None = None
    """CPU of histeg's own process, and of the processes it waited for."""


def pick(kind: str, order: list[tuple[str, int]], sites: dict[str, FunctionSite], root: Path, suite: Suite) -> Mutant | None:
    """The first edit, in ``order`` of functions, that makes a test of the untraced suite fail (not its collection)."""
    tried = 0
    for ident, lines in order:
        site = sites.get(ident)
        if site is None:
            continue
        for operator in (*VARIED, "return"):
            for edit in candidate_edits(site.node, operator):
                if tried == MAX_TRIES:
                    return None
                tried += 1
                path = root / site.path
                original = path.read_bytes()
                path.write_bytes(apply_edit(original, edit))
                try:
                    code, last = suite.outcome(root)
                finally:
                    path.write_bytes(original)
                if code == 1 and "error" not in last:  # a test fails; the suite is still collected and run
                    log_to_stderr(f"  {kind} mutant: {ident}: {edit.description} ({lines:,} line events per run)")
                    return Mutant(kind, site, edit, lines)
    return None


def histeg_compute(repo: Path, versions: str, out: Path, python_args: list[str]) -> tuple[int, float, dict[str, Any] | None, tuple[float, float] | None]:
    """``python_args``: more options (``--python``, ``--branch``). Also: histeg's own CPU and its children's."""
    code, cpu, output, stderr = tree_run([sys.executable, "-c", SPLIT_CPU, "compute", "--repo", str(repo), "--versions", versions,
                                          "--out", str(out), "-q", "--json", *python_args], ROOT)
    try:
        return code, cpu, json.loads(output), split_cpu(stderr)
    except json.JSONDecodeError:
        return code, cpu, None, split_cpu(stderr)


def read_version(mutant: Mutant, out: Path, summary: dict[str, Any] | None) -> None:
    if summary is None:
        return
    index = next((v["index"] for v in summary["steps"]["extract"]["versions"] if v["identifier"] == mutant.sha), None)
    if index is None:
        return
    steps = json.loads((out / str(index) / "steps.json").read_text())["steps"]
    mutant.steps = {name: step.get("seconds") or 0.0 for name, step in steps.items()}
    compare = steps.get("compare", {}).get("summary", {})
    mutant.divergences = compare.get("divergences")
    parts = compare.get("seconds") or {}
    if parts:  # the compare step's own split: the comparison, and the confirmation re-runs
        mutant.steps.pop("compare", None)
        mutant.steps.update(parts)
    document = json.loads((out / str(index) / "testingTargets.json").read_text())
    mutant.targets = [target["identifier"] for target in document.get("targets", [])]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo")
    parser.add_argument("--python", default=None, help="run every version with this interpreter (default: histeg builds them)")
    parser.add_argument("--rounds", type=int, default=3, help="untraced runs of the suite (median)")
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()

    with scratch_directory("histeg-version-cost-", args.work, args.keep, log_to_stderr) as scratch:
        root = clone(str(Path(args.repo).resolve()), scratch / "clone")
        base = git(root, "rev-parse", "HEAD").strip()
        project = probe(root, base, scratch, args.python, [], log_to_stderr)
        suite = project.suite
        # as histeg runs it: pytest-benchmark's timed rounds off (build.json "neutralised"), or they would make the
        # reference as long as their time budget, whatever the code costs (humanize: 4.1 s with them, 1.4 s without)
        command = [suite.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *suite.args, *timed_plugins_off(suite.python), *suite.paths]
        untraced = [tree_cpu(command, root, suite.env)[1] for _ in range(args.rounds)]
        reference = statistics.median(untraced)
        log_to_stderr(f"{root.name}: untraced suite {reference:.2f}s CPU (median of {args.rounds})")
        tree_cpu(command, root, {key: value for key, value in suite.env.items() if key != "PYTHONDONTWRITEBYTECODE"})
        warm = statistics.median(tree_cpu(command, root, suite.env)[1] for _ in range(args.rounds))
        log_to_stderr(f"{root.name}: untraced suite with its bytecode in place {warm:.2f}s CPU (median of {args.rounds})")
        counts = executed_lines(root, project.sources, project.tests, timeout=1200, python=suite.python).lines
        totals = sorted(((ident, sum(lines.values())) for ident, lines in counts.items()), key=lambda item: -item[1])
        sites = {site.identifier: site for path in project.package_files for site in functions_in(root, path, project.sources)}
        mutants = [m for m in (pick("core", totals, sites, root, suite), pick("leaf", list(reversed(totals)), sites, root, suite)) if m is not None]
        python_args = ["--python", args.python] if args.python else []
        base_out = scratch / "out-base"
        code, base_cpu, _, _ = histeg_compute(root, f"{base}..{base}", base_out, python_args)
        log_to_stderr(f"  base version computed: exit {code}, {base_cpu:.1f}s CPU")
        for mutant in mutants:
            git(root, "checkout", "-q", "-B", mutant.kind, base)
            path = root / mutant.site.path
            path.write_bytes(apply_edit(path.read_bytes(), mutant.edit))
            mutant.untraced = statistics.median(tree_cpu(command, root, suite.env)[1] for _ in range(args.rounds))
            git(root, "commit", "-q", "-am", f"{mutant.kind} mutant: {mutant.site.identifier}: {mutant.edit.description}", clock=1)
            mutant.sha = git(root, "rev-parse", "HEAD").strip()
            out = scratch / f"out-{mutant.kind}"
            shutil.copytree(base_out, out, symlinks=True)
            mutant.code, mutant.cpu, summary, mutant.split = histeg_compute(root, f"{base}..{mutant.sha}", out, [*python_args, "--branch", mutant.kind])
            read_version(mutant, out, summary)

    print(f"{Path(args.repo).name}: untraced suite {reference:.2f}s CPU (median of {args.rounds}: "
          f"{', '.join(f'{value:.2f}' for value in untraced)}); with its bytecode in place {warm:.2f}s")
    for mutant in mutants:
        rank = mutant.targets.index(mutant.site.identifier) + 1 if mutant.site.identifier in mutant.targets else None
        steps = ", ".join(f"{name} {seconds:.1f}" for name, seconds in mutant.steps.items() if seconds >= 0.05)
        print(f"[{mutant.kind}] {mutant.site.identifier}: {mutant.edit.description}; {mutant.lines:,} line events per untraced run")
        print(f"  new version: exit {mutant.code}, {mutant.cpu:.1f}s CPU = {mutant.cpu / reference:.2f}x the base's untraced suite, "
              f"{mutant.cpu / warm:.2f}x with its bytecode in place, "
              f"{mutant.cpu / mutant.untraced:.2f}x its own with the base's bytecode ({mutant.untraced:.2f}s) (goal <= 2.5x); "
              f"divergences {mutant.divergences}; rank of the mutated function {rank or '-'} of {len(mutant.targets)} targets")
        if mutant.split is not None:
            own, waited = mutant.split
            print(f"  of that CPU: histeg's own process {own:.1f}s ({own / warm:.2f}x the suite with its bytecode), "
                  f"its child processes (the traced suite, the re-runs, git) {waited:.1f}s ({waited / warm:.2f}x)")
        print(f"  step wall seconds: {steps}")
    if len(mutants) < 2:
        print(f"  found {len(mutants)} of 2 mutants that fail a test within {MAX_TRIES} edits each")
    return 0 if mutants and all(m.code == 0 for m in mutants) else 1


if __name__ == "__main__":
    sys.exit(main())
