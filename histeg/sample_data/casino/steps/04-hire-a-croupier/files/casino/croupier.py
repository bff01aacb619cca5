"""The croupier: spins the wheel with the luck the house seeded."""

import random

from casino.casino import Casino


class Croupier:
    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)

    def spin(self) -> bool:
        """True when the gambler wins this round."""
        return self._rng.random() < Casino.CHANCE
