"""The collector's store made by an earlier collector (schema version 1, before
``feed_schema``) is migrated to version 2 on a real PostgreSQL when opened, its rows kept
(the SQLite case: tests/unit/feed/test_verifier_forked.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.feed.store import SCHEMA_VERSION, Store
from tests.unit.feed.test_verifier_forked import _V1

if TYPE_CHECKING:
    from tests.services.postgres import PostgresServer


def test_a_postgresql_store_of_the_earlier_schema_is_migrated(
    postgres_server: PostgresServer,
) -> None:
    for statement in _V1:
        postgres_server.psql(statement, dbname=postgres_server.dbname)
    store = Store.open(postgres_server.url)
    try:
        assert store.schema_version() == SCHEMA_VERSION == 2
        (rec,) = store.tables()
        assert (rec.table, rec.frontier_seq, rec.forked_ns) == ("table-07", 12, None)
        assert store.evidence("site1", "table-07") == [] and store.acks() == []
    finally:
        store.close()
    again = Store.open(postgres_server.url)
    try:
        assert again.schema_version() == 2 and len(again.tables()) == 1
    finally:
        again.close()
