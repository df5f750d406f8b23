"""Shoe driver figures: frames decoded per second, and $CARD-on-pty to event-on-queue latency.

Prints figures only (no assertions). The controller's journaling adds to the latency later;
the issue's target for the whole path (frame to journaled decision) is under 5 ms.
"""

from __future__ import annotations

import argparse
import os
import queue
import statistics
import time
import tty

from drivers.serial_shoe import SerialShoe
from drivers.shoe_events import ShoeFrameAccepted, ShoeLinkChanged, ShoeSession
from drivers.shoe_protocol import REVISION, SEQ_MOD, FrameDecoder, encode

SID = "BE4C0001"


def bench_decode(frames: int) -> float:
    """Frames per second through FrameDecoder.feed, fed in 4 KiB chunks."""
    cards = ["QH", "TD", "AS", "9C"]
    data = b"".join(
        encode("CARD", i % SEQ_MOD, SID, cards[i % 4]) if i % 5 else encode("HBT", i % SEQ_MOD, SID)
        for i in range(frames)
    )
    decoder = FrameDecoder()
    start = time.perf_counter()
    count = 0
    for pos in range(0, len(data), 4096):
        count += len(decoder.feed(data[pos : pos + 4096]))
    elapsed = time.perf_counter() - start
    assert count == frames, (count, frames)  # a broken decoder must not print a figure
    return frames / elapsed


def _drain(fd: int) -> None:
    while True:
        try:
            if not os.read(fd, 4096):
                return
        except BlockingIOError:
            return


def bench_latency(samples: int) -> list[float]:
    """Milliseconds from the last byte of a $CARD written on a pty to the event on the queue."""
    master, slave = os.openpty()
    tty.setraw(slave)
    os.set_blocking(master, False)
    events: queue.SimpleQueue[object] = queue.SimpleQueue()
    shoe = SerialShoe(os.ttyname(slave), events.put)
    shoe.start()
    try:
        # pySerial flushes input on open: speak only once the port is open
        while not isinstance(event := events.get(timeout=5), ShoeLinkChanged) or not event.up:
            pass
        os.write(master, encode("HELO", 0, SID, "BENCH", "2.0", REVISION))
        while not isinstance(event := events.get(timeout=5), ShoeSession):
            pass
        shoe.acknowledge(SID, event.seq)
        out = []
        for seq in range(1, samples + 1):
            frame = encode("CARD", seq % SEQ_MOD, SID, "QH")
            os.write(master, frame)
            written = time.perf_counter_ns()
            while not isinstance(event := events.get(timeout=5), ShoeFrameAccepted):
                pass
            arrived = time.perf_counter_ns()
            out.append((arrived - written) / 1e6)
            shoe.acknowledge(SID, event.seq)
            _drain(master)  # the driver's ACKs, so the pty buffer never fills
        return out
    finally:
        shoe.stop(2.0)
        os.close(master)
        os.close(slave)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer frames and samples")
    args = parser.parse_args(argv)
    frames, samples = (20_000, 200) if args.quick else (200_000, 2000)
    rate = bench_decode(frames)
    print(f"decode: {rate:,.0f} frames/s ({frames} frames, pure FrameDecoder)")
    lat = sorted(bench_latency(samples))
    p99 = lat[min(len(lat) - 1, int(0.99 * len(lat)))]
    print(
        f"pty $CARD -> ShoeFrameAccepted on queue: median {statistics.median(lat):.3f} ms, "
        f"p99 {p99:.3f} ms, max {lat[-1]:.3f} ms ({samples} samples)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
