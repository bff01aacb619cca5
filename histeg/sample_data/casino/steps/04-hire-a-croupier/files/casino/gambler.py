"""A gambler who plays until his conscience or the casino stops him."""

from casino.casino import Casino
from casino.conscience import Conscience
from casino.croupier import Croupier


class Gambler:
    def __init__(self, money: int, limit: int) -> None:
        self.money = money
        self.limit = limit  # what he wants to keep
        self.kickout_timer = Casino.KICK
        self.rounds = 0
        self.wins = 0

    # Plays until the casino shows him the door or his conscience sends him home.
    def gamble(self) -> None:
        # The house seeds the luck, so the same gambler always plays the same game.
        croupier = Croupier(Casino.SEED)
        while self.kickout_timer > 0 and Conscience.will_win_back(self.money, self.limit):
            won = croupier.spin()
            self.money += Casino.WIN - Casino.BET if won else -Casino.BET
            self.wins += won
            self.rounds += 1
            self.kickout_timer -= 1
