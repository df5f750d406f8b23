"""Many collectors on one PostgreSQL (docs/feed.md "Many collectors"): two and three real
``table-controller collect`` processes on a real Mosquitto and a real PostgreSQL share a site's
tables; one is killed (SIGKILL) mid-stream; the others take its tables over. Every row of every
table is stored once, in the table's order, and the one alarm the site gives (a table with no
key) is stored once. The schema made by instances starting together does not fail; a second
instance on one SQLite file refuses to start."""

from __future__ import annotations

import importlib.util
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from controller.feed.store import SCHEMA_VERSION, Store, StoreError
from tests.feed_journal import TableJournal
from tests.feed_rig import collect_process, kill, publisher, stored, wait_for, write_keys

if TYPE_CHECKING:
    from tests.services.mosquitto import MosquittoBroker
    from tests.services.postgres import PostgresServer

if importlib.util.find_spec("tests.services") is None:
    pytest.skip(
        "MISSING tests/services (the real-services fixtures): the feed's many-collector tests"
        " need them",
        allow_module_level=True,
    )

SITE = "site1"


def _leases(url: str) -> dict[str, str]:
    store = Store.open(url)
    try:
        return {
            str(t): str(h)
            for t, h in store.execute(
                "SELECT table_id, holder FROM collector_leases WHERE site = ?", (SITE,)
            )
        }
    finally:
        store.close()


def _alarms(url: str) -> list[tuple[str, str]]:
    store = Store.open(url)
    try:
        return [(a.table, a.kind) for a in store.alarms()]
    finally:
        store.close()


@pytest.mark.parametrize("instances", [2, 3])
def test_collectors_share_a_site_and_one_killed_loses_nothing(
    mosquitto_broker: MosquittoBroker, postgres_url: str, tmp_path: Path, instances: int
) -> None:
    b = mosquitto_broker
    tables = [TableJournal(f"table-{n:02d}") for n in range(1, 7)]
    stranger = TableJournal("table-99")  # commissioned nowhere: its key is not in keys/
    logs, procs = _collectors(b, postgres_url, tmp_path, tables, instances)
    names = list(logs)
    pubs = []
    try:
        pubs = [publisher(b, t, t.table, tmp_path) for t in (*tables, stranger)]
        # every table and the stranger leased, each instance serving a share
        wait_for(lambda: len(_leases(postgres_url)) == len(tables) + 1, 40, "tables leased")
        for t in (*tables, stranger):
            t.rounds(3)
            t.sign()
        for p in pubs:
            p.wake()
        wait_for(
            lambda: all(len(stored(postgres_url, SITE, t.table)) == 9 for t in tables),
            40,
            "first rows stored",
        )
        leases = _leases(postgres_url)
        assert set(leases.values()) == set(names), leases  # each serves a share
        victim = leases[tables[0].table]
        for _ in range(10):  # rows keep coming while one instance dies
            for t, p in zip(tables, pubs, strict=False):
                t.rounds(2)
                p.wake()
        kill(procs.pop(victim), signal.SIGKILL)
        for _ in range(10):
            for t, p in zip((*tables, stranger), pubs, strict=True):
                t.rounds(2)
                t.sign()
                p.wake()
        for t, p in zip((*tables, stranger), pubs, strict=True):
            wait_for(lambda t=t, p=p: p.state().acked_seq == len(t.rows), 30, "acknowledged")
        for t in tables:
            wait_for(
                lambda t=t: len(stored(postgres_url, SITE, t.table)) == len(t.rows),
                60,
                f"{t.table}: every row stored after the takeover",
            )
            rows = stored(postgres_url, SITE, t.table)
            assert [r["seq"] for r in rows] == list(range(1, len(t.rows) + 1))
            assert [r["hash"] for r in rows] == [r.hash for r in t.rows]
            assert not any(r["gap_before"] for r in rows)
        leases = _leases(postgres_url)
        assert victim not in leases.values() and set(leases) >= {t.table for t in tables}
        assert stored(postgres_url, SITE, stranger.table) == []
    finally:
        for p in pubs:
            p.stop()
        for proc in procs.values():
            kill(proc, signal.SIGTERM)
    # the stranger's rows raise one alarm (its repeats counted on it), nothing else
    assert _alarms(postgres_url) == [("table-99", "unknown-table")]
    survivors = "".join(logs[n].read_text() for n in names if n != victim)
    assert "took over" in survivors
    assert "Traceback" not in survivors


