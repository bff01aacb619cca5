"""Choosing targets for Pynguin, splitting its budget, mapping tests to targets and judging outcomes: pure functions."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from histeg.generate.coverage import covered_targets, generated_tests
from histeg.generate.pynguin_run import failure_reason, pynguin_argv
from histeg.generate.selection import Chosen, scope_names, select, split_budget
from histeg.generate.verdicts import (
    Result,
    first_line,
    is_witness,
    outcome_of,
    read_junit,
    verdict,
)

SOURCE = """
LIMIT = 3


class Casino:
    BET = 250

    class Rules:
        def check(self): ...

    def __init__(self): ...

    @staticmethod
    def new_gambler(): ...


async def serve(): ...


def outer():
    def inner(): ...
"""


@dataclass(frozen=True)
class Target:
    rank: int | None
    identifier: str
    kind: str
    module: str
    qualname: str


def target(rank: int, module: str, qualname: str, kind: str) -> Target:
    return Target(rank, f"{module}:{qualname}", kind, module, qualname)


def test_scope_names_are_pynguins_qualified_names() -> None:
    assert scope_names(SOURCE) == {
        "Casino": "class",
        "Casino.Rules": "class",
        "Casino.Rules.check": "function",
        "Casino.__init__": "function",
        "Casino.new_gambler": "function",
        "serve": "function",
        "outer": "function",
        "outer.inner": "function",
    }
    assert scope_names("def broken(:\n") == {}


def test_selection_takes_the_first_coverable_targets_in_rank_order() -> None:
    scopes = {"casino.casino": scope_names(SOURCE), "casino.gone": "not a module of the sources directories"}
    ranked = [
        target(1, "casino.casino", "", "module"),
        target(2, "casino.casino", "Casino.BET", "value"),
        target(3, "casino.gone", "f", "function"),
        target(4, "casino.casino", "LIMIT", "value"),
        target(5, "casino.casino", "Casino.new_gambler", "method"),
        target(6, "casino.casino", "Casino.vanished", "method"),
        target(7, "casino.casino", "serve", "function"),
        target(8, "casino.casino", "Casino", "class"),
    ]
    selection = select(ranked, 3, scopes)
    assert [(c.rank, c.cover) for c in selection.chosen] == [(2, "Casino"), (5, "Casino.new_gambler"), (7, "serve")]
    assert [(p.rank, p.reason) for p in selection.passed] == [
        (1, "a module's top level: nothing to call"),
        (3, "not a module of the sources directories"),
        (4, "a module-level value: nothing to call"),
        (6, "Casino.vanished is not defined in its module's file"),
    ]
    assert list(selection.modules()) == ["casino.casino"]
    assert select(ranked, 1, scopes).chosen[0].identifier == "casino.casino:Casino.BET"


def test_the_better_ranked_module_gets_more_seconds() -> None:
    assert split_budget({"a": [1], "b": [2]}, 10) == {"a": 6, "b": 4}
    assert split_budget({"a": [1, 3], "b": [2]}, 60) == {"a": 40, "b": 20}
    assert split_budget({"only": [1, 2, 3]}, 30.9) == {"only": 30}
    assert split_budget({"a": [1], "b": [2], "c": [3]}, 2) == {"a": 1, "b": 1, "c": 1}
    assert split_budget({}, 10) == {}


@given(st.lists(st.integers(1, 4), min_size=1, max_size=12), st.integers(1, 600))
def test_the_split_spends_the_budget_and_follows_the_weights(modules_of: list[int], budget: int) -> None:
    positions: dict[str, list[int]] = {}
    for position, module in enumerate(modules_of, 1):
        positions.setdefault(f"m{module}", []).append(position)
    seconds = split_budget(positions, budget)
    assert set(seconds) == set(positions)
    assert all(value >= 1 for value in seconds.values())
    assert sum(seconds.values()) == max(budget, len(positions))
    count = len(modules_of)
    weight = {module: sum(count - p + 1 for p in found) for module, found in positions.items()}
    for a in positions:
        for b in positions:
            if weight[a] > weight[b]:
                assert seconds[a] >= seconds[b], (positions, seconds)


GENERATED = """
import casino.casino as module_0


def test_case_0():
    var_0 = module_0.Casino()
    var_1 = var_0.new_gambler()
    assert var_1.money == 9750


def test_case_1():
    assert module_0.Casino.BET == 300


def test_case_2():
    var_0 = module_0.Croupier(3)


def helper():
    pass
