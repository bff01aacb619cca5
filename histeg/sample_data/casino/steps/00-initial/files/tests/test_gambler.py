from casino.casino import Casino
from casino.gambler import Gambler


def play(money, limit):
    gambler = Gambler(money, limit)
    gambler.gamble()
    return gambler


def test_gambler_starts_with_his_money():
    gambler = Gambler(15000, 5000)
    assert (gambler.money, gambler.limit, gambler.rounds, gambler.wins) == (15000, 5000, 0, 0)
    assert gambler.kickout_timer == Casino.KICK


def test_gambler_stops_when_his_savings_are_touched():
    gambler = play(15000, 5000)
    assert gambler.money < 5000 <= gambler.money + Casino.BET
    assert gambler.money == 15000 + gambler.wins * Casino.WIN - gambler.rounds * Casino.BET


def test_gambler_is_kicked_out_after_the_last_round():
    gambler = play(10**6, 0)
    assert gambler.rounds == Casino.KICK
    assert gambler.kickout_timer == 0
    assert gambler.money == 10**6 + gambler.wins * Casino.WIN - Casino.KICK * Casino.BET


def test_the_house_deals_the_same_luck_to_everybody():
    first, second = play(15000, 5000), play(15000, 5000)
    assert (first.money, first.rounds, first.wins) == (second.money, second.rounds, second.wins)
