"""Ground truth from real bugs: fix commits of a project's history, their source change reverted, and how histeg ranks it.

    python bench/real_bugs.py REPO [REPO ...] [--max-cases 10] [--max-candidates 40] [--max-lines 40] [--timeout 1800] [--python PY]
                              [--work DIR] [--keep] [--report FILE] [--histeg-arg=--repeat=2 ...]

Seeded mutants (``ground_truth.py``) are edits histeg's authors chose; these are
the project's own bugs. Each REPO is cloned (it is only read). A fix commit is a
first-parent commit whose message mentions a fix (fix, bug, issue, regression,
...), that changes at most ``--max-lines`` lines of package source (``.py``
files inside a package, not tests, docs or scripts) and that adds or changes a
test module. On top of it goes one commit, on a branch of its own: the fix with
its source changes reverted and its tests kept, the bug re-introduced. Commits
are made with a fixed identity and date, so a case gets the same SHA every time.

A case is kept when the fix's changed test modules pass at the fix and fail
(pytest exit 1: a test failed, not a collection error) on the revert, run
untraced as ``ground_truth.py`` runs them: in the environment histeg builds for
the repository's HEAD (or ``--python``), with the clone's sources first on the
path. Candidates are tried newest first until ``--max-cases`` are kept or
``--max-candidates`` were tried.

Per kept case ``histeg compute --versions FIX..REVERT`` runs in a child process.
The truth is what the revert changed: each changed line of the diff mapped to
the innermost function of ``functions.json`` (the fix's for removed lines, the
revert's for added ones), and lines outside functions to the syntax change of
``syntaxChanges.json`` that covers them (a constant, a class attribute), else
to their class or module. Printed per case: the best rank of a truth among the
targets, whether divergences (local or non-local) are charged to it, the
divergence classes charged to it, the number of targets and the first three;
then per project and in all top-1, top-3 and the charged rate next to their
goals (85 %, 95 %, 100 %). A version histeg could not finish is a miss, except
where histeg reports that the version's own test environment ran no test at
all (its pinned pytest crashing on this interpreter): such cases are counted
and set apart, since the fix's tests were only seen failing in HEAD's
environment.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from histeg.runs.outcome import NO_TEST_REPORTED

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ground_truth import Project, probe  # noqa: E402
from real_repos import (add_harness_arguments, clone, each_project, git, log_to_stderr, print_heading,  # noqa: E402
                        rank_cells, run_histeg, scratch_directory)

FIX_WORDS = re.compile(r"\b(fix|bug|issue|regression|crash|broke|wrong|incorrect)", re.IGNORECASE)
TEST_DIRECTORIES = {"tests", "test", "testing"}
NOT_SOURCE = {"docs", "doc", "examples", "example", "benchmarks", "bench", "scripts", "bin", "tools", "ci", *TEST_DIRECTORIES}
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
GOALS = {"top1": 0.85, "top3": 0.95, "charged": 1.0}


# ---------------------------------------------------------------- fix commits

@dataclass
class Candidate:
    """A fix commit that passes the message and size filters."""

    sha: str
    subject: str
    sources: list[str]
    """Package source files the fix changed (added, modified or removed)."""
    tests: list[str]
    """Test modules the fix added or changed that exist after it."""
    lines: int
    """Lines of package source added plus removed."""


def is_test(path: str) -> bool:
    parts = Path(path).parts
    return any(p in TEST_DIRECTORIES for p in parts[:-1]) or parts[-1].startswith("test_") or parts[-1].endswith("_test.py")


def package_directories(repo: Path, commit: str) -> set[str]:
    """Directories holding an ``__init__.py`` at ``commit``."""
    listing = git(repo, "ls-tree", "-r", "--name-only", commit)
    return {str(Path(p).parent) for p in listing.splitlines() if Path(p).name == "__init__.py"}


def is_source(path: str, packages: set[str]) -> bool:
    """A ``.py`` file inside a package, outside tests, docs and scripts."""
    parts = Path(path).parts
    return (path.endswith(".py") and not is_test(path) and not NOT_SOURCE & set(parts[:-1])
            and str(Path(path).parent) in packages)


def candidates(repo: Path, max_lines: int) -> Iterator[Candidate]:
    """Fix commits of the first-parent history, newest first."""
    for sha in git(repo, "rev-list", "--first-parent", "HEAD").splitlines():
        message = git(repo, "log", "-1", "--format=%B", sha)
        parents = git(repo, "log", "-1", "--format=%P", sha).split()
        if not parents or not FIX_WORDS.search(message):
            continue
        changed = [line.split("\t") for line in git(repo, "diff", "--numstat", "--no-renames", parents[0], sha).splitlines()]
        python = [(a, d, p) for a, d, p in changed if p.endswith(".py")]
        tests = [p for _, _, p in python if is_test(p) and Path(p).name not in ("conftest.py", "__init__.py")]
        if not tests:
            continue
        packages = package_directories(repo, sha) | package_directories(repo, parents[0])
        sources = [(int(a), int(d), p) for a, d, p in python if a != "-" and is_source(p, packages)]
        lines = sum(a + d for a, d, _ in sources)
        if not sources or lines > max_lines:
            continue
        present = [p for p in tests if git(repo, "ls-tree", "--name-only", sha, "--", p)]
        if present:
            yield Candidate(sha, message.splitlines()[0], [p for _, _, p in sources], present, lines)


def commit_revert(repo: Path, candidate: Candidate) -> tuple[str, str]:
    """A branch on the fix with one commit that restores its source files as they were before it; (branch, SHA)."""
    branch = f"real-bug/{candidate.sha[:12]}"
    parent = git(repo, "rev-parse", f"{candidate.sha}^1")
    git(repo, "checkout", "-q", "-f", "-B", branch, candidate.sha)
    for path in candidate.sources:
        if git(repo, "ls-tree", "--name-only", parent, "--", path):
            git(repo, "checkout", "-q", parent, "--", path)
        else:
            git(repo, "rm", "-q", "--", path)
    git(repo, "add", "-A", "--", *candidate.sources)
    git(repo, "commit", "-q", "-m", f"real bug: {candidate.sha[:12]} with its source changes reverted, tests kept\n\n"
                                     f"Re-introduces the bug fixed by: {candidate.subject}")
    return branch, git(repo, "rev-parse", "HEAD")


# ---------------------------------------------------------------- the truth

def changed_lines(repo: Path, old: str, new: str, paths: Sequence[str]) -> dict[str, tuple[set[int], set[int]]]:
    """Per file of the new version (or the old one, when removed): lines removed from ``old`` and added in ``new``."""
    found: dict[str, tuple[set[int], set[int]]] = {}
    old_path = new_path = ""
    for line in git(repo, "diff", "-U0", "--no-renames", old, new, "--", *paths).splitlines():
        if line.startswith("--- "):
            old_path = line[6:] if line.startswith("--- a/") else ""
        elif line.startswith("+++ "):
            new_path = line[6:] if line.startswith("+++ b/") else ""
        elif (match := HUNK.match(line)):
            start, count = int(match[1]), int(match[2] if match[2] is not None else 1)
            added_start, added = int(match[3]), int(match[4] if match[4] is not None else 1)
            entry = found.setdefault(new_path or old_path, (set(), set()))
            entry[0].update(range(start, start + count))
            entry[1].update(range(added_start, added_start + added))
    return found


def entity_at(functions: list[dict[str, Any]], changes: list[dict[str, Any]], path: str, line: int, side: str) -> str | None:
    """The innermost function holding ``line``; outside functions, the syntax change covering it, else its class or module."""
    holding = [f for f in functions if f["file"] == path and f["firstLine"] <= line <= f["lastLine"]]
    if not holding:
        return None
    inner = max(holding, key=lambda f: (f["firstLine"], -f["lastLine"], f["kind"] != "module"))
    if inner["kind"] in ("function", "method"):
        return inner["identifier"]
    covering = [c for c in changes if c.get(f"{side}Path") == path and c.get(f"{side}Lines")
                and c[f"{side}Lines"][0] <= line <= c[f"{side}Lines"][1] and c["level"] != "function"]
    if covering:
        return min(covering, key=lambda c: c[f"{side}Lines"][1] - c[f"{side}Lines"][0])["entity"]
    return inner["identifier"]


def truth(repo: Path, fix: str, revert: str, sources: Sequence[str], old: Path, new: Path) -> list[str]:
    """Identifiers of what the revert changed, from the diff's lines and the two versions' function tables."""
    old_functions = json.loads((old / "functions.json").read_text())["functions"]
    new_functions = json.loads((new / "functions.json").read_text())["functions"]
    syntax = new / "syntaxChanges.json"
    changes = [c for f in json.loads(syntax.read_text())["files"] for c in f["changes"]] if syntax.is_file() else []
    found: list[str] = []
    for path, (removed, added) in changed_lines(repo, fix, revert, sources).items():
        for lines, functions, side in ((removed, old_functions, "old"), (added, new_functions, "new")):
            for line in sorted(lines):
                entity = entity_at(functions, changes, path, line, side)
                if entity and entity not in found:
                    found.append(entity)
    return found


# ---------------------------------------------------------------- one case

@dataclass
class Case:
    """A fix commit, its revert and what histeg made of it."""

    fix: str
    subject: str
    lines: int
    revert: str = ""
    failing: str = ""
    """pytest's last line and first failing test on the revert (the fix's changed test modules)."""
    truth: list[str] = field(default_factory=list)
    rank: int | None = None
    ranks: dict[str, int | None] = field(default_factory=dict)
    charged: bool = False
    classes: dict[str, int] = field(default_factory=dict)
    targets: int | None = None
    top: list[str] = field(default_factory=list)
    traced_tests: dict[str, Any] = field(default_factory=dict)
    """pytest's counts in histeg's traced runs per side (``runs.json``): empty counts mean the suite did not start there."""
    histeg_code: int | None = None
    histeg_seconds: float = 0.0
    failed: str | None = None
    unrunnable: str | None = None
    """Why the version's own test environment runs no test on this interpreter (histeg's reason), if so: the case is set apart."""


UNRUNNABLE = NO_TEST_REPORTED
"""In histeg's reason for a failed version: its own declared test tooling crashed before any test (an old pytest on a new Python)."""


