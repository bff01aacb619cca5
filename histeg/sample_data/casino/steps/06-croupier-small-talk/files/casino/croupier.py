"""The croupier: spins the wheel with the luck the house seeded."""

import random

from casino.casino import Casino


class Croupier:
    PHRASES = ("Faites vos jeux.", "Rien ne va plus.")

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)
        self.remarks: list[str] = []

    def spin(self) -> bool:
        """True when the gambler wins this round."""
        self.remarks.append(self.small_talk())
        return self._rng.random() < Casino.CHANCE

    def small_talk(self) -> str:
        """A remark before a spin; the croupier's mood is not seeded, unlike the wheel."""
        if random.random() < 0.5:
            return self.PHRASES[0]
        return self.PHRASES[1]
