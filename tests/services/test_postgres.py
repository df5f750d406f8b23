"""The PostgreSQL fixture: a real server on 127.0.0.1, reached with psycopg 3 by its URL, that
keeps its data across a stop, a crash (SIGKILL) and a restart on the same port."""

from __future__ import annotations

import os

import psycopg
import pytest

from tests.services.postgres import PostgresServer

CONNECT_TIMEOUT_S = 10


def test_psycopg_connects_by_url_and_round_trips(postgres_url: str) -> None:
    assert postgres_url.startswith("postgresql://tc:")
    assert "@127.0.0.1:" in postgres_url and postgres_url.endswith("/tc_test")
    with psycopg.connect(postgres_url, connect_timeout=CONNECT_TIMEOUT_S) as conn:
        assert conn.execute("SELECT current_database(), current_user").fetchone() == (
            "tc_test",
            "tc",
        )
        conn.execute("CREATE TABLE events (seq bigint PRIMARY KEY, body jsonb NOT NULL)")
        conn.execute("INSERT INTO events VALUES (1, %s::jsonb)", ['{"draw": 6}'])
        conn.commit()
        row = conn.execute("SELECT body->>'draw' FROM events WHERE seq = 1").fetchone()
        assert row == ("6",)
        version = conn.execute("SHOW server_version").fetchone()
        assert version is not None and int(version[0].split(".")[0]) >= 13


def test_a_wrong_password_is_refused(postgres_server: PostgresServer) -> None:
    url = postgres_server.url.replace(postgres_server.password, "wrong")
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S)


def test_the_server_runs_as_a_non_root_account_with_its_socket_in_the_tmp_dir(
    postgres_server: PostgresServer,
) -> None:
    pid = int((postgres_server.data_dir / "postmaster.pid").read_text().splitlines()[0])
    uid = os.stat(f"/proc/{pid}").st_uid
    assert uid != 0
    assert (postgres_server.socket_dir / f".s.PGSQL.{postgres_server.port}").exists()
    assert str(postgres_server.directory).startswith("/tmp/")


def test_data_survive_a_stop_and_a_crash_and_the_port_stays(
    postgres_server: PostgresServer,
) -> None:
    pg = postgres_server
    url, port = pg.url, pg.port
    with psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S, autocommit=True) as conn:
        conn.execute("CREATE TABLE t (v int)")
        conn.execute("INSERT INTO t VALUES (1)")
    pg.stop()
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(url, connect_timeout=3)
    pg.start()
    with psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S, autocommit=True) as conn:
        conn.execute("INSERT INTO t VALUES (2)")
    pg.kill()
    pg.start()
    assert pg.port == port
    with psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S) as conn:
        assert conn.execute("SELECT array_agg(v ORDER BY v) FROM t").fetchone() == ([1, 2],)
    assert "database system was interrupted" in pg.log_text()


def test_more_databases_on_the_same_server(postgres_server: PostgresServer) -> None:
    url = postgres_server.create_database("collector")
    with psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S) as conn:
        assert conn.execute("SELECT current_database()").fetchone() == ("collector",)
    assert postgres_server.psql("SELECT 40 + 2").strip() == "42"
