"""Every kind of parameter is recorded with the value the call received, by each collector.

The C collector reads a call's parameters from its frame's locals (no frame object made): a parameter a closure
captures is held there in a cell by the time the call starts, and is recorded as the value in it.
"""

from __future__ import annotations

import pytest

from histeg.traces.records import Value
from tests.tracing.conftest import TRACERS

CODE = """
def kinds(a, /, b, *rest, key=None, **extra):
    return a


def captured(a, b):
    def inner():
        return a + b
    b = b * 10  # the cell's value changes after the start: the start's value is recorded
    return inner()


def counter(start, step):
    def advance(n):
        return n + step
    yield advance(start)


class Box:
    def __init__(self, size):
        self.size = size

    def grown(self, by):
        return (lambda: self.size + by)()
"""

TESTS = """
from pkg.code import Box, captured, counter, kinds


def test_kinds():
    assert kinds(1, 2, 3, key="k", z=4) == 1


def test_captured():
    assert captured(1, 2) == 21


def test_counter():
    assert list(counter(5, 2)) == [7]


def test_box():
    assert Box(3).grown(4) == 7
"""


@pytest.fixture(scope="module", params=TRACERS)
def run(tmp_path_factory: pytest.TempPathFactory, project_runner, request: pytest.FixtureRequest):
    files = {"src/pkg/__init__.py": "", "src/pkg/code.py": CODE, "tests/test_code.py": TESTS}
    return project_runner(tmp_path_factory.mktemp("parameters"), files, tracer=request.param)


def only(run, ident: str):
    calls = run.calls(ident)
    assert len(calls) == 1, ident
    return calls[0]


def test_the_suite_passes(run) -> None:
    assert run.proc.returncode == 0, run.proc.stdout + run.proc.stderr


def test_positional_keyword_and_collected_parameters(run) -> None:
    call = only(run, "pkg.code:kinds")
    assert call.function.params == ("a", "b", "key", "rest", "extra")
    assert call.params == [Value("int", "1"), Value("int", "2"), Value("str", "'k'"), Value("tuple", "(3,)"), Value("dict", "{'z': 4}")]


def test_parameters_a_closure_captures_are_their_values_not_cells(run) -> None:
    assert only(run, "pkg.code:captured").params == [Value("int", "1"), Value("int", "2")]
    assert only(run, "pkg.code:counter").params == [Value("int", "5"), Value("int", "2")]
    grown = only(run, "pkg.code:Box.grown")
    assert grown.params[1:] == [Value("int", "4")] and grown.params[0] == Value("pkg.code.Box", "{size=3}")
