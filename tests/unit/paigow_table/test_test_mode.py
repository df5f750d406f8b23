"""Test mode (issue 7): between rounds only; every segment lit; round inputs refused; restored."""

from __future__ import annotations

from pathlib import Path

from .helpers import ALL_LIT, BLANK, make_rig


def test_test_mode_touches_no_round(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    assert rig.act("test-mode on")[0].startswith("test mode on")
    assert rig.display.lit() == ALL_LIT
    rig.press("shuffled")
    assert rig.state == "inspection"
    assert "test mode" in rig.rows("paigow.refused")[-1].data["reason"]
    exc = rig.try_act("open")
    assert exc is not None and rig.state == "inspection"
    rig.act("test-mode off")
    assert rig.display.lit() == BLANK
    rig.press("shuffled")
    assert rig.state == "betting"
    exc = rig.try_act("test-mode on")  # a round is in progress
    assert exc is not None and exc.code == "STATE"
    assert [r.data["on"] for r in rig.rows("paigow.test_mode")] == [True, False]
