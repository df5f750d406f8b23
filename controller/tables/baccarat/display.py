"""The baccarat dealer display: its two lines (at most 20 printable characters each) for every
state and call, silent while replaying.
"""

from __future__ import annotations

import logging

from controller.games.baccarat.shoe import CoupStep
from controller.tables.baccarat.core import BaccaratTableCore
from controller.tables.baccarat.machine import _COUP_STATES

log = logging.getLogger("controller.baccarat")


def _dollars(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return f"{sign}${cents // 100}.{cents % 100:02d}"


def _fit(text: str) -> str:
    """One dealer-display line: printable ASCII, no '|', at most 20 characters."""
    clean = "".join(ch if " " <= ch <= "~" and ch != "|" else "?" for ch in text)
    return clean[:20]


class DisplayMixin(BaccaratTableCore):
    """BaccaratTable's dealer-display text."""

    def _show(self, first: str, second: str = "") -> None:
        if self._replay is not None or self._display is None:
            return
        try:
            self._display.show([_fit(first), _fit(second)])
        except Exception as exc:  # noqa: BLE001 - a display failure must not stop the table
            log.warning("dealer display: %s", exc)

    # -- display -------------------------------------------------------------------------------

    def _show_state(self) -> None:
        d = self._d
        state = self._model_state()
        if state == "shuffle":
            owed = self._ledger.total_owed()
            self._show("SHUFFLE AND INSPECT", f"VIG OWED {_dollars(owed)}" if owed
                       else "THEN PRESS SHUFFLED")
        elif state == "burn":
            burn = self._burn
            if burn is None or burn.face_up is None:
                self._show("BURN: FIRST CARD", "FACE UP")
            else:
                self._show(f"BURN {burn.face_up.code}: {burn.remaining} MORE", "")
        elif state == "offering":
            self._show("OFFER THE SHOE", "FROM SEAT 1")
        elif state == "passing":
            self._show("PASS THE SHOE", f"FROM SEAT {d.curator}" if d.curator else "")
        elif state == "betting":
            self._show("PLACE YOUR BETS", "LAST HAND" if self._last_hand.last_hand
                       else f"COUP {d.coup_no + 1}")
        elif state in _COUP_STATES:
            self._show(*self._next_call())
        elif state == "settling":
            self._show(*d.announce)
        elif state == "halted":
            self._show("GAME HALTED", d.faults[0] if d.faults else "")

    def _next_call(self) -> tuple[str, str]:
        coup = self._coup
        totals = f"P {coup.player_total} B {coup.banker_total}" if len(coup.cards) >= 4 else ""
        exp = coup.expecting
        if exp is CoupStep.PLAYER_CARD:
            return ("DEAD HAND" if self._d.dead_hand else "CARDS", "PLAYER CARD")
        if exp is CoupStep.BANKER_CARD:
            return ("CARDS", "BANKER CARD")
        if exp is CoupStep.PLAYER_DRAWS:
            return ("PLAYER DRAWS", totals)
        stood = CoupStep.PLAYER_STANDS in coup.calls
        return ("PLAYER STANDS" if stood else "BANKER DRAWS",
                "BANKER DRAWS" if stood else totals)
