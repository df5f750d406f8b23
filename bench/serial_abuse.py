#!/usr/bin/env python3
"""Serial abuse: random bytes, truncated frames and valid frames interleaved on the shoe's
pseudo-terminal of the REAL controller process (issue 8 "Serial abuse").

    python bench/serial_abuse.py [--mb 10] [--seed S] [--dir DIR]

The controller runs ``sim-baccarat`` with its shoe port moved to a pty whose master this script
holds (no simulator in between): it sends ``$HELO``, then, until ``--mb`` megabytes are written,
a chunk of noise (random bytes of every value, truncated copies of valid frames, over-long
frames, frames with a wrong checksum, well-formed frames of a foreign session, frames whose SID
is not a session id: ``00000000``, lower case, too short; a revision 2 shoe's ``$HELO``; each
chunk of random length) followed by the next valid frame of its session: a ``$CARD`` (SEQ
counting up and wrapping at 9999; the last frame is one) or a heartbeat ``$HBT,LAST,SID``
naming the last card sent (shoe protocol revision 3: no SEQ of its own). A reader thread
drains the controller's ``$ACK``/``$NAK`` replies. At the end it waits for the ``$ACK`` of the
last frame and checks:

* the process is alive and answers ``status`` and ``journal verify`` on its console;
* the journal's position rows (``shoe.session``, ``shoe.frame``) are exactly the sequenced
  frames sent, in order, each once, with contiguous SEQs (none lost, none duplicated, none
  invented from noise, no heartbeat), and every ``$ACK`` names a SEQ of the session that the
  journal holds (nothing refused was ever acknowledged); no ``$ACK`` answers a heartbeat;
* how many bad frames the controller refused (its ``shoe.refused`` counted summary rows, by
  reason) -- printed, with the number of rows they took.

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

from drivers.shoe_protocol import REVISION, FrameDecoder, checksum, encode  # noqa: E402
from tests.reliability.harness import (  # noqa: E402
    Controller,
    journal_rows,
    machine_info,
    write_profile,
)

CARDS = [r + s for r in "A23456789TJQK" for s in "SHDC"]
WAIT_S = 120.0
SID = "A8B05E11"  # the abusing shoe's session
FOREIGN = "C0FFEE01"  # another session's frames, mixed into the noise
BAD_SIDS = ("00000000", "a8b05e11", "A8B05E1", "A8B05E110", "XYZ")


@dataclass
class AbuseResult:
    bytes_sent: int = 0
    valid_sent: int = 0
    heartbeats_sent: int = 0
    acks: int = 0
    noise_chunks: int = 0
    seconds: float = 0.0
    write_seconds: float = 0.0
    refused: Counter[str] = field(default_factory=Counter)
    refused_rows: int = 0
    acks_ok: bool = False
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
        self.acks: list[tuple[int, str]] = []
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
                        self.acks.append((item.seq, item.sid))  # type: ignore[union-attr]
                        self._cond.notify_all()
                    elif kind == "NAK":
                        self.naks += 1

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            _, writable, _ = select.select([], [self.master], [], 5.0)
            if not writable:
                raise TimeoutError("the controller stopped reading the shoe port for 5 s")
            view = view[os.write(self.master, view[:4096]) :]

    def wait_ack(self, seq: int, timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(
                lambda: bool(self.acks) and self.acks[-1] == (seq, SID), timeout
            )

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2.0)
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass


def noise(rng: random.Random, seq: int) -> bytes:
    """One chunk of line noise: never a valid frame of the session."""
    kind = rng.random()
    if kind < 0.40:  # random bytes of every value
        return rng.randbytes(rng.randint(1, 3000))
    if kind < 0.55:  # a valid frame cut short (no LF), then more noise
        frame = encode("CARD", rng.randrange(10000), SID, rng.choice(CARDS))
        return frame[: rng.randint(1, len(frame) - 2)] + rng.randbytes(rng.randint(0, 40))
    if kind < 0.65:  # a well-formed frame with a wrong checksum
        frame = bytearray(encode("CARD", seq, SID, rng.choice(CARDS)))
        frame[-4] = ord("0") if frame[-4] != ord("0") else ord("1")
        return bytes(frame)
    if kind < 0.75:  # a frame of another session, even at the expected SEQ
        return encode("CARD", rng.choice([seq, rng.randrange(10000)]), FOREIGN, rng.choice(CARDS))
    if kind < 0.85:  # a frame whose SID is not a session id (the checksum is right)
        body = f"CARD,{seq},{rng.choice(BAD_SIDS)},{rng.choice(CARDS)}".encode()
        return b"$%s*%02X\r\n" % (body, checksum(body))
    if kind < 0.89:  # an over-long frame
        return b"$CARD," + bytes(rng.choice(b"0123456789ABCDEF,") for _ in range(200)) + b"\r\n"
    if kind < 0.93:  # a revision 2 shoe's $HELO (no revision named): refused, never a session
        return encode("HELO", 0, rng.choice([SID, FOREIGN]), "OLD-SHOE", "1.4")
    # a truncated frame ending in CRLF
    frame = encode("HBT", rng.randrange(10000), SID)
    return frame[: rng.randint(1, len(frame) - 3)] + b"\r\n"


def run_abuse(total_bytes: int, seed: int, work: Path) -> AbuseResult:
    rng = random.Random(seed)
    res = AbuseResult()
    shoe = PtyShoeEnd()
    state_dir = work / "state"
    profile = write_profile(work, "sim-baccarat", shoe_port=shoe.path)
    c = Controller(profile, state_dir)
    sent: list[tuple[int, str, str]] = []
    helos = 0  # HELOs sent until the first $ACK
    try:
        c.wait_ready()
        # HELO until acknowledged (pySerial flushes its input when it opens the port)
        deadline = time.monotonic() + 30
        while not shoe.wait_ack(0, 0.5):
            helos += 1
            if time.monotonic() > deadline:
                raise TimeoutError("HELO never acknowledged")
            shoe.write(encode("HELO", 0, SID, "ABUSE", "2.0", REVISION))
        sent.append((0, "HELO", ""))
        seq = 0  # the last sequenced frame sent
        t0 = time.monotonic()
        while res.bytes_sent < total_bytes:
            chunk = noise(rng, (seq + 1) % 10000)
            shoe.write(chunk)
            res.noise_chunks += 1
            res.bytes_sent += len(chunk)
            last = res.bytes_sent + 100 >= total_bytes
            if last or rng.random() < 0.1:  # the last frame a card: journaled, acknowledged
                seq = (seq + 1) % 10000
                frame = encode("CARD", seq, SID, rng.choice(CARDS))
                sent.append((seq, "CARD", frame.decode()))
            else:
                frame = encode("HBT", seq, SID)  # LAST: the last card sent
                res.heartbeats_sent += 1
            shoe.write(frame)
            res.bytes_sent += len(frame)
            res.valid_sent += 1
        res.write_seconds = time.monotonic() - t0
        # a pty has no baud rate: the noise arrives far faster than a 115200-baud shoe could
        # send it; refusals are counted, not journaled one by one
        wait = WAIT_S + 60 * total_bytes / 1e6
        if not shoe.wait_ack(seq, wait):
            res.problems.append(
                f"last frame {seq} not acknowledged within {wait:.0f} s (last ACK {shoe.acks[-1:]})"
            )
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
    # Every sequenced frame is journaled one row each, heartbeats never (revision 3). So: the
    # journaled frames are the frames sent, in order, each once, and their SEQs contiguous.
    keys = [(s, t) for s, t, _ in sent]
    got: list[tuple[int, str]] = []
    in_order = True
    pos = 0  # SEQs wrap at 9999: each row must match a frame sent after the previous row's
    for r in rows:
        if r.kind == "shoe.refused":
            continue
        kind = "HELO" if r.kind == "shoe.session" else r.data["type"]
        key = (int(r.data["seq"]), kind)
        try:
            pos = keys.index(key, pos) + 1
        except ValueError:
            in_order = False
        if got and (key[0] - got[-1][0]) % 10000 != 1:
            res.problems.append(f"row {r.seq}: SEQ {key[0]} after {got[-1][0]}, not contiguous")
        got.append(key)
    want = [(s, t) for s, t, _ in sent]
    res.accepted_ok = got == want and in_order
    if got != want:
        first = next(
            (i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b),
            min(len(got), len(want)),
        )
        res.problems.append(
            f"accepted frames differ from the valid ones sent at #{first}: "
            f"journal {got[first : first + 3]} sent {want[first : first + 3]} "
            f"({len(got)} journaled, {len(want)} sent)"
        )
    elif not res.accepted_ok:
        res.problems.append("a journaled position is not a frame sent, or out of order")
    positions = {int(r.data["seq"]) for r in rows if r.kind != "shoe.refused"}
    wrong = [a for a in shoe.acks if a[1] != SID or a[0] not in positions]
    # one $ACK a journaled frame at most (cumulative), plus one for each HELO sent again before
    # the first $ACK came back (a repeat is acknowledged); none for a heartbeat
    most = len(want) + max(helos - 1, 0)
    res.acks_ok = bool(shoe.acks) and not wrong and len(shoe.acks) <= most
    if wrong:
        res.problems.append(f"{len(wrong)} $ACKs name no journaled frame: {wrong[:5]}")
    if len(shoe.acks) > most:
        res.problems.append(f"{len(shoe.acks)} $ACKs for {len(want)} frames journaled")
    res.acks = len(shoe.acks)
    for r in rows:
        if r.kind == "shoe.refused":
            res.refused_rows += 1
            res.refused[str(r.data["reason"])] += int(r.data.get("count", 1))
    return res


def print_result(res: AbuseResult, seed: int) -> None:
    print(
        f"serial abuse, seed {seed}: {res.bytes_sent / 1e6:.2f} MB written in "
        f"{res.write_seconds:.1f} s, all handled after {res.seconds:.1f} s "
        f"({res.noise_chunks} noise chunks, {res.valid_sent} valid frames, of them"
        f" {res.heartbeats_sent} heartbeats; {res.acks} $ACKs came back)"
    )
    print(
        f"  controller alive at the end: {'yes' if res.alive else 'NO'}; "
        f"RSS {res.rss_kb / 1024:.1f} MB; journal verify: {'ok' if res.verify_ok else 'FAILED'}"
    )
    print(
        f"  every valid frame accepted exactly once, in order: "
        f"{'yes' if res.accepted_ok else 'NO'}; every $ACK names a journaled frame: "
        f"{'yes' if res.acks_ok else 'NO'}"
    )
    total = sum(res.refused.values())
    detail = ", ".join(f"{k} {v}" for k, v in res.refused.most_common())
    print(
        f"  bad frames refused by the controller: {total} in {res.refused_rows} counted"
        f" shoe.refused rows ({detail})"
    )
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
    ok = res.alive and res.accepted_ok and res.acks_ok and res.verify_ok and not res.problems
    print(f"result: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
