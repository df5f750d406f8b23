"""The host feed wired into the application (docs/feed.md "The publisher"): a profile with a
``[feed]`` starts the publisher with the table, on the journal's table id; ``status`` shows its
state from a snapshot (here a broker that refuses: ``down``, the backlog counted from the
journal); ``close`` stops it. Without ``[feed]`` there is no publisher and no status line."""

from __future__ import annotations

import dataclasses
import re
import socket
import threading
import time
from pathlib import Path

from controller.app import Application
from controller.config.profile import FeedSettings, load_profile

ROOT = Path(__file__).resolve().parents[3]
PROFILE = ROOT / "hw_profiles" / "sim-paigow.toml"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again: connections are refused


def _publisher_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "feed-publisher"]


def test_a_feed_starts_with_the_table_shows_in_status_and_stops(tmp_path: Path) -> None:
    port = _closed_port()
    profile = dataclasses.replace(
        load_profile(PROFILE), feed=FeedSettings(f"mqtt://127.0.0.1:{port}", "site1", "sim-paigow")
    )
    before = len(_publisher_threads())
    app = Application(profile, tmp_path, console_port="none")
    try:
        assert app.feed is None and "feed" not in app.status()  # not before the table starts
        app.start()
        assert app.feed is not None and len(_publisher_threads()) == before + 1
        assert app.journal.meta("table") == profile.feed.table  # the heads' table id
        deadline = time.monotonic() + 10
        while "refused" not in app.status()["feed"]:
            assert time.monotonic() < deadline, app.status()["feed"]
            time.sleep(0.02)
        line = app.status()["feed"]
        assert re.fullmatch(
            rf"down \(down: mqtt://127\.0\.0\.1:{port}: .*refused\), backlog"
            rf" {app.journal.last_seq}, acked seq 0",
            line,
        ), line
        assert app.journal.last_seq > 0
    finally:
        app.close()
    assert app.feed.state().state == "stopped"
    assert len(_publisher_threads()) == before


def test_a_feed_table_alone_names_the_table_the_heads_are_signed_for(tmp_path: Path) -> None:
    # Issue 16: [feed] table = "t1" without [journal] table_id: the journal signs its heads
    # with "t1" (not the profile's name), so the collector accepts them on tc/<site>/t1/.
    port = _closed_port()
    (tmp_path / "profiles").mkdir()
    path = tmp_path / "profiles" / "p.toml"
    path.write_text(
        f'include = "{PROFILE}"\nname = "other-name"\n\n[feed]\n'
        f'broker = "mqtt://127.0.0.1:{port}"\nsite = "site1"\ntable = "t1"\n'
    )
    profile = load_profile(path)
    assert profile.feed is not None and profile.feed.table == "t1"
    app = Application(profile, tmp_path, console_port="none")
    try:
        app.start()
        assert app.journal.meta("table") == "t1"  # what every head is signed with
    finally:
        app.close()


def test_no_feed_section_no_publisher(tmp_path: Path) -> None:
    profile = load_profile(PROFILE)
    assert profile.feed is None
    app = Application(profile, tmp_path, console_port="none")
    try:
        app.start()
        assert app.feed is None and "feed" not in app.status()
    finally:
        app.close()
