"""A real PostgreSQL server: initdb in a fresh directory, started on a free port on 127.0.0.1
(unix socket in the same directory), as the ``postgres`` account when we are root.

    pg = PostgresServer.create()      # started, database "tc_test" made
    pg.url                            # "postgresql://tc:PASSWORD@127.0.0.1:PORT/tc_test"
    pg.host, pg.port, pg.user, pg.password, pg.dbname, pg.socket_dir, pg.data_dir
    pg.url_for("other")               # the same server, another database name
    pg.create_database("other")       # -> its URL
    pg.stop(); pg.start()             # the same cluster down and up again on the same port
    pg.kill()                         # SIGKILL, as a crash would (start() recovers)
    pg.log_text(); pg.close()

Authentication is SCRAM-SHA-256 with a generated password for TCP and the socket alike.
``fsync=off`` and ``full_page_writes=off``: the data survive the process being killed, not the
machine losing power (tests never need the latter from this server).
"""

from __future__ import annotations

import glob
import os
import re
import secrets
import signal
import subprocess
from pathlib import Path

from tests.services._common import (
    chown_tree,
    free_port,
    port_open,
    private_dir,
    remove_dir,
    run_checked,
    service_user,
    stop_process,
    tail,
    wait_until,
    which,
)

START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 30.0
INITDB_TIMEOUT_S = 120.0


def _version_key(path: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", path)) or (0,)


def find_bin_dir() -> Path | None:
    """The directory holding initdb and postgres: TC_PG_BIN, the newest
    /usr/lib/postgresql/*/bin, or where PATH's initdb really lives."""
    candidates = []
    if os.environ.get("TC_PG_BIN"):
        candidates.append(os.environ["TC_PG_BIN"])
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_version_key, reverse=True)
    initdb = which("initdb")
    if initdb:
        candidates.append(os.path.dirname(os.path.realpath(initdb)))
    for c in candidates:
        if all(os.access(os.path.join(c, b), os.X_OK) for b in ("initdb", "postgres")):
            return Path(c)
    return None


