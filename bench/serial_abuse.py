#!/usr/bin/env python3
"""Serial abuse: random bytes, truncated frames and valid frames interleaved on the shoe's
pseudo-terminal of the REAL controller process (issue 8 "Serial abuse").

    python bench/serial_abuse.py [--mb 10] [--seed S] [--dir DIR]

The controller runs ``sim-baccarat`` with its shoe port moved to a pty whose master this script
holds (no simulator in between): it sends ``$HELO``, then, until ``--mb`` megabytes are written,
a chunk of noise (random bytes of every value, truncated copies of valid frames, over-long
frames, frames with a wrong checksum, each chunk of random length) followed by the next valid
frame (``$HBT`` or ``$CARD``, SEQ counting up and wrapping at 9999). A reader thread drains the
controller's ``$ACK``/``$NAK`` replies. At the end it waits for the ``$ACK`` of the last frame and
checks:

* the process is alive and answers ``status`` and ``journal verify`` on its console;
* the journal's accepted frames (``shoe.frame``) are exactly the valid frames sent, in order,
  each once (none lost, none duplicated, none invented from noise);
* how many bad frames the controller refused (its ``shoe.refused`` rows, by reason) -- printed.

Exit status 1 if a check failed. tests/reliability/test_serial_abuse.py runs the same with 1 MB.
"""

from __future__ import annotations

import argparse
import os
import random
import select
import shutil
import sys
import tempfile
import threading
import time
import tty
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from drivers.shoe_protocol import FrameDecoder, encode  # noqa: E402
from tests.reliability.harness import (  # noqa: E402
    Controller,
    journal_rows,
    machine_info,
    write_profile,
)

CARDS = [r + s for r in "A23456789TJQK" for s in "SHDC"]
WAIT_S = 120.0


@dataclass
class AbuseResult:
    bytes_sent: int = 0
    valid_sent: int = 0
    noise_chunks: int = 0
    seconds: float = 0.0
    write_seconds: float = 0.0
    refused: Counter[str] = field(default_factory=Counter)
    accepted_ok: bool = False
    alive: bool = False
    verify_ok: bool = False
    problems: list[str] = field(default_factory=list)
    rss_kb: int = 0