def read_case(case: Case, repo: Path, sources: Sequence[str], summary: dict[str, Any], out: Path) -> None:
    """Truth, its rank, charge and classes from the revert's version folder."""
    failed = {f["index"]: f["reason"] for f in summary.get("failedVersions", [])}
    by_sha = {v["identifier"]: v["index"] for v in summary["steps"]["extract"]["versions"]}
    old, new = by_sha.get(case.fix), by_sha.get(case.revert)
    if old is None or new is None or new in failed or not (out / str(new) / "testingTargets.json").is_file():
        case.failed = failed.get(new, "no testingTargets.json") if new is not None else "not extracted"
        reasons = [failed[index] for index in (old, new) if index in failed and UNRUNNABLE in failed[index]]
        case.unrunnable = reasons[0] if reasons else None
        return
    case.truth = truth(repo, case.fix, case.revert, sources, out / str(old), out / str(new))
    for side, index in (("fix", old), ("revert", new)):
        runs = out / str(index) / "runs.json"
        case.traced_tests[side] = [r.get("tests") for r in json.loads(runs.read_text())["runs"]] if runs.is_file() else None
    document = json.loads((out / str(new) / "testingTargets.json").read_text())
    targets = document["targets"]
    case.targets, case.top = len(targets), [t["identifier"] for t in targets[:3]]
    by_identifier = {t["identifier"]: t for t in targets}
    case.ranks = {t: by_identifier[t]["rank"] if t in by_identifier else None for t in case.truth}
    case.rank = min((r for r in case.ranks.values() if r is not None), default=None)
    classes: Counter[str] = Counter()
    for identifier in case.truth:
        target = by_identifier.get(identifier)
        if target is None:
            continue
        case.charged |= (target.get("localDivergenceCount", 0) + target.get("nonLocalDivergenceCount", 0)) > 0
        classes.update({k: v for k, v in (target.get("divergenceClasses") or {}).items() if v})
    case.classes = dict(classes)


