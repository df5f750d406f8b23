"""The real controller feeding a real Mosquitto (TLS, its own client certificate, the ACL) to
the collector (docs/feed.md "Failures"): ``table-controller simulate`` and ``table-controller
run`` on a sim pai gow profile with a ``[feed]``. The table feeds the collector every row and
its last signed head; SIGKILLed mid-publish and started again it loses and repeats nothing; the
broker stopped during play and started again gets the backlog in order while ``status`` shows
it; a journal rolled back on the device as root would (rows deleted, the anchor rewritten) is
caught by the collector (``rollback``)."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from controller.feed.floor import floor_lines
from controller.feed.position import load_position
from controller.feed.store import Store
from controller.journal.store import Journal
from tests.feed_rig import ROOT, CollectorThread, kill, stored, wait_for
from tests.reliability.harness import Controller, write_profile

if TYPE_CHECKING:
    from tests.services.mosquitto import MosquittoBroker

SITE = "site1"
TABLE = "table-07"
ROUND = ("shuffled", "no_more_bets", "draw", "dealt", "hands_set", "settled")


class Table:
    """A sim pai gow table whose journal key was made at commissioning (its public half given
    to the collector) and whose profile feeds ``broker`` as ``TABLE``."""

    def __init__(self, broker: MosquittoBroker, tmp: Path) -> None:
        self.state = tmp / "state"
        self.state.mkdir()
        self.keys = tmp / "keys"
        self.keys.mkdir()
        pair = broker.make_client_cert(TABLE)
        # feed.table is not given: it is the journal's table id, which the heads are signed with
        self.profile = write_profile(
            tmp,
            "sim-paigow",
            extra=(
                f'[journal]\ntable_id = "{TABLE}"\n\n'
                f'[feed]\nbroker = "mqtts://{broker.host}:{broker.port}"\nsite = "{SITE}"\n'
                f'ca = "{broker.ca_path}"\ncert = "{pair.cert_path}"\nkey = "{pair.key_path}"\n'
            ),
        )
        pem = subprocess.run(
            [
                sys.executable,
                "-m",
                "controller",
                "journal",
                "keygen",
                "--state-dir",
                str(self.state),
            ],
            cwd=ROOT,
            capture_output=True,
            check=True,
            timeout=60,
        ).stdout
        (self.keys / f"{TABLE}.pem").write_bytes(pem)
        self.log = tmp / "table.log"

    def simulate(self, rounds: int) -> subprocess.Popen[bytes]:
        out = open(self.log, "ab")  # noqa: SIM115 - the child holds it
        try:
            return subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "controller",
                    "simulate",
                    "--profile",
                    str(self.profile),
                    "--rounds",
                    str(rounds),
                    "--state-dir",
                    str(self.state),
                ],
                cwd=ROOT,
                stdout=out,
                stderr=out,
            )
        finally:
            out.close()

    def deal(self, rounds: int) -> None:
        """``simulate`` to its end (a clean shutdown: the publisher drains before it exits)."""
        proc = self.simulate(rounds)
        assert proc.wait(120) == 0, self.log.read_text()[-3000:]

    def _journal(self) -> Journal:
        return Journal(self.state / "journal.sqlite", readonly=True)

    def journal_rows(self) -> list[tuple[int, str]]:
        j = self._journal()
        try:
            return [(r.seq, r.hash) for r in j.rows_after(0, 1_000_000)]
        finally:
            j.close()

    def newest_head(self) -> int:
        j = self._journal()
        try:
            head = j.newest_head()
            return head.seq if head is not None else 0
        finally:
            j.close()

    def last_seq(self) -> int:
        j = self._journal()
        try:
            return j.stored_last_seq()
        finally:
            j.close()


def _alarms(url: str) -> list[str]:
    s = Store.open(url)
    try:
        return [a.kind for a in s.alarms()]
    finally:
        s.close()


def _signed(url: str) -> int:
    s = Store.open(url)
    try:
        recs = s.tables()
        return recs[0].signed_seq if recs else 0
    finally:
        s.close()


def _stored_rows(url: str) -> list[tuple[int, str]]:
    return [(int(str(r["seq"])), str(r["hash"])) for r in stored(url, SITE, TABLE)]


def _stored_when_caught_up(url: str, rows: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The collector's rows once it holds as many as the journal: the broker's PUBACK (backlog 0)
    comes before the collector, a separate client, has received and stored them."""
    wait_for(lambda: len(stored(url, SITE, TABLE)) >= len(rows), 30, "the collector caught up")
    return _stored_rows(url)


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'collector.sqlite'}"


