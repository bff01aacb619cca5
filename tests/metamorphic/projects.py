"""Small random Python projects and histories for metamorphic tests of histeg.

A project is a model (modules of small pure functions, each with one test) that renders to
source; a history is a list of edits applied to the model, each committed as one version.
Everything is drawn through Hypothesis, so a failing history shrinks to a few small edits.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from tests.conftest import GitRepo, run_histeg

PACKAGE = "pkg"
MODULE_NAMES = ("alpha", "beta", "gamma")
OPPOSITE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
Value = int | str


@dataclass(frozen=True)
class Function:
    """One pure function: a guarded branch, a fallback, optional early returns and a callee."""

    name: str
    kind: str  # "int" (argument x) or "str" (argument text)
    op: str
    threshold: int
    factor: int
    offset: int
    suffix: str
    inputs: tuple[Value, ...]
    callee: str | None = None
    branches: tuple[tuple[int, int], ...] = ()
    docstring: str | None = None

    def source(self, comments: bool = False) -> str:
        arg = "x" if self.kind == "int" else "text"
        lines = [f"def {self.name}({arg}):"]
        if self.docstring is not None:
            lines.append(f'    """{self.docstring}"""')
        if comments:
            lines.append("    # the special cases come first")
        for value, result in self.branches:
            if self.kind == "int":
                lines += [f"    if x == {value}:", f"        return {result}"]
            else:
                lines += [f"    if len(text) == {value}:", f'        return "r{result}"']
        if self.kind == "int":
            lines += [f"    if x {self.op} {self.threshold}:", f"        return x * {self.factor} + {self.offset}"]
            fallback = f"{self.callee}(x) + {self.offset}" if self.callee else f"x - {self.factor}"
        else:
            lines += [f"    if len(text) {self.op} {self.threshold}:", f'        return text.upper() + "{self.suffix}"']
            fallback = f'{self.callee}(text) + "{self.suffix}"' if self.callee else f'text[:{self.factor}] + "{self.suffix}"'
        lines.append(f"    return {fallback}" + ("  # the usual case" if comments else ""))
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Project:
    """Modules of functions; ``test_order`` is the order of the test functions per test file."""

    modules: dict[str, tuple[Function, ...]]
    test_order: dict[str, tuple[str, ...]] = field(default_factory=dict)
    comments: frozenset[str] = frozenset()  # modules rendered with comments

    def module_source(self, module: str) -> str:
        functions = self.modules[module]
        header = "# small pure functions\n\n\n" if module in self.comments else ""
        return header + "\n\n".join(f.source(module in self.comments) for f in functions)

    def expected(self, module: str) -> dict[str, list[tuple[Value, Value]]]:
        """Each function's results on its inputs, computed by running the rendered module."""
        namespace: dict[str, Any] = {}
        exec(compile(self.module_source(module), f"{module}.py", "exec"), namespace)  # noqa: S102 - our own generated code
        return {f.name: [(i, namespace[f.name](i)) for i in f.inputs] for f in self.modules[module]}

    def test_file(self, module: str) -> str:
        return f"tests/test_{module}.py"

    def test_source(self, module: str) -> str:
        results = self.expected(module)
        order = self.test_order.get(module) or tuple(f.name for f in self.modules[module])
        names = ", ".join(sorted(results))
        tests = []
        for name in order:
            asserts = "".join(f"    assert {name}({value!r}) == {result!r}\n" for value, result in results[name])
            tests.append(f"def test_{name}():\n{asserts}")
        return f"from {PACKAGE}.{module} import {names}\n\n\n" + "\n\n".join(tests)

    def files(self) -> dict[str, str]:
        files = {f"{PACKAGE}/__init__.py": ""}
        for module in self.modules:
            files[f"{PACKAGE}/{module}.py"] = self.module_source(module)
            files[self.test_file(module)] = self.test_source(module)
        return files

    def with_functions(self, module: str, functions: tuple[Function, ...]) -> Project:
        order = self.test_order.get(module)
        if order is not None:
            names = {f.name for f in functions}
            order = tuple(n for n in order if n in names) + tuple(f.name for f in functions if f.name not in order)
        return replace(self, modules={**self.modules, module: functions}, test_order={**self.test_order, module: order} if order else self.test_order)

    def function_names(self) -> set[str]:
        return {f.name for functions in self.modules.values() for f in functions}


