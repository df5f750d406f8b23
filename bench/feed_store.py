"""The collector's store throughput beside the physical limit (docs/feed.md "Throughput"). Not a
test: it prints figures.

    python bench/feed_store.py [--tables 40] [--rounds 60] [--store sqlite|postgresql|both]
                               [--json FILE]

The same signed messages, in the same run on the same machine:

  collector   the real collector's verify-and-store path (``Collector._store_batch``: every
              row's hash and chain link checked, every head's ECDSA signature verified and
              matched, the table's position saved, one transaction and commit per batch of
              ``collect.BATCH`` messages, as ``collect`` takes them off the broker), fed the
              messages as the broker delivers them; MQTT itself is not in the figure;
  two         (PostgreSQL) two collector instances in two processes on one database, each
              given every message (as each instance's site-wide subscription does) and storing
              the tables it leases (controller/feed/share.py); rows/s from the first start to
              the last finish;
  copy        (PostgreSQL) a plain ``COPY`` of the same rows into a table shaped as
              ``feed_rows``, one transaction per batch of rows of the same size;
  insert      (SQLite) a plain ``executemany`` INSERT of the same rows in a WAL file with
              ``synchronous=FULL``, one transaction per batch of the same size;
  alone       the verification no collector can skip, on one core, storing nothing: every
              message parsed by the standard library's JSON parser (no checks), every row's
              canonical bytes and SHA-256, every head's ECDSA signature; its rate is a ceiling
              for one collector process on this machine, whatever else it does.

The row mix is a floor's: half the tables pai gow (12 rows a round), half baccarat (19 rows a
coup), one signed head a round, rows of the sizes of the journal's own (a JSON ``data`` of
100-250 bytes). PostgreSQL is the tests' server (tests/services: ``fsync=off``), on this machine.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from controller.feed import collect as collect_mod  # noqa: E402
from controller.feed.broker import BrokerSettings  # noqa: E402
from controller.feed.collect import Collector, CollectorSettings, _Message  # noqa: E402
from controller.feed.messages import head_payload, row_payload, topic  # noqa: E402

SITE = "bench"
PAIGOW_ROWS = 12  # rows a pai gow round (bench/bench_journal_cost.py)
BACCARAT_ROWS = 19  # rows a baccarat coup
BATCH = collect_mod.BATCH


#: Rounds an hour at the busy end (the issue's 40-70 baccarat coups; pai gow tiles is slower:
#: about 30 rounds an hour at a full table, 35 taken as its busy end).
BACCARAT_PER_HOUR = (40, 70)
PAIGOW_PER_HOUR = (25, 35)


def floor_rows_per_s(tables: int, rounds_per_hour: float, rows_per_round: int) -> float:
    """What a floor stores: tables x rounds an hour x rows a round, per second."""
    return tables * rounds_per_hour * rows_per_round / 3600.0


def tables_served(rows_per_s: float, rounds_per_hour: float, rows_per_round: int) -> int:
    """How many tables of one game a store rate keeps up with at ``rounds_per_hour``."""
    return int(rows_per_s * 3600.0 / (rounds_per_hour * rows_per_round))


def make_messages(
    tables: int, rounds: int, keys: Path
) -> tuple[list[_Message], list[tuple[Any, ...]]]:
    """Every table's rounds as the broker would deliver them (tables interleaved round by round)
    and the same rows as ``feed_rows`` tuples for the plain COPY/INSERT."""
    from tests.feed_journal import TableJournal

    keys.mkdir(parents=True, exist_ok=True)
    journals = []
    for n in range(tables):
        j = TableJournal(f"t{n:04d}")
        (keys / f"{j.table}.pem").write_bytes(j.public_pem)
        journals.append(j)
    messages: list[_Message] = []
    plain: list[tuple[Any, ...]] = []
    mid = 0
    for r in range(1, rounds + 1):
        for n, j in enumerate(journals):
            baccarat = n % 2 == 1
            per = BACCARAT_ROWS if baccarat else PAIGOW_ROWS
            game = "baccarat" if baccarat else "paigow"
            for i in range(per):
                data = {
                    "round": r,
                    "step": i,
                    "cards": ["AS", "KD", "7H", "2C", "9S", "QH", "JD"][: 2 + i % 6],
                    "wagers": {str(s): 2500 * s for s in range(1, 2 + i % 7)},
                    "dealer": "D-0412",
                }
                row = j.append(f"{game}.step{i}", data, r).as_dict()
                mid += 1
                messages.append(_Message(1, mid, 1, topic(SITE, j.table, "rows"), row_payload(row)))
                plain.append(
                    (
                        SITE,
                        j.table,
                        row["seq"],
                        row["ts"],
                        row["boot"],
                        row["mono"],
                        row["kind"],
                        row["round"],
                        json.dumps(row["data"], sort_keys=True),
                        row["prev"],
                        row["hash"],
                        time.time_ns(),
                        0,
                    )
                )
            head = j.sign().as_dict()
            mid += 1
            messages.append(_Message(1, mid, 1, topic(SITE, j.table, "heads"), head_payload(head)))
    return messages, plain


def verification_alone(messages: list[_Message], keys: Path) -> dict[str, float]:
    """The verification a collector cannot skip, timed on one core (the best of 3 passes),
    nothing stored: µs a row for each step (a head's ECDSA spread over the rows it signs) and
    the rows a second all three allow."""
    from controller.journal.chain import row_hash_and_data
    from controller.journal.heads import load_public_key, verify_head

    rows = [m.payload for m in messages if m.topic.endswith("/rows")]
    heads = [m.payload for m in messages if m.topic.endswith("/heads")]
    parsed_rows = [json.loads(p) for p in rows]
    parsed_heads = [json.loads(p) for p in heads]
    key_of = {
        h["table"]: load_public_key((keys / f"{h['table']}.pem").read_bytes()) for h in parsed_heads
    }

    def best(step: Any) -> float:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            step()
            times.append(time.perf_counter() - start)
        return min(times) / len(rows) * 1e6

    def parse() -> None:
        for p in rows:
            json.loads(p)
        for p in heads:
            json.loads(p)

    def hash_rows() -> None:
        for r in parsed_rows:
            if row_hash_and_data(r["prev"], r)[0] != r["hash"]:
                raise AssertionError(f"bench row {r['seq']} does not hash to its hash")

    def signatures() -> None:
        for h in parsed_heads:
            if not verify_head(h, h["sig"], key_of[h["table"]]):
                raise AssertionError(f"bench head {h['table']}/{h['seq']} is not signed")

    out = {"parse_us": best(parse), "hash_us": best(hash_rows), "ecdsa_us": best(signatures)}
    out["rows_per_s"] = 1e6 / (out["parse_us"] + out["hash_us"] + out["ecdsa_us"])
    return out


def collector(url: str, keys: Path, name: str) -> Collector:
    settings = CollectorSettings(
        BrokerSettings("127.0.0.1", 1, False), SITE, url, keys, name, gap_timeout_s=600.0
    )
    return Collector(settings, out=lambda _line: None)


#: The last run_collector's CPU seconds in this process (the collector's own, not the server's).
CPU: list[float] = [0.0]


def run_collector(c: Collector, messages: list[_Message]) -> tuple[float, int]:
    """Store every message in the collector's batches; (seconds, rows stored)."""
    cpu = time.process_time()
    start = time.perf_counter()
    for i in range(0, len(messages), BATCH):
        c._store_batch(messages[i : i + BATCH], False)
    CPU[0] = time.process_time() - cpu
    return time.perf_counter() - start, c.verifier.counters.rows_stored


def lease_all(c: Collector, want: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    c._renew()
    while c.share is not None and len(c.share.held) < want:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{c.settings.client_id}: {len(c.share.held)} of {want} leased")
        time.sleep(0.2)
        c._renew()


def _instance(url: str, keys: str, name: str, messages: list[_Message], want: int, q: Any) -> None:
    c = collector(url, Path(keys), name)
    lease_all(c, want)
    q.put(("ready", name))
    go = q_go[name].get()  # noqa: F841 - the start signal
    started = time.time()
    seconds, rows = run_collector(c, messages)
    q.put(("done", started, started + seconds, rows))
    c.store.close()


q_go: dict[str, Any] = {}


def two_instances(url: str, keys: Path, messages: list[_Message], tables: int) -> dict[str, float]:
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    names = ["bench-a", "bench-b"]
    for n in names:
        q_go[n] = ctx.Queue()
    procs = [
        ctx.Process(target=_instance, args=(url, str(keys), n, messages, tables // 2, q))
        for n in names
    ]
    for p in procs:
        p.start()
    for _ in names:
        q.get(timeout=120)
    for n in names:
        q_go[n].put("go")
    results = [q.get(timeout=1200) for _ in names]
    for p in procs:
        p.join(60)
    first = min(r[1] for r in results)
    last = max(r[2] for r in results)
    rows = sum(r[3] for r in results)
    return {"rows": rows, "seconds": last - first, "rows_per_s": rows / (last - first)}


def plain_copy(url: str, plain: list[tuple[Any, ...]]) -> float:
    import psycopg

    with psycopg.connect(url) as conn:
        conn.execute("DROP TABLE IF EXISTS bench_rows")
        conn.execute("CREATE TABLE bench_rows (LIKE feed_rows INCLUDING ALL)")
        conn.commit()
        cols = (
            "site, table_id, seq, ts, boot, mono, kind, round, data, prev, hash, received_ns,"
            " gap_before"
        )
        start = time.perf_counter()
        for i in range(0, len(plain), BATCH):
            with conn.cursor() as cur, cur.copy(f"COPY bench_rows ({cols}) FROM STDIN") as cp:
                for rec in plain[i : i + BATCH]:
                    cp.write_row(rec)
            conn.commit()
        seconds = time.perf_counter() - start
        conn.execute("DROP TABLE bench_rows")
        conn.commit()
    return len(plain) / seconds


def plain_insert(path: Path, plain: list[tuple[Any, ...]]) -> float:
    from controller.feed.store import Store

    Store.open(f"sqlite:///{path}").close()  # the schema, as the collector makes it
    lite = sqlite3.connect(path)
    lite.execute("PRAGMA journal_mode=WAL")
    lite.execute("PRAGMA synchronous=FULL")
    lite.execute("DROP TABLE IF EXISTS bench_rows")
    schema = lite.execute("SELECT sql FROM sqlite_master WHERE name = 'feed_rows'").fetchone()[0]
    lite.execute(schema.replace("feed_rows", "bench_rows", 1))
    lite.commit()
    start = time.perf_counter()
    for i in range(0, len(plain), BATCH):
        lite.executemany(
            "INSERT INTO bench_rows (site, table_id, seq, ts, boot, mono, kind, round, data, prev,"
            " hash, received_ns, gap_before) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            plain[i : i + BATCH],
        )
        lite.commit()
    seconds = time.perf_counter() - start
    lite.close()
    return len(plain) / seconds


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tables", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=60)
    ap.add_argument("--store", choices=("sqlite", "postgresql", "both"), default="both")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    out: dict[str, Any] = {"tables": args.tables, "rounds": args.rounds}
    # 1,000 baccarat tables at 40-70 coups an hour: 211-369 rows/s
    out["floor_1000_baccarat_rows_per_s"] = floor_rows_per_s(1000, 70, BACCARAT_ROWS)
    out["floor_1000_baccarat_low_rows_per_s"] = floor_rows_per_s(1000, 40, BACCARAT_ROWS)
    out["floor_1000_paigow_rows_per_s"] = floor_rows_per_s(1000, PAIGOW_PER_HOUR[1], PAIGOW_ROWS)
    with tempfile.TemporaryDirectory(prefix="tc-feed-store-") as tmp:
        work = Path(tmp)
        messages, plain = make_messages(args.tables, args.rounds, work / "keys")
        out["rows"] = len(plain)
        out["messages"] = len(messages)
        print(f"{len(plain)} rows, {len(messages) - len(plain)} heads, {args.tables} tables")
        with open("/proc/loadavg") as f:
            out["loadavg"] = f.read().split()[0]
        print(f"load average at the start: {out['loadavg']}")
        alone = verification_alone(messages, work / "keys")
        out["alone"] = alone
        print(
            f"the verification alone, one core, nothing stored: {alone['rows_per_s']:,.0f} rows/s"
            f" (a row: parse {alone['parse_us']:.1f} µs, canonical bytes and SHA-256"
            f" {alone['hash_us']:.1f} µs, ECDSA {alone['ecdsa_us']:.1f} µs)"
        )
        if args.store in ("sqlite", "both"):
            out["sqlite_insert"] = plain_insert(work / "plain.sqlite", plain)
            c = collector(f"sqlite:///{work / 'collector.sqlite'}", work / "keys", "bench")
            seconds, rows = run_collector(c, messages)
            c.store.close()
            assert rows == len(plain), (rows, len(plain))
            out["sqlite_collector"] = rows / seconds
            out["sqlite_collector_cpu"] = rows / CPU[0]
            print(
                f"SQLite: collector {out['sqlite_collector']:,.0f} rows/s, plain batched insert"
                f" {out['sqlite_insert']:,.0f} rows/s"
                f" ({out['sqlite_collector'] / out['sqlite_insert']:.0%}); the collector's"
                f" own CPU: {out['sqlite_collector_cpu']:,.0f} rows per CPU second"
            )
        if args.store in ("postgresql", "both"):
            try:
                from tests.services.postgres import PostgresServer
            except ImportError as exc:
                out["pg_skipped"] = str(exc)
                args.store = "sqlite"
        if args.store in ("postgresql", "both"):
            pg = PostgresServer.create()
            try:
                url = pg.url
                c = collector(url, work / "keys", "bench")
                lease_all(c, args.tables)
                seconds, rows = run_collector(c, messages)
                c.store.close()
                assert rows == len(plain), (rows, len(plain))
                out["pg_collector"] = rows / seconds
                out["pg_collector_cpu"] = rows / CPU[0]
                out["pg_copy"] = plain_copy(url, plain)
                url2 = pg.create_database("tc_two")
                out["pg_two"] = two_instances(url2, work / "keys", messages, args.tables)[
                    "rows_per_s"
                ]
            finally:
                pg.close()
            print(
                f"PostgreSQL: collector {out['pg_collector']:,.0f} rows/s, two instances"
                f" {out['pg_two']:,.0f} rows/s, plain COPY {out['pg_copy']:,.0f} rows/s"
                f" (one collector {out['pg_collector'] / out['pg_copy']:.0%} of COPY); the"
                f" collector's own CPU: {out['pg_collector_cpu']:,.0f} rows per CPU second;"
                f" the verification alone is {alone['rows_per_s'] / out['pg_copy']:.0%} of COPY"
            )
    if "pg_collector" in out:
        floor = out["floor_1000_baccarat_rows_per_s"]
        print(
            f"a 1,000-table baccarat floor at 40-70 coups/h stores"
            f" {out['floor_1000_baccarat_low_rows_per_s']:.0f}-{floor:.0f} rows/s: one PostgreSQL"
            f" collector is x{out['pg_collector'] / floor:.0f} that; it serves"
            f" {int(out['pg_collector'] / floor * 1000):,} such tables"
        )
        pg = out["pg_collector"]
        out["pg_serves_baccarat"] = tables_served(pg, BACCARAT_PER_HOUR[1], BACCARAT_ROWS)
        out["pg_serves_paigow"] = tables_served(pg, PAIGOW_PER_HOUR[1], PAIGOW_ROWS)
        print(
            f"a floor of N tables stores N x rounds/h x rows a round / 3600 rows/s: at"
            f" {pg:,.0f} rows/s one PostgreSQL collector keeps up with"
            f" {out['pg_serves_baccarat']:,} baccarat tables at {BACCARAT_PER_HOUR[1]} coups/h"
            f" ({BACCARAT_ROWS} rows a coup) or {out['pg_serves_paigow']:,} pai gow tables at"
            f" {PAIGOW_PER_HOUR[1]} rounds/h ({PAIGOW_ROWS} rows a round)"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
