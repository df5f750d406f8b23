"""Errors raised by the baccarat rules (9 NYCRR 5324.20).

One base error for the package, mixed with the matching builtin where it fits, so a caller can
catch what it means: ``except BaccaratError`` for anything from this package, ``except ValueError``
for bad input of any kind.
"""

from __future__ import annotations


class BaccaratError(Exception):
    """Base of every error raised by ``controller.games.baccarat``."""


class CardError(BaccaratError, ValueError):
    """A card code that is not a rank of ``A23456789TJQK`` followed by a suit of ``SHDC``."""


class TotalError(BaccaratError, ValueError):
    """A point count or card value outside 0-9 (5324.20(a)(4)) given to a drawing rule."""


class ShoeExhausted(BaccaratError):
    """The cards ran out before a coup was complete (5324.20(i)(4): the round is void).

    ``needed`` is how many cards the coup needed at that point, ``available`` how many there were.
    """

    def __init__(self, message: str, *, needed: int = 0, available: int = 0) -> None:
        super().__init__(message)
        self.needed = needed
        self.available = available


class WagerError(BaccaratError, ValueError):
    """A wager the rules do not offer, or a stake the table does not accept (5324.20(d)(2))."""


class RulesError(BaccaratError, ValueError):
    """A table setting outside what 5324.20 allows (vigorish, pay table, paying order...)."""