def test_the_table_feeds_the_collector(
    mosquitto_broker: MosquittoBroker, tmp_path: Path, store_url: str
) -> None:
    table = Table(mosquitto_broker, tmp_path)
    collector = CollectorThread(mosquitto_broker, store_url, table.keys)
    try:
        table.deal(3)
        rows = table.journal_rows()
        # simulate returned: the publisher had sent everything before the process ended
        assert _stored_when_caught_up(store_url, rows) == rows
        # the head signed at shutdown (the newest row) was stored before the feed stopped, and
        # sent: the collector's chain is signed to its end
        assert table.newest_head() == rows[-1][0]
        wait_for(lambda: _signed(store_url) == rows[-1][0], 10, "the last head matched")
    finally:
        collector.stop()
    assert _alarms(store_url) == []
    s = Store.open(store_url)
    try:
        lines = floor_lines(s, site=SITE)
    finally:
        s.close()
    # table, status (the publisher said offline as it stopped), last round, ..., rows, backlog,
    # signed, alarms
    cells = re.split(r"\s{2,}", lines[1])
    assert cells[:3] == [TABLE, "offline", "3"], lines
    assert cells[4:] == [str(rows[-1][0]), "0", str(rows[-1][0]), "0"], lines


def test_controller_sigkilled_mid_publish(
    mosquitto_broker: MosquittoBroker, tmp_path: Path, store_url: str
) -> None:
    table = Table(mosquitto_broker, tmp_path)
    collector = CollectorThread(mosquitto_broker, store_url, table.keys)
    try:
        proc = table.simulate(300)
        wait_for(lambda: len(stored(store_url, SITE, TABLE)) > 100, 60, "rows flowing")
        kill(proc)  # SIGKILL: mid-round, mid-publish
        before = table.journal_rows()
        # the position saved last (at most once a second) is behind the journal's end: the
        # restarted publisher re-sends rows the collector holds and sends those it does not
        saved = load_position(table.state / "feed.position").row_seq
        assert 0 < saved < len(before), (saved, len(before))
        ctl = Controller(table.profile, table.state)  # started again: resumes the feed
        try:
            ctl.wait_ready()
            wait_for(
                lambda: _feed_line(ctl).startswith("connected, backlog 0,"),
                30,
                "the backlog acknowledged",
            )
        finally:
            assert ctl.stop() == 0
        rows = table.journal_rows()
        assert rows[: len(before)] == before
        # every row once, in order, none lost
        assert _stored_when_caught_up(store_url, rows) == rows
        wait_for(lambda: _signed(store_url) == rows[-1][0], 10, "the last head matched")
    finally:
        collector.stop()
    # the SIGKILL's will (offline) arrives while a round is usually under way in the stored
    # rows, and the restarted table may stop inside the round it recovered: that alarm only
    assert set(_alarms(store_url)) <= {"offline-in-round"}


def _feed_line(ctl: Controller) -> str:
    return ctl.status()["feed"]


def _play(ctl: Controller, rounds: int) -> None:
    for _ in range(rounds):
        for button in ROUND:
            ctl.ok(f"sim button {button}")