class PtyShoeEnd:
    """The shoe's end of a pty: raw writes in, the controller's replies read by a thread."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.path = os.ttyname(self.slave)
        self.acks: list[int] = []
        self.naks = 0
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        decoder = FrameDecoder()
        while not self._stop.is_set():
            ready, _, _ = select.select([self.master], [], [], 0.1)
            if not ready:
                continue
            try:
                data = os.read(self.master, 65536)
            except OSError:
                time.sleep(0.05)
                continue
            for item in decoder.feed(data):
                kind = getattr(item, "type", None)
                with self._cond:
                    if kind == "ACK":
                        self.acks.append(item.seq)  # type: ignore[union-attr]
                        self._cond.notify_all()
                    elif kind == "NAK":
                        self.naks += 1

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            _, writable, _ = select.select([], [self.master], [], 5.0)
            if not writable:
                raise TimeoutError("the controller stopped reading the shoe port for 5 s")
            view = view[os.write(self.master, view[:4096]):]

    def wait_ack(self, seq: int, timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: bool(self.acks) and self.acks[-1] == seq,
                                       timeout)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2.0)
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass


def noise(rng: random.Random, seq: int) -> bytes:
    """One chunk of line noise: never a valid frame."""
    kind = rng.random()
    if kind < 0.45:          # random bytes of every value
        return rng.randbytes(rng.randint(1, 3000))
    if kind < 0.65:          # a valid frame cut short (no LF), then more noise
        frame = encode("CARD", rng.randrange(10000), rng.choice(CARDS))
        return frame[:rng.randint(1, len(frame) - 2)] + rng.randbytes(rng.randint(0, 40))
    if kind < 0.80:          # a well-formed frame with a wrong checksum
        frame = bytearray(encode("CARD", seq, rng.choice(CARDS)))
        frame[-4] = ord("0") if frame[-4] != ord("0") else ord("1")
        return bytes(frame)
    if kind < 0.90:          # an over-long frame
        return b"$CARD," + bytes(rng.choice(b"0123456789ABCDEF,") for _ in range(200)) + b"\r\n"
    # a truncated frame ending in CRLF
    frame = encode("HBT", rng.randrange(10000))
    return frame[:rng.randint(1, len(frame) - 3)] + b"\r\n"


def run_abuse(total_bytes: int, seed: int, work: Path) -> AbuseResult:
    rng = random.Random(seed)
    res = AbuseResult()
    shoe = PtyShoeEnd()
    state_dir = work / "state"
    profile = write_profile(work, "sim-baccarat", shoe_port=shoe.path)
    c = Controller(profile, state_dir)
    sent: list[tuple[int, str, str]] = []
    try:
        c.wait_ready()
        # HELO until acknowledged (pySerial flushes its input when it opens the port)
        deadline = time.monotonic() + 30
        while not shoe.wait_ack(0, 0.5):
            if time.monotonic() > deadline:
                raise TimeoutError("HELO never acknowledged")
            shoe.write(encode("HELO", 0, "ABUSE", "1.0"))
        sent.append((0, "HELO", ""))
        seq = 0
        t0 = time.monotonic()
        while res.bytes_sent < total_bytes:
            chunk = noise(rng, (seq + 1) % 10000)
            shoe.write(chunk)
            res.noise_chunks += 1
            res.bytes_sent += len(chunk)
            seq = (seq + 1) % 10000
            if rng.random() < 0.1:
                frame = encode("CARD", seq, rng.choice(CARDS))
                sent.append((seq, "CARD", frame.decode()))
            else:
                frame = encode("HBT", seq)
                sent.append((seq, "HBT", ""))
            shoe.write(frame)
            res.bytes_sent += len(frame)
            res.valid_sent += 1
        res.write_seconds = time.monotonic() - t0
        # a pty has no baud rate: the noise arrives far faster than a 9600-baud shoe could send
        # it, and every refusal is a synced journal row, so the loop works through a backlog
        wait = WAIT_S + 60 * total_bytes / 1e6
        if not shoe.wait_ack(seq, wait):
            res.problems.append(f"last frame {seq} not acknowledged within {wait:.0f} s "
                                f"(last ACK {shoe.acks[-1:]})")
        res.seconds = time.monotonic() - t0
        res.alive = c.proc.poll() is None
        if res.alive:
            res.rss_kb = c.rss_kb()
            res.verify_ok = c.ask("journal verify", timeout=WAIT_S).ok
            c.ask("status", timeout=WAIT_S)
        else:
            res.problems.append(f"the controller exited: {c.stderr_lines[-10:]}")
    finally:
        c.stop()
        shoe.close()
    rows = journal_rows(state_dir, kinds=["shoe.session", "shoe.frame", "shoe.refused"])
    got = [(int(r.data["seq"]), "HELO" if r.kind == "shoe.session" else r.data["type"])
           for r in rows if r.kind != "shoe.refused"]
    want = [(s, t) for s, t, _ in sent]
    res.accepted_ok = got == want
    if not res.accepted_ok:
        first = next((i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b),
                     min(len(got), len(want)))
        res.problems.append(f"accepted frames differ from the valid ones sent at #{first}: "
                            f"journal {got[first:first + 3]} sent {want[first:first + 3]} "
                            f"({len(got)} journaled, {len(want)} sent)")
    for r in rows:
        if r.kind == "shoe.refused":
            res.refused[str(r.data["reason"])] += 1
    return res


def print_result(res: AbuseResult, seed: int) -> None:
    print(f"serial abuse, seed {seed}: {res.bytes_sent / 1e6:.2f} MB written in "
          f"{res.write_seconds:.1f} s, all handled after {res.seconds:.1f} s "
          f"({res.noise_chunks} noise chunks, {res.valid_sent} valid frames)")
    print(f"  controller alive at the end: {'yes' if res.alive else 'NO'}; "
          f"RSS {res.rss_kb / 1024:.1f} MB; journal verify: {'ok' if res.verify_ok else 'FAILED'}")
    print(f"  every valid frame accepted exactly once, in order: "
          f"{'yes' if res.accepted_ok else 'NO'}")
    total = sum(res.refused.values())
    detail = ", ".join(f"{k} {v}" for k, v in res.refused.most_common())
    print(f"  bad frames refused by the controller (journal shoe.refused): {total} ({detail})")
    for p in res.problems:
        print(f"  problem: {p}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--dir", default=None)
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 31)
    work = Path(tempfile.mkdtemp(prefix="serial-abuse-", dir=args.dir))
    try:
        res = run_abuse(int(args.mb * 1_000_000), seed, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    m = machine_info()
    print(f"machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}, kernel {m['kernel']}")
    print_result(res, seed)
    ok = res.alive and res.accepted_ok and res.verify_ok and not res.problems
    print(f"result: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
