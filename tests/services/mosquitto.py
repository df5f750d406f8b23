"""A real Mosquitto broker on 127.0.0.1, mutual TLS, identity from the client certificate.

    broker = MosquittoBroker.create(site="site1", plain=False)   # started
    MosquittoBroker.create(persistence=True)   # sessions and queued messages survive stop/start
    broker.host, broker.port          # "127.0.0.1", the TLS listener's port
    broker.plain_port                 # a plain-TCP listener (anonymous, no ACL) or None
    broker.ca_path                    # the test CA (PEM) that signed the server and clients
    pair = broker.make_client_cert("table-07")      # CertPair: cert_path, key_path (CN=table-07)
    broker.ssl_context("table-07")    # ssl.SSLContext for a client with that identity
    broker.topic("table-07", "events")   # "tc/site1/table-07/events"
    broker.stop(); broker.start()     # the same broker (config, port, CA) down and up again
    broker.log_text()                 # the broker's log so far
    broker.close()                    # stop and remove the directory (the fixture does it)

The TLS listener has ``require_certificate true`` and ``use_identity_as_username true``, so the
certificate's CN is the MQTT user name, and the ACL gives each user read/write under
``tc/+/<its CN>/#`` only (read all of it; write its rows, heads, status, events, meters and
reply, never its ``cmd``); the host identity (``HOST = "host"``) alone writes ``tc/+/+/cmd``
and reads the replies (docs/host-commands.md); the collector identity
(``COLLECTOR = "collector"``) may also read ``tc/#`` and publish its alarms on
``tc/+/alarms``, which the surveillance identity (``SURVEILLANCE = "surveillance"``: a SIEM, a
pager) may read. With ``persistence=True`` the broker runs as
a floor's does (docs/feed.md "The broker"): ``persistence true`` in its directory, saved every
second and on a clean stop, and ``max_queued_messages 0``, so a persistent session (its
subscriptions and the QoS 1 messages queued for it) survives ``stop()``/``start()``; without it
(the default) a restarted broker starts empty. Mosquitto 2.0 answers a v5 QoS 1 publish
the ACL refuses with PUBACK 0x87 (not authorized) and drops the message. Its ACL does not check
SUBSCRIBE (a table's SUBACK for ``tc/#`` is granted) but checks read access on every message it
delivers, so a table never receives another's (tests/services/test_mosquitto.py pins both).
"""

from __future__ import annotations

import signal
import ssl
import subprocess
from pathlib import Path

from tests.services._common import (
    chown_tree,
    free_port,
    port_open,
    private_dir,
    remove_dir,
    service_user,
    stop_process,
    tail,
    wait_until,
    which,
)
from tests.services.pki import CertificateAuthority, CertPair

COLLECTOR = "collector"
SURVEILLANCE = "surveillance"
HOST = "host"
START_TIMEOUT_S = 15.0
STOP_TIMEOUT_S = 10.0


def find_mosquitto() -> str | None:
    return which("/usr/sbin/mosquitto", "mosquitto")


