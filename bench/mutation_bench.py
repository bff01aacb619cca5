"""Mutation check on a real repository: is the mutated function ranked first?

    python bench/mutation_bench.py REPO [--mutants 20] [--base REV] [--sources src] [--tests tests]
                                        [--work DIR] [--json FILE]

Clones REPO into a scratch directory (REPO itself is only read), picks
functions under the sources directory that the test suite executes at the base
version and gives each one single-function mutant built with ``ast`` (flipped
comparison, negated condition, numeric constant plus one, ``and``/``or``
swapped, early return). A mutant is kept only if the test suite's outcome or
the mutated function's executed lines change; each kept mutant is committed on
its own branch on top of the base, and ``histeg compute --versions BASE
MUTANT`` runs on one shared output directory (the base's results are reused).
The figure is the rank of the mutated function's identifier in the mutant's
``testingTargets.json``: top-1 rate, top-3 rate, median rank, a per-mutant
table and the total time. Goals: top-1 >= 90 %, top-3 = 100 %.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from histeg.naming import identifier, module_name  # noqa: E402

VARIED = ("compare", "condition", "constant", "boolop")
"""Tried in turn, starting one further for each mutant, so the mutants mix kinds."""
LAST_RESORT = "return"
"""An early return changes a function wholesale: used only when nothing else is observable."""
TRIALS_PER_FUNCTION = 6
SITES_PER_OPERATOR = 3
LEADERS = 5
MONITORING_TOOL = 5
FLIPPED: dict[type, type] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
    ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}
OWN_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.GeneratorExp)
"""Nodes whose code runs under another identifier (nested functions, classes, lambdas, generator expressions)."""


# ---------------------------------------------------------------- processes

def git(repo: Path, *args: str, clock: int = 0) -> str:
    """git with a fixed identity and date, so mutant commits get the same SHAs on every run."""
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
    """The real command line in a child process, with ``--json``; messages stay on stderr."""
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "histeg", *args, "--json"], capture_output=True, text=True,
                            timeout=timeout, check=False, cwd=ROOT)
    seconds = time.perf_counter() - started
    summary = json.loads(result.stdout) if result.stdout.strip() else None
    return HistegRun(result.returncode, seconds, summary, result.stderr)


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


# ---------------------------------------------------------------- executed lines

def collect_lines(output: str, root: str, sources: list[str], pytest_args: list[str]) -> None:
    """Run pytest in this process counting line events per function of the sources; write them as JSON.

    Runs in a child process started by :func:`executed_lines`; independent of histeg's tracer on purpose.
    """
    import pytest

    base = Path(root).resolve()
    prefixes = tuple(str(base / source) + os.sep for source in sources)
    mon = sys.monitoring
    counts: dict[object, dict[int, int]] = {}
    names: dict[object, str] = {}

    def line(code: Any, number: int) -> object:
        per_line = counts.get(code)
        if per_line is None:
            if not code.co_filename.startswith(prefixes) or code.co_qualname == "<module>":
                return mon.DISABLE
            relative = Path(code.co_filename).resolve().relative_to(base).as_posix()
            names[code] = identifier(module_name(relative, sources), code.co_qualname)
            per_line = counts[code] = {}
        per_line[number] = per_line.get(number, 0) + 1
        return None

    mon.use_tool_id(MONITORING_TOOL, "mutation-bench")
    mon.register_callback(MONITORING_TOOL, mon.events.LINE, line)
    mon.set_events(MONITORING_TOOL, mon.events.LINE)
    try:
        exit_code = int(pytest.main(["-q", "-p", "no:cacheprovider", *pytest_args]))
    finally:
        mon.set_events(MONITORING_TOOL, 0)
        mon.free_tool_id(MONITORING_TOOL)
    merged: dict[str, dict[str, int]] = {}
    for code, per_line in counts.items():
        target = merged.setdefault(names[code], {})
        for number, count in per_line.items():
            target[str(number)] = target.get(str(number), 0) + count
    Path(output).write_text(json.dumps({"exitCode": exit_code, "lines": merged}))


@dataclass
class Execution:
    exit_code: int | None
    """pytest's exit code; None when the run timed out."""
    lines: dict[str, dict[str, int]]


