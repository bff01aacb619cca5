"""``python -m casino``: send one gambler to the tables and tell how it went."""

from casino.casino import Casino


def main() -> None:
    gambler = Casino.new_gambler()
    print(f"After {gambler.rounds} rounds the gambler leaves with {gambler.money}.")


if __name__ == "__main__":
    main()