class MosquittoBroker:
    host = "127.0.0.1"

    def __init__(
        self,
        binary: str,
        directory: Path,
        *,
        site: str = "site1",
        plain: bool = False,
        tls: bool = True,
        persistence: bool = False,
    ) -> None:
        if not (plain or tls):
            raise ValueError("a broker needs a TLS or a plain listener")
        self.binary = binary
        self.directory = directory
        self.site = site
        self._owner = service_user("mosquitto")
        self.ca = CertificateAuthority(directory / "pki")
        self.ca_path = self.ca.cert_path
        self._server = self.ca.issue_server("mosquitto test broker")
        self._clients: dict[str, CertPair] = {}
        self.port = free_port() if tls else 0
        self.plain_port: int | None = free_port() if plain else None
        self.tls = tls
        self.persistence = persistence
        self.config_path = directory / "mosquitto.conf"
        self.acl_path = directory / "acl"
        self.log_path = directory / "mosquitto.log"
        self._proc: subprocess.Popen[bytes] | None = None
        self._write_config()

    @classmethod
    def create(
        cls,
        *,
        site: str = "site1",
        plain: bool = False,
        tls: bool = True,
        persistence: bool = False,
    ) -> MosquittoBroker:
        """A started broker in a fresh directory (raises if mosquitto is not installed);
        ``persistence``: its sessions survive a stop and start (see the module docstring)."""
        binary = find_mosquitto()
        if binary is None:
            raise FileNotFoundError("mosquitto (Debian package 'mosquitto')")
        broker = cls(
            binary,
            private_dir("tc-mqtt-", service_user("mosquitto")),
            site=site,
            plain=plain,
            tls=tls,
            persistence=persistence,
        )
        try:
            broker.start()
        except BaseException:
            broker.close()
            raise
        return broker

    # -- configuration --------------------------------------------------------------------

    def _write_config(self) -> None:
        self.acl_path.write_text(
            "# every identity (certificate CN = MQTT user name): its own subtree only; the\n"
            "# command topic is the host's to write (docs/host-commands.md)\n"
            "pattern write tc/+/%u/rows\n"
            "pattern write tc/+/%u/heads\n"
            "pattern write tc/+/%u/status\n"
            "pattern write tc/+/%u/events\n"
            "pattern write tc/+/%u/meters\n"
            "pattern write tc/+/%u/reply\n"
            "pattern read tc/+/%u/#\n"
            f"user {COLLECTOR}\n"
            "topic read tc/#\n"
            "topic write tc/+/alarms\n"
            f"user {SURVEILLANCE}\n"
            "topic read tc/+/alarms\n"
            f"user {HOST}\n"
            "topic write tc/+/+/cmd\n"
            "topic read tc/+/+/reply\n"
        )
        lines = [
            "# generated by tests/services/mosquitto.py",
            "per_listener_settings true",
            "log_dest stderr",
            "log_type all",
            "log_timestamp_format %Y-%m-%dT%H:%M:%S",
            "connection_messages true",
        ]
        if self.persistence:
            store = self.directory / "persist"
            store.mkdir(exist_ok=True)
            lines += [
                "persistence true",
                f"persistence_location {store}/",
                "autosave_interval 1",
                "max_queued_messages 0",
            ]
        else:
            lines.append("persistence false")
        if self._owner is not None:
            lines.append(f"user {self._owner.pw_name}")
        if self.tls:
            lines += [
                "",
                f"listener {self.port} {self.host}",
                "allow_anonymous false",
                f"cafile {self.ca_path}",
                f"certfile {self._server.cert_path}",
                f"keyfile {self._server.key_path}",
                "require_certificate true",
                "use_identity_as_username true",
                f"acl_file {self.acl_path}",
            ]
        if self.plain_port is not None:
            lines += ["", f"listener {self.plain_port} {self.host}", "allow_anonymous true"]
        self.config_path.write_text("\n".join(lines) + "\n")
        chown_tree(self.directory, self._owner)

    # -- identities -----------------------------------------------------------------------

    def make_client_cert(self, identity: str) -> CertPair:
        """A client certificate and key with CN = ``identity`` (a table id, or COLLECTOR)."""
        if identity not in self._clients:
            self._clients[identity] = self.ca.issue_client(identity)
        return self._clients[identity]

    def ssl_context(self, identity: str) -> ssl.SSLContext:
        """A client TLS context: trusts only the test CA, presents ``identity``'s cert."""
        pair = self.make_client_cert(identity)
        ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=str(self.ca_path))
        ctx.load_cert_chain(str(pair.cert_path), str(pair.key_path))
        return ctx

    def topic(self, identity: str, *levels: str) -> str:
        return "/".join(("tc", self.site, identity, *levels))

    # -- process --------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self, timeout: float = START_TIMEOUT_S) -> None:
        """Start the broker (again) on the same ports with the same configuration."""
        if self.running:
            return
        log = open(self.log_path, "ab")  # noqa: SIM115 (the child holds it)
        try:
            self._proc = subprocess.Popen(
                [self.binary, "-c", str(self.config_path)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
        finally:
            log.close()
        ports = [p for p in (self.port if self.tls else None, self.plain_port) if p]
        proc = self._proc

        def exited() -> str | None:
            if proc.poll() is None:
                return None
            return f"mosquitto exited with {proc.returncode}:\n{tail(self.log_path)}"

        try:
            wait_until(
                lambda: all(port_open(self.host, p) for p in ports),
                timeout,
                f"mosquitto listening on {self.host}:{ports}",
                failed=exited,
            )
        except TimeoutError as e:
            self.stop()
            raise TimeoutError(f"{e}\n{tail(self.log_path)}") from None

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> None:
        """Stop the broker (SIGTERM, SIGKILL after ``timeout`` s); start() brings it back."""
        if self._proc is not None:
            stop_process(self._proc, signal.SIGTERM, timeout)
            self._proc = None

    def kill(self) -> None:
        """Kill the broker at once (SIGKILL), as a crash would."""
        if self._proc is not None:
            stop_process(self._proc, signal.SIGKILL, 5.0)
            self._proc = None

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def close(self) -> None:
        self.stop()
        remove_dir(self.directory)

    def __repr__(self) -> str:
        return (
            f"MosquittoBroker({self.host}:{self.port} tls, plain={self.plain_port},"
            f" site={self.site!r}, persistence={self.persistence}, dir={self.directory})"
        )


def mosquitto_version(binary: str) -> str:
    out = subprocess.run([binary, "-h"], capture_output=True, text=True, timeout=10).stdout
    return out.splitlines()[0] if out else "?"


__all__ = ["COLLECTOR", "MosquittoBroker", "find_mosquitto", "mosquitto_version"]
