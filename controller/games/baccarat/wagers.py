"""The wagers a table offers and the table settings that decide how they pay: 9 NYCRR
5324.20(b)(1), (d), (g)(2).

:class:`Rules` is immutable and checks itself when built: a setting the regulation does not allow
raises :class:`~.errors.RulesError` (a ``ValueError``) naming the setting and the section.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from .errors import RulesError, WagerError

#: Every wager name ``settle`` knows, in layout order.
WAGERS: Final = (
    "banker",  # 5324.20(b)(1)(i)
    "player",  # (b)(1)(ii)
    "tie",  # (b)(1)(iii)
    "dragon_player",  # (b)(1)(iv), the dragon bonus on the player's hand
    "dragon_banker",  # (b)(1)(iv), the dragon bonus on the banker's hand
    "dragon7",  # (b)(1)(v), EZ baccarat's dragon 7 insurance
    "panda8",  # (b)(1)(vi), EZ baccarat's panda 8 insurance
)

#: 5324.20(d)(2): wagers are accepted in $5 increments only.
STAKE_STEP_CENTS: Final = 500

#: 5324.20(d)(5): the dragon bonus pay tables, "to 1", by how many points the selected hand won
#: when it is not a natural (4-9). A win by 0-3 points without a natural loses, (b)(1)(iv)(b)(3).
#: "Natural winner" pays 1 to 1 and "natural tie" pushes in all three tables.
DRAGON_PAY_TABLES: Final[dict[str, dict[int, int]]] = {
    "A": {4: 1, 5: 2, 6: 4, 7: 6, 8: 10, 9: 30},
    "B": {4: 1, 5: 3, 6: 4, 7: 7, 8: 8, 9: 20},
    "C": {4: 2, 5: 2, 6: 4, 7: 4, 8: 10, 9: 30},
}
#: 5324.20(d)(5), "Natural winner": 1 to 1 in every table.
DRAGON_NATURAL_WIN_PAYS: Final = 1

#: 5324.20(d)(4): a winning panda 8 insurance wager is paid at 25 to 1.
PANDA8_PAYS: Final = 25

#: The four paying procedures of 5324.20(g)(2)(i)-(iv), after the losing wagers are collected:
#: the order of the two categories, and whether the dealer goes seat by seat ("by seat": (iii),
#: (iv)) or makes two passes round the table ("by pass": (i), (ii)). Seats go highest first.
PAYING_PROCEDURES: Final[dict[str, tuple[tuple[str, str, str], str]]] = {
    "i": (("losing", "winning", "vigorish"), "by pass"),
    "ii": (("losing", "vigorish", "winning"), "by pass"),
    "iii": (("losing", "winning", "vigorish"), "by seat"),
    "iv": (("losing", "vigorish", "winning"), "by seat"),
}


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


@dataclass(frozen=True, slots=True)
class Rules:
    """A baccarat table's settings.

    * ``vig_percent``: the vigorish on a winning banker wager, 4 or 5, 5324.20(d)(2). It is
      charged in steps of ``vig_step_cents`` (20 cents at 4%, 25 cents at 5%; also the lammer
      denomination, (d)(2)(ii)). Ignored when ``ez`` (no vigorish, (d)(3)).
    * ``tie_pays``: the tie wager pays this many "to 1" (table-set, posted on the layout,
      (a)(2)(iii)); 8 by default.
    * ``dragon_pay_table``: ``None`` when the dragon bonus is not offered, else ``"A"``, ``"B"``
      or ``"C"`` of 5324.20(d)(5). The bonus is offered on both hands, (b)(1)(iv).
    * ``ez``: EZ baccarat: no vigorish (d)(3), a banker win on a dragon 7 pushes the banker wager
      (b)(1)(i)(c), and the dragon 7 insurance wager is offered (a)(2)(vii)(a), (b)(1)(v).
    * ``panda8_pays``: 25 (5324.20(d)(4) fixes it) when the EZ table offers panda 8 insurance,
      ``None`` when it does not (the wager is optional, (a)(2)(vii)(c)).
    * ``dragon7_pays``: dragon 7 insurance "to 1"; the seed names no figure, 40 is usual.
    * ``paying_procedure``: which of the procedures of 5324.20(g)(2)(i)-(iv) the dealer follows
      after collecting the losing wagers ("i" by default); see :data:`PAYING_PROCEDURES` and
      :attr:`paying_order`. (g)(3): the same procedure for every table in a pit.
    """

    vig_percent: int = 5
    tie_pays: int = 8
    dragon_pay_table: str | None = None
    ez: bool = False
    panda8_pays: int | None = PANDA8_PAYS
    dragon7_pays: int = 40
    paying_procedure: str = "i"

    def __post_init__(self) -> None:
        if not _is_int(self.vig_percent) or self.vig_percent not in (4, 5):
            raise RulesError(
                f"vig_percent must be 4 or 5 (5324.20(d)(2)), not {self.vig_percent!r}"
            )
        if not _is_int(self.tie_pays) or self.tie_pays < 1:
            raise RulesError(f"tie_pays must be a whole number 1 or more, not {self.tie_pays!r}")
        if self.dragon_pay_table is not None and (
            not isinstance(self.dragon_pay_table, str)
            or self.dragon_pay_table not in DRAGON_PAY_TABLES
        ):
            raise RulesError(
                "dragon_pay_table must be None, 'A', 'B' or 'C' (5324.20(d)(5)),"
                f" not {self.dragon_pay_table!r}"
            )
        if not isinstance(self.ez, bool):
            raise RulesError(f"ez must be True or False, not {self.ez!r}")
        if self.panda8_pays is not None and (
            not _is_int(self.panda8_pays) or self.panda8_pays != PANDA8_PAYS
        ):
            raise RulesError(
                f"panda8_pays must be {PANDA8_PAYS} (5324.20(d)(4)) or None (not offered),"
                f" not {self.panda8_pays!r}"
            )
        if not _is_int(self.dragon7_pays) or self.dragon7_pays < 1:
            raise RulesError(
                f"dragon7_pays must be a whole number 1 or more, not {self.dragon7_pays!r}"
            )
        if (
            not isinstance(self.paying_procedure, str)
            or self.paying_procedure not in PAYING_PROCEDURES
        ):
            raise RulesError(
                "paying_procedure must be one of 'i', 'ii', 'iii', 'iv' (5324.20(g)(2)),"
                f" not {self.paying_procedure!r}"
            )

    @property
    def vig_step_cents(self) -> int:
        """The step the vigorish grows in per $5 staked, and the lammer denomination:
        20 cents at 4%, 25 cents at 5%, 5324.20(d)(2), (d)(2)(ii). 0 on an EZ table, (d)(3)."""
        return 0 if self.ez else STAKE_STEP_CENTS * self.vig_percent // 100

    @property
    def offered(self) -> tuple[str, ...]:
        """The wagers this table offers, in the order of :data:`WAGERS`."""
        return tuple(w for w in WAGERS if self.offers(w))

    def offers(self, wager: str) -> bool:
        """Whether this table takes ``wager`` (an unknown name is simply not offered)."""
        if wager in ("banker", "player", "tie"):
            return True
        if wager in ("dragon_player", "dragon_banker"):
            return self.dragon_pay_table is not None
        if wager == "dragon7":
            return self.ez
        if wager == "panda8":
            return self.ez and self.panda8_pays is not None
        return False

    @property
    def paying_order(self) -> tuple[str, ...]:
        """The order of the categories in :attr:`paying_procedure`: the losing wagers are always
        collected first (5324.20(g)(2)); then winning wagers are paid and vigorish marked or
        collected in the procedure's order. An EZ table has no vigorish step, (g)(2), (d)(3)."""
        order = PAYING_PROCEDURES[self.paying_procedure][0]
        return tuple(c for c in order if not (self.ez and c == "vigorish"))

    @property
    def pays_by_seat(self) -> bool:
        """True for (g)(2)(iii)-(iv) (each seat paid and its vigorish handled before the next),
        False for (i)-(ii) (one pass round the table for each category)."""
        return PAYING_PROCEDURES[self.paying_procedure][1] == "by seat"


