"""The baccarat shoe's frames and the coup they deal: the session, the cover card, the burn, the
coup's cards and irregularities, the result and settlement, void, halt and the end of a shoe.
"""

from __future__ import annotations

from typing import Final

from controller.games import baccarat
from controller.games.baccarat.irregularities import (
    Ruling,
    drawn_in_excess,
    face_up_in_shoe,
    player_third_in_error,
)
from controller.games.baccarat.shoe import (
    CardBeyondShoe,
    CoupInProgress,
    CoupStep,
    CoverCard,
    ShoeStatus,
    void_for_short_shoe,
)
from controller.games.baccarat.shoe_passing import after_round
from controller.tables.baccarat.data import (
    K_SNAPSHOT,
    SNAPSHOT_EVERY,
    SNAPSHOT_VERSION,
    PendingCard,
)
from controller.tables.baccarat.display import Presenter
from controller.tables.baccarat.machine import COUP_STATES
from controller.tables.baccarat.record import Record
from controller.tables.baccarat.sequence import Sequence
from controller.tables.baccarat.state import ShoeState

#: A card's place among the next hand's cards, as the dealer display says it.
_ORDINALS: Final = ("1ST", "2ND", "3RD")


class CoupPlay:
    """Turns the shoe's frames into burns, coups, results and settlements, and ends coups and
    shoes (void, halt, reshuffle) as 5324.20 requires."""

    def __init__(
        self, state: ShoeState, sequence: Sequence, record: Record, view: Presenter
    ) -> None:
        self._s = state
        self._seq = sequence
        self._rec = record
        self._view = view
        self._settings_journaled: dict[str, object] | None = None

    def forget_settings(self) -> None:
        """The settings last journaled may not be (a commit failed): journal them again."""
        self._settings_journaled = None

    def snapshot(self, coup_boundary: bool = False) -> None:
        """A snapshot row: the machine's state and the table's data, compact (ShoeData.
        to_json). At a shoe boundary always; at a coup boundary every SNAPSHOT_EVERY coups, so
        a restart replays at most that many coups' inputs (docs/baccarat-table.md)."""
        if coup_boundary and self._s.data.coup_no % SNAPSHOT_EVERY:
            return
        self._rec.emit(
            K_SNAPSHOT,
            {
                "version": SNAPSHOT_VERSION,
                "state": self._seq.current,
                "data": self._s.data.to_json(),
            },
            round_id=None,
        )

    # -- shoe frames ---------------------------------------------------------------------------

    def apply_session(self, sid: str, model: str, renewed: bool) -> None:
        """docs/design.md: a new session (``renewed``: another came before it) means the
        shoe powered up, and the frames the old session had not delivered are gone with its
        power. During a burn, a coup, or while a card is due that is an irregularity the table
        cannot repair: it halts (and voids the coup). At a quiet moment the table goes on once
        the dealer confirms that no card left the shoe while it was off (`shoe resume`)."""
        d = self._s.data
        if d.shoe_faults:
            # the shoe's faults were those of the session that raised them: gone with its power
            d.shoe_faults = []
            self._rec.emit("baccarat.shoe_fault", {"code": "power-up", "active": []})
        if not renewed:
            return  # the first session this table knows: nothing can have been lost
        state = self._seq.current
        if state in COUP_STATES:
            self.halt(
                f"the shoe ({model}) power-cycled mid-coup (new session {sid}): cards may"
                " have left it unread"
            )
        elif state == "burn":
            self.halt(
                f"the shoe ({model}) power-cycled during the burn (new session {sid}):"
                " burn cards may have left it unread"
            )
        elif d.face_up_next:
            self.halt(
                f"the shoe ({model}) power-cycled with a card announced face up (new"
                f" session {sid}): that card may have left it unread"
            )
        elif state == "halted":
            self._rec.emit(
                "baccarat.shoe.session",
                {"sid": sid, "state": state, "confirm": "the reshuffle (clear)"},
            )
        else:
            d.shoe_unconfirmed = sid
            self._rec.emit(
                "baccarat.shoe.session", {"sid": sid, "state": state, "confirm": "shoe resume"}
            )
            self._rec.alarm(
                f"SHOE RESTARTED (session {sid}): confirm that no card left the"
                " shoe while it was off: shoe resume"
            )
            self._view.show_state()

    def apply_frame(self, ftype: str, fields: list[str], known: bool) -> None:
        if not known:
            self._rec.emit("baccarat.frame.unknown", {"type": ftype, "fields": fields})
            return
        if ftype == "CARD":
            code = fields[0] if fields else ""
            try:
                card = baccarat.card(code)
            except baccarat.CardError as exc:
                self.halt(f"the shoe sent {code!r}, not a card: {exc}")
                return
            self._card(card.code)
        elif ftype == "COVR":
            self._cover()
        elif ftype == "FLT":
            self._shoe_fault(fields[0] if fields else "")

    def _shoe_fault(self, code: str) -> None:
        d = self._s.data
        if code == "UNREAD":
            # A card left the shoe and nobody knows which: the inventory and the coup are lost.
            self._rec.emit("baccarat.integrity", {"problem": "unreadable card", "code": code})
            self.halt("a card left the shoe unread ($FLT UNREAD)")
        elif code == "FACEUP":
            d.face_up_next = True
            self._rec.emit(
                "baccarat.irregularity",
                {"section": "5324.20(i)(1)", "problem": "a card found face up in the shoe"},
            )
        elif code == "CLR":
            d.shoe_faults = []
            self._rec.emit("baccarat.shoe_fault", {"code": "CLR", "active": []})
            self._view.show_state()
        else:
            if code not in d.shoe_faults:
                d.shoe_faults.append(code)
            self._rec.emit("baccarat.shoe_fault", {"code": code, "active": list(d.shoe_faults)})
            self._rec.alarm(f"SHOE FAULT {code}")
            self._view.show("SHOE FAULT", code)

    def _cover(self) -> None:
        d = self._s.data
        if not d.shoe_in_play:
            self._rec.emit("baccarat.cover", {"ignored": "no shoe in play"})
            return
        try:
            kind = self._s.last_hand.cover_card()
        except baccarat.BaccaratError as exc:
            self.halt(f"cover card: {exc}")
            return
        d.marks.append("C")
        self._rec.emit("baccarat.cover", {"kind": kind.value, "section": "5324.20(f)(9)"})
        if kind is CoverCard.BOTTOM:
            d.shoe_done = True
            if self._seq.current in COUP_STATES:
                self.void("the cards ran out before the coup was complete (5324.20(i)(4))")
        else:
            self._view.show_state()

    # -- cards ---------------------------------------------------------------------------------

    def _card(self, code: str) -> None:
        d = self._s.data
        state = self._seq.current
        if not d.shoe_in_play:
            # Between shoes: not part of any inventory. Journaled and alarmed, never dropped.
            self._rec.emit(
                "baccarat.irregularity",
                {"card": code, "state": state, "problem": "a card read with no shoe in play"},
            )
            self._rec.alarm(f"CARD {code} read with no shoe in play")
            return
        d.cards_out.append(code)
        assert self._s.composition is not None
        try:
            self._s.composition.remove(code)
        except CardBeyondShoe as exc:
            self._rec.emit("baccarat.integrity", {"card": code, "problem": str(exc)})
            self.halt(f"inventory: {exc}")
            return
        for alarm in self._s.monitor.add(code):
            self._rec.emit("baccarat.integrity", {"card": code, "problem": alarm})
            self.halt(f"unshuffled sequence: {alarm}")
            return
        if state == "halted":
            self._rec.emit("baccarat.card", {"card": code, "use": "held: table halted"})
            self._rec.alarm(f"CARD {code} while halted")
            return
        if d.face_up_next:
            d.face_up_next = False
            ruling = face_up_in_shoe(code, disclosed=False)
            self._rec.emit(
                "baccarat.card", {"card": code, "use": ruling.fate.value, "section": ruling.section}
            )
            # 5324.20(i)(1): it is never the first card of a hand; the dealer may disclose it.
            d.pending.append(
                {"card": code, "kind": "face_up", "disclosed": False, "fate": "discard"}
            )
            return
        if state == "burn":
            self._burn_card(code)
        elif state in COUP_STATES:
            self._coup_card(code)
        else:
            self._excess_card(code, state)

    def _burn_card(self, code: str) -> None:
        d = self._s.data
        assert self._s.burn is not None
        left = self._s.burn.add(code)
        if self._s.burn.cards_used == 1 and d.burn_face_up is None:
            d.burn_face_up = code
        else:
            d.burned.append(code)
        face_up = self._s.burn.face_up.code if self._s.burn.face_up else None
        self._seq.fire("burn_card")
        self._rec.emit(
            "baccarat.burn",
            {
                "card": code,
                "left": left,
                "face_up": face_up,
                "section": "5324.20(e)" if d.burn_reason == "shoe" else "5324.20(i)",
            },
        )
        if left == 0:
            self._rec.emit(
                "baccarat.burn.done",
                {
                    "face_up": d.burn_face_up,
                    "burned": d.burned,
                    "count": len(d.burned),
                    "reason": d.burn_reason,
                },
            )
            d.burn_face_up, d.burn_count, d.burned = None, None, []
            self._s.burn = None
            d.burn_reason = "shoe"
            self.snapshot()
        self._view.show_state()

    def _coup_card(self, code: str) -> None:
        d = self._s.data
        before = self._s.coup.copy()
        step = self._s.coup.add(code)
        d.coup.append(code)
        n = len(d.coup)
        calls = [c.value for c in self._s.coup.calls[len(before.calls) :]]
        self._seq.fire("deal_card")
        self._rec.head("decision")  # a card decides the coup: the anchor learns of it soon
        row: dict[str, object] = {"card": code, "n": n}
        if calls:  # a drawing rule was applied, 5324.20(f)(10)-(13); the hands are in the result
            row["calls"] = calls
        self._rec.emit("baccarat.card", row)
        if step is CoupStep.COMPLETE:
            self._result()
            return
        left = self._s.composition.cards_left if self._s.composition is not None else 0
        if void_for_short_shoe(self._s.coup, left):
            self.void(f"{left} cards left cannot finish the coup (5324.20(i)(4))")
            return
        self._view.show_state()

    def _excess_card(self, code: str, state: str) -> None:
        """A card when none is expected: 5324.20(i)(3) right after a coup the player stood in,
        else (i)(2). Not disclosed, it is the first card of the next hand."""
        d = self._s.data
        ruling: Ruling
        if state == "settling" and not d.pending and not d.dead_hand and len(d.coup) == 4:
            # Both hands stood on their first two cards: the card went to the player in error.
            four = CoupInProgress(d.coup)
            ruling = player_third_in_error(four, code, disclosed=False)
            kind = "player_third"
            held: PendingCard = {
                "card": code,
                "kind": kind,
                "disclosed": False,
                "fate": ruling.fate.value,
                "burn_more": player_third_in_error(
                    four, code, disclosed=True, count=self._s.opts.error_card_count
                ).burn_more,
                "count": self._s.opts.error_card_count.value,
            }
        else:
            ruling = drawn_in_excess(code, disclosed=False)
            kind = "excess"
            held = {"card": code, "kind": kind, "disclosed": False, "fate": ruling.fate.value}
        d.pending.append(held)
        self._rec.emit(
            "baccarat.irregularity",
            {
                "card": code,
                "state": state,
                "kind": kind,
                "section": ruling.section,
                "fate": ruling.fate.value,
            },
        )
        self._rec.alarm(
            f"IRREGULARITY {code}: {kind.replace('_', ' ')} ({ruling.section});"
            " press disclose if it was seen"
        )
        kept = [p for p in d.pending if p["fate"] != "discard"]
        if len(kept) >= 4:
            self.halt("four cards drawn in excess before a hand")
            return
        if held["fate"] == "discard":
            self._view.show("CARD IN EXCESS " + code, "TO THE DISCARD RACK")
            return
        # (i)(2): the card is the next hand's first; one drawn after it is its second (the
        # banker's first, dealt player, banker, player, banker), and so on
        place = _ORDINALS[len(kept) - 1]
        self._view.show("CARD IN EXCESS " + code, f"NEXT HAND {place} CARD")

    # -- the coup ------------------------------------------------------------------------------

    def start_coup(self, dead: bool) -> None:
        d = self._s.data
        d.coup_no += 1
        d.round_id = self._rec.work.input_seq
        d.dead_hand = dead
        d.last_result = ""  # the last coup's result is not this one's (status)
        d.coup = []
        self._s.coup = CoupInProgress()
        if dead:
            d.bets = {}
        first = [
            p
            for p in d.pending
            if p["fate"] == "first card of the next hand" and not p["disclosed"]
        ]
        d.pending = []
        settings = self._s.take_settings(self._rec.work.input_seq, shoe=False)
        row: dict[str, object] = {
            "shoe": d.shoe_no,
            "coup": d.coup_no,
            "bets": d.bets,
            "curator": d.curator,
        }
        for key, value in (
            ("dead_hand", dead),
            ("last_hand", self._s.last_hand.last_hand),
            ("carried", [p["card"] for p in first]),
        ):
            if value:
                row[key] = value
        if settings != self._settings_journaled:
            # the rules the coup runs under, when they differ from the last coup's (the first
            # coup after a start always has them); the replay uses the row of settings_seq
            row["settings"] = self._settings_journaled = settings
        self._rec.emit("baccarat.coup.start", row)
        for p in first:
            # 5324.20(i)(2)-(3): the card drawn in excess is the first card of this hand.
            self._s.coup.add(p["card"])
            d.coup.append(p["card"])
            self._rec.emit("baccarat.card", {"card": p["card"], "n": len(d.coup), "carried": True})

    def _result(self) -> None:
        d = self._s.data
        coup = self._s.coup.result()
        text = self._result_text(coup)
        d.last_result = f"{coup}"
        d.last_winner = coup.winner
        d.last_totals = [coup.player_total, coup.banker_total]
        d.results.append(baccarat.result_of(coup).code)
        self._rec.emit(
            "baccarat.coup.result",
            {
                "shoe": d.shoe_no,
                "coup": d.coup_no,
                "cards": list(d.coup),
                "player": [c.code for c in coup.player],
                "banker": [c.code for c in coup.banker],
                "player_total": coup.player_total,
                "banker_total": coup.banker_total,
                "winner": coup.winner,
                "natural": coup.natural,
                "dead_hand": d.dead_hand,
            },
        )
        self._rec.head("decision")
        status = self._s.last_hand.hand_complete()
        d.marks.append("H")
        if status is ShoeStatus.RESHUFFLE:
            d.shoe_done = True
        passing = after_round(
            coup.winner,
            wagered=not d.dead_hand,
            dead_hand_compels=self._s.opts.dead_hand_compels_pass,
        )
        d.compelled_pass = passing.passes
        self._settle(coup)
        if status is ShoeStatus.LAST_HAND:
            self._rec.emit("baccarat.last_hand", {"section": "5324.20(f)(9)"})
        d.announce = (
            text,
            f"P {coup.player_total}  B {coup.banker_total}"
            + ("  LAST HAND" if status is ShoeStatus.LAST_HAND else ""),
        )
        self._view.show(*d.announce)

    @staticmethod
    def _result_text(coup: baccarat.Coup) -> str:
        if coup.winner == "tie":
            return "TIE HAND"
        return f"{coup.winner.upper()} WINS {max(coup.player_total, coup.banker_total)}"

    def _settle(self, coup: baccarat.Coup) -> None:
        """5324.20(g)(2): every wager settled in cents; a banker win's vigorish collected or,
        with deferred vigorish, marked per seat with lammers (d)(2)."""
        d = self._s.data
        lines = []
        for seat in sorted(d.bets, key=int, reverse=True):
            for wager, stake in sorted(d.bets[seat].items()):
                s = baccarat.settle_with_commission(wager, stake, coup, self._s.rules)
                deferred = bool(s.commission and self._s.deferred_vig)
                if deferred:
                    self._s.ledger = self._s.ledger.owe(int(seat), s.commission)
                lines.append(
                    {
                        "seat": int(seat),
                        "wager": wager,
                        "stake_cents": stake,
                        "net_cents": s.net,
                        "commission_cents": s.commission,
                        "paid_cents": s.before_vigorish if deferred else s.net,
                        "vig_deferred": deferred,
                    }
                )
        self._s.record_ledger()
        row: dict[str, object] = {"lines": lines, "dead_hand": d.dead_hand}
        if d.ledger:  # deferred vigorish owed, 5324.20(d)(2)
            row["ledger"] = d.ledger
        self._rec.emit("baccarat.settlement", row)

    def void(self, reason: str) -> None:
        d = self._s.data
        self._rec.emit(
            "baccarat.coup.voided",
            {
                "shoe": d.shoe_no,
                "coup": d.coup_no,
                "cards": list(d.coup),
                "reason": reason,
                "bets_returned": d.bets,
            },
        )
        self._seq.fire("void_round")
        self.end_shoe("void: " + reason)

    def halt(self, reason: str) -> None:
        d = self._s.data
        if reason not in d.faults:
            d.faults.append(reason)
        if self._seq.current in (*COUP_STATES, "settling") and d.round_id is not None:
            self._rec.emit(
                "baccarat.coup.voided",
                {
                    "shoe": d.shoe_no,
                    "coup": d.coup_no,
                    "cards": list(d.coup),
                    "reason": reason,
                    "bets_returned": d.bets,
                },
            )
            d.bets = {}
            d.coup = []
            self._s.coup = CoupInProgress()
        if self._seq.current != "halted":
            self._seq.fire("halt")
        self._rec.emit("baccarat.fault", {"fault": reason, "faults": list(d.faults)})
        self._rec.alarm(f"FAULT {reason}")
        self._view.show("GAME HALTED", reason)

    def end_shoe(self, why: str) -> None:
        """The shoe leaves play (reshuffle). Deferred vigorish stays on the ledger until
        collected; the "shuffled" button is refused until then, 5324.20(d)(2)."""
        d = self._s.data
        d.shoe_in_play = False
        d.burn_face_up, d.burn_count, d.burned, d.burn_reason = None, None, [], "shoe"
        self._s.burn = None
        self._s.composition = None  # no shoe in play: no inventory (as recover() rebuilds it)
        d.bets = {}
        d.coup = []
        d.pending = []
        d.round_id = None
        d.face_up_next = False
        d.shoe_done = False
        d.compelled_pass = False
        self._s.coup = CoupInProgress()
        self._rec.emit(
            "baccarat.shoe.end",
            {"shoe": d.shoe_no, "why": why, "cards_out": len(d.cards_out)},
            round_id=None,
        )
        self._rec.head("boundary")
        self.snapshot()
        self._view.show_state()
