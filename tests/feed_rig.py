"""The feed's test rig around a real Mosquitto (tests/services, ``mosquitto_broker``): a
publisher per table with its own client certificate, and a collector (in a thread, or as the
real ``table-controller collect`` process) with the ``collector`` identity."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from controller.feed.broker import BrokerSettings
from controller.feed.collect import Collector, CollectorSettings
from controller.feed.publisher import Outbox, Publisher, PublisherSettings
from controller.feed.store import Store
from tests.feed_journal import TableJournal

if TYPE_CHECKING:
    from tests.services.mosquitto import MosquittoBroker

ROOT = Path(__file__).resolve().parents[1]


def wait_for(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout:g} s")
        time.sleep(0.05)


def table_broker(broker: MosquittoBroker, identity: str) -> BrokerSettings:
    pair = broker.make_client_cert(identity)
    return BrokerSettings(
        broker.host, broker.port, True, str(broker.ca_path), str(pair.cert_path), str(pair.key_path)
    )


def publisher(
    broker: MosquittoBroker,
    journal: Outbox,
    table: str,
    state_dir: Path,
    *,
    identity: str | None = None,
    heartbeat_s: float = 60.0,
) -> Publisher:
    settings = PublisherSettings(
        table_broker(broker, identity or table),
        broker.site,
        table,
        state_dir / f"{table}.position",
        heartbeat_s=heartbeat_s,
    )
    pub = Publisher(settings, lambda: journal)
    pub.start()
    return pub


def write_keys(directory: Path, *tables: TableJournal) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for t in tables:
        (directory / f"{t.table}.pem").write_bytes(t.public_pem)
    return directory


class CollectorThread:
    """The collector in this process (its alarms printed into ``lines``)."""

    def __init__(
        self,
        broker: MosquittoBroker,
        store_url: str,
        keys: Path,
        *,
        gap_timeout_s: float = 60.0,
        silence_s: float = 900.0,
        syslog: str | None = None,
        client_id: str | None = None,
    ) -> None:
        self.lines: list[str] = []
        self.settings = CollectorSettings(
            table_broker(broker, "collector"),
            broker.site,
            store_url,
            keys,
            client_id or f"tc-collector-{broker.site}",
            gap_timeout_s,
            silence_s,
            syslog=syslog,
        )
        self.collector = Collector(self.settings, out=self.lines.append)
        self.stop_event = threading.Event()
        self.thread = threading.Thread(
            target=self.collector.run, args=(self.stop_event,), daemon=True
        )
        self.thread.start()
        if not self.collector.connected_once.wait(15):
            self.stop()
            raise TimeoutError(f"collector did not connect: {self.lines}")

    def stop(self) -> None:
        self.stop_event.set()
        self.thread.join(15)
        assert not self.thread.is_alive(), "collector thread did not stop"


def collect_process(
    broker: MosquittoBroker,
    store_url: str,
    keys: Path,
    log: Path,
    *,
    client_id: str | None = None,
    extra: tuple[str, ...] = (),
) -> subprocess.Popen[bytes]:
    """``table-controller collect`` as its own process (for SIGKILL)."""
    pair = broker.make_client_cert("collector")
    out = open(log, "ab")  # noqa: SIM115 - the child holds it
    try:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "controller",
                "collect",
                "--broker",
                f"mqtts://{broker.host}:{broker.port}",
                "--site",
                broker.site,
                "--store",
                store_url,
                "--keys",
                str(keys),
                "--ca",
                str(broker.ca_path),
                "--cert",
                str(pair.cert_path),
                "--key",
                str(pair.key_path),
                "--client-id",
                client_id or f"tc-collector-{broker.site}",
                *extra,
            ],
            cwd=ROOT,
            stdout=out,
            stderr=out,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    finally:
        out.close()


def kill(proc: subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
    proc.send_signal(sig)
    proc.wait(15)


def stored(store_url: str, site: str, table: str) -> list[dict[str, object]]:
    store = Store.open(store_url)
    try:
        return store.rows(site, table)
    finally:
        store.close()
