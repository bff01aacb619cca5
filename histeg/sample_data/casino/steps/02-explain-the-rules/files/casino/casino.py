"""The house: its rules and the door through which gamblers come in."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from casino.gambler import Gambler


# The house rules, read by every gambler at every round.
class Casino:
    CHANCE = 0.05  # chance of winning one round, between 0 and 1
    BET = 300  # what one round costs
    WIN = 750  # what a won round pays
    SEED = 13  # seeds the tables' luck: same money, same game
    KICK = 99  # rounds before a gambler is shown the door

    @staticmethod
    def new_gambler() -> "Gambler":
        # Imported here because the gambler module reads the house rules.
        from casino.gambler import Gambler

        amount_of_money = 15000
        how_much_to_save = 5000
        gambler = Gambler(amount_of_money, how_much_to_save)
        gambler.gamble()
        return gambler