def executed_lines(root: Path, sources: Sequence[str], tests: Sequence[str], timeout: float, python: str = sys.executable) -> Execution:
    """``collect_lines`` run by ``python`` (the project's own interpreter where it has one): line counts per function."""
    with tempfile.TemporaryDirectory(prefix="mutation-lines-") as scratch:
        output = Path(scratch) / "lines.json"
        program = (f"import sys; sys.path.insert(0, {str(Path(__file__).resolve().parent)!r}); import mutation_bench; "
                   f"mutation_bench.collect_lines({str(output)!r}, {str(root)!r}, {list(sources)!r}, {list(tests)!r})")
        try:
            subprocess.run([python, "-c", program], cwd=root, env=suite_environment(root, sources),
                           capture_output=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return Execution(None, {})
        if not output.is_file():
            return Execution(None, {})
        data = json.loads(output.read_text())
    return Execution(data["exitCode"], data["lines"])


# ---------------------------------------------------------------- functions and mutations

@dataclass
class FunctionSite:
    identifier: str
    path: str
    """Relative to the repository root, POSIX."""
    node: ast.FunctionDef | ast.AsyncFunctionDef


def functions_in(root: Path, path: str, sources: Sequence[str]) -> Iterator[FunctionSite]:
    """Every def of one file with its qualname as CPython spells it (``C.m``, ``f.<locals>.g``)."""
    tree = ast.parse((root / path).read_bytes())
    module = module_name(path, sources)

    def walk(node: ast.AST, prefix: str) -> Iterator[FunctionSite]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qualname = prefix + child.name
                yield FunctionSite(identifier(module, qualname), path, child)
                yield from walk(child, qualname + ".<locals>.")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, prefix + child.name + ".")
            else:
                yield from walk(child, prefix)

    yield from walk(tree, "")


def own_nodes(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.AST]:
    """Nodes of the function's own code in source order: not decorators, defaults or nested scopes."""
    stack = list(reversed(function.body))
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed([c for c in ast.iter_child_nodes(node) if not isinstance(c, OWN_SCOPES)]))


@dataclass
class Edit:
    """Replace bytes [start, end) of the file (line, byte column pairs) by ``text``."""

    start: tuple[int, int]
    end: tuple[int, int]
    text: str
    description: str


def _span(node: ast.AST) -> tuple[tuple[int, int], tuple[int, int]]:
    return (node.lineno, node.col_offset), (node.end_lineno or node.lineno, node.end_col_offset or 0)


def _docstring_skipped(body: list[ast.stmt]) -> list[ast.stmt]:
    first = body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return body[1:]
    return body


def candidate_edits(function: ast.FunctionDef | ast.AsyncFunctionDef, operator: str) -> Iterator[Edit]:
    """The edits of one operator inside one function, in source order."""
    if operator == "return":
        body = _docstring_skipped(function.body)
        if body and body[0].lineno > function.lineno and not any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own_nodes(function)):
            first = body[0]
            indent = " " * first.col_offset
            yield Edit((first.lineno, 0), (first.lineno, 0), f"{indent}return None\n", f"return None early (line {first.lineno})")
        return
    for node in own_nodes(function):
        if operator == "compare" and isinstance(node, ast.Compare) and type(node.ops[0]) in FLIPPED:
            flipped = ast.Compare(node.left, [FLIPPED[type(node.ops[0])](), *node.ops[1:]], node.comparators)
            old, new = _op_text(node.ops[0]), _op_text(flipped.ops[0])
            yield Edit(*_span(node), ast.unparse(flipped), f"'{old}' -> '{new}' (line {node.lineno})")
        elif operator == "condition" and isinstance(node, (ast.If, ast.While, ast.IfExp)):
            test = node.test
            yield Edit(*_span(test), f"not ({ast.unparse(test)})", f"negated condition (line {test.lineno})")
        elif (operator == "constant" and isinstance(node, ast.Constant) and type(node.value) in (int, float)
              and not isinstance(node.value, bool)):
            yield Edit(*_span(node), repr(node.value + 1), f"{node.value!r} -> {node.value + 1!r} (line {node.lineno})")
        elif operator == "boolop" and isinstance(node, ast.BoolOp):
            swapped = ast.BoolOp(ast.Or() if isinstance(node.op, ast.And) else ast.And(), node.values)
            old, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
            yield Edit(*_span(node), f"({ast.unparse(swapped)})", f"'{old}' -> '{new}' (line {node.lineno})")


