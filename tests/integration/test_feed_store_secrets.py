"""The collector's PostgreSQL password stays off the command line (docs/feed.md "The
collector"): a store URL without a password connects with the password only in libpq's
password file (``PGPASSFILE``) or a service file entry, in this process and through the real
``table-controller floor``; without the file it is refused, and the refusal shows no password."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from controller.feed.store import Store, StoreError, password_warning
from tests.feed_rig import ROOT

if TYPE_CHECKING:
    from tests.services.postgres import PostgresServer


def _passfile(tmp: Path, pg: PostgresServer) -> Path:
    # libpq's format (hostname:port:database:username:password); it ignores a file others
    # can read, so 0600
    path = tmp / "pgpass"
    path.write_text(f"{pg.host}:{pg.port}:{pg.dbname}:{pg.user}:{pg.password}\n")
    path.chmod(0o600)
    return path


def _bare_url(pg: PostgresServer) -> str:
    return f"postgresql://{pg.user}@{pg.host}:{pg.port}/{pg.dbname}"


@pytest.fixture
def no_pg_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.startswith("PG"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no ~/.pgpass of the one running tests


@pytest.mark.usefixtures("no_pg_env")
def test_the_password_only_in_a_pgpassfile(
    postgres_server: PostgresServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = _bare_url(postgres_server)
    assert postgres_server.password not in url
    assert password_warning(url) is None
    assert password_warning(postgres_server.url) is not None

    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "absent"))
    with pytest.raises(StoreError) as refused:
        Store.open(url)
    assert postgres_server.password not in str(refused.value)

    monkeypatch.setenv("PGPASSFILE", str(_passfile(tmp_path, postgres_server)))
    store = Store.open(url)
    try:
        assert store.dialect == "postgresql"
        assert store.tables() == []
    finally:
        store.close()

    # the real command, its command line without the password
    done = subprocess.run(
        [sys.executable, "-m", "controller", "floor", "--store", url],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ},
    )
    assert done.returncode == 0, done.stderr
    assert "no table has been heard yet" in done.stdout
    assert "warning" not in done.stderr

    # with the password on its command line it still works, and warns
    done = subprocess.run(
        [sys.executable, "-m", "controller", "floor", "--store", postgres_server.url],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ},
    )
    assert done.returncode == 0, done.stderr
    assert "ps" in done.stderr and postgres_server.password not in done.stderr


@pytest.mark.usefixtures("no_pg_env")
def test_a_service_file_entry(
    postgres_server: PostgresServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pg = postgres_server
    services = tmp_path / "pg_service.conf"
    services.write_text(
        f"[floor]\nhost={pg.host}\nport={pg.port}\ndbname={pg.dbname}\nuser={pg.user}\n"
        f"passfile={_passfile(tmp_path, pg)}\n"
    )
    monkeypatch.setenv("PGSERVICEFILE", str(services))
    store = Store.open("postgresql:///?service=floor")
    try:
        assert store.execute("SELECT current_user") == [(pg.user,)]
    finally:
        store.close()
