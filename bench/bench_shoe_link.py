"""Shoe link, protocol revision 3 (docs/design.md): is an idle link quiet, and does a card reach
its decision as fast on a link that carries other traffic?

    python bench/bench_shoe_link.py [--idle-s 600] [--period 1.0] [--shoes 1] [--dir DIR]

* **Idle**: the real Application (the sim-baccarat profile, ``synchronous=FULL`` journal in a
  temp dir) with the simulated shoe on a pty, idle for ``--idle-s`` seconds of heartbeats every
  ``--period`` seconds. Counted: heartbeats the shoe sent, its resends, the ``$ACK``/``$NAK``
  the controller sent, the journal rows added. With ``--period`` below 1 s the shoe's 500 ms
  silence timer is scaled with it (``resend_after_s = period / 2``), so the ratio between the
  heartbeat period and the resend timer, which is what made revision 2's idle link loud, is
  the real one; the wall-clock time is what shrinks. The figure printed says which was run.
* **Latency**: ``$CARD`` last byte written on the pty -> the table's decision about it
  journaled (bench/bench_baccarat_table.py's measure, whole shoes dealt through coups), on an
  idle link (a heartbeat every second besides the cards) and on a busy link (a heartbeat every
  10 ms and, as often, a burst of line noise and a frame of another session: refused, NAKed,
  counted). Median and 99th percentile.

Prints figures; asserts nothing. bench/run runs a short version.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import select
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_baccarat_table import PROFILE, SID, PtyShoe, latency  # noqa: E402

from controller.app import Application  # noqa: E402
from controller.config.profile import load_profile  # noqa: E402
from controller.events import Shutdown  # noqa: E402
from drivers.shoe_protocol import Frame, FrameDecoder, encode  # noqa: E402

WAIT_S = 10.0
FOREIGN = "F0E1D2C3"


@dataclasses.dataclass
class IdleResult:
    seconds: float
    period_s: float
    heartbeats: int
    resends: int
    acks: int
    naks: int
    rows: int
    kinds: dict[str, int]  # the rows by kind


def idle(state_dir: Path, seconds: float, period_s: float) -> IdleResult:
    """The simulated shoe beating every ``period_s`` on an idle table for ``seconds``."""
    from drivers.sim.shoe import SimShoe

    sim = SimShoe(decks=8, seed=3, heartbeat_s=period_s, resend_after_s=min(0.5, period_s / 2))
    link = sim.create_pty(str(state_dir / "shoe"))
    base = load_profile(PROFILE)
    assert base.shoe is not None
    profile = dataclasses.replace(base, shoe=dataclasses.replace(base.shoe, port=link))
    app = Application(profile, state_dir / "state", console_port="none")
    app.start()
    loop = threading.Thread(target=app.run, daemon=True)
    loop.start()
    try:
        sim.start()
        deadline = time.monotonic() + WAIT_S
        while not sim.delivered() or app.journal.last(["shoe.session"]) is None:
            if time.monotonic() > deadline:  # the start's rows and the HELO's $ACK are not idle
                raise TimeoutError("no shoe session")
            time.sleep(0.01)
        time.sleep(2 * period_s)
        before = sim.status()
        replies = len(sim.received)
        rows = app.call(lambda: app.journal.last_seq, WAIT_S)
        t0 = time.monotonic()
        time.sleep(seconds)
        after = sim.status()
        got = list(sim.received)[replies:]
        first = rows
        rows = app.call(lambda: app.journal.last_seq, WAIT_S) - rows
        kinds: dict[str, int] = {}
        for e in app.call(lambda: list(app.journal.events(since_seq=first)), WAIT_S):
            kinds[e.kind] = kinds.get(e.kind, 0) + 1
        return IdleResult(
            seconds=time.monotonic() - t0,
            period_s=period_s,
            heartbeats=after.heartbeats - before.heartbeats,
            resends=after.resends - before.resends,
            acks=sum(f.type == "ACK" for f in got),
            naks=sum(f.type == "NAK" for f in got),
            rows=rows,
            kinds=kinds,
        )
    finally:
        app.post(Shutdown("bench"))
        loop.join(WAIT_S)
        app.close()
        sim.stop()


class LinkShoe(PtyShoe):
    """The bench shoe with traffic beside its cards: a heartbeat (``$HBT,LAST,SID``) every
    ``beat_s`` once its HELO is out, and with ``noise`` as often a burst of line noise and a
    frame of another session. Counts the controller's ``$ACK``s and ``$NAK``s."""

    def __init__(self, beat_s: float, noise: bool) -> None:
        self.acks = 0
        self.naks = 0
        self.beats = 0
        self._lock = threading.Lock()
        self._beat_s = beat_s
        self._noise = noise
        self._rng = random.Random(7)
        super().__init__()
        self._beater = threading.Thread(target=self._beat, daemon=True)
        self._beater.start()

    def send(self, ftype: str, *fields: str) -> int:
        with self._lock:
            return super().send(ftype, *fields)

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.master, view) :]

    def _beat(self) -> None:
        while not self._stop.wait(self._beat_s):
            with self._lock:
                if self.seq == 0:
                    continue  # no HELO yet: nothing to name
                self._write(encode("HBT", (self.seq - 1) % 10000, SID))
                self.beats += 1
                if self._noise:
                    junk = bytes(self._rng.choice(b"ABCDEF0123456789,*\x00\xff") for _ in range(60))
                    self._write(junk + b"\r\n" + encode("CARD", self.seq, FOREIGN, "AS"))

    def close(self) -> None:
        self._stop.set()
        self._beater.join(2.0)
        super().close()

    def _run(self) -> None:
        decoder = FrameDecoder()
        while not self._stop.is_set():
            if select.select([self.master], [], [], 0.05)[0]:
                try:
                    data = os.read(self.master, 4096)
                except OSError:
                    return
                for item in decoder.feed(data):
                    if isinstance(item, Frame):
                        self.acks += item.type == "ACK"
                        self.naks += item.type == "NAK"