def _op_text(op: ast.cmpop) -> str:
    return {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=", ast.In: "in",
            ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}[type(op)]


def apply_edit(source: bytes, edit: Edit) -> bytes:
    """Column offsets of ``ast`` are UTF-8 byte offsets, so the edit works on bytes."""
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    begin = starts[edit.start[0] - 1] + edit.start[1]
    end = starts[edit.end[0] - 1] + edit.end[1]
    return source[:begin] + edit.text.encode() + source[end:]


# ---------------------------------------------------------------- the check

@dataclass
class Mutant:
    number: int
    function: str
    path: str
    mutation: str
    evidence: str
    """Why it counts as a behaviour change: the tests' outcome or the function's executed lines changed."""
    branch: str = ""
    sha: str = ""
    rank: int | None = None
    top: str | None = None
    value: float | None = None
    top_value: float | None = None
    targets: int = 0
    noise: list[str] = field(default_factory=list)
    leaders: list[dict[str, Any]] = field(default_factory=list)
    """The first targets and the mutated function's own, summarised (for the JSON output)."""
    histeg_code: int | None = None
    seconds: float = 0.0


@dataclass
class Report:
    base: str
    mutants: list[Mutant]
    seconds: float
    rejected: int
    output: str
    """histeg's output directory (removed at the end unless kept)."""

    def ranks(self) -> list[float]:
        return [m.rank if m.rank is not None else float("inf") for m in self.mutants]

    def top(self, k: int) -> float:
        return sum(1 for r in self.ranks() if r <= k) / len(self.mutants) if self.mutants else 0.0

    def median_rank(self) -> float:
        return statistics.median(self.ranks()) if self.mutants else float("nan")

    def misses(self, k: int) -> list[Mutant]:
        return [m for m in self.mutants if m.rank is None or m.rank > k]


def spread(items: list[Any], wanted: int) -> list[Any]:
    """Evenly spaced picks first (variety across the files), then the rest in order as fallbacks."""
    if len(items) <= wanted:
        return items
    picks = sorted({round(i * (len(items) - 1) / max(wanted - 1, 1)) for i in range(wanted)})
    return [items[i] for i in picks] + [item for i, item in enumerate(items) if i not in set(picks)]


def find_mutant(clone_dir: Path, site: FunctionSite, start: int, base: Execution, sources: Sequence[str], tests: Sequence[str],
                timeout: float) -> tuple[bytes, Edit, str] | None:
    """The first edit (operators tried from ``start`` on) whose effect the test suite observes."""
    path = clone_dir / site.path
    original = path.read_bytes()
    trials = 0
    try:
        for operator in (*VARIED[start:], *VARIED[:start], LAST_RESORT):
            for edit in list(candidate_edits(site.node, operator))[:SITES_PER_OPERATOR]:
                if trials == TRIALS_PER_FUNCTION:
                    return None
                trials += 1
                mutated = apply_edit(original, edit)
                try:
                    ast.parse(mutated)
                except SyntaxError:
                    continue
                path.write_bytes(mutated)
                run = executed_lines(clone_dir, sources, tests, timeout)
                if run.exit_code not in (0, 1):
                    continue  # timed out, or the suite could not even run: not a behaviour change histeg can trace
                if run.exit_code != base.exit_code:
                    return mutated, edit, "tests fail" if run.exit_code else "tests pass"
                if run.lines.get(site.identifier) != base.lines.get(site.identifier):
                    return mutated, edit, "executed lines change"
    finally:
        path.write_bytes(original)
    return None


