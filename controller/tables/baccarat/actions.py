"""The baccarat dealer buttons and console actions: a new shoe, no more bets, settled, disclose,
wagers, the shoe's curator and passing, remedies, vigorish collection, void and clear.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final

from controller.games import baccarat
from controller.games.baccarat.irregularities import BurnFrom, Remedy, Then, face_up_in_shoe
from controller.games.baccarat.shoe import BurnProgress, CoupInProgress, void_for_short_shoe
from controller.games.baccarat.shoe_passing import opening_offer_order, passing_offer_order
from controller.tables.baccarat.coup import CoupPlay
from controller.tables.baccarat.display import Presenter, dollars, settlement_summary
from controller.tables.baccarat.machine import COUP_STATES
from controller.tables.baccarat.record import Record
from controller.tables.baccarat.sequence import Sequence as CertifiedSequence
from controller.tables.baccarat.state import ShoeState
from controller.tables.table import RefusalCode, Refused

#: The console actions of the baccarat table (besides ``sim`` and ``odds``).
ACTIONS: Final = frozenset(
    {
        "bet",
        "curator",
        "nobody",
        "pass",
        "disclose",
        "remedy",
        "collect",
        "void",
        "clear",
        "shoe",
        "shift",
    }
)
#: How a refusal of a void during a coup for want of a supervisor ends (the console answers
#: ERR AUTH), as pai gow's void after the draw: the coup's cards are out.
NEEDS_SUPERVISOR: Final = (
    "a void during a coup needs a supervisor's login at the console (login SUPERVISOR-PIN)"
)
#: Inputs that make cards leave the shoe: refused until a new shoe session is confirmed.
_DEALS: Final = frozenset({"shuffled", "no_more_bets", "remedy"})

#: What ``help`` says of each console action: syntax, what it does, an example to type.
ACTION_HELP: Final[Mapping[str, tuple[str, str, str]]] = {
    "curator": (
        "curator SEAT",
        "SEAT accepts the shoe: offered from seat 1 (5324.20(f)(1)) or,"
        " when passed, from the right of the last curator ((h)(2))",
        "curator 1",
    ),
    "nobody": (
        "nobody",
        "no player accepts the shoe: the cards are turned over (5324.20(h)(2))",
        "nobody",
    ),
    "bet": (
        "bet SEAT WAGER CENTS",
        "a wager while betting: banker, player, tie, dragon, ... in whole cents",
        "bet 3 banker 2500",
    ),
    "pass": (
        "pass [ordered]",
        "the curator passes the shoe (5324.20(h)(1)); ordered: by the"
        " dealer or floorperson ((h)(1)(ii))",
        "pass",
    ),
    "disclose": (
        "disclose",
        "a card held for the next hand was seen (5324.20(i)(1)-(3))",
        "disclose",
    ),
    "remedy": (
        "remedy burn|dead",
        "the dealer's remedy for a disclosed card (5324.20(i)(1))",
        "remedy burn",
    ),
    "collect": ("collect SEAT", "collect SEAT's deferred vigorish (5324.20(d)(2))", "collect 3"),
    "void": (
        "void [REASON]",
        "void the round in progress: every wager returned, reshuffle;"
        " once a card of the coup is out only a supervisor (raises an alarm, counted for"
        " the shift)",
        "void shoe jammed",
    ),
    "shift": (
        "shift start",
        "a supervisor starts a shift: the count of voids during a coup starts again",
        "shift start",
    ),
    "clear": ("clear", "clear an integrity halt: the shoe is reshuffled", "clear"),
    "shoe": (
        "shoe resume",
        "the dealer confirms a new shoe session (the shoe powered up): no"
        " card left the shoe while it was off",
        "shoe resume",
    ),
    "sim": (
        "sim shoe deal [N|coup|burn] | sim shoe card RS | sim shoe load | "
        "sim shoe fault KIND | sim button NAME",
        "drive the simulated shoe and buttons;"
        " KIND: checksum, drop, duplicate, garbage, disconnect, power, unread, foreign,"
        " faceup, jam, door, clear",
        "sim shoe deal burn",
    ),
}


class DealerActions:
    """The dealer's buttons and the console's table actions, applied to the table's state."""

    def __init__(
        self,
        state: ShoeState,
        sequence: CertifiedSequence,
        record: Record,
        view: Presenter,
        play: CoupPlay,
        shoe_ok: Callable[[], bool],
    ) -> None:
        self._s = state
        self._seq = sequence
        self._rec = record
        self._view = view
        self._play = play
        #: False while the shoe's watchdog says it is silent (no cards are accepted).
        self._shoe_ok = shoe_ok

    # -- buttons and console actions -----------------------------------------------------------

    def _confirmed(self, what: str) -> None:
        """docs/design.md: after a new shoe session at a quiet moment the table goes on
        only once the dealer confirms that no card left the shoe while it was off."""
        sid = self._s.data.shoe_unconfirmed
        if sid is not None and what in _DEALS:
            raise Refused(
                f"the shoe powered up anew (session {sid}): confirm that no card left"
                " it while it was off with `shoe resume` first",
                "STATE",
            )

    def shoe_resume(self, who: str) -> list[str]:
        """The dealer's confirmation (console `shoe resume`, or the profile's ``shoe_resume``
        button) that no card left the shoe while it was off."""
        d = self._s.data
        if d.shoe_unconfirmed is None:
            raise Refused("no new shoe session waits for a confirmation", RefusalCode.STATE)
        sid, d.shoe_unconfirmed = d.shoe_unconfirmed, None
        self._rec.emit(
            "baccarat.shoe.resumed", {"sid": sid, "who": who, "state": self._seq.current}
        )
        self._view.show_state()
        return [f"shoe session {sid} confirmed: play goes on"]

    def button(self, name: str) -> list[str]:
        d = self._s.data
        self._confirmed(name)
        if name == "shoe_resume":
            return self.shoe_resume("dealer (button)")
        if name == "shuffled":
            self._seq.fire("shuffled")
            d.shoe_no += 1
            d.coup_no = 0
            d.cards_out, d.marks, d.faults, d.results = [], [], [], []
            d.last_totals = []
            d.burn_face_up, d.burn_count, d.burned = None, None, []
            d.shoe_in_play = True
            d.burn_reason = "shoe"
            d.curator = None
            d.shoe_settings_seq = d.settings_seq = self._rec.work.input_seq
            self._s.rebuild(self._seq.current)
            self._s.burn = BurnProgress()
            self._seq.sync()
            settings = self._s.take_settings(self._rec.work.input_seq, shoe=True)
            self._rec.emit(
                "baccarat.shoe.start",
                {"shoe": d.shoe_no, "decks": self._s.decks, "settings": settings},
            )
            self._view.show_state()
            return [f"shoe {d.shoe_no}: burn the first card (5324.20(e))"]
        if name == "no_more_bets":
            if not self._shoe_ok():
                raise Refused(
                    "the shoe is silent (watchdog): no cards are accepted", RefusalCode.FAULT
                )
            left = self._s.composition.cards_left if self._s.composition is not None else 0
            self._seq.fire("no_more_bets")
            self._play.start_coup(dead=False)
            if void_for_short_shoe(self._s.coup, left):
                self._play.void(f"{left} cards left cannot finish a coup (5324.20(i)(4))")
                return ["round void: too few cards (5324.20(i)(4))"]
            self._view.show_state()
            return [
                f"coup {d.coup_no}: no more bets; the cards come player, banker, player,"
                " banker (5324.20(f)(5))"
            ]
        if name == "settled":
            result = d.last_result
            self._seq.fire("settled")
            # what the coup's result settled (journaled with it), as pai gow's settled says it
            row = self._rec.journal.last(["baccarat.settlement"])
            settled = settlement_summary(row.data if row is not None else {})
            # the result and settlement rows of the coup hold what was decided
            self._rec.emit("baccarat.coup.settled", {"shoe": d.shoe_no, "coup": d.coup_no})
            self._rec.head("boundary")
            d.bets = {}
            d.dead_hand = False
            d.coup = []
            self._s.coup = CoupInProgress()
            d.round_id = None
            state = self._seq.current
            if state == "shuffle":
                self._play.end_shoe("last hand dealt (5324.20(f)(9))")
            else:
                if state == "passing":
                    d.compelled_pass = False
                self._play.snapshot(coup_boundary=True)
                self._view.show_state()
            return [
                f"coup {d.coup_no} settled ({result or 'no result'}); next: {state}",
                *settled,
            ]
        if name == "disclose":
            return self._disclose()
        raise Refused(f"no dealer button {name!r} at baccarat", RefusalCode.UNKNOWN)

    def _disclose(self) -> list[str]:
        """The card held for the next hand was seen: 5324.20(i)(1)-(3)."""
        d = self._s.data
        undisclosed = [p for p in d.pending if not p["disclosed"]]
        if not undisclosed:
            raise Refused("no card is held for the next hand: nothing to disclose")
        p = undisclosed[-1]
        p["disclosed"] = True
        p["fate"] = "discard"
        if p["kind"] == "player_third":
            p["remedy"] = "burn_more"  # 5324.20(i)(3): burn_more was fixed when it was dealt
        self._rec.emit(
            "baccarat.disclosed",
            {"card": p["card"], "kind": p["kind"], "remedy": p.get("remedy", "dealer's choice")},
        )
        self._seq.sync()
        self._view.show(
            "DISCLOSED " + p["card"],
            "REMEDY BURN OR DEAD" if p["kind"] != "player_third" else "BURN FACE UP",
        )
        return [
            f"{p['card']} disclosed; console: remedy burn"
            + ("" if p["kind"] == "player_third" else " | remedy dead")
        ]

    def action(self, name: str, args: list[str], who: str) -> list[str]:
        d = self._s.data
        self._confirmed(name)
        if name == "shoe":
            if args != ["resume"]:
                raise Refused(
                    "usage: shoe resume (the dealer confirms a new shoe session)", "SYNTAX"
                )
            return self.shoe_resume(who)
        if name == "bet":
            return self._bet(args)
        if name == "curator":
            seat = self._seat(args)
            state = self._seq.current
            if state not in ("offering", "passing"):
                held = f"seat {d.curator} holds the shoe" if d.curator else "no shoe is in play"
                raise Refused(
                    f"the shoe is offered only after the burn (5324.20(f)(1)) or when "
                    f"it passes ((h)(2)); {held} (state {state})"
                )
            prev = d.curator if state == "passing" else None
            offer_back = self._s.opts.offer_back_to_previous
            order = (
                opening_offer_order(self._s.ring, self._s.ring.seats_ccw)
                if prev is None
                else passing_offer_order(
                    self._s.ring, self._s.ring.seats_ccw, prev, offer_back=offer_back
                )
            )
            if seat not in order:
                # 5324.20(h)(2): the shoe goes to the player to the right of the previous
                # curator, then to "each of the other players, in turn"
                raise Refused(
                    f"seat {seat} gave up the shoe: 5324.20(h)(2) offers it to the "
                    f"other players in turn ({', '.join(map(str, order))}) and not "
                    "back to the previous curator (baccarat.offer_back_to_previous ="
                    " false)"
                )
            self._seq.fire("accept_shoe")
            d.curator = seat
            self._rec.emit(
                "baccarat.curator",
                {
                    "seat": seat,
                    "previous": prev,
                    "offer_order": list(order),
                    "section": "5324.20(f)(1)-(2)" if prev is None else "5324.20(h)(2)",
                },
            )
            self._view.show_state()
            section = "5324.20(f)(1)" if prev is None else "5324.20(h)(2)"
            return [
                f"seat {seat} holds the shoe (offered in turn: "
                f"{', '.join(map(str, order[:8]))}{', ...' if len(order) > 8 else ''};"
                f" {section}); betting is open"
            ]
        if name == "nobody":
            self._seq.fire("nobody_accepts")
            self._play.end_shoe("no player accepted the shoe (5324.20(h)(2))")
            return ["the cards are turned over (5324.20(h)(2))"]
        if name == "pass":
            self._seq.fire("pass_shoe")
            ordered = bool(args and args[0] == "ordered")
            self._rec.emit(
                "baccarat.pass",
                {
                    "curator": d.curator,
                    "ordered": ordered,
                    "section": "5324.20(h)(1)(ii)" if ordered else "5324.20(h)(1)",
                },
            )
            self._view.show_state()
            return ["the shoe passes"]
        if name == "disclose":
            return self._disclose()
        if name == "remedy":
            return self._remedy(args)
        if name == "collect":
            seat = self._seat(args)
            if not self._s.ledger.by_seat.get(seat):
                raise Refused(f"seat {seat} owes no vigorish: nothing to collect (5324.20(d)(2))")
            cents, self._s.ledger = self._s.ledger.collect(seat)
            self._s.record_ledger()
            self._rec.emit(
                "baccarat.vig.collected", {"seat": seat, "cents": cents, "ledger": d.ledger}
            )
            return [f"seat {seat}: collected {dollars(cents)}"]
        if name == "void":
            if self._seq.current not in ("betting", *COUP_STATES, "settling"):
                raise Refused(f"no round to void in state {self._seq.current}")
            reason = " ".join(args)
            alarmed: list[str] = []
            if d.coup:
                alarmed = self._void_mid_coup(who, reason)
            self._play.void("voided by " + who + (": " + reason if reason else ""))
            return ["round void; reshuffle", *alarmed]
        if name == "shift":
            return self._shift_start(args, who)
        if name == "clear":
            if not d.faults:
                raise Refused("no table fault to clear")
            self._seq.fire("technician_clear")
            cleared = list(d.faults)
            d.faults = []
            self._rec.emit("baccarat.fault.cleared", {"faults": cleared, "who": who})
            self._play.end_shoe("integrity fault cleared by " + who + "; the shoe is reshuffled")
            return [f"cleared: {'; '.join(cleared)}"]
        raise Refused(f"unknown action {name!r}", RefusalCode.UNKNOWN)  # pragma: no cover

    def _void_mid_coup(self, who: str, reason: str) -> list[str]:
        """A coup voided with its cards out could be dealt again to another result: only a
        supervisor may (ERR AUTH for anyone else); journaled as an alarm, said on every
        console, counted in ``status`` for the shift (as pai gow's void after the draw)."""
        d = self._s.data
        cards = " ".join(d.coup)
        if not who.startswith("supervisor@"):
            raise Refused(
                f"coup {d.coup_no} has cards out ({cards}): {NEEDS_SUPERVISOR}", RefusalCode.AUTH
            )
        d.voids_mid_coup += 1
        n = d.voids_mid_coup
        self._rec.emit(
            "baccarat.void_mid_coup",
            {
                "shoe": d.shoe_no,
                "coup": d.coup_no,
                "cards": list(d.coup),
                "who": who,
                "reason": reason or "(none given)",
                "shift_count": n,
            },
        )
        self._rec.alarm(
            f"ALARM void during a coup: shoe {d.shoe_no} coup {d.coup_no} (cards"
            f" {cards} out) voided by {who}: {reason or '(no reason given)'}; {n}"
            f" void{'' if n == 1 else 's'} during a coup this shift"
        )
        return [f"a void during a coup: alarmed, {n} this shift"]

    def journal_untrusted(self, lost: int, who: str, rewritten_from: int | None) -> list[str]:
        """A supervisor acknowledged a journal finding (the console asks for the role): rows
        lost (``lost``) or rows no signed head vouches for from ``rewritten_from`` on. A card or
        a result lost or rewritten counts as a void during a coup (the alarm, the journaled
        alarm, the shift's count): rows lost while a coup had cards out (the coup, which the
        journal can no longer vouch for, is voided), or a card or result row among the rows
        no head vouches for. Then a snapshot, so the count outlives a restart."""
        d = self._s.data
        state = self._seq.current
        what = None
        if lost and d.coup:
            what = f"{lost} committed journal rows were lost with coup {d.coup_no}'s cards out"
        elif rewritten_from is not None:
            for row in self._rec.journal.events(
                kinds=("baccarat.card", "baccarat.coup.result"), since_seq=rewritten_from - 1
            ):
                what = (
                    f"journal rows from row {rewritten_from} were rewritten, among them"
                    f" {row.kind.removeprefix('baccarat.')} row {row.seq}"
                )
                break
        if what is None:
            return []
        reason = f"{what}; acknowledged"
        lines = self._void_mid_coup(who, reason)
        if d.coup and state in (*COUP_STATES, "settling"):
            self._play.void(f"journal finding acknowledged by {who}: {what}")
            lines.insert(0, f"coup {d.coup_no} void (the journal cannot vouch for it); reshuffle")
        else:
            self._play.snapshot()
        return lines

    def _shift_start(self, args: Sequence[str], who: str) -> list[str]:
        """``shift start``: a supervisor starts a shift; the count of voids during a coup
        starts again (journaled with the last shift's count)."""
        if list(args) != ["start"]:
            raise Refused("usage: shift start", RefusalCode.SYNTAX)
        if not who.startswith("supervisor@"):
            raise Refused(
                "a supervisor's login is needed to start a shift (login SUPERVISOR-PIN)", "AUTH"
            )
        d = self._s.data
        was, d.voids_mid_coup = d.voids_mid_coup, 0
        self._rec.emit("baccarat.shift_start", {"who": who, "voids_mid_coup": was})
        return [f"shift started by {who}: voids during a coup counted from 0 (last shift: {was})"]

    def _seat(self, args: Sequence[str]) -> int:
        if not args or not args[0].isdigit() or int(args[0]) not in self._s.ring.seats_ccw:
            raise Refused(
                f"a seat number {self._s.ring.seats_ccw[0]}-{self._s.ring.seats_ccw[-1]} is needed",
                "SYNTAX",
            )
        return int(args[0])

    def _bet(self, args: list[str]) -> list[str]:
        d = self._s.data
        if self._seq.current in ("offering", "passing"):
            raise Refused(
                "no player holds the shoe yet: `curator SEAT` first, then wagers "
                "(5324.20(f)(1), (h)(2))"
            )
        if self._seq.current != "betting":
            # 5324.20(b)(3): no wager after "no more bets".
            raise Refused(f"wagers are taken only while betting (state {self._seq.current})")
        if d.dead_hand:
            raise Refused("nobody wagers on this hand (5324.20(i)(1)(ii))")
        if len(args) != 3 or not args[2].lstrip("-").isdigit():
            raise Refused("usage: bet SEAT WAGER CENTS", RefusalCode.SYNTAX)
        seat = self._seat(args)
        wager, cents = args[1], int(args[2])
        try:
            baccarat.check_wager(wager, cents, self._s.rules)
        except baccarat.WagerError as exc:
            raise Refused(str(exc), RefusalCode.RANGE) from None
        seat_bets = d.bets.setdefault(str(seat), {})
        seat_bets[wager] = cents
        self._rec.emit("baccarat.bet", {"seat": seat, "wager": wager, "cents": cents})
        return [f"seat {seat} {wager} {dollars(cents)}"]

    def _remedy(self, args: list[str]) -> list[str]:
        d = self._s.data
        disclosed = [p for p in d.pending if p["disclosed"]]
        if not disclosed:
            raise Refused("no disclosed card calls for a remedy")
        choice = args[0] if args else ""
        p = disclosed[-1]
        if p.get("remedy") == "burn_more":
            if choice != "burn":
                raise Refused(
                    "5324.20(i)(3): the disclosed card and as many more as its value"
                    " are burned: `remedy burn`"
                )
            d.burn_reason = "error_card"
            self._seq.fire("remedy_burn")
            d.pending = [q for q in d.pending if not q["disclosed"]]
            self._s.burn = BurnProgress(face_up=p["card"], count=int(p["burn_more"]))
            d.burn_face_up, d.burn_count, d.burned = p["card"], int(p["burn_more"]), []
            self._rec.emit(
                "baccarat.remedy",
                {
                    "card": p["card"],
                    "remedy": "burn_more",
                    "count": p["burn_more"],
                    "section": "5324.20(i)(3)",
                },
            )
            self._finish_burn_if_empty()
            return [f"burn {p['burn_more']} more cards"]
        if choice not in ("burn", "dead"):
            raise Refused(
                "usage: remedy burn | remedy dead (5324.20(i)(1)(i)-(ii))", RefusalCode.SYNTAX
            )
        remedy = Remedy.BURN if choice == "burn" else Remedy.DEAD_HAND
        burn_from = self._s.opts.face_up_burn_from if p["kind"] == "face_up" else BurnFrom.NEXT_CARD
        ruling = face_up_in_shoe(p["card"], disclosed=True, remedy=remedy, burn_from=burn_from)
        if ruling.then is Then.BURN_MORE:
            # baccarat.face_up_burn_from = face_up_card: the card found face up is the burn's
            # first card, and as many more as its value are burned (5324.20(i)(1)(i))
            d.burn_reason = "choice"
            self._seq.fire("remedy_burn")
            d.pending = [q for q in d.pending if not q["disclosed"]]
            self._s.burn = BurnProgress(face_up=p["card"], count=ruling.burn_more)
            d.burn_face_up, d.burn_count, d.burned = p["card"], ruling.burn_more, []
            self._rec.emit(
                "baccarat.remedy",
                {
                    "card": p["card"],
                    "remedy": remedy.value,
                    "burn_from": burn_from.value,
                    "count": ruling.burn_more,
                    "section": ruling.section,
                },
            )
            self._finish_burn_if_empty()
            return [f"remedy: burn {p['card']} and {ruling.burn_more} more cards"]
        d.burn_reason = "choice"
        if remedy is Remedy.BURN:
            self._seq.fire("remedy_burn")
            self._s.burn = BurnProgress()
            d.burn_face_up, d.burn_count, d.burned = None, None, []
        else:
            self._seq.fire("remedy_dead_hand")
        d.pending = [q for q in d.pending if not q["disclosed"]]
        self._rec.emit(
            "baccarat.remedy",
            {"card": p["card"], "remedy": remedy.value, "section": ruling.section},
        )
        if remedy is Remedy.DEAD_HAND:
            d.burn_reason = "shoe"
            self._play.start_coup(dead=True)
        self._view.show_state()
        return [f"remedy: {remedy.value}"]

    def _finish_burn_if_empty(self) -> None:
        d = self._s.data
        if self._s.burn is not None and self._s.burn.done:
            self._rec.emit(
                "baccarat.burn.done",
                {"face_up": d.burn_face_up, "burned": [], "count": 0, "reason": d.burn_reason},
            )
            d.burn_face_up, d.burn_count = None, None
            self._s.burn = None
            self._seq.fire("burn_card")
            d.burn_reason = "shoe"
        self._view.show_state()
