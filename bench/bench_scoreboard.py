"""The scoreboard's cost to the table, and its own latency.

    python bench/bench_scoreboard.py [--rounds N] [--clients 20] [--dir DIR]

The sim-paigow Application runs in this process as in bench_paigow_table.py (its one loop thread,
the journal fsynced, the CertifiedRng, the seven-segment driver on SimGPIO) with the scoreboard
server the wiring starts (controller/cli.py) on a free loopback port. Three phases of N rounds:

* ``idle``: no page open;
* ``clients``: ``--clients`` event streams open, read by a separate process (one thread, one
  selector, one TCP connection per stream, as that many monitors would be);
* ``flood``: the same streams, plus a flood process: 16 threads opening connections as fast as
  they can and sending a mix of pages, unknown paths, over-long request lines, POSTs, garbage
  and connections that send nothing.

Per phase: the draw latency (the draw button's edge -> the digit on the display's pins, the
figure bench/run targets at < 5 ms) and the server-sent event latency (the ``paigow.drawn``
journal row's monotonic time, taken as the row is written, before its fsync -> the event with
that round's number read by a stream client; CLOCK_MONOTONIC is one clock for every process on
the machine). Also the page weights and the size of a whole baccarat shoe's event. Prints one
line per figure; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import selectors
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PROFILE = ROOT / "hw_profiles" / "sim-paigow.toml"
WAIT_S = 5.0
FLOOD_THREADS = 16
#: How long the number stays up before ``dealt``, and the pause after every other press: a
#: dealer's presses are seconds apart, so each press meets a server that has finished sending
#: the previous one's event (what a test would otherwise measure is its own pace).
HOLD_S = 0.1
GAP_S = 0.03


# -- the client processes ----------------------------------------------------------------------


def run_clients(host: str, port: int, count: int) -> None:
    """``count`` event streams; on SIGTERM prints ``round monotonic_ns`` for each stream and
    round whose number arrived (kept in memory until then: a full stdout pipe must not stop
    the reading)."""
    sel = selectors.DefaultSelector()
    buffers: dict[socket.socket, bytes] = {}
    seen: set[tuple[int, int]] = set()
    arrived: list[str] = []
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    for _ in range(count):
        s = socket.create_connection((host, port), timeout=WAIT_S)
        s.sendall(f"GET /events HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
        buffers[s] = b""
    print("ready", flush=True)
    while not stop.is_set():
        for key, _ in sel.select(timeout=0.2):
            s = key.fileobj
            assert isinstance(s, socket.socket)
            chunk = s.recv(65536)
            now = time.monotonic_ns()
            if not chunk:
                sel.unregister(s)
                continue
            buffers[s] += chunk
            while b"\n\n" in buffers[s]:
                block, _, buffers[s] = buffers[s].partition(b"\n\n")
                for line in block.split(b"\n"):
                    if line.startswith(b"data: "):
                        doc = json.loads(line[6:])
                        key_ = (s.fileno(), int(doc.get("round") or 0))
                        if doc.get("number") and key_ not in seen:
                            seen.add(key_)
                            arrived.append(f"{doc['round']} {now}")
    print("\n".join(arrived), flush=True)


def run_flood(host: str, port: int) -> None:
    """Bad and good requests as fast as 16 threads can open connections; prints the count of
    answered requests on SIGTERM."""
    stop = threading.Event()
    answered = [0] * FLOOD_THREADS
    own = f"Host: {host}:{port}\r\n".encode()  # the server answers only its own address
    requests = [
        b"GET / HTTP/1.1\r\n" + own + b"\r\n",
        b"GET /nope HTTP/1.1\r\n" + own + b"\r\n",
        b"GET /" + b"a" * 5000 + b" HTTP/1.1\r\n\r\n",
        b"POST / HTTP/1.1\r\n" + own + b"\r\nx",
        b"\x16\x03\x01garbage\r\n\r\n",
        b"GET /state HTTP/1.1\r\n" + own + b"\r\n",
        b"GET / HTTP/1.1\r\nHost: evil\r\n\r\n",
        b"",
    ]

    def worker(n: int) -> None:
        rng = random.Random(n)
        while not stop.is_set():
            try:
                with socket.create_connection((host, port), timeout=1.0) as s:
                    req = rng.choice(requests)
                    if req:
                        s.sendall(req)
                        if s.recv(64):
                            answered[n] += 1
                    else:
                        time.sleep(0.2)  # a connection that says nothing
            except OSError:
                pass

    threads = [
        threading.Thread(target=worker, args=(n,), daemon=True) for n in range(FLOOD_THREADS)
    ]
    for t in threads:
        t.start()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print("ready", flush=True)
    while not stop.wait(0.2):
        pass
    print(sum(answered), flush=True)


# -- the table -----------------------------------------------------------------------------------


def pct(samples: list[float], q: float) -> float:
    s = sorted(samples)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


class Table:
    """The Application, its loop, its scoreboard, and the dealer's hand on the buttons."""

    def __init__(self, state_dir: str) -> None:
        from controller.app import Application
        from controller.config.profile import ScoreboardSettings, load_profile
        from controller.scoreboard.server import ScoreboardServer
        from drivers.number_display import DIGIT_SEGMENTS

        self.profile = load_profile(PROFILE)
        self.app = Application(self.profile, state_dir, console_port="none")
        self.app.start()
        self.loop = threading.Thread(target=self.app.run, daemon=True)
        self.loop.start()
        self.board = ScoreboardServer(
            ScoreboardSettings(enabled=True, port=0, max_clients=64), self.app.publication, "paigow"
        )
        self.board.start()
        self.digits = {segs: n for n, segs in DIGIT_SEGMENTS.items()}
        self.gpio = self.app.devices.gpio
        self.display = self.app.devices.table.display
        self.pins = self.app.devices.table.sim.buttons.pins
        self.gap_ms = self.profile.buttons.bounce_ms + 1

    def press(self, name: str) -> None:
        self.gpio.drive(self.pins[name], 0)
        self.gpio.clock.advance(self.gap_ms)
        self.gpio.drive(self.pins[name], 1)
        self.gpio.clock.advance(self.gap_ms)
        self.app.call(lambda: None)
        time.sleep(GAP_S)

    def rounds(self, n: int) -> list[float]:
        """``n`` rounds at a dealer's pace; the draw latencies (ms)."""
        samples = []
        for _ in range(n):
            for name in ("shuffled", "no_more_bets"):
                self.press(name)
            start = time.perf_counter_ns()
            self.gpio.drive(self.pins["draw"], 0)
            # rpi-lgpio's debounce (the simulator's default) reports the press once the line
            # has been stable for bounce_ms: on the simulated clock, at once here
            self.gpio.clock.advance(self.gap_ms)
            deadline = time.monotonic() + WAIT_S
            while self.display.read_back() not in self.digits:
                if time.monotonic() > deadline:
                    raise SystemExit("no number on the display")
                time.sleep(0)
            samples.append((time.perf_counter_ns() - start) / 1e6)
            self.gpio.drive(self.pins["draw"], 1)
            self.gpio.clock.advance(self.gap_ms)
            # The number stays up while the tiles are dealt (seconds at a table): long enough
            # for every stream to get its event before `dealt` blanks it. A stream that has not
            # by then misses the round (counted: a late event is shown as missed, not hidden).
            time.sleep(HOLD_S)
            for name in ("dealt", "hands_set", "settled"):
                self.press(name)
        return samples

    def drawn_at(self) -> dict[int, int]:
        """round -> the monotonic ns of its ``paigow.drawn`` row."""
        rows = self.app.call(lambda: list(self.app.journal.events(kinds=["paigow.drawn"])))
        return {int(e.round): int(e.mono) for e in rows}  # type: ignore[attr-defined]

    def close(self) -> None:
        from controller.events import Shutdown

        self.board.close()
        self.app.post(Shutdown("bench done"))
        self.loop.join(timeout=10)
        self.app.close()


