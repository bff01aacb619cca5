"""Untested changes, reports and test generation on real projects, against seeded commits of known effect.

    python bench/report_bench.py REPO [REPO ...] [--histeg-arg NAME=ARG ...] [--budget 60] [--top 3] [--work DIR] [--keep]
                                 [--json FILE]

Each REPO (a local git clone) is cloned again into a scratch folder; the given
repository is never touched. Its base (HEAD) is built once by ``histeg build``
(whose environment runs the suite for the harness), then three commits with
fixed dates go on top:

a. ``mutant``: a flipped comparison or a numeric constant + 1 in a function
   the suite executes, on a line it executes (``mutant_edits``' own line
   counter, not histeg's), preferring one that makes the untraced suite fail;
   truth: that function is ranked and is not an untested change;
b. ``untested``: a new function appended to a sources module that nothing
   calls, plus a new branch (``if __name__ == ...: raise ...``) at the top of
   another executed function, which no test takes; truth: the new function is
   in ``untestedChanges`` with every executable line of its body, and the
   branch's body line is listed for its function;
c. ``docstring``: one executed function's docstring reworded; truth: no
   target and no untested change.

Then ``histeg compute --versions HEAD~3..HEAD`` (timed), the checks above with
each seeded version's diff coverage, ``histeg report`` as HTML, Markdown and
terminal tables (timed; bytes of index.html and of the largest version page,
characters of the Markdown), and ``histeg generate`` on (a)'s version with
``--budget`` and ``--top`` (seconds, modules ok/failed with reasons, tests,
witnesses of (a)'s function). One table at the end. ``--histeg-arg
NAME=ARG`` gives ARG to ``compute`` for the repository whose folder is named
NAME (say ``more-itertools=--pytest-arg=tests/test_recipes.py``). Not part of
``make test``.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compare_bench import (
    Project,
    covered_edits,
    default_layout,
    plain_suite,
    source_files,
    version_index,
)
from ground_truth import overlay_generated
from mutant_edits import Edit, apply_edit, executed_lines, functions_in
from real_repos import ROOT, clone, git, run_histeg, scratch_directory

MUTANT_TRIALS = 12
BRANCH_CONDITION = '__name__ == "histeg-bench-never"'
NEW_FUNCTION = '''

def _histeg_bench_unused(values):
    """Added by the bench; nothing calls it."""
    total = 0
    for value in values:
        if value:
            total += value
    return total
'''
DOCSTRING_PREFIX = "Reworded by the bench. "


@dataclass
class Seeded:
    kind: str
    sha: str = ""
    description: str = ""
    function: str = ""
    """The identifier the truth is about (a: mutated; b: the new function; c: the reworded one)."""
    expected_lines: list[int] = field(default_factory=list)
    """b: the new function's body lines; the branch's untaken lines are in branch_lines."""
    branch_function: str = ""
    branch_lines: list[int] = field(default_factory=list)
    suite: str = ""


@dataclass
class Figures:
    project: str
    build_style: str
    seeded: list[Seeded] = field(default_factory=list)
    compute_seconds: float | None = None
    compute_code: int | None = None
    compute_error: str = ""
    mutant_rank: int | None = None
    mutant_untested: bool | None = None
    targets: dict[str, int] = field(default_factory=dict)
    untested_listed: bool | None = None
    untested_missing: list[int] = field(default_factory=list)
    branch_listed: bool | None = None
    branch_missing: list[int] = field(default_factory=list)
    branch_extra: list[int] = field(default_factory=list)
    docstring_clean: bool | None = None
    docstring_findings: str = ""
    diff_coverage: dict[str, Any] = field(default_factory=dict)
    report_seconds: dict[str, float] = field(default_factory=dict)
    report_codes: dict[str, int] = field(default_factory=dict)
    index_bytes: int | None = None
    largest_page_bytes: int | None = None
    markdown_characters: int | None = None
    generate_seconds: float | None = None
    generate_code: int | None = None
    generate_error: str = ""
    modules_ok: int = 0
    modules_failed: list[str] = field(default_factory=list)
    generated_tests: int = 0
    witnesses: int | None = None
    witnesses_all: int = 0
    notes: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- the project and its base

def build_style(root: Path) -> str:
    """The build backend named in pyproject.toml (hatch-vcs when hatchling takes the version from git)."""
    text = (root / "pyproject.toml").read_text() if (root / "pyproject.toml").is_file() else ""
    for needle, name in (("hatch-vcs", "hatch-vcs"), ("hatchling", "hatchling"), ("flit", "flit"), ("setuptools", "setuptools"),
                         ("poetry", "poetry"), ("pdm", "pdm")):
        if needle in text:
            return name
    return "setup.py" if (root / "setup.py").is_file() else "?"


def probe(project: Path, out: Path) -> tuple[str, list[str], Path, dict[str, Any]]:
    """``histeg build`` of the base alone into the output folder compute reuses: its interpreter and pytest options."""
    run = run_histeg("build", "--repo", str(project), "--versions", "HEAD..HEAD", "--out", str(out), "-q")
    folders = [p.parent for p in out.glob("*/build.json")]
    if run.code != 0 or not folders:
        raise RuntimeError(f"histeg build of the base failed (exit {run.code}): {last_line(run.stderr)}")
    build = json.loads((folders[0] / "build.json").read_text())
    python = (build.get("environment") or {}).get("python") or sys.executable
    return python, list(build.get("pytestArgs", [])), folders[0], build


def last_line(text: str) -> str:
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "(no message)"


# ---------------------------------------------------------------- seeded commits

def seed_mutant(project: Project, lines: dict[str, dict[str, int]]) -> Seeded:
    """(a): the first flipped comparison or constant + 1 on an executed line that makes the suite fail (else finish).

    Nested functions are left out and private ones (a ``_name`` part) tried last: Pynguin calls neither, so histeg
    generate could not be measured on them.
    """
    timeout = 600.0
    fallback = None
    found = [e for e in covered_edits(project, _Executed(lines)) if _kept(e[1]) and "<locals>" not in e[0].identifier]
    candidates = sorted(found, key=lambda e: any(part.startswith("_") and not part.startswith("__")
                                                 for part in e[0].identifier.replace(":", ".").split(".")))
    for trial, (site, edit) in enumerate(candidates):
        if trial == MUTANT_TRIALS:
            break
        path = project.clone / site.path
        original = path.read_bytes()
        mutated = apply_edit(original, edit)
        try:
            ast.parse(mutated)
        except SyntaxError:
            continue
        path.write_bytes(mutated)
        code, seconds, last = plain_suite(project, timeout)
        last = last_line(last)
        print(f"  trying {site.identifier}: {edit.description}: suite exit {code} in {seconds:.1f}s ({last})", flush=True)
        path.write_bytes(original)
        if code == 1:
            return _commit_mutant(project, site.identifier, site.path, mutated, edit, f"suite fails: {last}")
        if code == 0 and fallback is None:
            fallback = (site.identifier, site.path, mutated, edit, f"suite still passes: {last}")
    if fallback is None:
        raise RuntimeError("no usable mutant on an executed line")
    return _commit_mutant(project, *fallback)


def _kept(edit: Edit) -> bool:
    """A flipped comparison or a constant + 1 (covered_edits also yields negated conditions and swapped and/or)."""
    text = edit.description
    return (text.startswith("'") and not text.startswith(("'and'", "'or'"))) or text[:1].isdigit() or text.startswith("-")


class _Executed:
    """What covered_edits reads of an Execution."""

    def __init__(self, lines: dict[str, dict[str, int]]) -> None:
        self.lines = lines


def _commit_mutant(project: Project, function: str, path: str, mutated: bytes, edit: Edit, suite: str) -> Seeded:
    (project.clone / path).write_bytes(mutated)
    description = f"{function}: {edit.description}"
    git(project.clone, "commit", "-q", "-m", f"seeded mutant: {description}", "--", path, clock=1)
    return Seeded("a", git(project.clone, "rev-parse", "HEAD"), description, function, suite=suite)


def _body_start(node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.stmt | None:
    """The first statement after the docstring, when it is on a line of its own."""
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        body = body[1:]
    if not body or body[0].lineno <= node.lineno or isinstance(body[0], (ast.Global, ast.Nonlocal)):
        return None
    return body[0]


def seed_untested(project: Project, lines: dict[str, dict[str, int]], avoid: str) -> Seeded:
    """(b): an executed function gets a branch no test takes; its module gets a new function nothing calls."""
    for path in source_files(project):
        for site in functions_in(project.clone, path, project.sources):
            if site.identifier == avoid or "<locals>" in site.identifier or not lines.get(site.identifier):
                continue
            first = _body_start(site.node)
            if first is None or str(first.lineno) not in lines[site.identifier]:
                continue
            source = (project.clone / path).read_bytes()
            indent = " " * first.col_offset
            branch = f"{indent}if {BRANCH_CONDITION}:\n{indent}    raise RuntimeError(\"a branch no test takes\")\n"
            edited = apply_edit(source, Edit((first.lineno, 0), (first.lineno, 0), branch, "branch"))
            text = edited.decode()
            edited = (text.rstrip("\n") + "\n" + NEW_FUNCTION).encode()
            tree = ast.parse(edited)
            module = site.identifier.split(":")[0]
            new = next(f for f in functions_in_tree(tree) if f.name == "_histeg_bench_unused")
            body_lines = sorted({n.lineno for n in ast.walk(new) if isinstance(n, ast.stmt) and n is not new and n is not new.body[0]})
            (project.clone / path).write_bytes(edited)
            git(project.clone, "commit", "-q", "-m", "seeded: a new function nothing calls and a branch no test takes", "--", path, clock=2)
            return Seeded("b", git(project.clone, "rev-parse", "HEAD"), f"{path}: new _histeg_bench_unused, branch in {site.identifier}",
                          f"{module}:_histeg_bench_unused", body_lines, site.identifier, [first.lineno + 1])
    raise RuntimeError("no executed function to put a branch in")


def functions_in_tree(tree: ast.Module) -> list[ast.FunctionDef]:
    return [node for node in tree.body if isinstance(node, ast.FunctionDef)]


def seed_docstring(project: Project, lines: dict[str, dict[str, int]], avoid: set[str]) -> Seeded:
    """(c): an executed function's docstring gets words in front; nothing else changes."""
    for path in source_files(project):
        for site in functions_in(project.clone, path, project.sources):
            body = site.node.body
            if site.identifier in avoid or not lines.get(site.identifier) or not body:
                continue
            first = body[0]
            if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)):
                continue
            source = (project.clone / path).read_bytes()
            segment = ast.get_source_segment(source.decode(), first.value)
            if not segment or segment[0] not in "\"'":
                continue
            quotes = 3 if segment[:3] in ('"""', "'''") else 1
            start = (first.value.lineno, first.value.col_offset + quotes)
            edited = apply_edit(source, Edit(start, start, DOCSTRING_PREFIX, "docstring"))
            try:
                tree = ast.parse(edited)
            except SyntaxError:
                continue
            if ast.dump(_without_docstrings(tree)) != ast.dump(_without_docstrings(ast.parse(source))):
                continue
            (project.clone / path).write_bytes(edited)
            git(project.clone, "commit", "-q", "-m", f"seeded: reworded the docstring of {site.identifier}", "--", path, clock=3)
            return Seeded("c", git(project.clone, "rev-parse", "HEAD"), f"docstring of {site.identifier}", site.identifier)
    raise RuntimeError("no executed function with a docstring")