def test_broker_stopped_during_play_then_the_backlog_in_order(
    make_mosquitto_broker: Callable[..., MosquittoBroker], tmp_path: Path, store_url: str
) -> None:
    broker = make_mosquitto_broker(persistence=True)  # the collector's session survives
    table = Table(broker, tmp_path)
    collector = CollectorThread(broker, store_url, table.keys)
    ctl = Controller(table.profile, table.state)
    try:
        ctl.wait_ready()
        ctl.login()
        _play(ctl, 2)
        wait_for(
            lambda: _feed_line(ctl).startswith("connected, backlog 0,"),
            20,
            "the first rounds acknowledged",
        )
        acked = int(_feed_line(ctl).rsplit(" ", 1)[1])
        assert acked > 20
        wait_for(lambda: len(stored(store_url, SITE, TABLE)) >= acked, 20, "stored")

        broker.stop()
        wait_for(lambda: _feed_line(ctl).startswith("down"), 20, "the feed sees the broker go")
        held_before_play = int(_feed_line(ctl).rsplit(" ", 1)[1])
        _play(ctl, 3)  # play goes on, nothing waits for it
        behind = table.last_seq()
        line = _feed_line(ctl)
        shown = re.fullmatch(
            r"down \((down|connecting): .*\), backlog (\d+), acked seq (\d+)", line
        )
        assert shown is not None, line
        # nothing acknowledged since the broker went; the rows played since are the backlog
        held = int(shown[3])
        assert acked <= held == held_before_play, line
        assert int(shown[2]) >= behind - held > 15, line
        assert len(stored(store_url, SITE, TABLE)) <= held

        broker.start()
        wait_for(
            lambda: _feed_line(ctl).startswith("connected, backlog 0,"),
            40,
            "the backlog acknowledged",
        )
        _play(ctl, 1)
        assert ctl.stop() == 0
        rows = table.journal_rows()
        wait_for(lambda: len(stored(store_url, SITE, TABLE)) == len(rows), 20, "all stored")
        got = stored(store_url, SITE, TABLE)
        assert [(r["seq"], r["hash"]) for r in got] == rows  # in order, each once
        assert not any(r["gap_before"] for r in got)
    finally:
        ctl.stop()
        collector.stop()
    assert _alarms(store_url) == []


def _roll_back(state: Path, keep_heads: int) -> int:
    """What root can do on the device: delete the newest rows and signed heads (lifting the
    append-only triggers as the journal's own archiving does) and rewrite the anchor so that
    it ends at an earlier head. Returns the seq the journal now ends at."""
    anchor = state / "journal.anchor"
    lines = [line for line in anchor.read_text().splitlines() if line.strip()]
    heads = [json.loads(line) for line in lines]
    cut = int(heads[-1 - keep_heads]["seq"])
    db = sqlite3.connect(state / "journal.sqlite")
    db.execute("INSERT OR REPLACE INTO meta VALUES ('archiving', '1')")
    db.execute("DELETE FROM rows WHERE seq > ?", (cut,))
    db.execute("DELETE FROM heads WHERE seq > ?", (cut,))
    db.execute("DELETE FROM meta WHERE key = 'archiving'")
    db.commit()
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    anchor.write_text(
        "".join(line + "\n" for line, h in zip(lines, heads, strict=True) if h["seq"] <= cut)
    )
    return cut


