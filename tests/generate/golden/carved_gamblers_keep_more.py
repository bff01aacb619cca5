"""Tests carved by histeg from the traces of version N (<new>) and version N (<old>).

Each test repeats one call recorded in a test run whose result changed between the two versions, with the arguments
of version N, and asserts what that call returned (or raised) there. It passes on version N and
fails on version N when it witnesses the change. Run it with plain pytest in a version's environment.
"""

from casino.casino import Casino
from casino.conscience import Conscience


def _type_name(value: object) -> str:
    """A type as the trace named it: compared by name, so that this file imports no other module of the project."""
    return f"{type(value).__module__}.{type(value).__qualname__}"


def test_casino_new_gambler_keeps_old_result_1() -> None:
    # recorded under tests/test_casino.py::test_new_gambler_has_gambled_until_his_conscience_stopped_him, call path [0]
    result = Casino.new_gambler()
    # the old result was an object: its type and its recorded attributes
    assert _type_name(result) == "casino.gambler.Gambler"
    assert result.kickout_timer == 63
    assert result.limit == 5000
    assert result.money == 4950
    assert result.rounds == 36
    assert result.wins == 1


def test_conscience_will_win_back_keeps_old_result_2() -> None:
    # recorded under tests/test_casino.py::test_new_gambler_has_gambled_until_his_conscience_stopped_him, call path [0, 1, 41]
    result = Conscience.will_win_back(money=9750, limit=5000)
    assert result is True
