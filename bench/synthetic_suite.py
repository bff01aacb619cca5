"""A synthetic pure-Python project for benchmarks: a git repository with two commits.

    python bench/synthetic_suite.py DESTINATION [--tests 200] [--seed 0]

The package ``synth`` (under ``src/``) has ``MODULES`` modules of ``LEVELS``
plain functions each. Every function takes two integers and returns one; the
function at level ``j`` calls the one at level ``j + 1`` (in the same module
or the next one, so imports never form a cycle) from inside loops and
branches, and the last level is a leaf, so one call from a test unfolds into a
few hundred nested calls. The shapes are a loop with branches, a bounded
``while`` loop, a dictionary fold, a string walk and a recursion.

``tests/`` holds the requested number of pytest tests, ``TESTS_PER_FILE`` per
file; each calls one of the upper-level functions ``CALLS_PER_TEST`` times with
its own arguments and compares the results with values computed when the
project is generated. Twice as many tests are the same kind of test, just more
of them, so the project scales with the number of tests alone.

The first commit is the project; the second is a seeded change: one constant of
one mid-level function (``CHANGED``) plus one, which changes what many tests
observe (some of them fail on it, which histeg tolerates).
"""

from __future__ import annotations

import argparse
import importlib
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_repos import git  # noqa: E402

PACKAGE = "synth"
MODULES = 4
LEVELS = 8
TESTS_PER_FILE = 50
CALLS_PER_TEST = 6
TOP_LEVELS = 3
"""Tests call the functions of the first levels, so every call runs a chain of nested calls."""
CHANGED = (1, 2)
"""(module, level) of the function whose constant the second commit changes."""

SHAPES: dict[str, str] = {
    "loop": '''
def {name}(a, b):
    total = {c}
    for i in range(a % {k} + 2):
        if (i + b) % 3 == 0:
            total += {callee}(i + b, a)
        elif i > {c} % 5:
            total -= i * b
        else:
            total = (total * 31 + i) % 1000003
    return total
''',
    "steps": '''
def {name}(a, b):
    steps = 0
    x = abs(a) + 1
    while x != 1 and steps < {c} + 12:
        x = x // 2 if x % 2 == 0 else 3 * x + 1
        steps += 1
        if steps % {k} == 0:
            b = (b + {callee}(steps, x % 100)) % 10007
    return steps + b
''',
    "fold": '''
def {name}(a, b):
    seen = {{}}
    for i in range(a % {k} + 2):
        key = (i * b + {c}) % 7
        seen[key] = seen.get(key, 0) + {callee}(key, i)
    return sum(v for v in seen.values() if v >= {c}) or len(seen)
''',
    "text": '''
def {name}(a, b):
    word = "".join(chr(97 + (a * i + b) % 26) for i in range(a % {k} + 3))
    count = 0
    for ch in word:
        if ch in "aeiou":
            count += {callee}(ord(ch), count)
        else:
            count += 1
    return count * {c} % 9973
''',
    "halve": '''
def {name}(a, b):
    if a <= 1:
        return b + {c}
    if a % 2:
        return {name}(a - 1, b) + {callee}(a, b) % 13
    return {name}(a // 2, b + 1)
''',
}
LEAF = '''
def {name}(a, b):
    r = a * {c} + b
    if r % 2 == 0:
        r //= 2
    elif r % 3 == 0:
        r = r * 2 + 1
    else:
        r -= {c}
    return r % 10007
'''


@dataclass(frozen=True)
class Function:
    module: int
    level: int
    shape: str
    c: int
    k: int

    @property
    def name(self) -> str:
        return f"{self.shape}_{self.level}"

    def callee(self) -> tuple[int, int]:
        """(module, level) of the function it calls: the next level, here or in the next module."""
        return min(self.module + self.level % 2, MODULES - 1), self.level + 1


def module_file(module: int) -> str:
    return f"mod{module}"


def design(seed: int) -> dict[tuple[int, int], Function]:
    """The functions of every module, their shapes and constants, from ``seed``."""
    rng = random.Random(seed)
    shapes = list(SHAPES)
    functions = {}
    for module in range(MODULES):
        for level in range(LEVELS):
            shape = "leaf" if level == LEVELS - 1 else shapes[(module + level) % len(shapes)]
            functions[module, level] = Function(module, level, shape, rng.randint(2, 9), rng.randint(3, 6))
    return functions


