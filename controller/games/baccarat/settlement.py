"""Settling a wager on a coup, in integer cents: 9 NYCRR 5324.20(b)(1), (d).

``settle`` returns the net to the bettor after vigorish (> 0 a win, 0 a push, < 0 the stake lost).
``settle_with_commission`` also returns the vigorish on its own, so a table can collect it at
once or defer it per seat with lammers, 5324.20(d)(2).

The vigorish, as read from 5324.20(d)(2): it is 4% or 5% "on the amount won", and since stakes
come in $5 steps it "shall increase in 20-cent increments if the vigorish is four percent or in
25 cent increments if the vigorish is five percent". So the commission is
``(stake_cents // 500) * step`` with step 20 or 25 cents: exactly 4% or 5% of the amount won (a
banker wager wins 1 to 1, so the amount won is the stake), and no rounding ever arises, because a
stake that is not a whole multiple of $5 is refused before anything is computed. It is charged
only on a winning banker wager: a push (tie, or an EZ dragon 7) and a loss owe nothing, and an EZ
table charges none at all, (d)(3).
"""

from __future__ import annotations

from typing import NamedTuple

from .coup import Coup
from .errors import WagerError
from .wagers import (
    DRAGON_NATURAL_WIN_PAYS,
    DRAGON_PAY_TABLES,
    STAKE_STEP_CENTS,
    Rules,
    check_wager,
)


class Settlement(NamedTuple):
    """The result of one wager: ``net`` to the bettor after vigorish, and the ``commission``
    (vigorish) included in it. ``net + commission`` is what the wager pays before vigorish: what
    the dealer pays out when the vigorish is deferred and marked with lammers."""

    net: int
    commission: int

    @property
    def before_vigorish(self) -> int:
        return self.net + self.commission


def banker_commission(stake_cents: int, rules: Rules) -> int:
    """The vigorish owed on a WINNING banker wager of ``stake_cents``, 5324.20(d)(2): one step
    (20 cents at 4%, 25 cents at 5%) per $5 staked; 0 on an EZ table, (d)(3). Refuses a stake
    that is not a positive multiple of 500 cents."""
    check_wager("banker", stake_cents, rules)
    return (stake_cents // STAKE_STEP_CENTS) * rules.vig_step_cents


def lammers_for(commission_cents: int, rules: Rules) -> int:
    """How many lammers mark a deferred vigorish of ``commission_cents``: 20-cent lammers at 4%,
    25-cent lammers at 5%, 5324.20(d)(2)(ii). The amount must be a whole number of steps (any sum
    of commissions from :func:`banker_commission` is)."""
    step = rules.vig_step_cents
    if step == 0:
        raise WagerError("an EZ baccarat table collects no vigorish, 5324.20(d)(3)")
    if (
        isinstance(commission_cents, bool)
        or not isinstance(commission_cents, int)
        or commission_cents < 0
        or commission_cents % step
    ):
        raise WagerError(
            f"vigorish owed must be a whole number of {step}-cent steps, not {commission_cents!r}"
        )
    return commission_cents // step


def dragon_result(selected: str, coup: Coup) -> tuple[str, int]:
    """The dragon bonus on ``selected`` (``"player"`` or ``"banker"``), 5324.20(b)(1)(iv):
    ``("natural_win", 0)``, ``("natural_tie", 0)``, ``("win", points)`` for a non-natural win by
    4 to 9 points, or ``("lose", 0)``."""
    if selected == "player":
        mine, theirs = coup.player_total, coup.banker_total
        my_nat, their_nat = coup.player_natural, coup.banker_natural
    elif selected == "banker":
        mine, theirs = coup.banker_total, coup.player_total
        my_nat, their_nat = coup.banker_natural, coup.player_natural
    else:
        raise WagerError(f"the dragon bonus is on 'player' or 'banker', not {selected!r}")
    if my_nat:
        if not their_nat or mine > theirs:
            return ("natural_win", 0)  # (b)(1)(iv)(a)(1)-(2)
        if mine == theirs:
            return ("natural_tie", 0)  # (b)(1)(iv)(c)
        return ("lose", 0)  # (b)(1)(iv)(b)(1): natural 8 against natural 9
    if mine - theirs >= 4:
        return ("win", mine - theirs)  # (b)(1)(iv)(a)(3)
    return ("lose", 0)  # (b)(1)(iv)(b)(2)-(3)


def settle_with_commission(wager: str, stake_cents: int, coup: Coup, rules: Rules) -> Settlement:
    """Settle ``wager`` of ``stake_cents`` on ``coup`` under ``rules``: ``(net, commission)``.

    ``net`` is after vigorish; ``commission`` is the vigorish (only ever on a winning banker
    wager). Raises :class:`~.errors.WagerError` for a wager the rules do not offer, or a stake
    that is not a positive multiple of 500 cents, 5324.20(d)(2).
    """
    check_wager(wager, stake_cents, rules)
    winner = coup.winner
    if wager == "banker":  # (b)(1)(i), (d)(2), (d)(3)
        if winner == "banker":
            if rules.ez and coup.dragon7:
                return Settlement(0, 0)  # (b)(1)(i)(c): pushes on a dragon 7
            commission = (stake_cents // STAKE_STEP_CENTS) * rules.vig_step_cents
            return Settlement(stake_cents - commission, commission)
        return Settlement(-stake_cents if winner == "player" else 0, 0)
    if wager == "player":  # (b)(1)(ii), (d)(1)
        if winner == "player":
            return Settlement(stake_cents, 0)
        return Settlement(-stake_cents if winner == "banker" else 0, 0)
    if wager == "tie":  # (b)(1)(iii), (a)(2)(iii)
        return Settlement(stake_cents * rules.tie_pays if winner == "tie" else -stake_cents, 0)
    if wager == "dragon7":  # (b)(1)(v)
        return Settlement(stake_cents * rules.dragon7_pays if coup.dragon7 else -stake_cents, 0)
    if wager == "panda8":  # (b)(1)(vi), (d)(4)
        pays = rules.panda8_pays
        assert pays is not None  # check_wager refused it otherwise
        return Settlement(stake_cents * pays if coup.panda8 else -stake_cents, 0)
    # The dragon bonus, (b)(1)(iv), (d)(5).
    table = rules.dragon_pay_table
    assert table is not None  # check_wager refused it otherwise
    kind, points = dragon_result(wager.removeprefix("dragon_"), coup)
    if kind == "natural_win":
        return Settlement(stake_cents * DRAGON_NATURAL_WIN_PAYS, 0)
    if kind == "win":
        return Settlement(stake_cents * DRAGON_PAY_TABLES[table][points], 0)
    if kind == "natural_tie":
        return Settlement(0, 0)
    return Settlement(-stake_cents, 0)


def settle(wager: str, stake_cents: int, coup: Coup, rules: Rules) -> int:
    """The net to the bettor in cents after vigorish: > 0 a win, 0 a push, < 0 a loss.

    ``wager`` is one of ``"banker"``, ``"player"``, ``"tie"``, ``"dragon_player"``,
    ``"dragon_banker"``, ``"dragon7"``, ``"panda8"``. See :func:`settle_with_commission`.
    """
    return settle_with_commission(wager, stake_cents, coup, rules).net