def try_candidate(repo: Path, project: Project, candidate: Candidate, log: Any) -> Case | None:
    """Commit the revert; a case when the fix's tests pass at the fix and fail on the revert, else None."""
    git(repo, "checkout", "-q", "-f", candidate.sha)
    code, last = project.suite.outcome(repo, paths=candidate.tests)
    if code != 0:
        log(f"    {candidate.sha[:12]} skipped: its tests do not pass at the fix (exit {code}: {last[:80]})")
        return None
    _, revert = commit_revert(repo, candidate)
    code, last = project.suite.outcome(repo, paths=candidate.tests)
    if code != 1:
        log(f"    {candidate.sha[:12]} skipped: no test fails on the revert (exit {code}: {last[:80]})")
        return None
    log(f"    {candidate.sha[:12]} kept: {candidate.subject[:70]} ({candidate.lines} lines; {last[:60]})")
    return Case(candidate.sha, candidate.subject, candidate.lines, revert, last)


# ---------------------------------------------------------------- figures

@dataclass
class ProjectFigures:
    project: str
    head: str
    candidates_tried: int = 0
    cases: list[Case] = field(default_factory=list)
    seconds: float = 0.0
    histeg_seconds: float = 0.0


def rates(cases: Sequence[Case]) -> dict[str, float | None]:
    """Top-1, top-3 and charged shares; a case histeg could not finish counts as a miss, except one whose
    versions' own test environments run no test on this interpreter: no tool could observe it there."""
    cases = [case for case in cases if case.unrunnable is None]
    if not cases:
        return {"top1": None, "top3": None, "charged": None}
    return {"top1": sum(1 for c in cases if c.rank is not None and c.rank <= 1) / len(cases),
            "top3": sum(1 for c in cases if c.rank is not None and c.rank <= 3) / len(cases),
            "charged": sum(1 for c in cases if c.charged) / len(cases)}


