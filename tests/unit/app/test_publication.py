"""The published state (controller.app.Publication): the loop stores the table's view after
recovery and after each event when it changed; readers on other threads get (version, view)
pairs, wait for newer ones, and are woken at shutdown. A failing view never stops the loop."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.app import Application, Publication
from controller.config.profile import load_profile
from controller.events import Shutdown
from drivers.buttons import ButtonPressed

ROOT = Path(__file__).resolve().parents[3]
WAIT_S = 5.0


def test_a_version_per_change_and_none_for_the_same_view() -> None:
    pub = Publication()
    assert pub.latest() == (0, {})
    assert pub.publish({"state": "betting"}) is True
    assert pub.publish({"state": "betting"}) is False  # equal: no new version
    assert pub.publish({"state": "dealing"}) is True
    assert pub.latest() == (2, {"state": "dealing"})


def test_readers_wait_for_a_newer_version_and_wake_at_close() -> None:
    pub = Publication()
    pub.publish({"n": 1})
    got: list[tuple[int, object]] = []

    def reader() -> None:
        got.append(pub.wait_newer(1, WAIT_S))

    thread = threading.Thread(target=reader)
    thread.start()
    time.sleep(0.05)
    assert not got  # still waiting: nothing newer
    pub.publish({"n": 2})
    thread.join(WAIT_S)
    assert got == [(2, {"n": 2})]
    # Nothing newer: returns the current one after the timeout.
    start = time.monotonic()
    assert pub.wait_newer(2, 0.05) == (2, {"n": 2})
    assert time.monotonic() - start >= 0.04
    # close() wakes a waiter at once.
    waiter = threading.Thread(target=lambda: got.append(pub.wait_newer(2, 30.0)))
    waiter.start()
    time.sleep(0.05)
    pub.close()
    waiter.join(WAIT_S)
    assert not waiter.is_alive() and pub.closed


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Application]:
    monkeypatch.delenv("TABLE_CONTROLLER_MANIFEST", raising=False)
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    application = Application(
        load_profile(ROOT / "hw_profiles" / "sim-paigow.toml"), tmp_path, console_port="none"
    )
    yield application
    application.close()


def _run(app: Application) -> threading.Thread:
    thread = threading.Thread(target=app.run, daemon=True)
    thread.start()
    return thread


def test_the_loop_publishes_after_recovery_and_after_each_event(app: Application) -> None:
    app.start()
    version, view = app.publication.latest()
    assert version >= 1 and view["state"] == "inspection" and view["game"] == "paigow"
    loop = _run(app)
    try:
        for button, state in (
            ("shuffled", "betting"),
            ("no_more_bets", "no_more_bets"),
            ("draw", "dealing"),
        ):
            app.post(ButtonPressed(button, time.monotonic_ns()))
            deadline = time.monotonic() + WAIT_S
            while True:
                version, view = app.publication.wait_newer(version, 0.2)
                if view["state"] == state or time.monotonic() > deadline:
                    break
            assert view["state"] == state
        drawn = app.call(lambda: app.journal.last(["paigow.drawn"]))
        assert view["number"] == drawn.data["record"]["number"]  # type: ignore[union-attr]
    finally:
        app.post(Shutdown("test"))
        loop.join(WAIT_S)


def test_a_failing_view_is_journaled_once_and_the_loop_goes_on(
    app: Application, monkeypatch: pytest.MonkeyPatch
) -> None:
    app.start()
    alarms: list[str] = []
    monkeypatch.setattr(app, "alarm", alarms.append)

    def broken() -> dict[str, object]:
        raise RuntimeError("view bug")

    monkeypatch.setattr(app.table, "published", broken)
    loop = _run(app)
    try:
        for _ in range(3):
            app.post(ButtonPressed("shuffled", time.monotonic_ns()))
        time.sleep(0.35)  # several ticks too
        assert app.call(lambda: app.table.status()["state"]) == "betting"
        rows = app.call(lambda: [e for e in app.journal.events() if e.kind == "app.publish_error"])
        assert len(rows) == 1 and "view bug" in rows[0].data["error"]  # type: ignore[index]
        assert alarms == ["ERROR scoreboard view: RuntimeError: view bug"]
    finally:
        app.post(Shutdown("test"))
        loop.join(WAIT_S)


def test_every_publish_is_a_beat_changed_or_not() -> None:
    pub = Publication()
    assert pub.beat() == (0, 0)
    pub.publish({"state": "betting"})
    before = time.monotonic_ns()
    pub.publish({"state": "betting"})  # the same view: no version ...
    beats, at_ns = pub.beat()
    assert pub.latest()[0] == 1 and beats == 2  # ... but a beat
    assert before <= at_ns <= time.monotonic_ns()


def test_the_idle_loop_beats_at_every_tick_and_a_stopped_one_does_not(app: Application) -> None:
    from controller.app import TICK_S

    app.start()
    loop = _run(app)
    try:
        first, _ = app.publication.beat()
        time.sleep(10 * TICK_S)
        beats, at_ns = app.publication.beat()
        assert beats - first >= 3  # ticks, with no event at all
        assert time.monotonic_ns() - at_ns < 1_000_000_000
    finally:
        app.post(Shutdown("test"))
        loop.join(WAIT_S)
    stopped, _ = app.publication.beat()
    time.sleep(3 * TICK_S)
    assert app.publication.beat()[0] == stopped


def test_the_view_carries_the_posted_limits_and_a_config_change_shows_at_once(
    app: Application,
) -> None:
    """The monitor's limits sign is the rule settings (journaled by config set), added to the
    table's view by the application: a change publishes a new version with the new limits."""
    app.start()
    version, view = app.publication.latest()
    assert view["limits"] == [{"wager": "wager", "min": 2500, "max": 500000}]
    loop = _run(app)
    try:
        app.call(lambda: app.config.set("paigow.wager_max_cents", "1000000", "technician@test"))
        deadline = time.monotonic() + WAIT_S
        while view["limits"][0]["max"] != 1_000_000:  # type: ignore[index]
            assert time.monotonic() < deadline, view
            version, view = app.publication.wait_newer(version, 0.2)
        rows = app.call(lambda: [e for e in app.journal.events() if e.kind == "config.changed"])
        assert rows[-1].data["key"] == "paigow.wager_max_cents"  # type: ignore[index]
    finally:
        app.post(Shutdown("test"))
        loop.join(WAIT_S)
