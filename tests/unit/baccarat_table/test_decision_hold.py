"""A baccarat coup is withheld at no more bets while the application says the feed holds play
(``[feed] hold_decisions_unacked_s``, docs/feed.md "Holding play for the feed"); the cards of a
coup under way are never refused (the hold is checked before the coup, not in it)."""

from __future__ import annotations

from pathlib import Path

from tests.unit.baccarat_table.helpers import Rig


def test_no_more_bets_is_withheld_while_the_feed_holds_play(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.open_shoe()
    hold: list[str | None] = ["withheld: the floor's broker has not acknowledged ..."]
    rig.ctx.decision_hold = lambda: hold[0]
    refused = rig.refused(rig.press, "no_more_bets")
    assert refused.code == "HOLD" and refused.reason == hold[0]
    assert rig.table.state == "betting"
    hold[0] = None
    rig.press("no_more_bets")
    assert rig.table.state != "betting"
    hold[0] = "withheld again"
    refusals = len(rig.rows("baccarat.refused")) + len(rig.rows("shoe.refused"))
    rig.cards("2H 3D")  # the coup's cards while the hold is back: still dealt
    assert len(rig.rows("baccarat.refused")) + len(rig.rows("shoe.refused")) == refusals
    assert rig.table.last_refusal is None