def figure(name: str, cases: Sequence[Case]) -> str:
    share = rates(cases)[name]
    cases = [case for case in cases if case.unrunnable is None]
    if share is None:
        return "n/a"
    return f"{share:.0%} ({round(share * len(cases))}/{len(cases)}, goal {GOALS[name]:.0%})"


def print_project(figures: ProjectFigures) -> None:
    print_heading(f"== {figures.project}  HEAD {figures.head[:12]}  {len(figures.cases)} case(s) of {figures.candidates_tried} fix commit(s) "
                  f"tried  {figures.seconds:.0f}s ({figures.histeg_seconds:.0f}s in histeg)",
                  f"{'fix':12} {'lines':>5} {'rank':>4} {'chg':>3} {'tgts':>4} {'secs':>5}  {'truth':44} {'classes':34} top 3")
    for case in figures.cases:
        rank, targets = rank_cells(case.rank, case.targets, case.failed)
        classes = " ".join(f"{k}:{v}" for k, v in sorted(case.classes.items())) or "-"
        truth = ", ".join(f"{t}#{case.ranks.get(t) or '-'}" for t in case.truth) or "(none)"
        print(f"{case.fix[:12]:12} {case.lines:>5} {rank:>4} {'yes' if case.charged else 'no':>3} {targets:>4} {case.histeg_seconds:>5.0f}  "
              f"{truth[:44]:44} {classes[:34]:34} {', '.join(case.top)}")
        silent_suite = [side for side, counts in case.traced_tests.items() if not counts or not any(counts)]
        print(f"{'':12} {case.subject[:90]}  [{case.failing[:120]}]" + (f"  FAILED: {case.failed[:80]}" if case.failed else "")
              + (f"  histeg's traced suite ran no test at the {' and '.join(silent_suite)}" if silent_suite else ""))
    print_rates(figures.project, figures.cases)