class PostgresServer:
    host = "127.0.0.1"
    user = "tc"

    def __init__(self, bin_dir: Path, directory: Path, dbname: str = "tc_test") -> None:
        self.bin_dir = bin_dir
        self.directory = directory
        self.dbname = dbname
        self._owner = service_user("postgres")
        if os.geteuid() == 0 and self._owner is None:
            raise RuntimeError(
                "PostgreSQL refuses to run as root and there is no 'postgres'"
                " account (the Debian package 'postgresql' makes it)"
            )
        self.data_dir = directory / "data"
        self.socket_dir = directory / "sock"
        self.log_path = directory / "postgres.log"
        self.password = secrets.token_urlsafe(18)
        self.port = free_port()
        self._proc: subprocess.Popen[bytes] | None = None

    @classmethod
    def create(cls, dbname: str = "tc_test") -> PostgresServer:
        """initdb, start, create ``dbname`` (raises if PostgreSQL's server is not installed)."""
        bin_dir = find_bin_dir()
        if bin_dir is None:
            raise FileNotFoundError("initdb/postgres (Debian package 'postgresql')")
        server = cls(bin_dir, private_dir("tc-pg-", service_user("postgres")), dbname)
        try:
            server.initdb()
            server.start()
            server.create_database(dbname)
        except BaseException:
            server.close()
            raise
        return server

    def _as_owner(self) -> dict[str, object]:
        if self._owner is None:
            return {}
        return {"user": self._owner.pw_uid, "group": self._owner.pw_gid, "extra_groups": []}

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env.update(LC_ALL="C", LANG="C", HOME=str(self.directory))
        return env

    def initdb(self) -> None:
        pwfile = self.directory / "pwfile"
        pwfile.write_text(self.password + "\n")
        self.socket_dir.mkdir()
        chown_tree(self.directory, self._owner)
        run_checked(
            [
                str(self.bin_dir / "initdb"),
                "-D",
                str(self.data_dir),
                "-U",
                self.user,
                f"--pwfile={pwfile}",
                "--auth=scram-sha-256",
                "--locale=C",
                "--encoding=UTF8",
                "--no-sync",
            ],
            "initdb",
            INITDB_TIMEOUT_S,
            env=self._env(),
            cwd=str(self.directory),
            **self._as_owner(),
        )
        pwfile.unlink()

    @property
    def url(self) -> str:
        return self.url_for(self.dbname)

    def url_for(self, dbname: str) -> str:
        return f"postgresql://{self.user}:{self.password}@{self.host}:{self.port}/{dbname}"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _ready(self) -> bool:
        # postmaster.pid's 8th line is the server's status: "ready" once it accepts connections
        try:
            lines = (self.data_dir / "postmaster.pid").read_text().splitlines()
        except OSError:
            return False
        return len(lines) >= 8 and lines[7].strip() == "ready" and port_open(self.host, self.port)

    def start(self, timeout: float = START_TIMEOUT_S) -> None:
        """Start the server (again) on the same port; waits until it accepts connections."""
        if self.running:
            return
        log = open(self.log_path, "ab")  # noqa: SIM115 (the child holds it)
        try:
            self._proc = subprocess.Popen(
                [
                    str(self.bin_dir / "postgres"),
                    "-D",
                    str(self.data_dir),
                    "-p",
                    str(self.port),
                    "-c",
                    f"listen_addresses={self.host}",
                    "-c",
                    f"unix_socket_directories={self.socket_dir}",
                    "-c",
                    "fsync=off",
                    "-c",
                    "full_page_writes=off",
                    "-c",
                    "max_connections=50",
                    "-c",
                    "shared_buffers=16MB",
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env=self._env(),
                cwd=str(self.directory),
                start_new_session=True,
                **self._as_owner(),
            )  # type: ignore[call-overload]
        finally:
            log.close()
        proc = self._proc

        def exited() -> str | None:
            if proc.poll() is None:
                return None
            return f"postgres exited with {proc.returncode}:\n{tail(self.log_path)}"

        try:
            wait_until(self._ready, timeout, f"postgres on {self.host}:{self.port}", failed=exited)
        except TimeoutError as e:
            self.stop()
            raise TimeoutError(f"{e}\n{tail(self.log_path)}") from None

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> None:
        """Fast shutdown (SIGINT: clients disconnected, a clean checkpoint)."""
        if self._proc is not None:
            stop_process(self._proc, signal.SIGINT, timeout)
            self._proc = None

    def kill(self) -> None:
        """SIGKILL the postmaster and its children, as a crash would (start() recovers)."""
        if self._proc is not None:
            group = self._proc.pid  # start_new_session: the postmaster leads its group
            try:
                os.killpg(group, signal.SIGKILL)
            except ProcessLookupError:
                pass
            stop_process(self._proc, signal.SIGKILL, 5.0)
            self._proc = None
            wait_until(lambda: not _group_alive(group), 10.0, "postgres's children gone")

    def psql(self, sql: str, dbname: str | None = None, timeout: float = 30.0) -> str:
        """Run SQL with the server's own psql client (no Python driver needed)."""
        psql = self.bin_dir / "psql"
        if not os.access(psql, os.X_OK):
            psql = Path(which("psql") or "psql")
        env = self._env()
        env["PGPASSWORD"] = self.password
        result = run_checked(
            [
                str(psql),
                "-X",
                "-q",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                self.host,
                "-p",
                str(self.port),
                "-U",
                self.user,
                "-d",
                dbname or "postgres",
                "-c",
                sql,
            ],
            "psql",
            timeout,
            env=env,
        )
        return result.stdout

    def create_database(self, dbname: str) -> str:
        if not re.fullmatch(r"[a-z_][a-z0-9_]*", dbname):
            raise ValueError(f"database name {dbname!r}: lower-case letters, digits, _")
        self.psql(f"CREATE DATABASE {dbname}")
        return self.url_for(dbname)

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def close(self) -> None:
        self.stop()
        remove_dir(self.directory)

    def __repr__(self) -> str:
        return f"PostgresServer({self.host}:{self.port}/{self.dbname}, dir={self.directory})"


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
