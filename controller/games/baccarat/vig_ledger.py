"""Deferred vigorish per seat, the lammers of 9 NYCRR 5324.20(d)(2): "The gaming facility may ...
defer collection to a later time provided, however, that all outstanding vigorish shall be
collected prior to reshuffling the cards in a shoe."

:class:`VigLedger` is immutable: each change returns a new ledger, so the controller can journal
every state and a replay rebuilds it exactly. Amounts are integer cents.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .errors import BaccaratError
from .wagers import Rules


class LedgerError(BaccaratError, ValueError):
    """A seat or an amount the ledger cannot record (not a seat number, not a whole number of
    lammers, or a table that collects no vigorish)."""


class VigorishOutstanding(BaccaratError, RuntimeError):
    """The shoe may not be closed or reshuffled: vigorish is still owed, 5324.20(d)(2).

    ``owed`` maps each seat that owes to the cents it owes."""

    def __init__(self, message: str, owed: Mapping[int, int]) -> None:
        super().__init__(message)
        self.owed = dict(owed)


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _dollars(cents: int) -> str:
    return f"${cents // 100}.{cents % 100:02d}"


@dataclass(frozen=True, slots=True)
class VigLedger:
    """Vigorish owed per seat, marked with lammers of ``step_cents`` (20 cents at 4%, 25 cents at
    5%, 5324.20(d)(2)(ii)); every amount is a whole number of lammers. Build one with
    ``VigLedger.for_rules(rules)`` or ``VigLedger(step_cents=25)``."""

    step_cents: int = 25
    _owed: tuple[tuple[int, int], ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        if self.step_cents not in (20, 25) or not _is_int(self.step_cents):
            raise LedgerError(
                "lammers are 20 cents at 4% vigorish and 25 cents at 5% (5324.20(d)(2)(ii)),"
                f" not {self.step_cents!r}"
            )

    @classmethod
    def for_rules(cls, rules: Rules) -> VigLedger:
        """An empty ledger for a table's rules; refuses an EZ table (no vigorish, (d)(3))."""
        if rules.ez:
            raise LedgerError("an EZ baccarat table collects no vigorish (5324.20(d)(3))")
        return cls(step_cents=rules.vig_step_cents)

    def _check_seat(self, seat: int) -> int:
        if not _is_int(seat) or seat < 1:
            raise LedgerError(f"a seat is a whole number 1 or more, not {seat!r}")
        return seat

    def owe(self, seat: int, cents: int) -> VigLedger:
        """The ledger with ``cents`` more owed by ``seat`` (a deferred vigorish, marked with
        lammers and the seat number, (d)(2))."""
        self._check_seat(seat)
        if not _is_int(cents) or cents <= 0 or cents % self.step_cents:
            raise LedgerError(
                f"deferred vigorish is a positive whole number of {self.step_cents}-cent lammers"
                f" (5324.20(d)(2)), not {cents!r} cents"
            )
        owed = dict(self._owed)
        owed[seat] = owed.get(seat, 0) + cents
        return VigLedger(self.step_cents, tuple(sorted(owed.items())))

    def collect(self, seat: int) -> tuple[int, VigLedger]:
        """Collect everything ``seat`` owes: ``(cents collected, the ledger without it)``. A seat
        that owes nothing gives ``(0, self)``."""
        self._check_seat(seat)
        owed = dict(self._owed)
        cents = owed.pop(seat, 0)
        if not cents:
            return 0, self
        return cents, VigLedger(self.step_cents, tuple(sorted(owed.items())))

    def collect_all(self) -> tuple[dict[int, int], VigLedger]:
        """Collect from every seat: ``({seat: cents}, an empty ledger)``."""
        return dict(self._owed), VigLedger(self.step_cents)

    def owed(self, seat: int) -> int:
        """Cents ``seat`` owes (0 when none)."""
        self._check_seat(seat)
        return dict(self._owed).get(seat, 0)

    def lammers(self, seat: int) -> int:
        """How many lammers mark what ``seat`` owes, (d)(2)(ii)."""
        return self.owed(seat) // self.step_cents

    def total_owed(self) -> int:
        """Cents owed by all seats together."""
        return sum(c for _, c in self._owed)

    @property
    def by_seat(self) -> dict[int, int]:
        """Cents owed by each seat that owes, by seat number."""
        return dict(self._owed)

    @property
    def clear(self) -> bool:
        """Whether nothing is owed: the shoe may be closed and reshuffled."""
        return not self._owed

    def require_clear(self, action: str = "reshuffle the shoe") -> None:
        """Refuse to close or reshuffle the shoe while vigorish is owed, 5324.20(d)(2): raises
        :class:`VigorishOutstanding` naming each seat and the amount it owes."""
        if not self._owed:
            return
        who = ", ".join(
            f"seat {s} owes {_dollars(c)} ({c // self.step_cents} lammers)" for s, c in self._owed
        )
        raise VigorishOutstanding(
            f"cannot {action}: {who}, {_dollars(self.total_owed())} in all; all outstanding"
            " vigorish shall be collected prior to reshuffling the cards in a shoe"
            " (5324.20(d)(2))",
            self.by_seat,
        )
