from casino.casino import Casino
from casino.gambler import Gambler


def test_house_rules_favour_the_house():
    assert 0 < Casino.CHANCE < 1
    assert Casino.WIN > Casino.BET > 0
    assert Casino.CHANCE * Casino.WIN < Casino.BET


def test_new_gambler_has_gambled_until_his_conscience_stopped_him():
    gambler = Casino.new_gambler()
    assert isinstance(gambler, Gambler)
    assert 0 < gambler.rounds < Casino.KICK
    assert gambler.money < gambler.limit
    assert gambler.money == 15000 + gambler.wins * Casino.WIN - gambler.rounds * Casino.BET
