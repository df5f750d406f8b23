#!/usr/bin/env python3
"""Replay raw RNG bytes into final outcomes, exactly as the table's certified RNG scales them.

Standard library only, and nothing of the table controller: a lab reads it and runs it by itself
(the lab package carries this file as ``rng/replay.py``; ``lab verify`` runs it with
``python3 -I -S``, so no installed package can take part)::

    python3 -I -S replay.py RAW LOW HIGH                 print the outcomes, one per line
    python3 -I -S replay.py RAW LOW HIGH --check FINAL   compare them with a capture of outcomes

The scaling (rejection sampling with a fixed byte use, never a modulo, so every outcome is equally
probable: N.J.A.C. 13:69E-1.28G(b)6): n = HIGH - LOW + 1 and k = the bit length of n - 1. Each
attempt takes the next ceil(k / 8) bytes, reads them as a big-endian integer and keeps its low k
bits; a value >= n is rejected and the next attempt takes the next bytes; otherwise the outcome is
LOW + value. The raw file holds every byte the draws consumed, rejected attempts included, so it
ends on the last byte of an accepted attempt.

Exit status: 0 printed, or every outcome matches; 1 an outcome differs (the first difference is
named) or the raw bytes end inside a draw; 2 usage, or a file that cannot be read.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import BinaryIO, TextIO

CHUNK = 1 << 16


class ReplayError(Exception):
    """The raw bytes cannot be replayed: they end inside a draw."""


def plan(low: int, high: int) -> tuple[int, int]:
    """(bytes per attempt, mask of the k low bits) for outcomes LOW..HIGH."""
    if high <= low:
        raise ValueError(f"need HIGH > LOW, got {low}..{high}")
    k = (high - low).bit_length()
    return (k + 7) // 8, (1 << k) - 1


def outcomes(raw: BinaryIO, low: int, high: int) -> Iterator[int]:
    """The outcomes the raw bytes give, read a chunk at a time (memory stays the same for any
    file size). Raises ReplayError when the bytes end inside a draw."""
    width, mask = plan(low, high)
    n = high - low + 1
    pending = b""
    rejected = False
    while True:
        chunk = raw.read(CHUNK)
        if not chunk:
            break
        data = pending + chunk
        usable = len(data) - len(data) % width
        for start in range(0, usable, width):
            value = int.from_bytes(data[start : start + width], "big") & mask
            rejected = value >= n
            if not rejected:
                yield low + value
        pending = data[usable:]
    if pending or rejected:
        raise ReplayError("the raw bytes end inside a draw (a partial or rejected attempt)")


def check(raw: BinaryIO, low: int, high: int, final: TextIO) -> tuple[int, str | None]:
    """(outcomes compared, the first difference or None)."""
    count = 0
    lines = iter(final)
    try:
        for value in outcomes(raw, low, high):
            count += 1
            line = next(lines, None)
            if line is None:
                return count - 1, (
                    f"the capture ends after {count - 1} outcomes; the raw bytes give more"
                )
            if line.strip() != str(value):
                return count, (
                    f"outcome {count}: the raw bytes give {value},"
                    f" the capture says {line.strip()!r}"
                )
    except ReplayError as exc:
        return count, str(exc)
    extra = next(lines, None)
    if extra is not None:
        return count, f"the capture has more than the {count} outcomes the raw bytes give"
    return count, None


def main(argv: list[str]) -> int:
    usage = "usage: replay.py RAW LOW HIGH [--check FINAL]"
    if len(argv) not in (3, 5) or (len(argv) == 5 and argv[3] != "--check"):
        print(usage, file=sys.stderr)
        return 2
    try:
        low, high = int(argv[1]), int(argv[2])
        plan(low, high)
    except ValueError as exc:
        print(f"{usage}: {exc}", file=sys.stderr)
        return 2
    try:
        with open(argv[0], "rb") as raw:
            if len(argv) == 3:
                out = sys.stdout
                try:
                    for value in outcomes(raw, low, high):
                        out.write(f"{value}\n")
                except ReplayError as exc:
                    print(f"replay: {exc}", file=sys.stderr)
                    return 1
                return 0
            with open(argv[4], encoding="ascii") as final:
                count, problem = check(raw, low, high, final)
    except (OSError, UnicodeDecodeError) as exc:
        print(f"replay: {exc}", file=sys.stderr)
        return 2
    if problem is not None:
        print(f"replay: {argv[0]} -> {argv[4]}: {problem}", file=sys.stderr)
        return 1
    print(f"replay: {count} outcomes of {low}-{high} from {argv[0]} match {argv[4]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
