"""The statistics a lab package reports for each capture, at the 99% level, read from the files.

N.J.A.C. 13:69E-1.28G(b)3 asks that a generator "pass variously recognized statistical tests such
as the "Chi-square" test, "Mono-bit" test, and the "Runs" test". For each capture:

- a raw capture (bytes before scaling): the frequency chi-square over the 256 byte values (255
  degrees of freedom), the serial-pair chi-square over non-overlapping byte pairs (65,536 cells,
  65,535 df), the mono-bit (frequency) test and the runs test over its bits, most significant bit
  of each byte first (NIST SP 800-22 rev. 1a, 2.1 and 2.3);
- a capture of final outcomes LOW..HIGH: the frequency chi-square (n - 1 df) and the serial-pair
  chi-square over non-overlapping pairs (n * n - 1 df) of the outcomes, the runs test over the
  outcomes (a run is a block of equal consecutive outcomes: for independent uniform outcomes each
  of the N - 1 neighbours differs with probability (n - 1) / n, independently, so the number of
  runs less one is Binomial(N - 1, (n - 1) / n)), and the mono-bit and runs tests over the bits of
  the raw bytes those draws consumed (what the outcomes were made from).

A test passes when its p-value is at least 0.01. Every test streams its file and keeps only
counts: memory does not grow with the capture. Standard library only (the chi-square p-value is
:func:`controller.rng.lab.chi2_sf`; the others use :func:`math.erfc`).
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TypedDict

from controller.rng.lab import SIGNIFICANCE, chi_square

__all__ = [
    "TestResult",
    "raw_capture_tests",
    "final_capture_tests",
    "bit_tests",
    "monobit_test",
    "runs_test",
    "outcome_tests",
    "report_lines",
]

CHUNK: Final = 1 << 16
_POPCOUNT: Final = tuple(bin(v).count("1") for v in range(256))


class TestRecord(TypedDict):
    """A test's result as ``rng/statistics.json`` holds it."""

    capture: str
    test: str
    statistic: float
    df: int | None
    p_value: float
    samples: int
    passed: bool
    note: str


