"""``[feed] hold_decisions_unacked_s`` (docs/feed.md "Holding play for the feed"): a casino that
prefers stopping to trusting withholds the next draw while the broker has not acknowledged the
journal up to the last decision for more than N seconds. Off by default; the table reads only
the publisher's published state; the refusal says what holds play and what to do."""

from __future__ import annotations

import dataclasses
import socket
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from controller.app import Application
from controller.config.profile import FeedSettings, Profile, ProfileError, load_profile
from drivers.buttons import ButtonPressed
from tests.reliability.harness import PROFILES
from tests.services.mosquitto import MosquittoBroker

HOLD_S = 1


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _profile(port: int, hold: int) -> Profile:
    base = load_profile(PROFILES / "sim-paigow.toml")
    return dataclasses.replace(
        base,
        feed=FeedSettings(
            f"mqtt://127.0.0.1:{port}", "site1", "sim-paigow", hold_decisions_unacked_s=hold
        ),
    )


def _press(app: Application, *names: str) -> None:
    for name in names:
        app.dispatch(ButtonPressed(name, 0))


def _round_then_no_more_bets(app: Application) -> None:
    _press(
        app,
        "shuffled",
        "no_more_bets",
        "draw",
        "dealt",
        "hands_set",
        "settled",
        "shuffled",
        "no_more_bets",
    )
    assert app.table.model.state == "no_more_bets"


def _draws(app: Application) -> int:
    return len(list(app.journal.events(kinds=["paigow.drawn"])))


def _wait(predicate: Callable[[], bool], what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_off_by_default_a_draw_never_waits_for_the_broker(tmp_path: Path) -> None:
    app = Application(_profile(_closed_port(), 0), tmp_path, console_port="none")
    try:
        app.start()
        _round_then_no_more_bets(app)
        time.sleep(HOLD_S + 0.2)
        _press(app, "draw")
        assert _draws(app) == 2 and app.table.model.state == "dealing"
    finally:
        app.close()


def test_a_draw_is_withheld_while_the_last_decision_is_unacknowledged(tmp_path: Path) -> None:
    app = Application(_profile(_closed_port(), HOLD_S), tmp_path, console_port="none")
    try:
        app.start()
        _round_then_no_more_bets(app)  # round 1's draw: the broker never acknowledged it
        decided = app.trust.last_decision
        assert decided is not None
        time.sleep(HOLD_S + 0.2)
        _press(app, "draw")
        assert _draws(app) == 1 and app.table.model.state == "no_more_bets"
        refused = app.journal.last(["paigow.refused"])
        assert refused is not None and refused.data["code"] == "HOLD"
        reason = str(refused.data["reason"])
        assert f"journal row {decided[0]}, acknowledged up to 0" in reason
        assert "[feed] hold_decisions_unacked_s" in reason and "bring the feed back" in reason
        assert not app.faults()  # a hold, not a fault: nothing to clear
    finally:
        app.close()


def test_the_hold_lifts_when_the_broker_acknowledges(
    tmp_path: Path, make_mosquitto_broker: Callable[..., MosquittoBroker]
) -> None:
    broker = make_mosquitto_broker(plain=True, tls=False)
    assert broker.plain_port is not None
    app = Application(_profile(broker.plain_port, HOLD_S), tmp_path, console_port="none")
    try:
        app.start()
        assert app.feed is not None
        feed = app.feed
        _round_then_no_more_bets(app)
        _wait(lambda: feed.state().acked_seq >= app.journal.last_seq, "round 1 acknowledged")
        broker.stop()
        time.sleep(HOLD_S + 0.2)
        _press(app, "draw")  # round 1's acknowledged: not withheld
        assert _draws(app) == 2
        _press(app, "dealt", "hands_set", "settled", "shuffled", "no_more_bets")
        time.sleep(HOLD_S + 0.2)
        _press(app, "draw")
        assert _draws(app) == 2, "drawn while the broker had not acknowledged round 2's draw"
        broker.start()
        _wait(
            lambda: feed.state().acked_seq >= app.trust.last_decision[0],  # type: ignore[index]
            "round 2's draw acknowledged after the broker came back",
            timeout=60,
        )
        _press(app, "draw")
        assert _draws(app) == 3
    finally:
        app.close()


def test_the_setting_is_checked(tmp_path: Path) -> None:
    base = (PROFILES / "sim-paigow.toml").resolve()
    for value, ok in (("30", True), ("0", True), ("-1", False), ('"30"', False), ("86401", False)):
        path = tmp_path / f"p{len(value)}{ok}.toml"
        path.write_text(
            f'include = "{base}"\n[feed]\nbroker = "mqtt://127.0.0.1:1883"\n'
            f'site = "site1"\nhold_decisions_unacked_s = {value}\n'
        )
        if ok:
            assert load_profile(path).feed.hold_decisions_unacked_s == int(value)  # type: ignore[union-attr]
        else:
            with pytest.raises(ProfileError, match="hold_decisions_unacked_s"):
                load_profile(path)