def render_module(module: int, functions: dict[tuple[int, int], Function], changed: tuple[int, int] | None) -> str:
    own = [functions[module, level] for level in range(LEVELS)]
    imported = sorted({functions[f.callee()].module for f in own if f.shape != "leaf"} - {module})
    lines = [f'"""Synthetic module {module}: plain functions calling one another."""', ""]
    lines += [f"from {PACKAGE} import {module_file(m)}" for m in imported]
    parts = ["\n".join(lines) + "\n"]
    for function in own:
        c = function.c + (1 if (function.module, function.level) == changed else 0)
        if function.shape == "leaf":
            parts.append(LEAF.format(name=function.name, c=c))
            continue
        target = functions[function.callee()]
        callee = target.name if target.module == module else f"{module_file(target.module)}.{target.name}"
        parts.append(SHAPES[function.shape].format(name=function.name, c=c, k=function.k, callee=callee))
    return "\n".join(parts)


def write_package(root: Path, functions: dict[tuple[int, int], Function], changed: tuple[int, int] | None) -> None:
    package = root / "src" / PACKAGE
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text('"""Synthetic package for histeg\'s benchmarks."""\n')
    for module in range(MODULES):
        (package / f"{module_file(module)}.py").write_text(render_module(module, functions, changed))


@dataclass(frozen=True)
class Case:
    number: int
    module: int
    function: str
    arguments: list[tuple[int, int]]


def make_cases(count: int, functions: dict[tuple[int, int], Function], seed: int) -> list[Case]:
    rng = random.Random(seed + 1)
    cases = []
    for number in range(count):
        module, level = number % MODULES, (number // MODULES) % TOP_LEVELS
        arguments = [(rng.randint(1, 60), rng.randint(0, 40)) for _ in range(CALLS_PER_TEST)]
        cases.append(Case(number, module, functions[module, level].name, arguments))
    return cases


def expected_results(root: Path, cases: list[Case]) -> list[list[int]]:
    """What the first commit's functions return for each test's arguments (imported from ``root``)."""
    sys.path.insert(0, str(root / "src"))
    try:
        importlib.invalidate_caches()
        modules = {m: importlib.import_module(f"{PACKAGE}.{module_file(m)}") for m in range(MODULES)}
        calls: list[Callable[..., Any]] = [getattr(modules[case.module], case.function) for case in cases]
        return [[call(a, b) for a, b in case.arguments] for call, case in zip(calls, cases)]
    finally:
        sys.path.remove(str(root / "src"))
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def render_tests(cases: list[Case], results: list[list[int]]) -> str:
    modules = sorted({case.module for case in cases})
    lines = ['"""Synthetic tests: each calls one function with its own arguments."""', ""]
    lines += [f"from {PACKAGE} import {module_file(m)}" for m in modules]
    for case, expected in zip(cases, results):
        call = f"{module_file(case.module)}.{case.function}"
        arguments = ", ".join(f"({a}, {b})" for a, b in case.arguments)
        lines += ["", "", f"def test_{case.number:05d}():",
                  f"    assert [{call}(a, b) for a, b in [{arguments}]] == {expected!r}"]
    return "\n".join(lines) + "\n"


def write_tests(root: Path, cases: list[Case], results: list[list[int]]) -> None:
    tests = root / "tests"
    tests.mkdir(parents=True, exist_ok=True)
    for start in range(0, len(cases), TESTS_PER_FILE):
        batch = slice(start, start + TESTS_PER_FILE)
        (tests / f"test_batch_{start // TESTS_PER_FILE:03d}.py").write_text(render_tests(cases[batch], results[batch]))


PYPROJECT = f'''[project]
name = "{PACKAGE}"
version = "0.0.1"
requires-python = ">=3.12"

[tool.histeg]
sources = ["src"]
tests = ["tests"]
'''


def build_synthetic_repository(destination: Path, tests: int, seed: int = 0) -> tuple[str, str, str]:
    """Create the repository in ``destination`` (new or empty); returns (first SHA, second SHA, the change)."""
    destination.mkdir(parents=True, exist_ok=True)
    functions = design(seed)
    write_package(destination, functions, changed=None)
    cases = make_cases(tests, functions, seed)
    write_tests(destination, cases, expected_results(destination, cases))
    (destination / "pyproject.toml").write_text(PYPROJECT)
    git(destination, "init", "-q", "-b", "main")
    git(destination, "add", "-A")
    git(destination, "commit", "-q", "-m", f"synthetic project: {tests} tests", clock=1)
    first = git(destination, "rev-parse", "HEAD")
    write_package(destination, functions, changed=CHANGED)
    changed = functions[CHANGED]
    description = f"{PACKAGE}.{module_file(changed.module)}:{changed.name}: constant {changed.c} -> {changed.c + 1}"
    git(destination, "commit", "-q", "-a", "-m", f"seeded change: {description}", clock=2)
    return first, git(destination, "rev-parse", "HEAD"), description


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("destination", type=Path)
    parser.add_argument("--tests", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    first, second, description = build_synthetic_repository(args.destination, args.tests, args.seed)
    print(f"{args.destination}: {first[:12]} -> {second[:12]} ({description})")


if __name__ == "__main__":
    main()
