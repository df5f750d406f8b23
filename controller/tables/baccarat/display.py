"""The baccarat dealer display: its two lines (at most 20 printable characters each) for every
state and call, silent while replaying.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from controller.fields.readers import (
    Fields,
    as_map,
    int_of,
    opt_int_of,
    opt_list_of,
    opt_map_of,
    str_of,
)
from controller.games.baccarat.shoe import CoupStep
from controller.tables.baccarat.machine import COUP_STATES
from controller.tables.baccarat.record import Record
from controller.tables.baccarat.sequence import Sequence
from controller.tables.baccarat.state import ShoeState
from drivers.dealer_display import DealerDisplay

log = logging.getLogger("controller.baccarat")


#: States before a coup's cards are out: the coup named is the one to come.
BEFORE_COUP = frozenset({"burn", "offering", "passing", "betting"})
#: States between coups and shoes: while the table is CLOSED (the host's ``disable``) the
#: display says so in these; a shoe's burn or a coup under way finishes first.
BETWEEN_COUPS = frozenset({"shuffle", "offering", "passing", "betting"})


def coup_shown(state: str, coup_no: int) -> int:
    """The coup the dealer display and the monitor both name: the coup to come while bets
    are open (``PLACE YOUR BETS / COUP 2`` after coup 1), the coup being dealt or settled
    otherwise (``coup_no`` counts the coups started)."""
    return coup_no + 1 if state in BEFORE_COUP else coup_no


def dollars(cents: int) -> str:
    """Cents as ``$D.CC`` (``-$D.CC`` below zero)."""
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return f"{sign}${cents // 100}.{cents % 100:02d}"


def _signed(cents: int) -> str:
    """Cents as the ledger shows them: ``+$23.75``, ``-$25.00``."""
    return ("-" if cents < 0 else "+") + dollars(abs(cents))


def settlement_summary(row: Fields) -> list[str]:
    """The console lines of a coup's settlement (its ``baccarat.settlement`` row), as pai gow's
    ``settled`` says them: every wager in the order the dealer settles it, 5324.20(g)(2) --
    the losing wagers collected first, then the winning wagers from the highest seat down, then
    the wagers returned (a tie's banker and player) -- each with the stake, win, lose or push,
    the vigorish ((d)(2): collected, or owed when deferred) and the net cents; then the ledger
    (who gains and loses what; the house the other side of every wager) and the deferred
    vigorish still owed."""
    lines = [as_map(line, "a settlement line") for line in opt_list_of(row, "lines") or []]
    if not lines:
        return ["no wagers were entered: nothing to settle"]
    out = []
    ledger: dict[str, int] = {}
    for line in sorted(lines, key=_paying_order):
        net = int_of(line, "net_cents")
        vig = opt_int_of(line, "commission_cents") or 0
        outcome = "win" if net > 0 else "lose" if net < 0 else "push"
        how = ""
        if vig:
            how = f" vig {vig}c" + (" owed" if line.get("vig_deferred") else "")
        seat = int_of(line, "seat")
        out.append(
            f"seat {seat} {str_of(line, 'wager')}: {int_of(line, 'stake_cents')}c {outcome}{how}"
            f" net {net:+d}c"
        )
        party = f"seat{seat}"
        ledger[party] = ledger.get(party, 0) + net
    ledger["house"] = -sum(ledger.values())
    out.append("ledger: " + ", ".join(f"{k} {_signed(v)}" for k, v in sorted(ledger.items())))
    owed_by = opt_map_of(row, "ledger") or {}
    owed = {k: v for k in owed_by if (v := int_of(owed_by, k))}
    if owed:
        out.append(
            "vigorish owed (5324.20(d)(2)): "
            + ", ".join(f"seat {k} {dollars(v)}" for k, v in sorted(owed.items(), key=_seat_key))
        )
    return out


def _paying_order(line: Fields) -> tuple[int, int]:
    """5324.20(g)(2): losing wagers first, then winning ones, each from the highest seat down;
    the wagers returned (a push) last."""
    net = int_of(line, "net_cents")
    return (0 if net < 0 else 1 if net > 0 else 2), -int_of(line, "seat")


def _seat_key(item: tuple[str, int]) -> int:
    return int(item[0]) if item[0].isdigit() else 0


def fit_line(text: str) -> str:
    """One dealer-display line: printable ASCII, no '|', at most 20 characters."""
    clean = "".join(ch if " " <= ch <= "~" and ch != "|" else "?" for ch in text)
    return clean[:20]


class Presenter:
    """Says on the dealer display what the dealer must do next."""

    def __init__(
        self,
        display: DealerDisplay | None,
        state: ShoeState,
        sequence: Sequence,
        record: Record,
        closed: Callable[[], str | None] = lambda: None,
    ) -> None:
        self._display = display
        self._closed = closed
        self._state = state
        self._sequence = sequence
        self._record = record
        self._shown: list[str] = []

    def show(self, first: str, second: str = "") -> None:
        """Both lines on the dealer display, once what decided them is committed (an output);
        what it now shows is said on every console when it changed (``!DISPLAY PLAYER DRAWS /
        P 5 B 3``)."""
        display = self._display
        if self._record.replaying or display is None:
            return
        lines = [fit_line(first), fit_line(second)]
        self._record.output(lambda: self._write(display, lines))

    def _write(self, display: DealerDisplay, lines: list[str]) -> None:
        try:
            display.show(lines)
        except Exception as exc:  # noqa: BLE001 - a display failure must not stop the table
            log.warning("dealer display: %s", exc)
            return
        if lines != self._shown:
            self._shown = lines
            self._record.say("DISPLAY " + " / ".join(line for line in lines if line))

    def show_state(self) -> None:
        s = self._state
        d = s.data
        state = self._sequence.current
        closed = self._closed()
        if closed is not None and state in BETWEEN_COUPS:
            self.show("TABLE CLOSED", closed)
        elif d.shoe_unconfirmed is not None and state in (
            "shuffle",
            "offering",
            "betting",
            "passing",
        ):
            self.show("SHOE RESTARTED", "CONFIRM: SHOE RESUME")
        elif state == "shuffle":
            owed = s.ledger.total_owed()
            self.show(
                "SHUFFLE AND INSPECT",
                f"VIG OWED {dollars(owed)}" if owed else "THEN PRESS SHUFFLED",
            )
        elif state == "burn":
            burn = s.burn
            if burn is None or burn.face_up is None:
                self.show("BURN: FIRST CARD", "FACE UP")
            else:
                self.show(f"BURN {burn.face_up.code}: {burn.remaining} MORE", "")
        elif state == "offering":
            self.show("OFFER THE SHOE", "FROM SEAT 1")
        elif state == "passing":
            self.show("PASS THE SHOE", f"FROM SEAT {d.curator}" if d.curator else "")
        elif state == "betting":
            self.show(
                "PLACE YOUR BETS",
                "LAST HAND" if s.last_hand.last_hand else f"COUP {coup_shown(state, d.coup_no)}",
            )
        elif state in COUP_STATES:
            self.show(*self._next_call())
        elif state == "settling":
            self.show(*d.announce)
        elif state == "halted":
            self.show("GAME HALTED", d.faults[0] if d.faults else "")

    def _next_call(self) -> tuple[str, str]:
        coup = self._state.coup
        totals = f"P {coup.player_total} B {coup.banker_total}" if len(coup.cards) >= 4 else ""
        exp = coup.expecting
        if exp is CoupStep.PLAYER_CARD:
            return ("DEAD HAND" if self._state.data.dead_hand else "CARDS", "PLAYER CARD")
        if exp is CoupStep.BANKER_CARD:
            return ("CARDS", "BANKER CARD")
        if exp is CoupStep.PLAYER_DRAWS:
            return ("PLAYER DRAWS", totals)
        stood = CoupStep.PLAYER_STANDS in coup.calls
        return ("PLAYER STANDS" if stood else "BANKER DRAWS", "BANKER DRAWS" if stood else totals)
