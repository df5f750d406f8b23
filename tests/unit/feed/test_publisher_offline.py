"""The publisher when the broker is not there, or there and mute (docs/feed.md "The
publisher"): the table's side (wake, state) never waits on it; the backlog is counted; nothing
is acknowledged that was not; stop() ends the thread."""

from __future__ import annotations

import socket
import time
from pathlib import Path

from controller.feed.broker import BrokerSettings
from controller.feed.position import load_position
from controller.feed.publisher import Publisher, PublisherSettings
from tests.feed_journal import TableJournal


def _settings(tmp_path: Path, port: int) -> PublisherSettings:
    return PublisherSettings(
        BrokerSettings("127.0.0.1", port, False),
        "site1",
        "table-07",
        tmp_path / "feed.position",
        connack_timeout_s=1.0,
    )


def _wait(predicate: object, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.02)


def test_no_broker_listening(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: connection refused
    j = TableJournal("table-07")
    pub = Publisher(_settings(tmp_path, port), lambda: j)
    pub.start()
    try:
        for _ in range(20):
            j.rounds(1)
            pub.wake()
        _wait(lambda: pub.state().state == "down" and "refused" in pub.state().error, 5)
        state = pub.state()
        assert state.acked_seq == 0 and state.published == 0
        assert state.describe(len(j.rows)).startswith("down (down: mqtt://127.0.0.1:")
        assert state.describe(len(j.rows)).endswith("backlog 60, acked seq 0")
    finally:
        pub.stop(5)
    assert pub.state().state == "stopped"
    assert load_position(tmp_path / "feed.position").row_seq == 0


def test_a_broker_that_accepts_and_never_answers(tmp_path: Path) -> None:
    """TCP accepted (the kernel's backlog), no CONNACK: the attempt is given up after the
    CONNACK timeout and retried; nothing counts as acknowledged."""
    mute = socket.socket()
    mute.bind(("127.0.0.1", 0))
    mute.listen(8)
    j = TableJournal("table-07")
    j.rounds(5)
    pub = Publisher(_settings(tmp_path, mute.getsockname()[1]), lambda: j)
    pub.start()
    try:
        _wait(lambda: pub.state().state == "connecting", 5)
        pub.wake()  # returns at once while the thread waits on the broker
        assert pub.state().acked_seq == 0
        _wait(lambda: pub.state().error == "no CONNACK", 5)
        assert not pub.state().connected
    finally:
        t0 = time.monotonic()
        pub.stop(5)
        mute.close()
    assert time.monotonic() - t0 < 5, "stop() waited for the broker"
    assert j.closed == 1
