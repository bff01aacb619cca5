"""The voice that tells a gambler when to stop."""


class Conscience:
    @staticmethod
    def will_win_back(money: int, limit: int) -> bool:
        return money >= limit