def rank_of(out: Path, mutant: Mutant, index: int) -> None:
    document = json.loads((out / str(index) / "testingTargets.json").read_text())
    if document["identifier"] != mutant.sha:
        raise RuntimeError(f"{out / str(index)} holds {document['identifier']}, not mutant {mutant.sha}")
    targets = document["targets"]
    mutant.targets = len(targets)
    mutant.noise = document["noise"]["functions"]
    if targets:
        mutant.top, mutant.top_value = targets[0]["identifier"], targets[0]["value"]
    for target in targets:
        if target["identifier"] == mutant.function:
            mutant.rank, mutant.value = target["rank"], target["value"]
            break
    keys = ("rank", "identifier", "value", "origin", "syntaxChangeCount", "localDivergenceCount", "nonLocalDivergenceCount", "notes")
    mutant.leaders = [{k: t[k] for k in keys} for t in targets if t["rank"] <= LEADERS or t["identifier"] == mutant.function]


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


def make_mutants(clone_dir: Path, base_sha: str, wanted: int, sources: Sequence[str], tests: Sequence[str],
                 log: Any) -> tuple[list[Mutant], int]:
    """Commit one observable mutant per chosen function, each on its own branch on top of the base."""
    code, seconds, last = untraced_suite(clone_dir, sources, tests)
    log(f"base {base_sha[:12]}: untraced test suite exit {code} in {seconds:.2f}s ({last})")
    if code != 0:
        raise RuntimeError(f"the test suite does not pass at {base_sha[:12]}: {last}")
    reference = executed_lines(clone_dir, sources, tests, timeout=max(120.0, 20 * seconds))
    if reference.exit_code != 0:
        raise RuntimeError(f"the test suite does not pass under the line counter at {base_sha[:12]}")
    timeout = max(60.0, 10 * seconds + 30)
    files = sorted(p.relative_to(clone_dir).as_posix() for source in sources for p in (clone_dir / source).rglob("*.py"))
    sites = [s for f in files for s in functions_in(clone_dir, f, sources) if reference.lines.get(s.identifier)]
    log(f"{len(sites)} functions under {', '.join(sources)} are executed by the tests")
    chosen: list[Mutant] = []
    rejected = 0
    for site in spread(sites, wanted):
        if len(chosen) == wanted:
            break
        found = find_mutant(clone_dir, site, len(chosen) % len(VARIED), reference, sources, tests, timeout)
        if found is None:
            rejected += 1
            log(f"  no observable mutant for {site.identifier}")
            continue
        content, edit, evidence = found
        mutant = Mutant(len(chosen) + 1, site.identifier, site.path, edit.description, evidence)
        mutant.branch = f"mutant-{mutant.number:02d}"
        git(clone_dir, "checkout", "-q", "-b", mutant.branch, base_sha)
        (clone_dir / site.path).write_bytes(content)
        git(clone_dir, "commit", "-q", "-a", "-m", f"{site.identifier}: {edit.description}", clock=mutant.number)
        mutant.sha = git(clone_dir, "rev-parse", "HEAD")
        git(clone_dir, "checkout", "-q", "--detach", base_sha)
        chosen.append(mutant)
        log(f"  mutant {mutant.number:2d}: {site.identifier}: {edit.description} [{evidence}]")
    return chosen, rejected


