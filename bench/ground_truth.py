"""Ground truth on real projects: a chain of seeded commits of known effect, and how histeg ranks them.

    python bench/ground_truth.py REPO [REPO ...] [--mutants 6] [--seed 1] [--base REV] [--python PY] [--work DIR] [--keep]
                                 [--report FILE] [--max-trials 60] [--pytest-arg=--ignore=tests/slow ...]
                                 [--histeg-arg=--repeat=2 ...]

Each REPO is cloned (it is only read); on top of its HEAD (or ``--base``) goes a
linear chain of commits, built from ``--seed`` alone, so the same repository
gives the same commits (and SHAs) every time:

1. ``clock``: a new test calling module-level functions that are mutated
   later with inputs derived from the clock (``time.time()``, ``datetime.now()``):
   they differ on every run, so histeg must call that noise, and only for that
   test; a mutant of the same function must still be ranked. Coarse readings
   (to the second, two seconds, the minute) differ only when a tick falls
   between two runs; ``--clock-runs N`` computes the code-neutral commits at
   the chain's end (which the clock test runs) N more times, traces and
   re-runs made anew, and counts their targets: every one is false (goal 0).
2. ``mutant`` / ``revert``: single-function mutants made with ``ast`` on the
   package's sources (not tests) and applied by exact text substitution at the
   nodes' positions (``<``/``<=``, ``==``/``!=``, ``+``/``-``, int + 1,
   ``and``/``or``, ``return x``/``return None``, ``True``/``False``), each
   followed by its revert. Only mutants that make the untraced suite fail are
   kept; functions are tried in seeded random order, a few edits each. Truth:
   the mutated function, ``module:Qual.name`` as in ``functions.json``.
3. ``constant`` / ``revert``: a module-level constant's value changed (observed by
   a failing test); truth ``module:NAME``. ``class-attribute`` / ``revert``: a
   class attribute's value that the package reads through an instance
   (``self.X``); truth ``module:Class.X``. "n/a" when a project has none.
4. ``docstring``, ``comment``, ``no-op`` (whitespace on a blank line inside a
   function, else a README line): code-neutral, so the truth is no target.

Then ``histeg compute --versions BASE..HEAD --json`` runs once over the chain,
each version folder is matched to its seeded commit by SHA, and the figures are
printed per project (``--report`` writes them as JSON): top-1/top-3 of mutants
(goals: at least 90 % and 100 %) and of reverts, the mutants' median rank,
targets on neutral commits (goal 0), value changes in the top 3, mutants lost
to noise, compare time next to one traced run of the suite (``runs.json``;
medians over versions) and histeg's peak memory. ``measure`` gives the same
figures to Python callers (the opt-in real-project test).

The untraced checks run the suite as histeg does: in the environment histeg
builds for the base (a ``histeg instrument`` of the base alone, which also
gives ``functions.json``, the sources and tests directories and pytest's
options), or with ``--python``. ``--pytest-arg`` (say, to leave out a directory
of type-checker tests that the version's environment would run) goes to those
checks and to histeg, whose suite is then given as ``--no-tests --run "python
-m pytest ..."``; both options apply to every REPO given.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from histeg.records.divergences import TraceDivergences

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_repos import add_harness_arguments, each_project, log_to_stderr, print_heading, rank_cells  # noqa: E402

HISTEG = Path(sys.executable).with_name("histeg")
BRANCH = "ground-truth"
TRIES_PER_FUNCTION = 3
VALUE_TRIES = 10
CLOCK_TEST = "test_ground_truth_clock.py"
NEUTRAL = ("docstring", "comment", "no-op")
MIB = 1024.0
OWN_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
FLIPPED = {b"<": b"<=", b"<=": b"<", b">": b">=", b">=": b">", b"==": b"!=", b"!=": b"=="}
COLLECTOR = r"""
import json, os, sys
import pytest
output, root = sys.argv[1], os.path.realpath(sys.argv[2])
mon, seen = sys.monitoring, set()
tool = next(t for t in range(3, 6) if mon.get_tool(t) is None)
def start(code, offset):
    path = os.path.realpath(code.co_filename)
    if path.startswith(root + os.sep):
        seen.add((os.path.relpath(path, root), code.co_firstlineno))
    return mon.DISABLE
mon.use_tool_id(tool, "ground-truth")
mon.register_callback(tool, mon.events.PY_START, start)
mon.set_events(tool, mon.events.PY_START)
code = int(pytest.main(sys.argv[3:]))
mon.set_events(tool, 0)
with open(output, "w") as handle:
    json.dump({"exitCode": code, "executed": sorted(seen)}, handle)
"""
"""Records which code objects of the clone start during the suite (once each: DISABLE), without histeg."""
CLOCK_SOURCE = '''"""Reads the clock, so two runs of one version differ (seeded by a ground-truth harness)."""

import datetime
import importlib
import inspect
import time

CALLED = {called!r}


def _clock_values() -> list[object]:
    now = time.time()
    # fine readings differ on every run; coarse ones (the second, two seconds, the minute, the day) only when a tick
    # falls between two runs, which re-runs made at the wrong moments would take for a change
    return [now % 10, datetime.datetime.now(), datetime.timedelta(seconds=now % 10), str(time.time_ns()),
            time.gmtime(now).tm_sec, int(now) // 2, int(now) // 60, datetime.date.today()]


def _arity(function: object) -> int:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return 1
    required = [p for p in parameters if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return max(len(required), 1)


def test_called_with_clock_values() -> None:
    for module, name in CALLED:
        function = getattr(importlib.import_module(module), name)
        for value in _clock_values():
            try:
                function(*[value] * _arity(function))
            except Exception:
                pass
'''


@dataclass
class Options:
    """The command line's options, for callers that measure from Python."""

    mutants: int = 6
    """Mutants kept per project (each with its revert)."""
    seed: int = 1
    base: str = "HEAD"
    """Revision the chain goes on top of."""
    python: str | None = None
    """Interpreter of the untraced checks (default: the one histeg builds for the base)."""
    max_trials: int = 60
    """Untraced suite runs spent looking for mutants."""
    pytest_arg: list[str] = field(default_factory=list)
    histeg_arg: list[str] = field(default_factory=list)
    work: Path | None = None
    keep: bool = False
    clock_runs: int = 0
    """Repeated computes of the code-neutral commits, counting false targets (0: none)."""