def print_rates(label: str, cases: Sequence[Case]) -> None:
    apart = sum(1 for case in cases if case.unrunnable is not None)
    print(f"  {label}: top-1 {figure('top1', cases)}; top-3 {figure('top3', cases)}; charged {figure('charged', cases)}"
          + (f"; {apart} case(s) set apart: the version's own test environment runs no test on this interpreter" if apart else ""))


# ---------------------------------------------------------------- one project

def measure(name: str, repo: str, options: argparse.Namespace, log: Any) -> ProjectFigures:
    """Clone, find and commit the cases, run histeg on each, read the figures."""
    started = time.perf_counter()
    with scratch_directory(f"real-bugs-{name}-", options.work, options.keep, log) as scratch:
        work = clone(repo, scratch / "clone")
        head = git(work, "rev-parse", "HEAD")
        log(f"{name}: HEAD {head[:12]}")
        project = probe(work, head, scratch, options.python, [], log)
        figures = ProjectFigures(name, head)
        for candidate in candidates(work, options.max_lines):
            if len(figures.cases) >= options.max_cases or figures.candidates_tried >= options.max_candidates:
                break
            figures.candidates_tried += 1
            case = try_candidate(work, project, candidate, log)
            if case is None:
                continue
            out = scratch / "out" / case.fix[:12]
            case_started = time.perf_counter()
            try:
                run = run_histeg("compute", "--repo", str(work), "--branch", f"real-bug/{case.fix[:12]}", "--versions",
                                 f"{case.fix}..{case.revert}", "--out", str(out), "-q", *options.histeg_arg, timeout=options.timeout)
            except subprocess.TimeoutExpired:
                case.failed = f"histeg did not finish within {options.timeout:.0f}s"
                run = None
            case.histeg_seconds = time.perf_counter() - case_started
            figures.histeg_seconds += case.histeg_seconds
            case.histeg_code = run.code if run is not None else None
            if run is not None and run.summary is None:
                case.failed = f"histeg exit {run.code}: {run.stderr.strip()[-300:]}"
            elif run is not None:
                read_case(case, work, candidate.sources, run.summary, out)
            log(f"      rank {case.rank}, charged {case.charged}, {case.targets} targets, {case.histeg_seconds:.0f}s"
                + (f", failed: {case.failed[:120]}" if case.failed else ""))
            figures.cases.append(case)
        figures.seconds = time.perf_counter() - started
        return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_harness_arguments(parser, "interpreter for the untraced checks (default: the one histeg builds for HEAD)")
    parser.add_argument("--max-cases", type=int, default=10, help="cases kept per project")
    parser.add_argument("--max-candidates", type=int, default=40, help="fix commits tried per project (untraced checks)")
    parser.add_argument("--max-lines", type=int, default=40, help="most lines of package source a fix may change")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds one histeg compute may take; a case past it is a miss")
    options = parser.parse_args()
    results: list[ProjectFigures] = []
    errors: list[dict[str, str]] = []
    for name, figures, error in each_project(options.repos, lambda name, repo: measure(name, repo, options, log_to_stderr)):
        if figures is None:
            errors.append({"project": name, "error": error or ""})
            continue
        print_project(figures)
        results.append(figures)
        write_report(options.report, results, errors)  # after each project: a long run's figures survive an interruption
    every = [c for f in results for c in f.cases]
    print()
    print_rates(f"all ({len(results)} project(s), {len(every)} case(s))", every)
    write_report(options.report, results, errors)


def write_report(path: Path | None, results: Sequence[ProjectFigures], errors: Sequence[dict[str, str]]) -> None:
    if path is None:
        return
    every = [c for f in results for c in f.cases]
    report = {"projects": [{**asdict(f), "rates": rates(f.cases)} for f in results], "errors": list(errors),
              "all": rates(every), "goals": GOALS, "cases": len(every)}
    path.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