@dataclass(frozen=True)
class TestResult:
    """One statistical test over one capture file."""

    capture: str
    test: str
    statistic: float
    df: int | None
    p_value: float
    samples: int
    note: str = ""
    significance: float = SIGNIFICANCE

    @property
    def passed(self) -> bool:
        return self.p_value >= self.significance

    def as_dict(self) -> TestRecord:
        return {
            "capture": self.capture,
            "test": self.test,
            "statistic": self.statistic,
            "df": self.df,
            "p_value": self.p_value,
            "samples": self.samples,
            "passed": self.passed,
            "note": self.note,
        }

    def line(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        df = f", df {self.df}" if self.df is not None else ""
        note = f" [{self.note}]" if self.note else ""
        return (
            f"{self.capture}: {self.test}: statistic {self.statistic:.4f}{df},"
            f" p = {self.p_value:.4f} -> {verdict} at 99% ({self.samples:,} samples){note}"
        )


def _chunks(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            yield chunk


@dataclass
class _Bits:
    """Ones and transitions between neighbouring bits, most significant bit of a byte first."""

    ones: int = 0
    bits: int = 0
    transitions: int = 0
    last: int | None = None

    def feed(self, chunk: bytes, counts: Counter[int]) -> None:
        counts.update(chunk)
        width = 8 * len(chunk)
        x = int.from_bytes(chunk, "big")
        self.transitions += ((x ^ (x >> 1)) & ((1 << (width - 1)) - 1)).bit_count()
        if self.last is not None and self.last != chunk[0] >> 7:
            self.transitions += 1
        self.last = chunk[-1] & 1
        self.bits += width


def bit_tests(path: Path, name: str) -> list[TestResult]:
    """SP 800-22 2.1 (mono-bit) and 2.3 (runs) over the bits of a file."""
    counts: Counter[int] = Counter()
    bits = _Bits()
    for chunk in _chunks(path):
        bits.feed(chunk, counts)
    bits.ones = sum(_POPCOUNT[v] * c for v, c in counts.items())
    return _monobit_and_runs(name, bits)


def _monobit_and_runs(name: str, bits: _Bits) -> list[TestResult]:
    if bits.bits < 2:
        raise ValueError(f"{name}: too few bits for the mono-bit and runs tests ({bits.bits})")
    return [
        monobit_test(name, bits.ones, bits.bits),
        runs_test(name, bits.ones, bits.transitions, bits.bits),
    ]


def monobit_test(name: str, ones: int, n: int) -> TestResult:
    """SP 800-22 2.1: S = (ones) - (zeros); s_obs = |S| / sqrt(n); p = erfc(s_obs / sqrt(2))."""
    s_obs = abs(2 * ones - n) / math.sqrt(n)
    return TestResult(
        name, "mono-bit (SP 800-22 2.1)", s_obs, None, math.erfc(s_obs / math.sqrt(2)), n
    )


def runs_test(name: str, ones: int, transitions: int, n: int) -> TestResult:
    """SP 800-22 2.3: V = transitions + 1 runs; p = erfc(|V - 2 n pi (1 - pi)| / (2 sqrt(2n) pi
    (1 - pi))), after the prerequisite |pi - 1/2| < 2 / sqrt(n) (else p = 0: not random)."""
    pi = ones / n
    runs = transitions + 1
    if abs(pi - 0.5) >= 2 / math.sqrt(n):
        return TestResult(
            name,
            "runs (SP 800-22 2.3)",
            float(runs),
            None,
            0.0,
            n,
            "the proportion of ones fails the test's prerequisite |pi - 1/2| < 2/sqrt(n)",
        )
    spread = 2 * math.sqrt(2 * n) * pi * (1 - pi)
    p = math.erfc(abs(runs - 2 * n * pi * (1 - pi)) / spread)
    return TestResult(name, "runs (SP 800-22 2.3)", float(runs), None, p, n)


def raw_capture_tests(path: Path, name: str) -> list[TestResult]:
    """Frequency and serial-pair chi-square over the bytes, then mono-bit and runs over the bits."""
    counts: Counter[int] = Counter()
    pairs: Counter[int] = Counter()
    bits = _Bits()
    carry = b""
    for chunk in _chunks(path):
        bits.feed(chunk, counts)
        data = carry + chunk
        even = len(data) - len(data) % 2
        cells = array("H")
        cells.frombytes(data[:even])
        pairs.update(cells)  # a cell per (first, second) byte pair, in the machine's order
        carry = data[even:]
    total = sum(counts.values())
    if total < 2:
        raise ValueError(f"{name}: too few bytes for the tests ({total})")
    bits.ones = sum(_POPCOUNT[v] * c for v, c in counts.items())
    results = [
        _chi(name, "frequency chi-square (256 byte values)", [counts[v] for v in range(256)]),
        _chi(
            name,
            "serial pairs chi-square (65,536 byte pairs)",
            [pairs[v] for v in range(1 << 16)],
        ),
    ]
    return results + _monobit_and_runs(name, bits)


def _chi(name: str, test: str, counts: list[int]) -> TestResult:
    result = chi_square(test, counts)
    note = ""
    if result.expected_per_cell < 5:
        note = (
            f"{result.expected_per_cell:.2f} expected per cell, fewer than 5: the chi-square"
            " approximation is unreliable (capture more)"
        )
    return TestResult(name, test, result.statistic, result.df, result.p_value, result.samples, note)


def _outcomes(path: Path, low: int, high: int) -> Iterator[int]:
    with open(path, encoding="ascii") as fh:
        for number, line in enumerate(fh, start=1):
            text = line.strip()
            if not text.isdigit() or not low <= int(text) <= high:
                raise ValueError(
                    f"{path.name} line {number}: {text[:20]!r} is not an outcome {low}-{high}"
                )
            yield int(text)


def outcome_tests(path: Path, name: str, low: int, high: int) -> list[TestResult]:
    """Frequency and serial-pair chi-square and the runs of equal outcomes, over a file of
    outcomes LOW..HIGH, one per line."""
    n = high - low + 1
    counts = [0] * n
    pairs = [0] * (n * n)
    previous: int | None = None
    first_of_pair: int | None = None
    changes = 0
    total = 0
    for value in _outcomes(path, low, high):
        index = value - low
        counts[index] += 1
        total += 1
        if previous is not None and value != previous:
            changes += 1
        previous = value
        if first_of_pair is None:
            first_of_pair = index
        else:
            pairs[first_of_pair * n + index] += 1
            first_of_pair = None
    if total < 2:
        raise ValueError(f"{name}: too few outcomes for the tests ({total})")
    q = (n - 1) / n
    trials = total - 1
    z = (changes - trials * q) / math.sqrt(trials * q * (1 - q))
    runs = TestResult(
        name,
        f"runs of equal outcomes ({changes + 1:,} runs; {1 + trials * q:,.1f} expected)",
        z,
        None,
        math.erfc(abs(z) / math.sqrt(2)),
        total,
    )
    return [
        _chi(name, f"frequency chi-square ({n} outcomes)", counts),
        _chi(name, f"serial pairs chi-square ({n * n} pairs)", pairs),
        runs,
    ]


def final_capture_tests(
    final: Path, raw: Path, name: str, raw_name: str, low: int, high: int
) -> list[TestResult]:
    """The outcome tests over ``final`` and the bit tests over the raw bytes it was made from."""
    return outcome_tests(final, name, low, high) + bit_tests(raw, raw_name)


def report_lines(results: Iterable[TestResult]) -> list[str]:
    """One line per test and a summary: how many pass, and how many failures chance explains."""
    listed = list(results)
    lines = [r.line() for r in listed]
    failed = [r for r in listed if not r.passed]
    expected = len(listed) * SIGNIFICANCE
    lines += [
        "",
        f"{len(listed) - len(failed)} of {len(listed)} tests pass at 99% (p >= 0.01).",
        f"A perfect generator fails each test with probability 0.01: about {expected:.2f} of"
        f" {len(listed)} tests are expected to fail by chance alone, so a single failure is not"
        " by itself a finding; the same test failing again on a fresh capture would be.",
    ]
    return lines