# ---------------------------------------------------------------- processes

class Git:
    """git in one clone with a fixed identity and a date that advances per commit: the same chain gets the same SHAs."""

    def __init__(self, repo: Path) -> None:
        self.repo, self.commits = repo, 0

    def __call__(self, *args: str) -> str:
        date = f"2030-01-01T00:{self.commits // 60 % 60:02d}:{self.commits % 60:02d}+00:00"
        env = {**os.environ, "GIT_AUTHOR_NAME": "Ground Truth", "GIT_AUTHOR_EMAIL": "ground-truth@example.org",
               "GIT_COMMITTER_NAME": "Ground Truth", "GIT_COMMITTER_EMAIL": "ground-truth@example.org",
               "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
        result = subprocess.run(["git", "-C", str(self.repo), *args], capture_output=True, text=True, env=env, check=False)
        if result.returncode != 0:
            raise RuntimeError(f"git {' '.join(args)}: {result.stderr.strip()}")
        return result.stdout.strip()

    def commit(self, message: str, *paths: str) -> str:
        self.commits += 1
        if paths:
            self("add", "--", *paths)
        self("commit", "-q", "--allow-empty", "-m", message)
        return self("rev-parse", "HEAD")


@dataclass
class Histeg:
    code: int
    seconds: float
    summary: dict[str, Any] | None
    stderr: str
    maxrss_kib: int = 0


def run_histeg(args: Sequence[str], logs: Path) -> Histeg:
    """The histeg console script with ``--json``; wall time and the max RSS of its process tree (``wait4``)."""
    logs.mkdir(parents=True, exist_ok=True)
    out, err = logs / "histeg.stdout", logs / "histeg.stderr"
    started = time.perf_counter()
    with open(out, "wb") as stdout, open(err, "wb") as stderr:
        process = subprocess.Popen([str(HISTEG), *args, "--json"], stdout=stdout, stderr=stderr)
        _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    text = out.read_text()
    summary = json.loads(text) if text.strip() else None
    return Histeg(process.returncode, time.perf_counter() - started, summary, err.read_text(), usage.ru_maxrss)


# ---------------------------------------------------------------- the project and its suite

@dataclass
class Suite:
    """How the untraced suite runs in the clone: interpreter, environment variables, pytest arguments."""

    python: str
    env: dict[str, str]
    args: list[str]
    """pytest's options, without the test paths."""
    paths: list[str]
    """The tests directories run by default."""
    timeout: float = 600.0

    def run(self, clone: Path, *extra: str, timeout: float | None = None) -> int | None:
        """pytest's exit code, None on timeout."""
        return self.outcome(clone, *extra, timeout=timeout)[0]

    def outcome(self, clone: Path, *extra: str, paths: Sequence[str] | None = None, timeout: float | None = None) -> tuple[int | None, str]:
        """pytest's exit code (None on timeout) and its last line with the first failing test, over ``paths`` (default: the tests directories)."""
        argv = [self.python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *extra, *self.args,
                *(self.paths if paths is None else paths)]
        try:
            result = subprocess.run(argv, cwd=clone, env=self.env, capture_output=True, text=True, timeout=timeout or self.timeout,
                                    check=False)
        except subprocess.TimeoutExpired:
            return None, "timeout"
        lines = result.stdout.strip().splitlines()
        first = next((line.split()[1] for line in lines if line.startswith(("FAILED ", "ERROR ")) and len(line.split()) > 1), None)
        last = lines[-1] if lines else ""
        return result.returncode, f"{last} (first: {first})" if first else last

    def executed(self, clone: Path, scratch: Path) -> tuple[int, set[tuple[str, int]]]:
        """Exit code and the (file, first line) of every code object of the clone the suite starts."""
        output = scratch / "executed.json"
        argv = [self.python, "-c", COLLECTOR, str(output), str(clone), "-q", "-p", "no:cacheprovider", *self.args, *self.paths]
        subprocess.run(argv, cwd=clone, env=self.env, capture_output=True, timeout=self.timeout * 3, check=False)
        if not output.is_file():
            return -1, set()
        data = json.loads(output.read_text())
        return data["exitCode"], {(path, line) for path, line in data["executed"]}


@dataclass
class Project:
    """What a ``histeg instrument`` of the base says: layout, function table, the version's environment."""

    sources: list[str]
    tests: list[str]
    functions: list[dict[str, Any]]
    suite: Suite
    package_files: list[str]
    histeg_pytest: list[str]
    """histeg options that run the same pytest command traced (with ``--pytest-arg``), else none: histeg's default suite."""


def probe(clone: Path, base: str, scratch: Path, python: str | None, extra: list[str], log: Any) -> Project:
    """Instrument the base alone (histeg builds its environment) and read what the harness needs from it."""
    out = scratch / "probe"
    run = run_histeg(["instrument", "--repo", str(clone), "--versions", f"{base}..{base}", "--out", str(out), "-q"], scratch / "probe-logs")
    versions = run.summary["steps"]["extract"]["versions"] if run.summary else []
    if run.code != 0 or not versions:
        raise RuntimeError(f"histeg instrument of the base failed ({run.code}): {run.stderr.strip()[-800:]}")
    folder = out / str(versions[0]["index"])
    version = json.loads((folder / "version.json").read_text())
    build = json.loads((folder / "build.json").read_text())
    functions = json.loads((folder / "functions.json").read_text())["functions"]
    sources, tests = version["sourcesIn"], version["testsIn"]
    overlay_generated(folder, build, clone)
    suite = suite_of(clone, folder, build, sources, tests, python, extra)
    files = package_files(clone, functions, sources, tests, (build.get("declarations") or {}).get("name"))
    log(f"  sources {sources}, tests {tests}, {len(files)} package file(s), python {suite.python}")
    traced = ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", *build.get("pytestArgs", []), *extra, *tests]
    return Project(sources, tests, functions, suite, files, ["--no-tests", "--run", shlex.join(traced)] if extra else [])


def overlay_generated(folder: Path, build: dict[str, Any], clone: Path) -> None:
    """Files the build generates in the sources (``_version.py``) go into the clone's work tree, untracked, as histeg does per run."""
    for relative in (build.get("project") or {}).get("generated", []):
        source = folder / "build-generated" / relative
        if source.is_file() and not (clone / relative).exists():
            (clone / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, clone / relative)


def suite_of(clone: Path, folder: Path, build: dict[str, Any], sources: list[str], tests: list[str], python: str | None,
             extra: list[str]) -> Suite:
    """The clone's sources first on PYTHONPATH, then the installed project, as histeg's runs have them."""
    roots = [str((clone / source).resolve()) for source in sources]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if python is None:
        python = (build.get("environment") or {}).get("python") or sys.executable
        if (build.get("project") or {}).get("installed"):
            roots.append(str(folder / "site"))
        pytest_args = list(build.get("pytestArgs", []))
    else:
        pytest_args = ["--no-cov"] if imports(python, "pytest_cov") else []
    env["PYTHONPATH"] = os.pathsep.join(roots)
    env["PATH"] = os.pathsep.join([str(Path(python).parent), env.get("PATH", os.defpath)])
    return Suite(python, env, [*pytest_args, *extra], list(tests))


def imports(python: str, module: str) -> bool:
    return subprocess.run([python, "-c", f"import {module}"], capture_output=True, check=False).returncode == 0


def package_files(clone: Path, functions: list[dict[str, Any]], sources: list[str], tests: list[str], name: str | None) -> list[str]:
    """The project's own package: files of the function table under a source package, not tests, docs or scripts.

    With the sources at the root, the package named like the distribution is preferred; otherwise
    every top-level package (a directory with ``__init__.py``) outside the tests directories.
    """
    files = sorted({f["file"] for f in functions if f["kind"] == "module"})
    inside = [f for f in files if not any(Path(f).is_relative_to(t) for t in tests if t not in ("", "."))]
    wanted = (name or "").lower().replace("-", "_").replace(".", "_")
    tops: dict[str, list[str]] = {}
    for file in inside:
        for source in sources:
            relative = Path(file) if source in ("", ".") else Path(file).relative_to(source) if Path(file).is_relative_to(source) else None
            if relative is None or len(relative.parts) < 2:
                continue
            top = Path(source) / relative.parts[0]
            if (clone / top / "__init__.py").is_file() and relative.parts[0] not in ("tests", "test", "docs", "doc", "scripts"):
                tops.setdefault(relative.parts[0], []).append(file)
    if wanted in tops:
        return tops[wanted]
    return sorted(f for group in tops.values() for f in group)


# ---------------------------------------------------------------- byte-exact edits

@dataclass
class Edit:
    """Replace bytes [start, end) of ``path`` by ``text``."""

    path: str
    start: int
    end: int
    text: bytes
    description: str
    operator: str = ""
    """The mutation operator (comparison, arithmetic, boolean, bool, int, return), to mix the kinds kept."""


class Source:
    """One file's bytes, its tree and byte offsets of ``ast`` positions (columns are UTF-8 byte offsets)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.tree = ast.parse(data)
        self.starts = [0]
        for line in data.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, line: int, column: int) -> int:
        return self.starts[line - 1] + column

    def span(self, node: ast.AST) -> tuple[int, int]:
        return self.offset(node.lineno, node.col_offset), self.offset(node.end_lineno or node.lineno, node.end_col_offset or 0)

    def gap(self, left: ast.AST, right: ast.AST) -> tuple[int, int]:
        return self.span(left)[1], self.span(right)[0]


def apply(data: bytes, edit: Edit) -> bytes:
    return data[:edit.start] + edit.text + data[edit.end:]


def own_nodes(function: ast.AST) -> Iterator[ast.AST]:
    """The function's own code: not decorators, defaults, annotations, nested scopes or f-strings (their positions)."""
    stack = list(reversed(getattr(function, "body", [])))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.JoinedStr, *OWN_SCOPES)):  # a def in the body is a function of its own
            continue
        yield node
        stack.extend(reversed([c for c in ast.iter_child_nodes(node) if not isinstance(c, OWN_SCOPES)]))


