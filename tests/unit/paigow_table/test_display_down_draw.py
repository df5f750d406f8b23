"""5324.50(a)(4): the generator "automatically selects and displays" its number. While the
table's number display is not connected (its link down: docs/configuration.md "Stable device
names") the RNG draws nothing no one could see; the dealer enters the shaker's dice total
instead (5324.50(a)(3)), and the RNG draws again once the display is back. The same at the
starting-position table (13:69F-31.11(b)-(c))."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.app import Application
from controller.config.profile import load_profile
from controller.tables.startpos.table import StartposTable
from controller.tables.table import Refused
from drivers.buttons import ButtonPressed
from drivers.serial_display import DeviceLinkChanged

ROOT = Path(__file__).resolve().parents[3]


def _app(tmp: Path, profile: str) -> Application:
    app = Application(load_profile(ROOT / "hw_profiles" / profile), tmp, console_port="none")
    app.start()
    return app


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("TABLE_CONTROLLER_MANIFEST", raising=False)
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    yield


def _link(app: Application, up: bool) -> None:
    app.dispatch(DeviceLinkChanged("display", "/dev/tc-display", up, "unplugged", 0))


def _press(app: Application, name: str) -> None:
    app.dispatch(ButtonPressed(name, time.monotonic_ns()))


def _bets_closed_display_down(tmp: Path) -> Application:
    """A pai gow round with bets closed, its number display then lost."""
    app = _app(tmp, "sim-paigow.toml")
    _press(app, "shuffled")
    _press(app, "no_more_bets")
    _link(app, up=False)
    return app


def test_pai_gow_draws_no_number_while_its_display_is_not_connected(
    tmp_path: Path, clean_env: None
) -> None:
    app = _bets_closed_display_down(tmp_path)
    try:
        assert app.table.status()["start_mode"] == "dice (number display not connected)"
        _press(app, "draw")
        assert app.journal.last(["paigow.drawn"]) is None
        refused = app.journal.last(["paigow.refused"])
        assert refused is not None
        assert "number display is not connected" in str(refused.data["reason"])
        assert "`dice T`" in str(refused.data["reason"])
        _link(app, up=True)
        assert app.table.status()["start_mode"] == "rng"
        _press(app, "draw")
        drawn = app.journal.last(["paigow.drawn"])
        assert drawn is not None and drawn.data["record"]["mode"] == "rng"
    finally:
        app.close()


def test_pai_gow_takes_the_dice_while_its_display_is_not_connected(
    tmp_path: Path, clean_env: None
) -> None:
    app = _bets_closed_display_down(tmp_path)
    try:
        assert app.console_execute("passwd 24681357", "serial")[-1] == "OK"
        assert app.console_execute("dice 9", "serial")[-1] == "OK"
        dice = app.journal.last(["paigow.dice"])
        assert dice is not None and dice.data["record"]["number"] == 1  # (9 - 1) % 8 + 1
    finally:
        app.close()


def test_the_starting_position_table_likewise(tmp_path: Path, clean_env: None) -> None:
    app = _app(tmp_path, "sim-asia-poker.toml")
    table = app.table
    assert isinstance(table, StartposTable)
    try:
        _press(app, "no_more_bets")
        _link(app, up=False)
        _press(app, "draw")
        assert app.journal.last(["startpos.drawn"]) is None
        refused = app.journal.last(["startpos.refused"])
        assert refused is not None and "not connected" in str(refused.data["reason"])
        with app.journal.transaction():
            table.action("dice", ["2", "3", "3"], "dealer@serial")
        drawn = app.journal.last(["startpos.drawn"])
        assert drawn is not None and drawn.data["source"] == "dice"
        with app.journal.transaction(), pytest.raises(Refused, match="one draw per round"):
            table.action("dice", ["1", "1", "1"], "dealer@serial")
    finally:
        app.close()