def test_a_journal_rolled_back_on_the_device_raises_rollback(
    mosquitto_broker: MosquittoBroker, tmp_path: Path, store_url: str
) -> None:
    table = Table(mosquitto_broker, tmp_path)
    collector = CollectorThread(mosquitto_broker, store_url, table.keys)
    try:
        table.deal(6)
        rows = table.journal_rows()
        assert _stored_when_caught_up(store_url, rows) == rows
        newest = table.newest_head()
        wait_for(lambda: _signed(store_url) == newest, 10, f"head {newest} matched")
        cut = _roll_back(table.state, keep_heads=3)
        assert cut < rows[-1][0]
        ctl = Controller(table.profile, table.state)
        try:
            ctl.wait_ready()
            # the table itself does not notice (its anchor agrees) and feeds on
            assert ctl.status()["faults"] == "none"
            wait_for(
                lambda: "rollback" in _alarms(store_url),
                20,
                f"rollback alarm (alarms: {_alarms(store_url)})",
            )
            assert _feed_line(ctl).startswith("connected")
        finally:
            assert ctl.stop() == 0
    finally:
        collector.stop()
    # the rows written again at seqs the collector holds carry other hashes
    assert "fork" in _alarms(store_url)
    assert any("rollback" in line for line in collector.lines)
    # the collector's copy is the table's record before the rollback, untouched
    assert _stored_rows(store_url) == rows


def _evidence(url: str) -> list[tuple[str, int, str]]:
    s = Store.open(url)
    try:
        return [(e.channel, e.seq, e.hash) for e in s.evidence(SITE, TABLE)]
    finally:
        s.close()


def _floor(url: str) -> list[str]:
    s = Store.open(url)
    try:
        return floor_lines(s, site=SITE)
    finally:
        s.close()


GAP_S = 2.0


def test_a_rolled_back_table_played_past_the_collector_stays_forked(
    mosquitto_broker: MosquittoBroker, tmp_path: Path, store_url: str
) -> None:
    """The splice: restored from a copy and played past the collector's newest head, the table
    ends ``FORKED`` with the history first verified intact as its record, and a gap timeout
    (here 2 s) does not join the other history to it."""
    table = Table(mosquitto_broker, tmp_path)
    collector = CollectorThread(mosquitto_broker, store_url, table.keys, gap_timeout_s=GAP_S)
    try:
        table.deal(6)
        rows = table.journal_rows()
        assert _stored_when_caught_up(store_url, rows) == rows
        newest = table.newest_head()
        wait_for(lambda: _signed(store_url) == newest, 10, f"head {newest} matched")
        _roll_back(table.state, keep_heads=3)
        table.deal(12)  # the other history, well past the collector's newest head
        other = table.journal_rows()
        assert other[-1][0] > rows[-1][0] and table.newest_head() > newest
        last = (other[-1][0], other[-1][1])
        wait_for(
            lambda: ("rows", *last) in _evidence(store_url),
            30,
            "the other history's newest row kept apart",
        )
        # a window in which the gap timeout would have joined the histories (ticks every second)
        time.sleep(2 * GAP_S + 2)
    finally:
        collector.stop()
    assert _stored_rows(store_url) == rows  # the record: what was verified first, untouched
    assert _signed(store_url) == newest
    kinds = _alarms(store_url)
    assert "fork" in kinds and "gap" not in kinds
    diverging = {(seq, h) for seq, h in other} - set(rows)
    assert diverging and diverging <= {(s, h) for c, s, h in _evidence(store_url) if c == "rows"}
    lines = _floor(store_url)
    cells = re.split(r"\s{2,}", lines[1])
    assert cells[:2] == [TABLE, "FORKED"], lines
    assert cells[4] == str(rows[-1][0]) and cells[6] == str(newest), lines

    # acknowledged by a named person with a note, through the real command
    ack = [sys.executable, "-m", "controller", "floor", "--store", store_url, "--site", SITE]
    refused = subprocess.run(
        [*ack, "--ack", TABLE, "--note", "no name"], cwd=ROOT, capture_output=True, text=True
    )
    assert refused.returncode == 1 and "--by" in refused.stderr
    done = subprocess.run(
        [*ack, "--ack", TABLE, "--by", "J. Doe", "--note", "state restored from a copy"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    s = Store.open(store_url)
    try:
        assert [(a.table, a.by, a.note) for a in s.acks()] == [
            (TABLE, "J. Doe", "state restored from a copy")
        ]
    finally:
        s.close()
    assert "forked (acknowledged)" in _floor(store_url)[1]
    assert _stored_rows(store_url) == rows