def operator_edit(source: Source, path: str, left: ast.AST, right: ast.AST, swaps: dict[bytes, bytes], line: int,
                  operator: str) -> Edit | None:
    """Swap the operator token between two operands, when the gap holds just it (and parentheses, spaces)."""
    start, end = source.gap(left, right)
    gap = source.data[start:end]
    token = gap.strip(b" \t\r\n\\()")
    if token not in swaps or b"#" in gap:
        return None
    at = start + gap.index(token)
    return Edit(path, at, at + len(token), swaps[token], f"'{token.decode()}' -> '{swaps[token].decode()}' (line {line})", operator)


def node_edits(source: Source, path: str, node: ast.AST, generator: bool) -> Iterator[Edit]:
    """The mutations of one node, if any."""
    if isinstance(node, ast.Compare):
        edit = operator_edit(source, path, node.left, node.comparators[0], FLIPPED, node.lineno, "comparison")
        if edit:
            yield edit
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        edit = operator_edit(source, path, node.left, node.right, {b"+": b"-"}, node.lineno, "arithmetic")
        if edit:
            yield edit
    elif isinstance(node, ast.BoolOp):
        edit = operator_edit(source, path, node.values[0], node.values[1], {b"and": b"or", b"or": b"and"}, node.lineno, "boolean")
        if edit:
            yield edit
    elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
        yield Edit(path, *source.span(node), str(not node.value).encode(), f"{node.value} -> {not node.value} (line {node.lineno})", "bool")
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        yield Edit(path, *source.span(node), str(node.value + 1).encode(), f"{node.value} -> {node.value + 1} (line {node.lineno})", "int")
    elif (isinstance(node, ast.Return) and node.value is not None and not generator
          and not (isinstance(node.value, ast.Constant) and node.value.value is None)):
        yield Edit(path, *source.span(node.value), b"None", f"return None (line {node.lineno})", "return")


def mutations(source: Source, path: str, function: ast.AST) -> list[Edit]:
    nodes = list(own_nodes(function))
    generator = any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in nodes)
    docstring = docstring_node(function)
    return [e for n in nodes if n is not docstring for e in node_edits(source, path, n, generator)]