# -- strategies ---------------------------------------------------------------------------------

SMALL = st.integers(-3, 12)
SUFFIXES = st.sampled_from(["", "!", "ok", "-x", "zz"])


def _inputs(kind: str) -> st.SearchStrategy[tuple[Value, ...]]:
    values: st.SearchStrategy[Value] = (
        st.integers(-5, 20) if kind == "int" else st.text(alphabet="abc", max_size=6)
    )
    return st.lists(values, min_size=1, max_size=3, unique=True).map(tuple)


@st.composite
def functions(draw: st.DrawFn, name: str, callees: tuple[Function, ...] = ()) -> Function:
    """A new function; it may call one of ``callees`` of its kind (calls stay acyclic)."""
    kind = draw(st.sampled_from(["int", "str"]))
    same_kind = [f.name for f in callees if f.kind == kind]
    callee = draw(st.none() | st.sampled_from(same_kind)) if same_kind else None
    return Function(
        name=name, kind=kind, op=draw(st.sampled_from(sorted(OPPOSITE))), threshold=draw(st.integers(0, 8)),
        factor=draw(SMALL), offset=draw(SMALL), suffix=draw(SUFFIXES), inputs=draw(_inputs(kind)), callee=callee,
    )


@st.composite
def projects(draw: st.DrawFn) -> Project:
    """One to three modules of two or three functions each (every test file keeps two tests)."""
    count = draw(st.integers(1, len(MODULE_NAMES)))
    modules: dict[str, tuple[Function, ...]] = {}
    serial = 0
    for module in MODULE_NAMES[:count]:
        made: tuple[Function, ...] = ()
        for _ in range(draw(st.integers(2, 3))):
            made += (draw(functions(f"f{serial}", made)),)
            serial += 1
        modules[module] = made
    return Project(modules)


# An edit returns the new project and a short description for the commit message.
@st.composite
def modifications(draw: st.DrawFn, project: Project) -> tuple[Project, str]:
    """Edit one existing function's body: a constant, a comparison or a new early return."""
    module = draw(st.sampled_from(sorted(project.modules)))
    functions_ = project.modules[module]
    index = draw(st.integers(0, len(functions_) - 1))
    old = functions_[index]
    edit = draw(st.sampled_from(["constant", "flip", "branch"]))
    if edit == "constant":
        name = draw(st.sampled_from(["threshold", "factor", "offset", "suffix"]))
        current = getattr(old, name)
        pool = SUFFIXES if name == "suffix" else SMALL
        new = replace(old, **{name: draw(pool.filter(lambda v: v != current))})
        what = f"{name} {current!r} -> {getattr(new, name)!r}"
    elif edit == "flip":
        new = replace(old, op=OPPOSITE[old.op])
        what = f"{old.op} -> {new.op}"
    else:
        taken = {value for value, _ in old.branches}
        value = draw(st.integers(-5, 20).filter(lambda v: v not in taken))
        new = replace(old, branches=(*old.branches, (value, draw(SMALL))))
        what = f"early return for {value}"
    changed = functions_[:index] + (new,) + functions_[index + 1:]
    return project.with_functions(module, changed), f"{module}.{old.name}: {what}"


