"""Parameters and return values under the real tracer: structural by default (no repr runs), and in
repr mode, for the types the user names, reprs that raise, are huge, recurse, carry addresses."""

from __future__ import annotations

import pytest

from histeg.traces.records import Value
from histeg.tracing import values
from tests.tracing.conftest import TRACERS

THINGS = '''
class Grumpy:
    def __repr__(self):
        raise RuntimeError("no repr for you")


class Huge:
    def __repr__(self):
        return "x" * 100000


class Plain:
    pass


class Located:
    def __repr__(self):
        return f"<Located at {hex(id(self))}>"


class Loop:
    def __repr__(self):
        return repr(self)


class Chatty:
    def __repr__(self):
        return f"Chatty({helper(2)})"


def helper(n):
    return n + 1


def take(thing):
    return thing
'''

TESTS = '''
from pkg.things import Chatty, Grumpy, Huge, Located, Loop, Plain, helper, take


def test_grumpy():
    assert isinstance(take(Grumpy()), Grumpy)


def test_huge():
    assert isinstance(take(Huge()), Huge)


def test_plain():
    assert isinstance(take(Plain()), Plain)


def test_located():
    assert isinstance(take(Located()), Located)


def test_loop():
    assert isinstance(take(Loop()), Loop)


def test_chatty():
    assert isinstance(take(Chatty()), Chatty)
    assert helper(5) == 6
'''

FILES = {"src/pkg/__init__.py": "", "src/pkg/things.py": THINGS, "tests/test_things.py": TESTS}


NAMED = [f"pkg.things.{name}" for name in ("Grumpy", "Huge", "Located", "Loop", "Chatty")]


@pytest.fixture(scope="module", params=TRACERS)
def run(tmp_path_factory: pytest.TempPathFactory, project_runner, request: pytest.FixtureRequest):
    """repr mode, with every class of the project named."""
    return project_runner(tmp_path_factory.mktemp("values"), FILES, tracer=request.param, values="repr", repr_types=NAMED)


@pytest.fixture(scope="module", params=TRACERS)
def structural(tmp_path_factory: pytest.TempPathFactory, project_runner, request: pytest.FixtureRequest):
    return project_runner(tmp_path_factory.mktemp("structural"), FILES, tracer=request.param)


def taken(run, test: str):
    root = run.entry(f"::{test}")
    (position, take), = root.children
    assert take.function.ident == "pkg.things:take" and take.lines == [1]
    return take


def test_the_traced_suite_passes(run):
    assert run.proc.returncode == 0, run.proc.stdout + run.proc.stderr
    assert "6 passed" in run.proc.stdout


def test_repr_that_raises_is_recorded_as_failed(run):
    take = taken(run, "test_grumpy")
    assert take.params == [Value("pkg.things.Grumpy", "<repr failed: RuntimeError>")]
    assert take.returned == take.params[0]


def test_huge_repr_is_capped_and_hashed(run):
    rep = taken(run, "test_huge").params[0].repr
    prefix = "x" * (values.MAX_REPR // 2)
    assert rep == f"{prefix}\u2026[len=100000 hash={values._digest('x' * 100000)}]"


def test_default_repr_keeps_only_the_type(run):
    take = taken(run, "test_plain")
    assert take.params == [Value("pkg.things.Plain", None)] and take.returned == Value("pkg.things.Plain", None)


def test_addresses_are_scrubbed(run):
    assert taken(run, "test_located").params == [Value("pkg.things.Located", "<Located at 0x\u2026>")]


def test_recursive_repr_is_recorded_as_failed(run):
    assert taken(run, "test_loop").params == [Value("pkg.things.Loop", "<repr failed: RecursionError>")]


def test_calls_made_by_repr_are_not_recorded(run):
    root = run.entry("::test_chatty")
    assert [child.function.ident for _, child in root.children] == ["pkg.things:take", "pkg.things:helper"]
    take = root.children[0][1]
    assert take.params == [Value("pkg.things.Chatty", "Chatty(3)")] and take.children == []
    assert [call.params for call in run.calls("pkg.things:helper")] == [[Value("int", "5")]]
    assert root.lines == [1, 2]


def test_structural_values_run_no_repr(structural):
    assert structural.proc.returncode == 0, structural.proc.stdout + structural.proc.stderr
    for test, cls in (("test_grumpy", "Grumpy"), ("test_huge", "Huge"), ("test_located", "Located"), ("test_loop", "Loop")):
        take = taken(structural, test)
        assert take.params == [Value(f"pkg.things.{cls}", None)] and take.returned == take.params[0]
    assert [call.params for call in structural.calls("pkg.things:helper")] == [[Value("int", "5")]]


def test_repr_mode_leaves_other_types_structural(traced):
    run = traced(FILES, values="repr", repr_types=["pkg.things.Chatty"])
    assert run.proc.returncode == 0
    assert taken(run, "test_grumpy").params == [Value("pkg.things.Grumpy", None)]
    assert run.entry("::test_chatty").children[0][1].params == [Value("pkg.things.Chatty", "Chatty(3)")]


def test_value_capture_can_be_switched_off(traced):
    run = traced(FILES, values="off")
    assert run.proc.returncode == 0
    take = run.entry("::test_grumpy").children[0][1]
    assert take.params == [] and take.returned is None and take.ended
    assert take.lines == [1]
