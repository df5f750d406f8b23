"""The table's own latencies with the host feed on, its broker running, stopped or mute
(docs/feed.md "What the table pays": a broker never delays a draw or a console reply).

    python bench/feed_latency.py [--rounds 200] [--dir DIR] [--json FILE]

The sim pai gow Application runs for real, as in bench/bench_paigow_table.py (its loop thread,
the journal with synchronous=FULL, the certified RNG, the seven-segment display on SimGPIO),
with a ``[feed]`` to a real Mosquitto over TLS with the table's client certificate and the ACL
(tests/services/mosquitto.py), in four modes:

  off       no [feed]: the table as without the feed
  running   the broker up: every row is published (QoS 1) as it is committed
  stopped   the broker stopped: the publisher's connections are refused and retried
  mute      a socket that accepts TCP and never answers: the publisher waits for the TLS
            handshake (5 s) and tries again

Figures per mode: button edge -> the drawn number on the display, and a console ``status`` line
-> its reply (posted as the console's reader thread posts it; the reply carries the feed's
line), median / p99 / max in ms, and the feed's line at the end. Asserts nothing.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from controller.app import Application  # noqa: E402
from controller.config.profile import FeedSettings, load_profile  # noqa: E402
from controller.events import ConsoleLine, Shutdown  # noqa: E402
from drivers.number_display import DIGIT_SEGMENTS  # noqa: E402

PROFILE = ROOT / "hw_profiles" / "sim-paigow.toml"
TABLE = "sim-paigow"  # the profile's name: the journal's table id, the feed's table
WAIT_S = 2.0
MODES = ("off", "running", "stopped", "mute")


def pct(samples: list[float], p: float) -> float:
    s = sorted(samples)
    return s[min(len(s) - 1, round(p * (len(s) - 1)))]


def measure(feed: FeedSettings | None, rounds: int, where: str | None) -> dict[str, Any]:
    """``rounds`` rounds on a fresh journal; the draw and status-reply latencies (ms)."""
    profile = dataclasses.replace(load_profile(PROFILE), feed=feed)
    digits = {segs: n for n, segs in DIGIT_SEGMENTS.items()}
    draws: list[float] = []
    replies: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-feed-", dir=where) as tmp:
        app = Application(profile, tmp, console_port="none")
        app.start()
        loop = threading.Thread(target=app.run, name="table-loop", daemon=True)
        loop.start()
        gpio, display = app.devices.gpio, app.devices.table.display
        pins = app.devices.table.sim.buttons.pins
        gap_ms = profile.buttons.bounce_ms + 1

        def press(name: str) -> None:
            gpio.drive(pins[name], 0)
            gpio.clock.advance(gap_ms)
            gpio.drive(pins[name], 1)
            gpio.clock.advance(gap_ms)
            app.call(lambda: None)  # the press has been handled (FIFO queue)

        def status_reply() -> tuple[float, list[str]]:
            done = threading.Event()
            got: list[str] = []

            def reply(lines: list[str]) -> None:
                got.extend(lines)
                done.set()

            t0 = time.perf_counter_ns()
            app.post(ConsoleLine("status", reply, "bench"))
            if not done.wait(WAIT_S):
                raise SystemExit("no console reply within 2 s")
            return (time.perf_counter_ns() - t0) / 1e6, got

        feed_line = "off"
        try:
            for _ in range(rounds):
                for name in ("shuffled", "no_more_bets"):
                    press(name)
                start = time.perf_counter_ns()
                gpio.drive(pins["draw"], 0)
                # rpi-lgpio's debounce (the simulator's default) reports the press once the
                # line has been stable for bounce_ms: on the simulated clock, at once here
                gpio.clock.advance(gap_ms)
                deadline = time.monotonic() + WAIT_S
                while display.read_back() not in digits:
                    if time.monotonic() > deadline:
                        raise SystemExit("no number shown within 2 s")
                    time.sleep(0)
                draws.append((time.perf_counter_ns() - start) / 1e6)
                gpio.clock.advance(gap_ms)
                gpio.drive(pins["draw"], 1)
                gpio.clock.advance(gap_ms)
                for name in ("dealt", "hands_set", "settled"):
                    press(name)
                ms, lines = status_reply()
                replies.append(ms)
                feed_line = next(
                    (line.split(": ", 1)[1] for line in lines if line.startswith("feed: ")), "off"
                )
        finally:
            app.post(Shutdown("bench done"))
            loop.join(timeout=10)
            app.close()
    draws = draws[1:]  # the first includes the RNG's start-up health test
    return {
        "draw_p50": statistics.median(draws),
        "draw_p99": pct(draws, 0.99),
        "draw_max": max(draws),
        "reply_p50": statistics.median(replies),
        "reply_p99": pct(replies, 0.99),
        "reply_max": max(replies),
        "feed": feed_line,
    }


def run(rounds: int, where: str | None) -> dict[str, dict[str, Any]]:
    """Every mode, on one broker (stopped for the third) and one mute socket."""
    from tests.services.mosquitto import MosquittoBroker

    broker = MosquittoBroker.create(site="bench")
    mute = socket.socket()
    mute.bind(("127.0.0.1", 0))
    mute.listen(64)
    try:
        pair = broker.make_client_cert(TABLE)

        def feed(port: int) -> FeedSettings:
            return FeedSettings(
                f"mqtts://127.0.0.1:{port}",
                "bench",
                TABLE,
                str(broker.ca_path),
                str(pair.cert_path),
                str(pair.key_path),
            )

        results = {
            "off": measure(None, rounds, where),
            "running": measure(feed(broker.port), rounds, where),
        }
        broker.stop()
        results["stopped"] = measure(feed(broker.port), rounds, where)
        results["mute"] = measure(feed(mute.getsockname()[1]), rounds, where)
    finally:
        mute.close()
        broker.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument(
        "--dir",
        default=None,
        help="where the temporary journals go (default: the system's temp dir)",
    )
    parser.add_argument("--json", default=None, metavar="FILE", help="also write the figures")
    args = parser.parse_args()
    if args.rounds < 3:
        raise SystemExit("need --rounds 3 or more")
    results = run(args.rounds, args.dir)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    print(f"sim pai gow, {args.rounds} rounds per mode; ms median / p99 / max")
    print(f"{'broker':8} {'button -> number':>26} {'status -> reply':>26}  feed at the end")
    for mode, r in results.items():
        print(
            f"{mode:8} {r['draw_p50']:8.3f} {r['draw_p99']:8.3f} {r['draw_max']:8.3f} "
            f"{r['reply_p50']:8.3f} {r['reply_p99']:8.3f} {r['reply_max']:8.3f}  {r['feed']}"
        )


if __name__ == "__main__":
    main()