def link_latency(
    shoes: int, state_dir: Path, beat_s: float, noise: bool
) -> tuple[list[float], LinkShoe]:
    shoe = LinkShoe(beat_s, noise)
    return latency(shoes, state_dir, shoe), shoe


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def print_idle(res: IdleResult) -> None:
    clock = (
        "real time, 1 Hz"
        if res.period_s >= 1.0
        else f"accelerated: a heartbeat every {res.period_s * 1000:.0f} ms,"
        f" the shoe's silence timer {min(0.5, res.period_s / 2) * 1000:.0f} ms"
    )
    print(
        f"idle shoe link, {res.seconds:.0f} s ({clock}): {res.heartbeats} heartbeats sent,"
        f" {res.resends} resends, {res.acks} $ACK and {res.naks} $NAK from the controller,"
        f" {res.rows} journal rows {res.kinds or ''}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--idle-s", type=float, default=600.0, help="idle seconds (default 600)")
    parser.add_argument("--period", type=float, default=1.0, help="heartbeat period (default 1 s)")
    parser.add_argument("--shoes", type=int, default=1, help="shoes dealt per latency run")
    parser.add_argument("--skip-idle", action="store_true")
    parser.add_argument("--skip-latency", action="store_true")
    parser.add_argument("--dir", default=None, help="parent directory of the temp state dirs")
    args = parser.parse_args(argv)
    if not args.skip_idle:
        with tempfile.TemporaryDirectory(prefix="bench-link-idle-", dir=args.dir) as tmp:
            print_idle(idle(Path(tmp), args.idle_s, args.period))
    if not args.skip_latency:
        for name, beat_s, noise in (("idle", 1.0, False), ("busy", 0.01, True)):
            with tempfile.TemporaryDirectory(prefix=f"bench-link-{name}-", dir=args.dir) as tmp:
                samples, shoe = link_latency(args.shoes, Path(tmp), beat_s, noise)
            print(
                f"$CARD last byte -> decision journaled, {name} link: median"
                f" {statistics.median(samples):.2f} ms, p99 {pct(samples, 0.99):.2f} ms,"
                f" max {max(samples):.2f} ms ({len(samples)} cards; {shoe.beats} heartbeats"
                f" besides, {shoe.acks} $ACK and {shoe.naks} $NAK came back)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
