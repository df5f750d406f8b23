"""Recovery from a journal cut after every row: the same cards, none lost, none twice.

A power cut leaves the journal ending at some row. For each row of a scripted shoe segment that
visits every state, the journal is copied and cut there; a new table recovers from the copy, the
inputs not yet journaled are fed again (the shoe resends every frame after the last one journaled,
the dealer presses again), and the end is compared with the uninterrupted run.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from controller.journal.store import Journal
from controller.tables.table import Refused
from drivers.buttons import ButtonPressed
from drivers.shoe_events import ShoeFrameAccepted
from drivers.shoe_protocol import SessionPosition
from tests.unit.baccarat_table.helpers import SID, Rig

Input = tuple[str, Any]

SCRIPT: list[Input] = [
    ("button", "shuffled"),
    *[("card", c) for c in "3S 5D 6C QS".split()],  # (e): 3 face up, 3 burned
    ("action", "curator 1"),
    ("action", "bet 2 banker 1000"),
    ("action", "bet 4 player 500"),
    ("button", "settled"),  # refused: out of order
    ("button", "no_more_bets"),
    *[("card", c) for c in "2S 3H 3C KH 4D 2C".split()],  # player draws, banker draws
    ("button", "settled"),
    ("action", "curator 2"),  # banker lost: the shoe passed
    ("card", "7H"),  # drawn in excess, (i)(2)
    ("action", "disclose"),
    ("action", "remedy burn"),
    *[("card", c) for c in "AS 4H".split()],  # (i)(1)(i) burn
    ("button", "no_more_bets"),
    *[("card", c) for c in "TS 3D 7S 2D".split()],  # player stands, banker draws
    ("frame", "COVR"),
    ("card", "AC"),
    ("button", "settled"),
    ("action", "curator 3"),  # the banker lost again
    ("button", "no_more_bets"),  # the last hand, (f)(9)
    *[("card", c) for c in "9S 2H KS 4C".split()],
    ("button", "settled"),  # the shoe is finished: shuffle
    ("action", "curator 4"),  # refused: no shoe in play
    ("button", "shuffled"),
    ("card", "8C"),
]


def feed(rig: Rig, item: Input, shoe_seq: int) -> int:
    """Apply one input; returns the next shoe SEQ."""
    kind, arg = item
    try:
        if kind == "card":
            rig.table.handle(ShoeFrameAccepted("CARD", shoe_seq, SID, (arg,), b"", 0))
            return shoe_seq + 1
        if kind == "frame":
            rig.table.handle(ShoeFrameAccepted(arg, shoe_seq, SID, (), b"", 0))
            return shoe_seq + 1
        if kind == "button":
            rig.table.handle(ButtonPressed(arg, 0))
        else:
            rig.act(arg)
    except Refused:
        pass
    return shoe_seq


def outcome(journal: Journal) -> dict[str, list[Any]]:
    def rows(kind: str, strip: Callable[[dict[str, Any]], Any] = lambda d: d) -> list[Any]:
        return [
            strip({k: v for k, v in e.data.items() if k != "recovered"})
            for e in journal.events(kinds=[kind])
        ]

    return {
        "results": rows("baccarat.coup.result"),
        "settlements": rows("baccarat.settlement"),
        "burns": rows("baccarat.burn.done"),
        "voided": rows("baccarat.coup.voided"),
        "frames": [e.data["seq"] for e in journal.events(kinds=["shoe.frame"])],
    }


def cut_copy(src: Path, dst: Path, last_row: int) -> None:
    with sqlite3.connect(src) as a, sqlite3.connect(dst) as b:
        a.backup(b)
    with sqlite3.connect(dst) as b:
        b.execute("INSERT OR REPLACE INTO meta VALUES ('archiving', '1')")
        b.execute("DELETE FROM rows WHERE seq > ?", (last_row,))
        b.execute("DELETE FROM meta WHERE key = 'archiving'")


def test_recovery_from_a_cut_after_every_row(fast_tmp: Path) -> None:
    ref = Rig(fast_tmp / "ref" if (fast_tmp / "ref").mkdir() is None else fast_tmp)
    input_rows: list[int] = []
    states: list[tuple[str, list[str], int]] = []
    seqs: list[int] = []
    shoe_seq = 1  # the Rig's shoe session took SEQ 0
    for item in SCRIPT:
        input_rows.append(ref.journal.last_seq + 1)
        seqs.append(shoe_seq)
        shoe_seq = feed(ref, item, shoe_seq)
        d = ref.table.data
        states.append((ref.table.state, d.coup, len(d.cards_out)))
    visited = {s for s, _, _ in states}
    assert visited >= {
        "shuffle",
        "burn",
        "offering",
        "betting",
        "dealing",
        "player_third",
        "banker_third",
        "settling",
        "passing",
    }
    full = outcome(ref.journal)
    last = ref.journal.last_seq
    first = input_rows[0]
    for cut in range(first - 1, last + 1):
        workdir = fast_tmp / f"cut{cut}"
        workdir.mkdir()
        cut_copy(Path(ref.journal.path), workdir / "journal.db", cut)
        journal = Journal(workdir / "journal.db")
        rig = Rig(workdir, journal=journal)
        notes = rig.table.recover()
        done = [i for i, row in enumerate(input_rows) if row <= cut]
        if done:
            state, coup, out = states[done[-1]]
            assert (rig.table.state, rig.table.data.coup, len(rig.table.data.cards_out)) == (
                state,
                coup,
                out,
            ), (cut, notes)
        todo = [i for i in range(len(SCRIPT)) if input_rows[i] > cut]
        frames_todo = [seqs[i] for i in todo if SCRIPT[i][0] in ("card", "frame")]
        if frames_todo:
            position = rig.table.resume_position()
            assert position is None or position == SessionPosition(SID, frames_todo[0]) or not done
        for i in todo:
            feed(rig, SCRIPT[i], seqs[i])
        got = outcome(journal)
        assert got == full, f"cut after row {cut}"
        journal.close()


def test_a_fault_at_power_down_is_there_at_power_up(rig: Rig) -> None:
    rig.open_shoe()
    rig.press("no_more_bets")
    rig.cards("9S 2H")
    rig.frame("FLT", "UNREAD")
    assert rig.table.state == "halted"
    again = rig.reopen()
    assert again.table.state == "halted"
    assert any("unread" in f for f in again.table.faults())
    assert again.alarms and again.alarms[0].startswith("FAULT")
    again.table.clear_fault("tech")
    assert again.table.state == "shuffle"


@pytest.mark.parametrize("upto", [1, 3, 5])
def test_restart_mid_coup_resumes_with_the_same_cards(rig: Rig, upto: int) -> None:
    rig.open_shoe()
    rig.act("bet 1 player 500")
    rig.press("no_more_bets")
    cards = "2S 3H 3C KH 4D 2C".split()
    rig.cards(cards[:upto])
    again = rig.reopen()
    assert again.table.data.coup == cards[:upto]
    assert again.table.resume_position() == SessionPosition(rig.sid, rig.seq)
    again.cards(cards[upto:])
    results = again.rows("baccarat.coup.result")
    assert len(results) == 1 and results[0].data["cards"] == cards
    assert again.rows("baccarat.settlement")[-1].data["lines"][0]["net_cents"] != 0
    assert again.rows("baccarat.recovery")[-1].data["rule"].startswith("resume")


def test_deferred_vig_survives_a_restart_and_still_blocks_the_reshuffle(
    fast_tmp_factory: Callable[..., Rig],
) -> None:
    rig = fast_tmp_factory(deferred_vig=True)
    rig.open_shoe()
    rig.act("bet 6 banker 500")
    rig.press("no_more_bets")
    rig.cards("2S 9H 3S KD")
    rig.press("settled")
    rig.act("void close")
    again = rig.reopen()
    assert again.table.ledger.by_seat == {6: 25}
    assert again.refused(again.press, "shuffled")


def test_the_display_after_a_restart_shows_where_the_table_is(rig: Rig) -> None:
    rig.open_shoe()
    rig.press("no_more_bets")
    rig.cards("2S 9H 3S KD")
    again = rig.reopen()
    assert again.display.lines == ("BANKER WINS 9", "P 5  B 9")
    again.press("settled")
    again.press("no_more_bets")
    again.cards("2S 3H")
    assert again.reopen().display.lines == ("CARDS", "PLAYER CARD")
