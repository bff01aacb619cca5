"""A gambler who plays until his conscience or the casino stops him."""

import random

from casino.casino import Casino
from casino.conscience import Conscience


class Gambler:
    def __init__(self, money: int, limit: int) -> None:
        self.money = money
        self.limit = limit
        self.kickout_timer = Casino.KICK
        self.rounds = 0
        self.wins = 0

    def gamble(self) -> None:
        rng = random.Random(Casino.SEED)
        while self.kickout_timer != 0:
            if not Conscience.will_win_back(self.money, self.limit):
                break
            if rng.random() < Casino.CHANCE:
                self.money += Casino.WIN - Casino.BET
                self.wins += 1
            else:
                self.money -= Casino.BET
            self.rounds += 1
            self.kickout_timer -= 1