def _spawn(mode: str, host: str, port: int, *extra: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, __file__, mode, host, str(port), *extra],
        stdout=subprocess.PIPE,
        text=True,
        cwd=str(ROOT),
    )
    assert proc.stdout is not None
    if proc.stdout.readline().strip() != "ready":
        raise SystemExit(f"{mode} process did not start")
    return proc


def _stop(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGTERM)
    try:
        out, _ = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate(timeout=10)
    return out


def _line(name: str, values: list[float], unit: str = "ms") -> None:
    if values:
        print(
            f"{name} median {statistics.median(values):.3f} p99 {pct(values, 0.99):.3f}"
            f" max {max(values):.3f} {unit} n {len(values)}"
        )


def measure(rounds: int, clients: int, folder: str | None) -> None:
    from controller.scoreboard.content import document, encode
    from controller.scoreboard.pages import page

    with tempfile.TemporaryDirectory(prefix="bench-board-", dir=folder) as tmp:
        table = Table(tmp)
        host, port = table.board.address
        try:
            table.rounds(3)  # warm up (RNG start-up test)
            # The same pace in every phase: only the streams and the flood differ.
            _line("idle draw", table.rounds(rounds))
            for phase in ("clients", "flood"):
                reader = _spawn("--client", host, port, str(clients))
                flood = _spawn("--flood", host, port) if phase == "flood" else None
                time.sleep(0.5)
                first = int(str(table.app.publication.latest()[1]["round"]))
                draws = table.rounds(rounds)
                answered = _stop(flood).strip() if flood is not None else ""
                received = _stop(reader)
                drawn = table.drawn_at()
                sse = []
                for line in received.splitlines():
                    round_id, ns = (int(w) for w in line.split())
                    if round_id >= first and round_id in drawn:
                        sse.append((ns - drawn[round_id]) / 1e6)
                _line(f"{phase} draw", draws)
                _line(f"{phase} sse", sse)
                print(
                    f"{phase} missed {rounds * clients - len(sse)} of {rounds * clients}"
                    f" events (not at the client within {HOLD_S * 1000:.0f} ms)"
                )
                if flood is not None:
                    print(
                        f"flood answered {answered} requests in"
                        f" {rounds} rounds; server {table.board.describe()}"
                    )
        finally:
            table.close()
    results = [random.Random(5).choice("BBBBPPPPT") for _ in range(80)]
    event = encode(
        document(
            1, {"game": "baccarat", "state": "betting", "shoe": 1, "coup": 80, "results": results}
        )
    )
    print(
        f"page bytes paigow {len(page('paigow'))} baccarat {len(page('baccarat'))}"
        f" event80 {len(event)}"
    )


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--client":
        run_clients(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--flood":
        run_flood(sys.argv[2], int(sys.argv[3]))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=150)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--dir", default=None)
    args = parser.parse_args()
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    measure(args.rounds, args.clients, args.dir)


if __name__ == "__main__":
    main()
