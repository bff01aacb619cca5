from casino.conscience import Conscience


def test_keeps_playing_while_the_savings_are_intact():
    assert Conscience.will_win_back(6000, 5000)
    assert Conscience.will_win_back(5000, 5000)


def test_stops_once_the_savings_are_touched():
    assert not Conscience.will_win_back(4999, 5000)