def docstring_node(node: ast.AST) -> ast.Constant | None:
    body = getattr(node, "body", [])
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        return body[0].value
    return None


def value_edit(source: Source, path: str, constant: ast.Constant, owner: str) -> Edit | None:
    """A constant's value changed: int + 1, float + 1, a suffix on a text, a flipped bool."""
    value = constant.value
    if isinstance(value, bool):
        new = repr(not value)
    elif isinstance(value, (int, float)):
        new = repr(value + 1)
    elif isinstance(value, str):
        new = repr(value + "_gt")
    else:
        return None
    return Edit(path, *source.span(constant), new.encode(), f"{owner}: {source.data[slice(*source.span(constant))].decode()[:30]} -> {new[:30]} (line {constant.lineno})")


# ---------------------------------------------------------------- the chain

@dataclass
class Seeded:
    """One commit of the chain and what histeg made of it."""

    kind: str
    """clock, mutant, revert, constant, class-attribute, docstring, comment, no-op."""
    description: str
    truth: str | None
    """The identifier that must rank first; None when no target is the truth."""
    sha: str = ""
    reverts: str | None = None
    """For a revert: the kind it reverts."""
    index: int | None = None
    rank: int | None = None
    targets: int | None = None
    top: list[str] = field(default_factory=list)
    in_noise: bool = False
    """The truth is listed as noise (testingTargets' noise or traceDivergences' noise)."""
    compare_seconds: float | None = None
    confirm_seconds: float | None = None
    traced_seconds: float | None = None
    failed: str | None = None


@dataclass
class Found:
    edit: Edit
    identifier: str
    module_level: bool


