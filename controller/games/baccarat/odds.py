"""Exact probabilities of every coup outcome, and the house edge of every wager, for a full shoe
or a partly dealt one: 9 NYCRR 5324.20 (the drawing rules of (f)(10)-(13), the pays of (d)).

``exact_odds(8)`` is an eight-deck shoe; ``exact_odds({"A": 30, "T": 120, 0: 2, ...})`` is the
cards left in a live shoe, keyed by rank (``"A"``..``"K"``, ``"10"`` for the ten) or by value
(0-9; tens and faces are all value 0). The answer is exact: :class:`fractions.Fraction`.

How: cards matter only by value (5324.20(a)(4)(i)), so the enumeration runs over the ten value
classes with their counts, drawing without replacement and weighting each path by how many real
card sequences it stands for. The two-card hands are taken as unordered pairs (a pair of equal
values once, a pair of different values twice), a third card is dealt only where (f)(11)-(13)
call for one, and every path ends in one of 400 cells (final player total, final banker total,
whether each hand drew); every outcome is then read off those cells. Each path is scaled to
six-card sequences so all cells share one denominator, N (N-1) ... (N-5) for N cards left.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Final

from .cards import RANKS, Card
from .coup import _BANKER_ONLY, _PLAN, _STAND
from .errors import BaccaratError
from .third_card import BANKER_DRAWS
from .wagers import DRAGON_NATURAL_WIN_PAYS, DRAGON_PAY_TABLES, Rules


class CompositionError(BaccaratError, ValueError):
    """A shoe composition that cannot be read, or has too few cards to deal a coup."""


_RANK_VALUE: Final = {r: (i + 1 if i < 9 else 0) for i, r in enumerate(RANKS)}
_RANK_VALUE["10"] = 0

#: The outcome names ``exact_odds`` returns (besides ``"edge:<wager>"`` with ``rules=``).
DRAGON_OUTCOMES: Final = (
    "natural_win",
    "natural_tie",
    "win_by_4",
    "win_by_5",
    "win_by_6",
    "win_by_7",
    "win_by_8",
    "win_by_9",
    "lose",
)


def composition_of(cards: Iterable[Card]) -> tuple[int, ...]:
    """How many cards of each value 0-9 are in ``cards`` (e.g. those left in the shoe)."""
    counts = [0] * 10
    for c in cards:
        counts[c.value] += 1
    return tuple(counts)


def _value_counts(composition: int | Mapping[object, int]) -> list[int]:
    if isinstance(composition, bool):
        raise CompositionError(f"not a shoe: {composition!r}")
    if isinstance(composition, int):
        if composition < 1:
            raise CompositionError(f"a shoe needs at least one deck, not {composition}")
        return [16 * composition] + [4 * composition] * 9
    if not isinstance(composition, Mapping):
        raise CompositionError(
            "a composition is a number of decks or a mapping of rank or value to count,"
            f" not {type(composition).__name__}"
        )
    counts = [0] * 10
    for key, count in composition.items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise CompositionError(f"count for {key!r} must be a whole number 0 or more")
        if isinstance(key, Card):
            v = key.value
        elif isinstance(key, str) and key in _RANK_VALUE:
            v = _RANK_VALUE[key]
        elif isinstance(key, int) and not isinstance(key, bool) and 0 <= key <= 9:
            v = key
        else:
            raise CompositionError(
                f"composition key {key!r} is neither a rank of {RANKS} nor a value 0-9"
            )
        counts[v] += count
    return counts


def _cells(n: list[int]) -> list[int]:
    """Weighted six-card sequence counts of the 400 end cells; ``n`` is restored on return.

    Cell index: ((player_total * 10 + banker_total) * 2 + player_drew) * 2 + banker_drew.
    """
    acc = [0] * 400
    rng = range(10)
    for a in rng:
        ca = n[a]
        if not ca:
            continue
        n[a] = ca - 1
        for b in range(a, 10):
            cb = n[b]
            if not cb:
                continue
            wp = ca * cb if a == b else 2 * ca * cb
            n[b] = cb - 1
            pt = (a + b) % 10
            for c in rng:
                cc = n[c]
                if not cc:
                    continue
                n[c] = cc - 1
                for d in range(c, 10):
                    cd = n[d]
                    if not cd:
                        continue
                    w = wp * cc * cd if c == d else 2 * wp * cc * cd
                    n[d] = cd - 1
                    bt = (c + d) % 10
                    plan = _PLAN[pt * 10 + bt]
                    if plan == _STAND:
                        acc[(pt * 10 + bt) * 4] += w
                    elif plan == _BANKER_ONLY:
                        base = pt * 40 + 1
                        for u in rng:
                            cu = n[u]
                            if cu:
                                acc[base + (bt + u) % 10 * 4] += w * cu
                    else:
                        row = BANKER_DRAWS[bt]
                        for v in rng:
                            cv = n[v]
                            if not cv:
                                continue
                            pt3 = (pt + v) % 10
                            w5 = w * cv
                            if row[v]:
                                n[v] = cv - 1
                                base = pt3 * 40 + 3
                                for u in rng:
                                    cu = n[u]
                                    if cu:
                                        acc[base + (bt + u) % 10 * 4] += w5 * cu
                                n[v] = cv
                            else:
                                acc[(pt3 * 10 + bt) * 4 + 2] += w5
                    n[d] = cd
                n[c] = cc
            n[b] = cb
        n[a] = ca
    return acc


def _dragon(mine: int, theirs: int, my_nat: bool, their_nat: bool) -> str:
    # 5324.20(b)(1)(iv); the same reading as settlement.dragon_result.
    if my_nat:
        if not their_nat or mine > theirs:
            return "natural_win"
        return "natural_tie" if mine == theirs else "lose"
    return f"win_by_{mine - theirs}" if mine - theirs >= 4 else "lose"


def exact_odds(
    composition: int | Mapping[object, int], rules: Rules | None = None
) -> dict[str, Fraction]:
    """The exact probability of every outcome of the next coup dealt from ``composition``.

    ``composition`` is a number of full decks, or a mapping of rank (``"A"``..``"K"``, ``"10"``)
    or value (0-9) to how many such cards are left. Outcomes: ``"banker"``, ``"player"``,
    ``"tie"`` (the winner), ``"dragon7"``, ``"panda8"``, ``"player_natural"``,
    ``"banker_natural"``, ``"cards_used:4"``/``5``/``6``, and for the dragon bonus on each hand
    ``"dragon_player:<o>"`` and ``"dragon_banker:<o>"`` with ``<o>`` in :data:`DRAGON_OUTCOMES`.

    With ``rules``, also ``"edge:<wager>"`` for every wager the rules offer: the house edge, the
    bettor's expected loss per unit staked (ties and pushes count as resolved wagers).
    """
    n = _value_counts(composition)
    total = sum(n)
    if total < 6:
        raise CompositionError(
            f"{total} cards left: a coup may need 6 (5324.20(i)(4): the round would be void)"
        )
    acc = _cells(n)
    denom = total * (total - 1) * (total - 2) * (total - 3) * (total - 4) * (total - 5)
    scale = {4: (total - 4) * (total - 5), 5: total - 5, 6: 1}

    sums: dict[str, int] = {k: 0 for k in ("banker", "player", "tie", "dragon7", "panda8")}
    sums.update({"player_natural": 0, "banker_natural": 0})
    sums.update({f"cards_used:{k}": 0 for k in (4, 5, 6)})
    for hand in ("dragon_player", "dragon_banker"):
        sums.update({f"{hand}:{o}": 0 for o in DRAGON_OUTCOMES})
    for idx, w in enumerate(acc):
        if not w:
            continue
        nb = 2 + (idx & 1)
        np_ = 2 + ((idx >> 1) & 1)
        pt, bt = divmod(idx >> 2, 10)
        w *= scale[np_ + nb]
        sums["player" if pt > bt else "banker" if bt > pt else "tie"] += w
        sums[f"cards_used:{np_ + nb}"] += w
        pnat = np_ == 2 and pt >= 8
        bnat = nb == 2 and bt >= 8
        if pnat:
            sums["player_natural"] += w
        if bnat:
            sums["banker_natural"] += w
        if nb == 3 and bt == 7 and pt < 7:
            sums["dragon7"] += w
        if np_ == 3 and pt == 8 and bt < 8:
            sums["panda8"] += w
        sums["dragon_player:" + _dragon(pt, bt, pnat, bnat)] += w
        sums["dragon_banker:" + _dragon(bt, pt, bnat, pnat)] += w
    odds = {k: Fraction(v, denom) for k, v in sums.items()}
    if rules is not None:
        odds.update(house_edges(odds, rules))
    return odds


def house_edges(odds: Mapping[str, Fraction], rules: Rules) -> dict[str, Fraction]:
    """``"edge:<wager>"`` -> the house edge of each wager ``rules`` offers, from the outcome
    probabilities of :func:`exact_odds`: minus the bettor's expected net per unit staked."""
    pb, pp, pt = odds["banker"], odds["player"], odds["tie"]
    ev: dict[str, Fraction] = {}
    if rules.ez:  # (b)(1)(i)(c), (d)(3): no vigorish, a banker dragon 7 pushes
        ev["banker"] = pb - odds["dragon7"] - pp
    else:  # (d)(2): the winner keeps 1 less the vigorish
        ev["banker"] = pb * (1 - Fraction(rules.vig_percent, 100)) - pp
    ev["player"] = pp - pb
    ev["tie"] = pt * rules.tie_pays - (1 - pt)
    if rules.dragon_pay_table is not None:
        table = DRAGON_PAY_TABLES[rules.dragon_pay_table]
        for hand in ("dragon_player", "dragon_banker"):
            e = odds[f"{hand}:natural_win"] * DRAGON_NATURAL_WIN_PAYS - odds[f"{hand}:lose"]
            for points, pays in table.items():
                e += odds[f"{hand}:win_by_{points}"] * pays
            ev[hand] = e
    if rules.offers("dragon7"):
        p = odds["dragon7"]
        ev["dragon7"] = p * rules.dragon7_pays - (1 - p)
    if rules.offers("panda8"):
        p = odds["panda8"]
        panda_pays = rules.panda8_pays
        assert panda_pays is not None
        ev["panda8"] = p * panda_pays - (1 - p)
    return {f"edge:{w}": -e for w, e in ev.items()}
