"""The host feed at floor scale: many simulated tables publishing through ONE Mosquitto to ONE
collector (docs/feed.md "Scale"). Not a test: it prints figures.

    python bench/feed_scale.py [--tables 200] [--rate 500] [--seconds 20] [--burst 100]
                               [--store sqlite|postgresql|both] [--json FILE]

Each simulated table is the real Publisher (controller/feed/publisher.py) with its own MQTT
client over TLS with its own client certificate (CN = table id; the broker's ACL
``tc/+/%u/#``), reading an in-memory journal whose rows are chained and whose heads are signed
as docs/journal.md says (tests/feed_journal.py). Tables are spread over worker processes (one
Python thread per table inside them). The collector is the real ``table-controller collect``
process, with the ``collector`` identity, storing in SQLite (synchronous=FULL) or a real
PostgreSQL (tests/services; fsync off there, see the note it prints).

Two phases per store:
  paced  every table appends rows at its share of ``--rate`` rows/s for ``--seconds``; lag is
         the collector's store time minus the row's wall-clock time (same machine), p50/p99;
  drain  the collector is stopped, every table appends ``--burst`` rows and sends them into the
         broker (which keeps them for the collector's session), then the collector starts:
         rows/s is what it stored per second from the first to the last row (its own capacity,
         without the simulated tables competing for the CPU).
Memory: VmRSS of the broker and the collector at the end of the paced phase.
A floor of 1,000 baccarat tables at 70 coups an hour (19 rows a coup) is about 369 rows/s
(docs/feed.md "What a floor needs"): the headroom is the burst rate over that.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from controller.feed.broker import BrokerSettings  # noqa: E402
from controller.feed.publisher import Publisher, PublisherSettings  # noqa: E402
from controller.feed.store import Store  # noqa: E402

FLOOR_ROWS_PER_S = 1000 * 70 * 19 / 3600  # 369.4


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def pct(samples: list[float], p: float) -> float:
    s = sorted(samples)
    return s[min(len(s) - 1, round(p * (len(s) - 1)))]


# -- a worker process: N tables ------------------------------------------------------------


def worker(
    tables: list[tuple[str, str, str, bytes]],
    broker: dict[str, Any],
    site: str,
    state_dir: str,
    commands: Any,
    done: Any,
) -> None:
    """Run one Publisher per table; obey ("paced", rate_per_table, seconds), ("burst", rows),
    ("stop",); report each phase's end with the table rows' counts."""
    from cryptography.hazmat.primitives import serialization

    from tests.feed_journal import TableJournal

    journals, pubs = [], []
    for table, cert, key, journal_key in tables:
        private = serialization.load_pem_private_key(journal_key, None)
        j = TableJournal(table, private)  # type: ignore[arg-type]
        settings = PublisherSettings(
            BrokerSettings(broker["host"], broker["port"], True, broker["ca"], cert, key),
            site,
            table,
            Path(state_dir) / f"{table}.position",
            heartbeat_s=30.0,
        )
        p = Publisher(settings, lambda j=j: j)
        p.start()
        journals.append(j)
        pubs.append(p)
    deadline = time.monotonic() + 60
    while not all(p.state().connected for p in pubs):
        if time.monotonic() > deadline:
            done.put(("error", [p.state().error for p in pubs if not p.state().connected][:3]))
            return
        time.sleep(0.05)
    done.put(("ready", len(pubs)))
    while True:
        cmd = commands.get()
        if cmd[0] == "stop":
            break
        if cmd[0] == "paced":
            _, per_table, seconds = cmd
            interval = 1.0 / per_table
            start = time.monotonic()
            n = 0
            while time.monotonic() - start < seconds:
                target = start + n * interval
                delay = target - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                for j, p in zip(journals, pubs, strict=True):
                    j.append("bench.row", {"n": n}, n // 10)
                    if n % 10 == 9:
                        j.sign()
                    p.wake()
                n += 1
        elif cmd[0] == "burst":
            for j, p in zip(journals, pubs, strict=True):
                for i in range(cmd[1]):
                    j.append("bench.burst", {"i": i}, None)
                j.sign()
                p.wake()
        deadline = time.monotonic() + 300
        while any(p.state().acked_seq < len(j.rows) for j, p in zip(journals, pubs, strict=True)):
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        done.put(("phase", sum(len(j.rows) for j in journals)))
    for p in pubs:
        p.stop(2.0)
    done.put(("stopped", 0))


# -- the run -------------------------------------------------------------------------------


def run_store(kind: str, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    from tests.feed_journal import TableJournal
    from tests.services.mosquitto import MosquittoBroker

    broker = MosquittoBroker.create(site="floor")
    pg = None
    try:
        # a floor's broker: queued messages for the collector are not capped at 1000
        text = broker.config_path.read_text()
        broker.config_path.write_text(
            text + "\nmax_queued_messages 0\nmax_inflight_messages 0\nmax_connections -1\n"
        )
        broker.stop()
        broker.start()
        if kind == "postgresql":
            from tests.services.postgres import PostgresServer

            pg = PostgresServer.create()
            store_url = pg.url
        else:
            store_url = f"sqlite:///{work / 'collector.sqlite'}"
        keys = work / "keys"
        keys.mkdir()
        specs = []
        from cryptography.hazmat.primitives import serialization

        for n in range(args.tables):
            table = f"t{n:04d}"
            j = TableJournal(table)
            (keys / f"{table}.pem").write_bytes(j.public_pem)
            pair = broker.make_client_cert(table)
            private = j.key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
            specs.append((table, str(pair.cert_path), str(pair.key_path), private))
        cpair = broker.make_client_cert("collector")
        log = open(work / "collector.log", "ab")  # noqa: SIM115

        def start_collector() -> subprocess.Popen[bytes]:
            mark = (work / "collector.log").read_bytes().count(b"subscribed")
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "controller",
                    "collect",
                    "--broker",
                    f"mqtts://{broker.host}:{broker.port}",
                    "--site",
                    "floor",
                    "--store",
                    store_url,
                    "--keys",
                    str(keys),
                    "--ca",
                    str(broker.ca_path),
                    "--cert",
                    str(cpair.cert_path),
                    "--key",
                    str(cpair.key_path),
                    "--silence",
                    "3600",
                ],
                cwd=ROOT,
                stdout=log,
                stderr=log,
            )
            deadline = time.monotonic() + 30
            while (work / "collector.log").read_bytes().count(b"subscribed") <= mark:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError((work / "collector.log").read_text())
                time.sleep(0.05)
            return proc

        collector = start_collector()
        ctx = mp.get_context("fork")
        done = ctx.Queue()
        procs, queues = [], []
        per = -(-args.tables // args.workers)
        bdict = {"host": broker.host, "port": broker.port, "ca": str(broker.ca_path)}
        for w in range(args.workers):
            chunk = specs[w * per : (w + 1) * per]
            if not chunk:
                continue
            q = ctx.Queue()
            p = ctx.Process(target=worker, args=(chunk, bdict, "floor", str(work), q, done))
            p.start()
            procs.append(p)
            queues.append(q)
        for _ in procs:
            msg = done.get(timeout=120)
            if msg[0] != "ready":
                raise RuntimeError(f"worker: {msg}")

        def phase(cmd: tuple[Any, ...]) -> tuple[float, int]:
            t0 = time.monotonic()
            for q in queues:
                q.put(cmd)
            total = 0
            for _ in procs:
                kind_, n = done.get(timeout=600)
                total += n
            return time.monotonic() - t0, total

        def stored_count() -> int:
            s = Store.open(store_url)
            try:
                return s.row_count()
            finally:
                s.close()

        def wait_stored(total: int, limit: float = 300) -> None:
            deadline = time.monotonic() + limit
            while stored_count() < total and time.monotonic() < deadline:
                time.sleep(0.2)

        # paced
        per_table = args.rate / args.tables
        t0_ns = time.time_ns()
        _, total = phase(("paced", per_table, args.seconds))
        wait_stored(total)
        broker_rss = rss_kb(broker._proc.pid) if broker._proc else 0  # noqa: SLF001
        collector_rss = rss_kb(collector.pid)
        s = Store.open(store_url)
        lags = [
            (r - ts) / 1e6
            for ts, r in s.execute("SELECT ts, received_ns FROM feed_rows WHERE ts >= ?", (t0_ns,))
        ]
        paced_rows = s.row_count()
        s.close()
        # burst: the collector is away while every table sends a backlog into the broker
        # (its session keeps the messages); then it starts and drains them: its own rate,
        # without 200 publishers competing for the CPU
        collector.terminate()
        collector.wait(30)
        before = stored_count()
        _, total = phase(("burst", args.burst))
        b0 = time.monotonic()
        collector = start_collector()
        wait_stored(total)
        burst_s = time.monotonic() - b0
        collector_rss_burst = rss_kb(collector.pid)
        s = Store.open(store_url)
        first, last = s.execute(
            "SELECT MIN(received_ns), MAX(received_ns) FROM feed_rows WHERE kind = 'bench.burst'"
        )[0]
        burst_rows = s.row_count() - before
        alarms = len(s.alarms())
        s.close()
        store_rate = burst_rows / max(1e-9, (last - first) / 1e9)
        for q in queues:
            q.put(("stop",))
        for p in procs:
            p.join(30)
        collector.terminate()
        collector.wait(30)
        log.close()
        return {
            "store": kind,
            "tables": args.tables,
            "workers": len(procs),
            "paced_rate_target": args.rate,
            "paced_rows": paced_rows,
            "paced_rate": paced_rows / args.seconds,
            "lag_p50_ms": statistics.median(lags) if lags else float("nan"),
            "lag_p99_ms": pct(lags, 0.99) if lags else float("nan"),
            "burst_rows": burst_rows,
            "burst_wall_s": burst_s,
            "burst_store_rate": store_rate,
            "headroom": store_rate / FLOOR_ROWS_PER_S,
            "broker_rss_mb": broker_rss / 1024,
            "collector_rss_mb": collector_rss / 1024,
            "collector_rss_after_drain_mb": collector_rss_burst / 1024,
            "alarms": alarms,
        }
    finally:
        broker.close()
        if pg is not None:
            pg.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--rate", type=float, default=500.0, help="paced rows/s, all tables")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--burst", type=int, default=100, help="rows per table in the burst")
    parser.add_argument("--store", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    import tempfile

    results = []
    for kind in ["sqlite", "postgresql"] if args.store == "both" else [args.store]:
        with tempfile.TemporaryDirectory(prefix="feed-scale-") as tmp:
            r = run_store(kind, args, Path(tmp))
        results.append(r)
        print(
            f"{kind:10s} {r['tables']} tables ({r['workers']} processes), TLS:"
            f" paced {r['paced_rate']:.0f} rows/s, lag p50 {r['lag_p50_ms']:.1f} ms"
            f" p99 {r['lag_p99_ms']:.1f} ms; drain {r['burst_rows']} rows stored at"
            f" {r['burst_store_rate']:.0f} rows/s (headroom x{r['headroom']:.0f} over"
            f" {FLOOR_ROWS_PER_S:.0f} rows/s); RSS broker {r['broker_rss_mb']:.1f} MB,"
            f" collector {r['collector_rss_mb']:.1f} MB; alarms {r['alarms']}",
            flush=True,
        )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