def _without_docstrings(tree: ast.Module) -> ast.Module:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                first.value.value = ""
    return tree


# ---------------------------------------------------------------- histeg

def timed(*args: str, timeout: float = 3600) -> tuple[int, float, str, str]:
    """Exit code, wall seconds, stdout and stderr of the histeg command line (without --json)."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "histeg", *args], capture_output=True, text=True, timeout=timeout, check=False, cwd=ROOT)
    return done.returncode, time.perf_counter() - started, done.stdout, done.stderr


def check_targets(figures: Figures, out: Path, seeded: dict[str, Seeded]) -> dict[str, int]:
    indices = {}
    for kind, item in seeded.items():
        index = version_index(out, item.sha)
        indices[kind] = index
        path = out / str(index) / "testingTargets.json"
        if not path.is_file():
            figures.notes.append(f"({kind}) version {index}: no testingTargets.json")
            continue
        data = json.loads(path.read_text())
        targets = [t["identifier"] for t in data["targets"]]
        untested = {u["identifier"]: u for u in data["untestedChanges"]}
        figures.targets[kind] = len(targets)
        figures.diff_coverage[kind] = data["summary"].get("diffCoverage")
        if kind == "a":
            figures.mutant_rank = targets.index(item.function) + 1 if item.function in targets else None
            figures.mutant_untested = item.function in untested
        elif kind == "b":
            entry = untested.get(item.function)
            figures.untested_listed = entry is not None and set(item.expected_lines) <= set(entry["unexecutedLines"])
            figures.untested_missing = sorted(set(item.expected_lines) - set(entry["unexecutedLines"] if entry else []))
            branch = untested.get(item.branch_function)
            listed = set(branch["unexecutedLines"]) if branch else set()
            figures.branch_listed = branch is not None and set(item.branch_lines) <= listed
            figures.branch_missing = sorted(set(item.branch_lines) - listed)
            figures.branch_extra = sorted(listed - set(item.branch_lines))
            others = sorted(set(untested) - {item.function, item.branch_function})
            if others:
                figures.notes.append(f"(b) other untested changes: {others}")
            figures.notes.append(f"(b) targets: {targets[:5]}{' ...' if len(targets) > 5 else ''}")
        else:
            figures.docstring_clean = not targets and not untested
            if not figures.docstring_clean:
                figures.docstring_findings = f"targets {targets[:5]}, untested {sorted(untested)[:5]}"
    return indices


def measure_reports(figures: Figures, out: Path) -> None:
    for style in ("html", "markdown", "terminal"):
        code, seconds, stdout, stderr = timed("report", "--out", str(out), "--format", style)
        figures.report_seconds[style], figures.report_codes[style] = seconds, code
        if code != 0:
            figures.notes.append(f"report --format {style}: exit {code}: {last_line(stderr)}")
        if style == "markdown":
            figures.markdown_characters = len(stdout)
    report = out / "report"
    if (report / "index.html").is_file():
        figures.index_bytes = (report / "index.html").stat().st_size
    pages = [p.stat().st_size for p in report.glob("*.html") if p.name != "index.html"]
    figures.largest_page_bytes = max(pages) if pages else None


def measure_generate(figures: Figures, out: Path, index: int, function: str, budget: float, top: int) -> None:
    run = run_histeg("generate", str(index), "--out", str(out), "--budget", str(budget), "--top", str(top), "-q", timeout=3600)
    figures.generate_seconds, figures.generate_code = run.seconds, run.code
    path = out / str(index) / "generation.json"
    if not path.is_file():
        figures.generate_error = f"exit {run.code}: {last_line(run.stderr)}"
        return
    data = json.loads(path.read_text())
    for module in data["modules"]:
        if module["status"] == "ok":
            figures.modules_ok += 1
        else:
            figures.modules_failed.append(f"{module['module']}: {module['status']}: {module['reason']}")
    figures.generated_tests = data["summary"]["tests"]
    figures.witnesses_all = data["summary"]["witnesses"]
    chosen = [t for t in data["targets"] if t["identifier"] == function]
    figures.witnesses = len(chosen[0]["witnesses"]) if chosen else None
    if not chosen:
        figures.notes.append(f"generate: {function} was not among the selected targets {[t['identifier'] for t in data['targets']]}")
    for target in data["targets"]:
        for witness in target["witnesses"][:2]:
            figures.notes.append(f"witness for {target['identifier']}: {witness['test']} old {witness['old']} new {witness['new']}")


# ---------------------------------------------------------------- one project

def measure(repo: str, scratch: Path, extra: list[str], budget: float, top: int) -> Figures:
    name = Path(repo).resolve().name
    project_dir = clone(repo, scratch / name)
    figures = Figures(name, build_style(project_dir))
    out = scratch / f"out-{name}"
    sources, tests = default_layout(project_dir)
    python, pytest_args, folder, build = probe(project_dir, out)
    overlay_generated(folder, build, project_dir)
    project = Project(name, project_dir, python, [*pytest_args, *tests], sources, tests, [])
    execution = executed_lines(project_dir, sources, project.pytest_args, 1800, python)
    if execution.exit_code not in (0, 1):
        raise RuntimeError(f"the line counter could not run the suite (exit {execution.exit_code})")
    print(f"{name}: {figures.build_style}, sources {sources}, tests {tests}, {len(execution.lines)} executed functions", flush=True)
    seeded = {"a": seed_mutant(project, execution.lines)}
    seeded["b"] = seed_untested(project, execution.lines, seeded["a"].function)
    seeded["c"] = seed_docstring(project, execution.lines, {seeded["a"].function, seeded["b"].branch_function})
    figures.seeded = list(seeded.values())
    for item in figures.seeded:
        print(f"  ({item.kind}) {item.sha[:10]} {item.description} {item.suite}", flush=True)
    run = run_histeg("compute", "--repo", str(project_dir), "--versions", "HEAD~3..HEAD", "--out", str(out), "-q", *extra)
    figures.compute_seconds, figures.compute_code = run.seconds, run.code
    failed = (run.summary or {}).get("failedVersions") or []
    if run.code not in (0, 1) or failed:
        figures.compute_error = f"exit {run.code}: {json.dumps(failed) if failed else last_line(run.stderr)}"
        print(f"  compute: {figures.compute_error}", flush=True)
        if run.code not in (0, 1):
            return figures
    print(f"  compute: {run.seconds:.1f}s (exit {run.code})", flush=True)
    indices = check_targets(figures, out, seeded)
    print_checks(figures, seeded)
    measure_reports(figures, out)
    print("  report: " + ", ".join(f"{k} {v:.1f}s" for k, v in figures.report_seconds.items())
          + f"; index.html {figures.index_bytes} B, largest version page {figures.largest_page_bytes} B, "
          f"Markdown {figures.markdown_characters} characters", flush=True)
    measure_generate(figures, out, indices["a"], seeded["a"].function, budget, top)
    print(f"  generate: {_number(figures.generate_seconds, '.0f')}s (exit {figures.generate_code}) {figures.generate_error}; "
          f"modules ok {figures.modules_ok}, failed {len(figures.modules_failed)}; {figures.generated_tests} tests; "
          f"witnesses for {seeded['a'].function}: {figures.witnesses} (all targets: {figures.witnesses_all})", flush=True)
    for reason in figures.modules_failed:
        print(f"    failed module {reason}", flush=True)
    for note in figures.notes:
        print(f"    {note}", flush=True)
    return figures


def print_checks(figures: Figures, seeded: dict[str, Seeded]) -> None:
    a, b, c = seeded["a"], seeded["b"], seeded["c"]
    print(f"  (a) {a.function}: rank {figures.mutant_rank} of {figures.targets.get('a')} targets; "
          f"listed as untested: {_yes(figures.mutant_untested)}; diff coverage {_coverage(figures.diff_coverage.get('a'))}", flush=True)
    print(f"  (b) {b.function}: listed with all its lines {b.expected_lines}: {_yes(figures.untested_listed)}"
          + (f" (missing {figures.untested_missing})" if figures.untested_missing else "")
          + f"; branch in {b.branch_function} lines {b.branch_lines} listed: {_yes(figures.branch_listed)}"
          + (f" (also listed: {figures.branch_extra})" if figures.branch_extra else "")
          + f"; diff coverage {_coverage(figures.diff_coverage.get('b'))}", flush=True)
    print(f"  (c) {c.function}: no target and no untested change: {_yes(figures.docstring_clean)} {figures.docstring_findings}"
          f"; diff coverage {_coverage(figures.diff_coverage.get('c'))}", flush=True)


# ---------------------------------------------------------------- output

def _yes(value: bool | None) -> str:
    return "-" if value is None else "y" if value else "n"


def _number(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _coverage(value: dict[str, Any] | None) -> str:
    if not value:
        return "-"
    ratio = value.get("ratio")
    return f"{value['executedLines']}/{value['changedLines']}" + ("" if ratio is None else f" ({ratio:.0%})")


def print_table(rows: list[Figures]) -> None:
    header = (f"{'project':16s} {'build':10s} {'compute s':>9s} {'(a) rank':>8s} {'(b) listed':>10s} {'(c) clean':>9s} "
              f"{'cov (a)':>12s} {'cov (b)':>12s} {'report s h/m/t':>15s} {'page B idx/max':>16s} {'gen s':>6s} {'witnesses':>9s}")
    print()
    print(header)
    print("-" * len(header))
    for f in rows:
        reports = "/".join(_number(f.report_seconds.get(s), ".1f") for s in ("html", "markdown", "terminal"))
        pages = f"{_number(f.index_bytes, 'd')}/{_number(f.largest_page_bytes, 'd')}"
        listed = "-" if f.untested_listed is None else f"{_yes(f.untested_listed)}, br {_yes(f.branch_listed)}"
        print(f"{f.project:16s} {f.build_style:10s} {_number(f.compute_seconds, '.1f'):>9s} {_number(f.mutant_rank, 'd'):>8s} "
              f"{listed:>10s} {_yes(f.docstring_clean):>9s} {_coverage(f.diff_coverage.get('a')):>12s} "
              f"{_coverage(f.diff_coverage.get('b')):>12s} {reports:>15s} {pages:>16s} {_number(f.generate_seconds, '.0f'):>6s} "
              f"{_number(f.witnesses, 'd'):>9s}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", nargs="+", metavar="REPO", help="local git clones (only read)")
    parser.add_argument("--histeg-arg", action="append", default=[], metavar="NAME=ARG",
                        help="an option for compute of the repository whose folder is NAME (repeatable)")
    parser.add_argument("--budget", type=float, default=60.0, help="histeg generate --budget")
    parser.add_argument("--top", type=int, default=3, help="histeg generate --top")
    parser.add_argument("--work", type=Path, default=None, help="where the scratch directory goes (default: the system's)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory (clones, histeg's output) for inspection")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    options = parser.parse_args()
    rows = []
    with scratch_directory("histeg-report-", options.work, options.keep, print) as scratch:
        for repo in options.repos:
            name = Path(repo).resolve().name
            extra = [arg.partition("=")[2] for arg in options.histeg_arg if arg.partition("=")[0] == name]
            try:
                rows.append(measure(repo, scratch, extra, options.budget, options.top))
            except (RuntimeError, subprocess.SubprocessError) as error:
                print(f"{name}: {error}", flush=True)
                figures = Figures(name, "?")
                figures.compute_error = str(error)
                rows.append(figures)
    print_table(rows)
    if options.json:
        options.json.write_text(json.dumps([asdict(row) for row in rows], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