"""


def test_a_test_covers_the_targets_it_names_else_all_of_its_module() -> None:
    chosen = [
        Chosen(1, "m:Casino.new_gambler", "method", "m", "Casino.new_gambler", "Casino.new_gambler"),
        Chosen(2, "m:Casino.BET", "value", "m", "Casino.BET", "Casino"),
        Chosen(3, "m:Dealer.__init__", "method", "m", "Dealer.__init__", "Dealer.__init__"),
    ]
    tests = generated_tests(GENERATED)
    assert [t.name for t in tests] == ["test_case_0", "test_case_1", "test_case_2"]
    assert [c.rank for c in covered_targets(tests[0], chosen)] == [1]
    assert [c.rank for c in covered_targets(tests[1], chosen)] == [2]
    assert [c.rank for c in covered_targets(tests[2], chosen)] == [1, 2, 3]  # names none of them
    dealer = Chosen(4, "m:Croupier.__init__", "method", "m", "Croupier.__init__", "Croupier.__init__")
    assert covered_targets(tests[2], [*chosen, dealer]) == [dealer]  # a constructor by its class's name


JUNIT = b"""<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="1" failures="1" skipped="2" tests="5">
<testcase classname="casino.casino.test_casino" name="test_case_0" file="casino.casino/test_casino.py" line="3" time="0.1">
  <failure message="assert 4950 == 9750&#10; +  where 4950 = money">var_1 = ...
&gt;       assert var_1.money == 9750
E       assert 4950 == 9750
E        +  where 4950 = &lt;Gambler&gt;.money</failure></testcase>
<testcase classname="casino.casino.test_casino" name="test_case_1" file="casino.casino/test_casino.py" line="9" time="0.1"/>
<testcase classname="casino.casino.test_casino" name="test_case_2" file="casino.casino/test_casino.py" line="12" time="0.1">
  <skipped type="pytest.xfail" message="" /></testcase>
<testcase classname="casino.casino.test_casino" name="test_case_3" file="casino.casino/test_casino.py" line="15" time="0.1">
  <skipped type="pytest.skip" message="skipped" /></testcase>
<testcase classname="casino.croupier.test_croupier" name="casino.croupier/test_croupier.py" file="casino.croupier/test_croupier.py" time="0.0">
  <error message="collection failure">ImportError while importing test module
E   ModuleNotFoundError: No module named 'casino.croupier'</error></testcase>
</testsuite></testsuites>"""


def test_junit_outcomes_and_collection_errors() -> None:
    results = read_junit(JUNIT)
    assert results["casino.casino/test_casino.py::test_case_0"] == Result("failed", "assert 4950 == 9750")
    assert results["casino.casino/test_casino.py::test_case_1"] == Result("passed")
    assert results["casino.casino/test_casino.py::test_case_2"] == Result("xfailed")
    assert results["casino.casino/test_casino.py::test_case_3"] == Result("skipped")
    croupier = outcome_of("casino.croupier/test_croupier.py::test_case_0", results)
    assert croupier == Result("error", "ModuleNotFoundError: No module named 'casino.croupier'")
    assert outcome_of("casino.casino/test_casino.py::test_case_9", results) == Result("missing")
    assert read_junit(b"<not xml") == {}
    assert first_line("first\nsecond", None) == "first"
    assert first_line(None, None) is None


def test_a_witness_needs_every_run_of_each_side_to_agree() -> None:
    passed, failed = Result("passed"), Result("failed", "assert 1 == 2")
    assert is_witness(verdict([failed, failed]), verdict([passed, passed]))
    assert is_witness(verdict([passed, passed]), verdict([Result("error", "E"), Result("error", "E")]))
    assert is_witness(verdict([Result("xfailed")] * 2), verdict([failed, failed]))
    assert not is_witness(verdict([failed, passed]), verdict([passed, passed]))
    assert verdict([failed, passed]).outcome == "flaky"
    assert verdict([failed, passed]).failure == "assert 1 == 2"
    assert not is_witness(verdict([passed, passed]), verdict([passed, passed]))
    assert not is_witness(verdict([failed, failed]), verdict([failed, failed]))
    assert not is_witness(verdict([Result("skipped")] * 2), verdict([failed, failed]))
    assert not is_witness(verdict([Result("missing")] * 2), verdict([passed, passed]))


def test_pynguins_failure_is_one_line() -> None:
    log = (
        "[22:00:18] [INFO] [Worker-1](pynguin.generator:_setup:190): Setting up\n"
        "[22:00:18] [ERROR] [Worker-1](pynguin.generator:_load_sut:297): Failed to load SUT: boom at import\n"
        'Traceback (most recent call last):\n  File "x.py", line 1\nRuntimeError: boom at import\n'
    )
    assert failure_reason(log, 1) == "Failed to load SUT: boom at import"
    assert failure_reason("Traceback (most recent call last):\nValueError: bad\n", 1) == "ValueError: bad"
    assert failure_reason("", 2) == "Pynguin generated no test"
    assert failure_reason("", 0) == "Pynguin wrote no test file"
    argv = pynguin_argv(
        "python", __import__("pathlib").Path("p"), "m", __import__("pathlib").Path("o"), __import__("pathlib").Path("r"), 7, ["A.f", "g"], 3
    )
    assert argv[argv.index("--only_cover") + 1 :] == ["A.f", "g"]
    assert argv[argv.index("--seed") + 1] == "3" and argv[argv.index("--maximum-search-time") + 1] == "7"