def test_instances_starting_together_make_the_schema_once(
    postgres_server: PostgresServer,
) -> None:
    """Four stores opened at once on an empty database, then four on a database of the first
    schema (migrated by one of them): none fails, the schema is made (migrated) once."""
    from tests.unit.feed.test_verifier_forked import _V1

    def open_together(url: str) -> list[BaseException | int]:
        barrier = threading.Barrier(4)
        results: list[BaseException | int] = []

        def one() -> None:
            barrier.wait(10)
            try:
                store = Store.open(url)
                results.append(store.schema_version())
                store.close()
            except (StoreError, OSError) as exc:
                results.append(exc)

        threads = [threading.Thread(target=one) for _ in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(30)
        return results

    url = postgres_server.url
    assert open_together(url) == [SCHEMA_VERSION] * 4
    store = Store.open(url)
    try:
        assert store.execute("SELECT COUNT(*) FROM feed_schema") == [(1,)]
        tables = ("feed_tables", "feed_rows", "feed_pending", "feed_heads", "feed_alarms")
        for name in (*tables, "feed_schema", "feed_evidence", "feed_acks"):
            store.execute(f"DROP TABLE {name}")
        store.commit()
    finally:
        store.close()
    for statement in _V1:
        postgres_server.psql(statement, dbname=postgres_server.dbname)
    assert open_together(url) == [SCHEMA_VERSION] * 4
    store = Store.open(url)
    try:
        assert store.execute("SELECT version FROM feed_schema") == [(SCHEMA_VERSION,)]
        assert len(store.tables()) == 1
    finally:
        store.close()


def test_a_second_collector_on_one_sqlite_file_refuses_to_start(
    mosquitto_broker: MosquittoBroker, tmp_path: Path
) -> None:
    keys = write_keys(tmp_path / "k", TableJournal("table-07"))
    url = f"sqlite:///{tmp_path / 'collector.sqlite'}"
    first = collect_process(mosquitto_broker, url, keys, tmp_path / "one.log", client_id="one")
    try:
        wait_for(lambda: "subscribed" in (tmp_path / "one.log").read_text(), 30, "subscribed")
        second = collect_process(mosquitto_broker, url, keys, tmp_path / "two.log", client_id="two")
        assert second.wait(30) == 1
        text = (tmp_path / "two.log").read_text()
        assert "another collector is running on" in text and "PostgreSQL" in text
        assert first.poll() is None
    finally:
        kill(first, signal.SIGTERM)


def _collectors(
    b: MosquittoBroker, url: str, tmp_path: Path, tables: list[TableJournal], count: int
) -> tuple[dict[str, Path], dict[str, subprocess.Popen[bytes]]]:
    """``count`` collect processes for ``tables``, each subscribed: their logs and processes
    by client id (stopped here if one does not subscribe)."""
    keys = write_keys(tmp_path / "k", *tables)
    names = [f"tc-collector-{SITE}-{n}" for n in range(1, count + 1)]
    logs = {name: tmp_path / f"{name}.log" for name in names}
    procs = {name: collect_process(b, url, keys, logs[name], client_id=name) for name in names}
    try:
        for name in names:  # each session exists before the tables send
            wait_for(lambda n=name: "subscribed" in logs[n].read_text(), 30, f"{name} subscribed")
    except BaseException:
        for proc in procs.values():
            kill(proc, signal.SIGTERM)
        raise
    return logs, procs


def _step(t: TableJournal, kind: str, before: str, after: str, rnd: int) -> None:
    t.append(kind, {"trigger": after, "from": before, "state": after}, rnd)


def _status(url: str, table: str) -> str:
    store = Store.open(url)
    try:
        return next((r.status for r in store.tables() if r.table == table), "")
    finally:
        store.close()


def test_a_table_taken_over_is_not_judged_again_on_a_status_already_judged(
    mosquitto_broker: MosquittoBroker, postgres_url: str, tmp_path: Path
) -> None:
    """Tables stop cleanly between rounds, start again and are in a round when the collector
    serving them is killed: the survivor replays what it kept of them, their earlier
    ``offline`` among it, and raises nothing (that status was judged when it came, between
    rounds; judged again against the new rows it would read as going offline in a round)."""
    b = mosquitto_broker
    tables = [TableJournal(f"table-{n:02d}") for n in range(1, 5)]
    logs, procs = _collectors(b, postgres_url, tmp_path, tables, 2)
    names = list(logs)
    pubs = []
    try:
        pubs = [publisher(b, t, t.table, tmp_path) for t in tables]
        wait_for(lambda: len(_leases(postgres_url)) == len(tables), 40, "tables leased")
        for t, p in zip(tables, pubs, strict=True):  # a round, settled
            _step(t, "paigow.state", "inspection", "washing", 1)
            _step(t, "paigow.drawn", "no_more_bets", "dealing", 1)
            _step(t, "paigow.settled", "dealer_hands", "washing", 1)
            _step(t, "paigow.state", "washing", "inspection", 2)
            t.sign()
            p.wake()
        for p in pubs:  # each stops cleanly between rounds: offline
            p.stop()
        for t in tables:
            wait_for(lambda t=t: _status(postgres_url, t.table) == "offline", 30, "offline")
        pubs = [publisher(b, t, t.table, tmp_path) for t in tables]  # and starts again
        for t in tables:
            wait_for(lambda t=t: _status(postgres_url, t.table) == "online", 30, "online")
        for t, p in zip(tables, pubs, strict=True):  # a round under way
            _step(t, "paigow.state", "inspection", "washing", 2)
            _step(t, "paigow.drawn", "no_more_bets", "dealing", 2)
            t.sign()
            p.wake()
        for t in tables:
            wait_for(
                lambda t=t: len(stored(postgres_url, SITE, t.table)) == len(t.rows),
                30,
                f"{t.table}: the round's rows stored",
            )
        leases = _leases(postgres_url)
        assert set(leases.values()) == set(names), leases
        victim = leases[tables[0].table]
        kill(procs.pop(victim), signal.SIGKILL)
        (survivor,) = procs
        wait_for(lambda: set(_leases(postgres_url).values()) == {survivor}, 40, "taken over")
        wait_for(lambda: "took over" in logs[survivor].read_text(), 10, "takeover logged")
        for t, p in zip(tables, pubs, strict=True):
            _step(t, "paigow.state", "dealing", "hands_set", 2)
            p.wake()
        for t in tables:
            wait_for(
                lambda t=t: len(stored(postgres_url, SITE, t.table)) == len(t.rows),
                30,
                f"{t.table}: every row stored after the takeover",
            )
        # the replay came before the rows after the takeover: judged by now
        assert _alarms(postgres_url) == []
    finally:
        for proc in procs.values():
            kill(proc, signal.SIGTERM)
        for p in pubs:
            p.stop()


def test_collectors_that_lost_the_broker_keep_their_tables(
    mosquitto_broker: MosquittoBroker, postgres_url: str, tmp_path: Path
) -> None:
    """The broker is away for longer than a lease while two collectors run: neither is dead,
    so neither adopts the other's tables; when it is back each serves what it served and
    every row is stored once (docs/feed.md "Many collectors")."""
    from controller.feed.share import LEASE_S, RENEW_S

    b = mosquitto_broker
    tables = [TableJournal(f"table-{n:02d}") for n in range(1, 5)]
    logs, procs = _collectors(b, postgres_url, tmp_path, tables, 2)
    names = list(logs)
    pubs = []
    try:
        pubs = [publisher(b, t, t.table, tmp_path) for t in tables]
        wait_for(lambda: len(set(_leases(postgres_url).values())) == 2, 40, "each its share")
        before = _leases(postgres_url)
        b.stop()
        for t in tables:  # the tables play on while the broker is away
            t.rounds(2)
            t.sign()
        deadline = time.monotonic() + 2 * (LEASE_S + RENEW_S)
        while time.monotonic() < deadline:
            assert _leases(postgres_url) == before
            time.sleep(1.0)
        b.start()
        for p in pubs:
            p.wake()
        for t in tables:
            wait_for(
                lambda t=t: len(stored(postgres_url, SITE, t.table)) == len(t.rows),
                60,
                f"{t.table}: every row stored after the outage",
            )
            assert [r["seq"] for r in stored(postgres_url, SITE, t.table)] == list(
                range(1, len(t.rows) + 1)
            )
        assert _leases(postgres_url) == before
        assert not any("took over" in logs[n].read_text() for n in names)
        assert _alarms(postgres_url) == []
    finally:
        for proc in procs.values():
            kill(proc, signal.SIGTERM)
        for p in pubs:
            p.stop()