class ChainBuilder:
    """Finds observable edits in the clone and commits them, with their reverts, on one branch."""

    def __init__(self, clone: Path, project: Project, rng: random.Random, max_trials: int, log: Any) -> None:
        self.clone, self.project, self.rng, self.max_trials, self.log = clone, project, rng, max_trials, log
        self.git = Git(clone)
        self.trials = 0
        self.chain: list[Seeded] = []
        self.executed: set[tuple[str, int]] = set()

    # ---- checks

    def observed(self, edit: Edit) -> bool:
        """Apply ``edit`` to the work tree, run the untraced suite, restore: True when a test fails."""
        path = self.clone / edit.path
        original = path.read_bytes()
        mutated = apply(original, edit)
        try:
            ast.parse(mutated)
        except SyntaxError:
            return False
        self.trials += 1
        path.write_bytes(mutated)
        try:
            return self.project.suite.run(self.clone) == 1
        finally:
            path.write_bytes(original)

    def source(self, path: str) -> Source:
        return Source((self.clone / path).read_bytes())

    # ---- candidates

    def executed_functions(self) -> list[tuple[dict[str, Any], ast.AST]]:
        """Functions and methods of the package that the base's suite runs, with their ``ast`` nodes."""
        files = set(self.project.package_files)
        found = []
        for entry in self.project.functions:
            if entry["kind"] not in ("function", "method") or entry["file"] not in files:
                continue
            if (entry["file"], entry["firstLine"]) not in self.executed:
                continue
            node = self.node_of(entry)
            if node is not None:
                found.append((entry, node))
        return found

    def node_of(self, entry: dict[str, Any]) -> ast.AST | None:
        name = entry["qualname"].rpartition(".")[2]
        for node in ast.walk(self.source(entry["file"]).tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name and node.lineno == entry["defLine"]:
                return node
        return None

    def find_mutants(self, wanted: int) -> list[Found]:
        """Observable mutants in distinct functions, tried in seeded random order.

        Module-level functions are tried first until one is kept, so that the clock test has a mutated function to call.
        """
        functions = self.executed_functions()
        self.rng.shuffle(functions)
        head = [f for f in functions if "." not in f[0]["qualname"]][:5]
        found: list[Found] = []
        tried = []
        for entry, node in head:
            if found:
                break
            tried.append(entry["identifier"])
            self.try_function(entry, node, found)
        for entry, node in functions:
            if len(found) >= wanted or self.trials >= self.max_trials:
                break
            if entry["identifier"] not in tried:
                self.try_function(entry, node, found)
        return found

    def try_function(self, entry: dict[str, Any], node: ast.AST, found: list[Found]) -> None:
        edit = self.first_observed(mutations(self.source(entry["file"]), entry["file"], node), [f.edit.operator for f in found])
        if edit is None:
            self.log(f"    no observable mutant in {entry['identifier']}")
            return
        found.append(Found(edit, entry["identifier"], "." not in entry["qualname"]))
        self.log(f"    mutant {len(found)}: {entry['identifier']}: {edit.description}")

    def first_observed(self, edits: list[Edit], kept: Sequence[str] = ()) -> Edit | None:
        """The first of a few edits that a test observes: operators not kept yet first, ``return None`` (it changes everything) last."""
        self.rng.shuffle(edits)
        edits.sort(key=lambda e: (e.operator == "return", kept.count(e.operator)))
        for edit in edits[:TRIES_PER_FUNCTION]:
            if self.trials >= self.max_trials:
                return None
            if self.observed(edit):
                return edit
        return None

    def module_constants(self) -> list[tuple[Edit, str]]:
        """Value edits of module-level constants (``NAME = literal``, not dunders), truth ``module:NAME``."""
        found = []
        for path, source, module in self.package_sources():
            for statement in source.tree.body:
                target, value = assigned(statement)
                if target and not target.startswith("__") and target != "TYPE_CHECKING":
                    found += [(e, f"{module}:{target}") for e in constant_edits(source, path, value, target)]
        return found

    def class_attributes(self) -> list[tuple[Edit, str]]:
        """Value edits of class attributes the package reads through an instance (``self.X``), truth ``module:Class.X``."""
        read = self.attributes_read()
        found = []
        for path, source, module in self.package_sources():
            for qualname, cls in classes(source.tree):
                for statement in cls.body:
                    target, value = assigned(statement)
                    if target and not target.startswith("__") and target in read:
                        found += [(e, f"{module}:{qualname}.{target}") for e in constant_edits(source, path, value, f"{qualname}.{target}")]
        return found

    def attributes_read(self) -> set[str]:
        names = set()
        for _, source, _ in self.package_sources():
            for node in ast.walk(source.tree):
                if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and isinstance(node.value, (ast.Name, ast.Attribute)):
                    base = node.value
                    while isinstance(base, ast.Attribute):
                        base = base.value
                    if isinstance(base, ast.Name) and base.id == "self":
                        names.add(node.attr)
        return names

    def package_sources(self) -> Iterator[tuple[str, Source, str]]:
        modules = {f["file"]: f["module"] for f in self.project.functions if f["kind"] == "module"}
        for path in self.project.package_files:
            yield path, self.source(path), modules[path]

    def first_observed_value(self, candidates: list[tuple[Edit, str]]) -> tuple[Edit, str] | None:
        self.rng.shuffle(candidates)
        for edit, identifier in candidates[:VALUE_TRIES]:
            if self.observed(edit):
                return edit, identifier
        return None

    # ---- commits

    def commit_edit(self, kind: str, edit: Edit, truth: str | None) -> None:
        path = self.clone / edit.path
        original = path.read_bytes()
        path.write_bytes(apply(original, edit))
        description = f"{truth}: {edit.description}" if kind == "mutant" else edit.description
        sha = self.git.commit(f"ground truth: {kind}: {description}", edit.path)
        self.chain.append(Seeded(kind, description, truth, sha))
        if kind in ("mutant", "constant", "class-attribute"):
            path.write_bytes(original)
            sha = self.git.commit(f"ground truth: revert {kind}: {description}", edit.path)
            self.chain.append(Seeded("revert", f"revert {description}", truth, sha, reverts=kind))

    def commit_clock_test(self, mutants: list[Found]) -> None:
        called = [tuple(f.identifier.split(":")) for f in mutants if f.module_level]
        if not called or not self.project.tests:
            self.log("    clock test: n/a (no module-level function among the mutants)")
            return
        relative = (Path(self.project.tests[0]) / CLOCK_TEST).as_posix()
        (self.clone / relative).write_text(CLOCK_SOURCE.format(called=called))
        if self.project.suite.run(self.clone, "-k", "clock_values") != 0:
            (self.clone / relative).unlink()
            self.log("    clock test: n/a (it does not pass at the base)")
            return
        functions = ", ".join(f"{m}:{n}" for m, n in called)
        sha = self.git.commit(f"ground truth: a test calling {functions} with clock values", relative)
        self.chain.append(Seeded("clock", f"test calling {functions} with clock values", None, sha))

    def commit_neutral(self, preferred: list[str]) -> None:
        """Docstring, comment and no-op commits in functions the suite runs (the mutated ones first)."""
        functions = self.executed_functions()
        functions.sort(key=lambda item: item[0]["identifier"] not in preferred)
        for kind, make in (("docstring", docstring_edit), ("comment", comment_edit), ("no-op", blank_line_edit)):
            edit = next((e for entry, node in functions if (e := make(self.source(entry["file"]), entry["file"], node, entry["identifier"]))), None)
            if edit is None and kind == "no-op":
                self.commit_readme_line()
            elif edit is None:
                self.log(f"    {kind}: n/a")
            else:
                self.commit_edit(kind, edit, None)

    def commit_readme_line(self) -> None:
        readme = next((p for p in sorted(self.clone.iterdir()) if p.name.lower().startswith("readme") and p.is_file()), None)
        if readme is None:
            sha = self.git.commit("ground truth: no-op: an empty commit")
            self.chain.append(Seeded("no-op", "empty commit", None, sha))
            return
        readme.write_bytes(readme.read_bytes() + b"\n")
        sha = self.git.commit("ground truth: no-op: a blank line at the end of the README", readme.name)
        self.chain.append(Seeded("no-op", f"blank line at the end of {readme.name}", None, sha))


def assigned(statement: ast.stmt) -> tuple[str | None, ast.expr | None]:
    """``NAME = value`` or ``NAME: T = value``: the name and the value."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        return statement.targets[0].id, statement.value
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value is not None:
        return statement.target.id, statement.value
    return None, None


def constant_edits(source: Source, path: str, value: ast.expr | None, owner: str) -> list[Edit]:
    """Edits of the literals in a value made of literals only (a constant, or a tuple/list/set/dict of them)."""
    if value is None or not all(isinstance(n, (ast.Constant, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.UnaryOp, ast.unaryop, ast.expr_context))
                                for n in ast.walk(value)):
        return []
    return [e for n in ast.walk(value) if isinstance(n, ast.Constant) if (e := value_edit(source, path, n, owner))]


def classes(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, ast.ClassDef]]:
    for node in getattr(tree, "body", []):
        if isinstance(node, ast.ClassDef):
            yield prefix + node.name, node
            yield from classes(node, prefix + node.name + ".")


def docstring_edit(source: Source, path: str, node: ast.AST, identifier: str) -> Edit | None:
    """A sentence added at the end of the function's docstring, before its closing quotes."""
    doc = docstring_node(node)
    if doc is None:
        return None
    start, end = source.span(doc)
    raw = source.data[start:end]
    body = raw[:len(raw) - (3 if raw.endswith((b'"""', b"'''")) else 1)]
    at = start + len(body.rstrip())
    return Edit(path, at, at, b" Seeded docstring change.", f"{identifier}: docstring extended (line {doc.lineno})")


def comment_edit(source: Source, path: str, node: ast.AST, identifier: str) -> Edit | None:
    """A comment line before the function's first statement after its docstring."""
    body = list(getattr(node, "body", []))[1 if docstring_node(node) else 0:]
    if not body or body[0].lineno <= node.lineno or body[0].col_offset == 0:
        return None
    first = body[0]
    line = source.data[source.starts[first.lineno - 1]:source.starts[first.lineno]]
    indent = line[:len(line) - len(line.lstrip())]
    at = source.starts[first.lineno - 1]
    return Edit(path, at, at, indent + b"# Seeded comment-only change.\n", f"{identifier}: comment line added (line {first.lineno})")


def blank_line_edit(source: Source, path: str, node: ast.AST, identifier: str) -> Edit | None:
    """Indentation added to an empty line inside the function's body (not inside a string): no code changes."""
    in_strings = {line for n in ast.walk(node) if isinstance(n, (ast.Constant, ast.JoinedStr))
                  for line in range(n.lineno, (n.end_lineno or n.lineno) + 1)}
    body = getattr(node, "body", [])
    if not body:
        return None
    indent = b" " * body[0].col_offset
    for number in range(body[0].lineno + 1, (node.end_lineno or node.lineno)):
        at, end = source.starts[number - 1], source.starts[number]
        if number not in in_strings and source.data[at:end] in (b"\n", b"\r\n"):
            return Edit(path, at, at, indent, f"{identifier}: whitespace on the blank line {number}")
    return None


# ---------------------------------------------------------------- reading histeg's output

def read_version(out: Path, item: Seeded) -> None:
    """Rank of the truth, target count, top targets and noise of the seeded commit's version folder."""
    folder = out / str(item.index)
    document = json.loads((folder / "testingTargets.json").read_text())
    if document["identifier"] != item.sha:
        raise RuntimeError(f"{folder} holds {document['identifier']}, not {item.sha}")
    targets = document["targets"]
    item.targets, item.top = len(targets), [t["identifier"] for t in targets[:3]]
    item.rank = next((t["rank"] for t in targets if t["identifier"] == item.truth), None)
    noise = set(document["noise"]["functions"]) | {u["function"] for u in document["noise"].get("unstable", [])}
    divergences = folder / "traceDivergences.json"
    if divergences.is_file():
        data = TraceDivergences.read(divergences)
        noise |= {n.function for n in data.noise} | set(data.summary.noisy_functions)
    item.in_noise = item.truth in noise
    runs = json.loads((folder / "runs.json").read_text())["runs"] if (folder / "runs.json").is_file() else []
    repetitions: dict[int, float] = {}
    for run in runs:  # every command of one repetition: the suite, or the --run command standing for it
        repetitions[run["repetition"]] = repetitions.get(run["repetition"], 0.0) + (run.get("durationSeconds") or 0.0)
    item.traced_seconds = statistics.median(repetitions.values()) if repetitions else None


def traced_total(out: Path, indices: Sequence[int]) -> float:
    """Seconds of every traced run (all repetitions) of the given versions."""
    total = 0.0
    for index in indices:
        path = out / str(index) / "runs.json"
        if path.is_file():
            total += sum(r.get("durationSeconds") or 0.0 for r in json.loads(path.read_text())["runs"])
    return total


# ---------------------------------------------------------------- figures

@dataclass
class Figures:
    project: str
    base: str
    seed: int
    chain: list[Seeded]
    histeg_code: int | None = None
    histeg_seconds: float = 0.0
    peak_mib: float | None = None
    compare_source: str = "steps.compare[].seconds"
    compare_total_fallback: float | None = None
    untraced_trials: int = 0
    failed_versions: list[dict[str, Any]] = field(default_factory=list)
    clock_noise_seen: bool | None = None
    clock_false_targets: list[int] | None = None
    """Per repeated compute of the code-neutral commits (``--clock-runs``): their targets, all false."""
    clock_charged_targets: list[int] | None = None
    """Per repeated compute: targets the clock test's divergences reached on those commits."""
    summary: dict[str, Any] = field(default_factory=dict)
    output: str = ""
    """histeg's output directory (removed at the end unless kept)."""

    def seeded(self, kind: str) -> list[Seeded]:
        return [i for i in self.chain if i.kind == kind]

    def top(self, k: int, kind: str = "mutant") -> float:
        """Share of the commits of ``kind`` whose truth ranks in the first ``k``; a version histeg could not finish is a miss."""
        items = self.seeded(kind)
        return sum(1 for i in items if i.rank is not None and i.rank <= k) / len(items) if items else 0.0

    def misses(self, k: int, kind: str = "mutant") -> list[Seeded]:
        return [i for i in self.seeded(kind) if i.rank is None or i.rank > k]


def ranked(items: list[Seeded], k: int) -> str:
    if not items:
        return "n/a"
    hits = sum(1 for i in items if i.rank is not None and i.rank <= k)
    return f"{hits / len(items):.0%} ({hits}/{len(items)})"


def median_rank(items: list[Seeded]) -> float | str:
    """A truth that is no target counts as ranked last; "miss" when that is the median."""
    if not items:
        return "n/a"
    middle = statistics.median(i.rank if i.rank is not None else float("inf") for i in items)
    return "miss" if middle == float("inf") else middle


def median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def summarise(figures: Figures) -> dict[str, Any]:
    chain = [i for i in figures.chain if i.index is not None and i.failed is None]
    mutants = [i for i in chain if i.kind == "mutant"]
    reverts = [i for i in chain if i.kind == "revert" and i.reverts == "mutant"]
    values = [i for i in chain if i.kind in ("constant", "class-attribute") or (i.kind == "revert" and i.reverts != "mutant")]
    ratios = [i.compare_seconds / i.traced_seconds for i in chain if i.compare_seconds is not None and i.traced_seconds]
    with_confirm = [(i.compare_seconds + (i.confirm_seconds or 0.0)) / i.traced_seconds for i in chain
                    if i.compare_seconds is not None and i.traced_seconds]
    summary: dict[str, Any] = {
        "mutantsTop1": ranked(mutants, 1), "mutantsTop3": ranked(mutants, 3),
        "mutantsMedianRank": median_rank(mutants),
        "revertsTop1": ranked(reverts, 1), "revertsTop3": ranked(reverts, 3),
        "neutralTargets": {kind: (sum(i.targets or 0 for i in chain if i.kind == kind) if any(i.kind == kind for i in chain) else "n/a")
                           for kind in NEUTRAL},
        "valueChangesTop3": f"{sum(1 for i in values if i.rank is not None and i.rank <= 3)}/{len(values)}" if values else "n/a",
        "valueKinds": {kind: ("yes" if any(i.kind == kind for i in figures.chain) else "n/a") for kind in ("constant", "class-attribute")},
        "mutantsLostToNoise": sum(1 for i in mutants + reverts if i.rank is None and i.in_noise),
        "mutantsMissed": sum(1 for i in mutants + reverts if i.rank is None),
        "medianCompareSeconds": median([i.compare_seconds for i in chain]),
        "medianConfirmSeconds": median([i.confirm_seconds for i in chain]),
        "medianTracedSeconds": median([i.traced_seconds for i in chain]),
        "medianCompareOverTraced": statistics.median(ratios) if ratios else None,
        "medianCompareAndConfirmOverTraced": statistics.median(with_confirm) if with_confirm else None,
    }
    return summary


def ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def seconds(value: float | None, unit: str = "s") -> str:
    return "-" if value is None else f"{value:.2f}{unit}"


def print_figures(figures: Figures) -> None:
    s = figures.summary
    print_heading(f"== {figures.project}  base {figures.base[:12]}  seed {figures.seed}  {len(figures.chain)} seeded commits  "
                  f"histeg exit {figures.histeg_code} in {figures.histeg_seconds:.0f}s  ({figures.untraced_trials} untraced suite runs to pick edits)",
                  f"{'#':>5} {'kind':16} {'description':58} {'truth':40} {'rank':>4} {'tgts':>4} {'noise':>5} {'cmp':>6} {'trace':>6}  top 3")
    for item in figures.chain:
        rank, targets = rank_cells(item.rank, item.targets, item.failed)
        print(f"{item.index if item.index is not None else '-':>5} {item.kind:16} {item.description[:58]:58} {(item.truth or '(none)')[:40]:40} "
              f"{rank:>4} {targets:>4} {'yes' if item.in_noise else '':>5} {seconds(item.compare_seconds):>6} {seconds(item.traced_seconds):>6}  "
              f"{', '.join(item.top)}")
    neutral = s["neutralTargets"]
    rows = [
        ("mutants top-1 / top-3 (goals 90% / 100%)", f"{s['mutantsTop1']} / {s['mutantsTop3']}"),
        ("mutants' median rank", str(s["mutantsMedianRank"])),
        ("reverts top-1 / top-3", f"{s['revertsTop1']} / {s['revertsTop3']}"),
        ("targets on no-op / comment / docstring (goal 0)", f"{neutral['no-op']} / {neutral['comment']} / {neutral['docstring']}"),
        ("value changes in the top 3", f"{s['valueChangesTop3']}  (constant: {s['valueKinds']['constant']}, "
                                       f"class attribute: {s['valueKinds']['class-attribute']})"),
        ("mutants and reverts lost to noise / missed", f"{s['mutantsLostToNoise']} / {s['mutantsMissed']}"),
        ("clock test's noise seen by histeg", "n/a" if figures.clock_noise_seen is None else "yes" if figures.clock_noise_seen else "no"),
        ("false targets, repeated neutral computes (goal 0)", clock_figure(figures)),
        ("median compare / confirm / one traced run", f"{seconds(s['medianCompareSeconds'])} / {seconds(s['medianConfirmSeconds'])} / "
                                                     f"{seconds(s['medianTracedSeconds'])}"),
        ("median compare / traced run", ratio(s["medianCompareOverTraced"])),
        ("median (compare + confirm) / traced run", ratio(s["medianCompareAndConfirmOverTraced"])),
        ("peak memory, largest process of histeg's tree", seconds(figures.peak_mib, " MiB")),
    ]
    if figures.compare_source != "steps.compare[].seconds":
        rows.append(("compare time source", f"{figures.compare_source}: {seconds(figures.compare_total_fallback)} in all"))
    if figures.failed_versions:
        rows.append(("failed versions", "; ".join(f"{f['index']}: {f['reason']}" for f in figures.failed_versions)))
    for label, value in rows:
        print(f"  {label:48} {value}")


# ---------------------------------------------------------------- one project

def build_chain(clone: Path, project: Project, options: Options, scratch: Path, log: Any) -> ChainBuilder:
    """The seeded commits on a branch on top of the base, in chain order."""
    builder = ChainBuilder(clone, project, random.Random(options.seed), options.max_trials, log)
    started = time.perf_counter()
    code, builder.executed = project.suite.executed(clone, scratch)
    if code != 0:
        _, last = project.suite.outcome(clone)
        raise RuntimeError(f"the untraced suite does not pass at the base (pytest exit {code}: {last}) in its environment; "
                           "leave its failing tests out with --pytest-arg=--deselect=NODE_ID or --pytest-arg=--ignore=PATH")
    project.suite.timeout = max(60.0, 10 * (time.perf_counter() - started) + 30)  # a mutant that loops is not kept
    log(f"  {len(builder.executed)} code objects of the clone run by the suite; looking for {options.mutants} mutants")
    mutants = builder.find_mutants(options.mutants)
    builder.commit_clock_test(mutants)
    for found in mutants:
        builder.commit_edit("mutant", found.edit, found.identifier)
    for kind, candidates in (("constant", builder.module_constants()), ("class-attribute", builder.class_attributes())):
        chosen = builder.first_observed_value(candidates)
        log(f"    {kind}: {chosen[1] + ': ' + chosen[0].description if chosen else 'n/a'} ({len(candidates)} candidates)")
        if chosen:
            builder.commit_edit(kind, chosen[0], chosen[1])
    builder.commit_neutral([f.identifier for f in mutants])
    return builder


def measure(name: str, repo: str, options: Options, log: Any) -> Figures:
    """Clone, seed, run histeg over the chain, read the figures."""
    if options.work:
        options.work.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f"ground-truth-{Path(repo).name}-", dir=options.work))
    try:
        clone = scratch / "clone"
        subprocess.run(["git", "clone", "-q", repo, str(clone)], check=True, capture_output=True)
        git = Git(clone)
        base = git("rev-parse", "--verify", f"{options.base}^{{commit}}")
        git("checkout", "-q", "-b", BRANCH, base)
        log(f"{name}: base {base[:12]}")
        project = probe(clone, base, scratch, options.python, options.pytest_arg, log)
        builder = build_chain(clone, project, options, scratch, log)
        out = scratch / "out"
        figures = Figures(name, base, options.seed, builder.chain, untraced_trials=builder.trials, output=str(out))
        log(f"  histeg compute over {len(builder.chain) + 1} versions")
        run = run_histeg(["compute", "--repo", str(clone), "--versions", f"{base}..{builder.chain[-1].sha}", "--out", str(out), "-q",
                          *project.histeg_pytest, *options.histeg_arg], scratch / "logs")
        read_run(figures, run, out)
        if options.clock_runs:
            repeat_neutral(figures, clone, out, options.clock_runs, [*project.histeg_pytest, *options.histeg_arg], scratch / "logs", log)
        figures.summary = summarise(figures)
        return figures
    finally:
        if options.keep:
            log(f"  kept: {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


def read_run(figures: Figures, run: Histeg, out: Path) -> None:
    figures.histeg_code, figures.histeg_seconds, figures.peak_mib = run.code, run.seconds, run.maxrss_kib / MIB
    if run.summary is None:
        raise RuntimeError(f"histeg compute wrote no summary (exit {run.code}): {run.stderr.strip()[-800:]}")
    figures.failed_versions = run.summary.get("failedVersions", [])
    failed = {f["index"]: f["reason"] for f in figures.failed_versions}
    by_sha = {v["identifier"]: v["index"] for v in run.summary["steps"]["extract"]["versions"]}
    steps = {item["index"]: item for item in run.summary["steps"].get("compare", [])}  # the compare step's own split
    for item in figures.chain:
        item.index = by_sha.get(item.sha)
        if item.index is None or item.index in failed or not (out / str(item.index) / "testingTargets.json").is_file():
            item.failed = failed.get(item.index, "no testingTargets.json") if item.index is not None else "not extracted"
            continue
        read_version(out, item)
        timing = steps.get(item.index, {}).get("seconds")
        if timing:
            item.compare_seconds, item.confirm_seconds = timing.get("compare"), timing.get("confirm")
    if not any(i.compare_seconds is not None for i in figures.chain):
        figures.compare_source = "no seconds in steps.compare: histeg's wall time minus every traced run"
        figures.compare_total_fallback = run.seconds - traced_total(out, sorted(by_sha.values()))
    clock = [i for i in figures.chain if i.kind == "clock"]
    if clock:
        figures.clock_noise_seen = clock_noise(out, [i.index for i in figures.chain if i.index is not None])


def repeat_neutral(figures: Figures, clone: Path, out: Path, runs: int, extra: list[str], logs: Path, log: Any) -> None:
    """Compute the code-neutral commits at the chain's end (and the commit before them) ``runs`` more times, each traced and
    re-run anew (``--override``): the clock test runs in all of them, so a clock tick taken for a change would make a
    target there. Nothing there changed behaviour: every target is false."""
    neutral = [i for i in figures.chain if i.kind in NEUTRAL and i.sha]
    if not neutral or not any(i.kind == "clock" for i in figures.chain):
        log("  repeated neutral computes: n/a (no clock test or no neutral commit)")
        return
    figures.clock_false_targets, figures.clock_charged_targets = [], []
    for attempt in range(1, runs + 1):
        run = run_histeg(["compute", "--repo", str(clone), "--versions", f"{neutral[0].sha}~1..{neutral[-1].sha}", "--out", str(out),
                          "--override", "-q", *extra], logs)
        if run.summary is None or run.code != 0:
            raise RuntimeError(f"repeated compute {attempt} failed (exit {run.code}): {run.stderr.strip()[-800:]}")
        indices = {v["identifier"]: v["index"] for v in run.summary["steps"]["extract"]["versions"]}
        documents = [json.loads((out / str(indices[i.sha]) / "testingTargets.json").read_text()) for i in neutral]
        figures.clock_false_targets.append(sum(len(d["targets"]) for d in documents))
        figures.clock_charged_targets.append(sum(1 for d in documents for t in [*d["targets"], *d["testCode"], *d["otherCode"]]
                                                 if any(CLOCK_TEST in entry for entry in t["entryPoints"])))
        log(f"  repeated neutral compute {attempt}/{runs}: {figures.clock_false_targets[-1]} targets, "
            f"{figures.clock_charged_targets[-1]} reached by the clock test")


def clock_figure(figures: Figures) -> str:
    if figures.clock_false_targets is None or figures.clock_charged_targets is None:
        return "n/a"
    runs = len(figures.clock_false_targets)
    return (f"{sum(figures.clock_false_targets)} over {runs} runs ({sum(1 for n in figures.clock_false_targets if n)} runs with any); "
            f"reached by the clock test: {sum(figures.clock_charged_targets)}")


def clock_noise(out: Path, indices: list[int]) -> bool:
    """Whether any version lists an unstable (clock test, function) pair: histeg saw the clock."""
    for index in indices:
        path = out / str(index) / "testingTargets.json"
        if path.is_file():
            unstable = json.loads(path.read_text())["noise"].get("unstable", [])
            if any(CLOCK_TEST in u["entryPoint"] for u in unstable):
                return True
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_harness_arguments(parser, "interpreter for the untraced checks (default: the one histeg builds for the base)")
    parser.add_argument("--mutants", type=int, default=6, help="mutants kept per project (each with its revert)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--base", default="HEAD", help="revision of each repository the chain goes on top of (default: its HEAD)")
    parser.add_argument("--max-trials", type=int, default=60, help="untraced suite runs spent looking for mutants")
    parser.add_argument("--pytest-arg", action="append", default=[],
                        help="extra pytest option for the untraced checks and histeg's traced runs (then given as --no-tests --run), "
                             "e.g. --pytest-arg=--ignore=tests/slow")
    parser.add_argument("--clock-runs", type=int, default=0, metavar="N",
                        help="compute the code-neutral commits N more times, traced anew, and count their targets: all false "
                             "(the criterion: 0 over 20 runs)")
    args = parser.parse_args()
    options = Options(args.mutants, args.seed, args.base, args.python, args.max_trials, args.pytest_arg, args.histeg_arg, args.work,
                      args.keep, args.clock_runs)
    results = []
    for name, figures, error in each_project(args.repos, lambda name, repo: measure(name, repo, options, log_to_stderr)):
        if figures is None:
            results.append({"project": name, "error": error})
            continue
        print_figures(figures)
        results.append(asdict(figures))
    if args.report:
        args.report.write_text(json.dumps({"seed": args.seed, "mutants": args.mutants, "projects": results}, indent=1))


if __name__ == "__main__":
    main()
