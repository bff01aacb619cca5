from casino.casino import Casino
from casino.croupier import Croupier


def test_croupiers_with_the_same_seed_spin_alike():
    first, second = Croupier(Casino.SEED), Croupier(Casino.SEED)
    assert [first.spin() for _ in range(200)] == [second.spin() for _ in range(200)]


def test_the_house_wins_most_rounds():
    croupier = Croupier(Casino.SEED)
    wins = sum(croupier.spin() for _ in range(1000))
    assert 0 < wins < 200


def test_small_talk_is_one_of_the_phrases():
    assert Croupier(Casino.SEED).small_talk() in Croupier.PHRASES


def test_the_croupier_remarks_on_every_spin():
    croupier = Croupier(Casino.SEED)
    spins = [croupier.spin() for _ in range(10)]
    assert len(croupier.remarks) == len(spins)
    assert set(croupier.remarks) <= set(Croupier.PHRASES)