@st.composite
def edits(draw: st.DrawFn, project: Project) -> tuple[Project, str]:
    """Any edit of the history: a modification, or a function added or removed with its test."""
    kind = draw(st.sampled_from(["modify", "add", "remove", "document"]))
    module = draw(st.sampled_from(sorted(project.modules)))
    functions_ = project.modules[module]
    called = {f.callee for f in functions_}
    removable = [f for f in functions_ if f.name not in called] if len(functions_) > 2 else []
    if kind == "add":
        serial = max(int(name[1:]) for name in project.function_names()) + 1
        new = draw(functions(f"f{serial}", functions_))
        return project.with_functions(module, (*functions_, new)), f"add {module}.{new.name} and its test"
    if kind == "remove" and removable:
        gone = draw(st.sampled_from([f.name for f in removable]))
        return project.with_functions(module, tuple(f for f in functions_ if f.name != gone)), f"remove {module}.{gone} and its test"
    if kind == "document":
        return documented(project, draw(docstring_edits(project)))
    return draw(modifications(project))


@st.composite
def docstring_edits(draw: st.DrawFn, project: Project) -> dict[str, str | None]:
    """New docstrings (None: removed) for one or more functions, each different from its current one."""
    current = {f.name: f.docstring for functions_ in project.modules.values() for f in functions_}
    chosen = draw(st.lists(st.sampled_from(sorted(current)), min_size=1, max_size=3, unique=True))
    texts = st.sampled_from([None, "Why this exists.", "Returns a small value.", "Edge cases first."])
    return {name: draw(texts.filter(lambda t, name=name: t != current[name])) for name in chosen}


def documented(project: Project, docstrings: dict[str, str | None]) -> tuple[Project, str]:
    for module, functions_ in project.modules.items():
        changed = tuple(replace(f, docstring=docstrings[f.name]) if f.name in docstrings else f for f in functions_)
        project = project.with_functions(module, changed)
    return project, "docstrings of " + ", ".join(sorted(docstrings))


@dataclass
class History:
    """A project and the edits that lead to its last version (as drawn, before committing)."""

    start: Project
    steps: list[tuple[Project, str]]

    @property
    def last(self) -> Project:
        return self.steps[-1][0] if self.steps else self.start

    def __repr__(self) -> str:  # what Hypothesis prints for a falsifying example
        lines = ["History:", *(f"  {message}" for _, message in self.steps), "  last version:"]
        lines += [f"    --- {path}\n" + "".join(f"    {line}\n" for line in text.splitlines()) for path, text in self.last.files().items()]
        return "\n".join(lines)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """Hypothesis prints falsifying examples with this: the edits and the final files."""
        printer.text(repr(self))


@st.composite
def histories(draw: st.DrawFn, max_edits: int = 3) -> History:
    """A project and up to ``max_edits`` random edits (the versions before the one under test)."""
    start = project = draw(projects())
    steps: list[tuple[Project, str]] = []
    for _ in range(draw(st.integers(0, max_edits))):
        project, message = draw(edits(project))
        steps.append((project, message))
    return History(start, steps)


# -- committing and running histeg ---------------------------------------------------------------



def commit(repo: GitRepo, project: Project, message: str, before: Project | None = None) -> str:
    """Write the project's files, delete the files ``before`` had and it has not, commit."""
    files = project.files()
    for stale in set(before.files() if before else ()) - set(files):
        (repo.path / stale).unlink()
    return repo.commit(message, files)


def commit_history(repo: GitRepo, history: History) -> list[str]:
    """One commit per version of the history; the commit ids in order."""
    shas = [commit(repo, history.start, "initial project")]
    before = history.start
    for project, message in history.steps:
        shas.append(commit(repo, project, message, before))
        before = project
    return shas


def compute(repo: Path, first: str, last: str, out: Path, *extra: str) -> list[dict[str, Any]]:
    """Run the real CLI over ``first..last``; testingTargets.json of every compared version."""
    result = run_histeg("compute", "--repo", str(repo), "--versions", f"{first}..{last}", "--out", str(out), "--repeat", "1", *extra)
    assert result.code == 0, result.stderr
    indices = sorted(int(p.name) for p in out.iterdir() if p.name.isdigit())
    return [json.loads((out / str(i) / "testingTargets.json").read_bytes()) for i in indices[1:]]


def clone(source: Path, target: Path) -> None:
    subprocess.run(["git", "clone", "-q", str(source), str(target)], check=True, capture_output=True)
