"""The house: its rules and the door through which gamblers come in."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from casino.gambler import Gambler


class Casino:
    CHANCE = 0.05
    BET = 300
    WIN = 750
    SEED = 13
    KICK = 99

    @staticmethod
    def new_gambler() -> "Gambler":
        from casino.gambler import Gambler

        amount_of_money = 15000
        how_much_to_save = 5000
        gambler = Gambler(amount_of_money, how_much_to_save)
        gambler.gamble()
        return gambler
