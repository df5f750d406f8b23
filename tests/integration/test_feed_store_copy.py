"""PostgreSQL: a batch of rows goes into ``feed_rows`` by one ``COPY``; a batch holding a row
another instance stored already (a lease taken over mid-batch) is not an error and stores each
row once (docs/feed.md "Many collectors", "Throughput")."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from controller.feed.store import Store
from tests.feed_journal import TableJournal

if TYPE_CHECKING:
    from tests.services.postgres import PostgresServer


def _rows(n: int) -> list[dict[str, object]]:
    j = TableJournal("t-copy")
    return [j.append("paigow.step", {"round": r, "bet": 2500 * r}, r).as_dict() for r in range(n)]


def test_a_batch_meeting_a_stored_row_stores_each_row_once(
    postgres_server: PostgresServer,
) -> None:
    rows = _rows(6)
    first, second = Store.open(postgres_server.url), Store.open(postgres_server.url)
    try:
        for row in rows[:3]:  # another instance stored rows 1-3
            first.add_row("s", "t-copy", row, 1)
        first.commit()
        assert first.copy_conflicts == 0
        for row in rows:  # this one's batch holds rows 1-6
            second.add_row("s", "t-copy", row, 2)
        second.commit()
        assert second.copy_conflicts == 1
        stored = second.execute(
            "SELECT seq, hash, received_ns FROM feed_rows WHERE table_id = ? ORDER BY seq",
            ("t-copy",),
        )
        assert [(r[0], r[1]) for r in stored] == [(r["seq"], r["hash"]) for r in rows]
        # rows 1-3 are the first instance's (received 1), 4-6 the second's
        assert [r[2] for r in stored] == [1, 1, 1, 2, 2, 2]
        # the next batch of new rows goes straight in again
        more = TableJournal("t-copy-2")
        second.add_row("s", "t-copy-2", more.append("k", {}, None).as_dict(), 3)
        second.commit()
        assert second.copy_conflicts == 1
        assert second.execute("SELECT count(*) FROM feed_rows")[0][0] == 7
    finally:
        first.close()
        second.close()


def _two_stores(url: str, check: Callable[[Store, Store], None]) -> None:
    """``check`` on two connections to one store (this instance's and another's)."""
    store, other = Store.open(url), Store.open(url)
    try:
        check(store, other)
    finally:
        store.close()
        other.close()


def _heads_batch(store: Store, other: Store) -> None:
    """Heads kept until the commit answer every read as if stored at once."""
    j = TableJournal("t-heads")
    rows = [j.append("paigow.step", {"n": n}, 1).as_dict() for n in range(3)]
    head = j.sign().as_dict()
    other.add_head("s", "t-heads", head, 1, None)  # another instance stored it first
    other.commit()
    store.add_head("s", "t-heads", head, 2, True)  # not a second head: the first stays, matched
    store.add_head("s", "t-heads", {**head, "seq": 2, "hash": rows[1]["hash"]}, 3, None)
    store.set_head_matched("s", "t-heads", 2, True)  # kept: changed before it is sent
    assert store.head_hash("s", "t-heads", 2) == rows[1]["hash"]  # a read sends them first
    assert store.highest_head("s", "t-heads") == (3, rows[2]["hash"])
    store.commit()
    store.add_head("s", "t-heads", {**head, "seq": 1, "hash": rows[0]["hash"]}, 4, None)
    store.rollback()  # a failed batch: what it kept is gone with it
    store.commit()  # nothing left to send
    got = store.execute(
        "SELECT seq, received_ns, matched FROM feed_heads WHERE table_id = ? ORDER BY seq",
        ("t-heads",),
    )
    assert [tuple(r) for r in got] == [(2, 3, 1), (3, 1, 1)]


def test_heads_kept_for_the_commit_read_and_store_as_stored_heads_sqlite(tmp_path: Path) -> None:
    _two_stores(f"sqlite:///{tmp_path / 'c.sqlite'}", _heads_batch)


def test_heads_kept_for_the_commit_read_and_store_as_stored_heads_postgresql(
    postgres_server: PostgresServer,
) -> None:
    _two_stores(postgres_server.url, _heads_batch)


def _matched_on_a_stored_head(store: Store, other: Store) -> None:
    """A head stored already while its row had not arrived (by another instance, or sent by a
    read earlier in the transaction), kept again and matched to its row: it is stored matched."""
    j = TableJournal("t-m")
    for n in range(4):
        j.append("paigow.step", {"n": n}, 1)
    head = j.sign().as_dict()
    other.add_head("s", "t-m", head, 1, None)  # another instance, before the row came
    other.commit()
    store.add_head("s", "t-m", head, 2, None)
    store.set_head_matched("s", "t-m", 4, True)
    earlier = {**head, "seq": 2, "hash": "ab" * 32}
    store.add_head("s", "t-m", earlier, 3, None)
    assert store.head_hash("s", "t-m", 2) == "ab" * 32  # the read sends the kept heads
    store.add_head("s", "t-m", earlier, 4, None)  # kept again: not a second head
    store.set_head_matched("s", "t-m", 2, True)
    store.add_head("s", "t-m", {**head, "seq": 1, "hash": "cd" * 32}, 5, None)
    store.commit()
    got = store.execute(
        "SELECT seq, received_ns, matched FROM feed_heads WHERE table_id = ? ORDER BY seq",
        ("t-m",),
    )
    assert [tuple(r) for r in got] == [(1, 5, None), (2, 3, 1), (4, 1, 1)]


def test_a_kept_head_matched_is_stored_matched_over_a_stored_one_sqlite(tmp_path: Path) -> None:
    _two_stores(f"sqlite:///{tmp_path / 'c.sqlite'}", _matched_on_a_stored_head)


def test_a_kept_head_matched_is_stored_matched_over_a_stored_one_postgresql(
    postgres_server: PostgresServer,
) -> None:
    _two_stores(postgres_server.url, _matched_on_a_stored_head)