def paying_sequence(
    rules: Rules, winning_seats: list[int] | tuple[int, ...]
) -> tuple[tuple[str, int | None], ...]:
    """The steps the dealer follows after the result is announced, 5324.20(g)(2): first
    ``("losing", None)`` (collect every losing wager), then ``("winning", seat)`` and
    ``("vigorish", seat)`` for each seat with a winning wager, highest seat number first, in the
    order of ``rules.paying_procedure``. A step ``("vigorish", seat)`` means "mark or collect the
    vigorish this seat owes" and is left out on an EZ table; it is a no-op for a seat that owes
    none (a player or tie winner)."""
    seats = sorted(set(winning_seats), reverse=True)
    order = rules.paying_order[1:]
    steps: list[tuple[str, int | None]] = [("losing", None)]
    if rules.pays_by_seat:
        steps += [(cat, s) for s in seats for cat in order]
    else:
        steps += [(cat, s) for cat in order for s in seats]
    return tuple(steps)


def check_wager(wager: str, stake_cents: int, rules: Rules) -> None:
    """Refuse a wager the table does not offer, or a stake that is not a positive whole multiple
    of $5 (500 cents), 5324.20(d)(2). Raises :class:`~.errors.WagerError` (a ``ValueError``)."""
    if not rules.offers(wager):
        if wager not in WAGERS:
            raise WagerError(f"unknown wager {wager!r}; wagers are {', '.join(WAGERS)}")
        raise WagerError(f"this table does not offer the {wager!r} wager ({_why_not(wager)})")
    if not _is_int(stake_cents) or stake_cents <= 0 or stake_cents % STAKE_STEP_CENTS:
        raise WagerError(
            f"a stake must be a positive multiple of {STAKE_STEP_CENTS} cents ($5,"
            f" 5324.20(d)(2)), not {stake_cents!r}"
        )


def _why_not(wager: str) -> str:
    if wager.startswith("dragon_"):
        return "no dragon bonus pay table is set, 5324.20(d)(5)"
    if wager == "dragon7":
        return "dragon 7 insurance is offered only at EZ baccarat, 5324.20(b)(1)(v)"
    return "panda 8 insurance is offered only at an EZ baccarat table offering it, (a)(2)(vii)(c)"