def rank_mutant(clone_dir: Path, base_sha: str, mutant: Mutant, out: Path, results: Path, log: Any) -> None:
    """``histeg compute`` of base and mutant on the shared output directory; the mutant's files are copied to ``results``."""
    run = run_histeg("compute", "--repo", str(clone_dir), "--branch", mutant.branch, "--versions", base_sha, mutant.sha,
                     "--out", str(out), "-q")
    mutant.histeg_code, mutant.seconds = run.code, run.seconds
    versions = run.summary["steps"]["extract"]["versions"] if run.summary else []
    index = next((v["index"] for v in versions if v["identifier"] == mutant.sha), None)
    if index is None or not (out / str(index) / "testingTargets.json").is_file():
        log(f"  mutant {mutant.number:2d}: histeg exited with {run.code} and wrote no targets: {run.stderr.strip()[-500:]}")
        return
    rank_of(out, mutant, index)
    kept = results / mutant.branch
    kept.mkdir(parents=True)
    for name in ("testingTargets.json", "traceDivergences.json", "syntaxChanges.json"):
        shutil.copy2(out / str(index) / name, kept / name)
    log(f"  mutant {mutant.number:2d}: rank {mutant.rank} of {mutant.targets} ({mutant.seconds:.1f}s)")


def mutation_check(repo: str, mutants: int = 20, base: str | None = None, sources: Sequence[str] = ("src",),
                   tests: Sequence[str] = ("tests",), work: Path | None = None, log: Any = print, keep: bool = False) -> Report:
    """Build the mutants in a clone of ``repo`` and rank each with ``histeg compute``."""
    started = time.perf_counter()
    with scratch_directory("histeg-mutants-", work, keep, log) as scratch:
        clone_dir = clone(repo, scratch / "clone")
        base_sha = git(clone_dir, "rev-parse", "--verify", f"{base or 'HEAD'}^{{commit}}")
        git(clone_dir, "checkout", "-q", "--detach", base_sha)
        chosen, rejected = make_mutants(clone_dir, base_sha, mutants, sources, tests, log)
        out = scratch / "out"
        for mutant in chosen:
            rank_mutant(clone_dir, base_sha, mutant, out, scratch / "results", log)
        return Report(base_sha, chosen, time.perf_counter() - started, rejected, str(out))


def print_report(report: Report) -> None:
    print()
    print(f"base {report.base[:12]}: {len(report.mutants)} mutants ({report.rejected} functions without an observable mutant)")
    print(f"top-1 rate {report.top(1):.0%}  top-3 rate {report.top(3):.0%}  median rank {report.median_rank()}  "
          f"total time {report.seconds:.0f}s   goals: top-1 >= 90%, top-3 = 100%")
    header = f"{'#':>2}  {'function':48s} {'mutation':34s} {'evidence':22s} {'rank':>4} {'value':>7}  top target if different (value)"
    print(header)
    print("-" * len(header))
    for m in report.mutants:
        rank = "-" if m.rank is None else str(m.rank)
        value = "-" if m.value is None else f"{m.value:.2f}"
        top = "" if m.top == m.function else f"{m.top} ({m.top_value:.2f})" if m.top else "(no targets)"
        print(f"{m.number:2d}  {m.function:48s} {m.mutation:34s} {m.evidence:22s} {rank:>4} {value:>7}  {top}")
    noisy = sorted({f for m in report.mutants for f in m.noise})
    if noisy:
        print(f"noise (functions diverging between runs of one version): {', '.join(noisy)}")


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    """The repository, its layout and where the scratch directory goes, shared by the real-project benchmarks."""
    parser.add_argument("repo", help="repository path or URL (only read)")
    parser.add_argument("--sources", action="append", help="sources directory (repeatable; default src)")
    parser.add_argument("--tests", action="append", help="tests directory (repeatable; default tests)")
    parser.add_argument("--work", type=Path, default=None, help="where the scratch directory goes (default: the system's)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory (clone, histeg's output) for inspection")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_arguments(parser)
    parser.add_argument("--mutants", type=int, default=20)
    parser.add_argument("--base", default=None, help="base revision (default: the repository's HEAD)")
    args = parser.parse_args()
    report = mutation_check(args.repo, args.mutants, args.base, args.sources or ["src"], args.tests or ["tests"], args.work,
                             keep=args.keep)
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps({"base": report.base, "seconds": report.seconds, "top1": report.top(1), "top3": report.top(3),
                                         "mutants": [asdict(m) for m in report.mutants]}, indent=1))


if __name__ == "__main__":
    main()
