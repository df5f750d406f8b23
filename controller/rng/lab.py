"""Tools certification labs ask for: captures and a statistical check of the certified RNG.

- capture N raw bytes, health-tested, before any scaling (a binary file of exactly N bytes);
- capture N final outcomes exactly as the table shows them (``1``..``8``, one per line), and
  optionally the raw bytes those draws consumed, so the lab can replay raw into final
  (:func:`controller.rng.certified.outcomes_from_raw`);
- a statistical check over N draws: the frequency chi-square (7 degrees of freedom for 1-8) and the
  serial-pair chi-square over non-overlapping pairs (8 x 8 cells, 63 degrees of freedom), each with
  its statistic, p-value and pass/fail at 99% (fails when p < 0.01).

p-values come from the standard library only: the chi-square survival function is the regularized
upper incomplete gamma function Q(df/2, x/2), by its series or its continued fraction.

Command line (``python -m controller.rng.lab``)::

    capture raw N FILE
    capture final N FILE [--raw-out RAWFILE] [--range LOW-HIGH]
    test N
    check FILE            chi-square over a file of final outcomes
    replay RAWFILE        print the outcomes raw bytes give
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from controller.rng.certified import CertifiedRng, RngError, outcomes_from_raw

__all__ = [
    "SIGNIFICANCE",
    "ChiSquareResult",
    "StatisticalCheck",
    "chi_square",
    "regularized_gamma_q",
    "chi2_sf",
    "frequency_chi_square",
    "serial_pair_chi_square",
    "check_outcomes",
    "run_statistical_check",
    "capture_raw",
    "capture_final",
    "main",
]

SIGNIFICANCE = 0.01
"""Pass/fail at 99%: a test fails when its p-value is below 0.01."""

_EPS = 1e-15
_MAX_ITERATIONS = 100_000
#: Bytes per read of a raw capture: the RNG's lock is held for one read, so the table's draw never
#: waits longer than this many bytes of the slowest monitored source (a VM's virtio-rng gives a
#: few kB/s: about 0.1 s).
_CAPTURE_CHUNK = 256
#: Draws between two progress reports.
_PROGRESS_EVERY = 1000
Progress = Callable[[int, int], None]
"""``progress(done, total)``: how far a long lab job is (the console reports it)."""


# -- p-values -----------------------------------------------------------------------------------


def regularized_gamma_q(a: float, x: float) -> float:
    """Q(a, x) = Gamma(a, x) / Gamma(a), the regularized upper incomplete gamma function."""
    if a <= 0:
        raise ValueError(f"a must be > 0, got {a}")
    if x < 0:
        raise ValueError(f"x must be >= 0, got {x}")
    if x == 0:
        return 1.0
    log_prefix = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1:
        # Series for the lower function P(a, x); Q is not small here, so 1 - P loses nothing.
        term = total = 1.0 / a
        denominator = a
        for _ in range(_MAX_ITERATIONS):
            denominator += 1
            term *= x / denominator
            total += term
            if abs(term) < abs(total) * _EPS:
                return max(0.0, 1.0 - total * math.exp(log_prefix))
        raise ArithmeticError(f"gamma series did not converge for a={a}, x={x}")
    # Continued fraction for Q(a, x) (modified Lentz), accurate far into the tail.
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    fraction = d
    for i in range(1, _MAX_ITERATIONS):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        fraction *= delta
        if abs(delta - 1) < _EPS:
            return math.exp(log_prefix) * fraction
    raise ArithmeticError(f"gamma continued fraction did not converge for a={a}, x={x}")


def chi2_sf(statistic: float, df: int) -> float:
    """P(chi-square with ``df`` degrees of freedom >= ``statistic``): the test's p-value."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    return regularized_gamma_q(df / 2, max(statistic, 0.0) / 2)


# -- tests --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChiSquareResult:
    name: str
    statistic: float
    df: int
    p_value: float
    samples: int
    expected_per_cell: float
    significance: float = SIGNIFICANCE

    @property
    def passed(self) -> bool:
        return self.p_value >= self.significance

    def format(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        line = (
            f"{self.name}: chi2 = {self.statistic:.3f}, df = {self.df}, "
            f"p = {self.p_value:.4f} -> {verdict} at {1 - self.significance:.0%} "
            f"({self.samples} observations, {self.expected_per_cell:.1f} expected per cell)"
        )
        if self.expected_per_cell < 5:
            line += " [fewer than 5 expected per cell: the chi-square approximation is unreliable]"
        return line


@dataclass(frozen=True)
class StatisticalCheck:
    low: int
    high: int
    draws: int
    counts: tuple[int, ...]
    frequency: ChiSquareResult
    serial: ChiSquareResult

    @property
    def passed(self) -> bool:
        return self.frequency.passed and self.serial.passed

    def format_report(self) -> str:
        counts = ", ".join(f"{self.low + i}: {count}" for i, count in enumerate(self.counts))
        return "\n".join(
            [
                f"RNG statistical check: {self.draws} draws of {self.low}-{self.high}",
                f"counts: {counts}",
                self.frequency.format(),
                self.serial.format(),
                f"overall: {'PASS' if self.passed else 'FAIL'}",
            ]
        )


def chi_square(
    name: str, counts: Sequence[int], significance: float = SIGNIFICANCE
) -> ChiSquareResult:
    """Goodness of fit of ``counts`` to equal cells: ``len(counts) - 1`` degrees of freedom.
    Counts are all a streaming test keeps, so a capture of any size is checked in fixed memory."""
    total = sum(counts)
    if total == 0:
        raise ValueError(f"{name}: no samples")
    expected = total / len(counts)
    statistic = sum((count - expected) ** 2 for count in counts) / expected
    df = len(counts) - 1
    return ChiSquareResult(
        name, statistic, df, chi2_sf(statistic, df), total, expected, significance
    )


def _validated(outcomes: Sequence[int], low: int, high: int) -> None:
    if high <= low:
        raise ValueError(f"need at least two outcomes in the range, got {low}..{high}")
    for index, outcome in enumerate(outcomes):
        if not low <= outcome <= high:
            raise ValueError(f"outcome #{index + 1} is {outcome}, outside {low}..{high}")


def frequency_chi_square(
    outcomes: Sequence[int], low: int = 1, high: int = 8, significance: float = SIGNIFICANCE
) -> ChiSquareResult:
    """Goodness of fit of the outcome counts to uniform: ``high - low`` degrees of freedom."""
    _validated(outcomes, low, high)
    counts = [0] * (high - low + 1)
    for outcome in outcomes:
        counts[outcome - low] += 1
    return chi_square("frequency", counts, significance)


def serial_pair_chi_square(
    outcomes: Sequence[int], low: int = 1, high: int = 8, significance: float = SIGNIFICANCE
) -> ChiSquareResult:
    """Counts of non-overlapping pairs (1st, 2nd), (3rd, 4th), ... against uniform over n x n
    cells: ``n * n - 1`` degrees of freedom (63 for 1-8). An odd last outcome is left out."""
    _validated(outcomes, low, high)
    n = high - low + 1
    counts = [0] * (n * n)
    for i in range(0, len(outcomes) - 1, 2):
        counts[(outcomes[i] - low) * n + (outcomes[i + 1] - low)] += 1
    return chi_square("serial pairs", counts, significance)


def check_outcomes(
    outcomes: Sequence[int], low: int = 1, high: int = 8, significance: float = SIGNIFICANCE
) -> StatisticalCheck:
    """Both chi-square tests over a sequence of outcomes."""
    frequency = frequency_chi_square(outcomes, low, high, significance)
    counts = [0] * (high - low + 1)
    for outcome in outcomes:
        counts[outcome - low] += 1
    return StatisticalCheck(
        low=low,
        high=high,
        draws=len(outcomes),
        counts=tuple(counts),
        frequency=frequency,
        serial=serial_pair_chi_square(outcomes, low, high, significance),
    )


def run_statistical_check(
    rng: CertifiedRng,
    draws: int,
    low: int = 1,
    high: int = 8,
    significance: float = SIGNIFICANCE,
    progress: Progress | None = None,
) -> StatisticalCheck:
    """Draw ``draws`` outcomes from ``rng`` (health tests on, as at the table) and check them.
    Each draw takes the RNG's lock on its own, so the table's draw never waits behind this."""
    if draws < 2:
        raise ValueError(f"the serial test needs at least 2 draws, got {draws}")
    outcomes = []
    for i in range(draws):
        outcomes.append(rng.draw(low, high))
        if progress is not None and (i + 1) % _PROGRESS_EVERY == 0:
            progress(i + 1, draws)
    return check_outcomes(outcomes, low, high, significance)


# -- captures -----------------------------------------------------------------------------------


def capture_raw(
    rng: CertifiedRng, count: int, path: Path | str, progress: Progress | None = None
) -> None:
    """Write ``count`` health-tested raw source bytes, before any scaling, to ``path``."""
    if count < 0:
        raise ValueError(f"byte count must be >= 0, got {count}")
    with open(path, "wb") as out:
        remaining = count
        while remaining:
            chunk = min(remaining, _CAPTURE_CHUNK)
            out.write(rng.read_raw(chunk))
            remaining -= chunk
            if progress is not None and (
                remaining == 0 or (count - remaining) % (_CAPTURE_CHUNK * 16) == 0
            ):
                progress(count - remaining, count)


def capture_final(
    rng: CertifiedRng,
    count: int,
    path: Path | str,
    low: int = 1,
    high: int = 8,
    raw_path: Path | str | None = None,
    progress: Progress | None = None,
) -> None:
    """Write ``count`` outcomes as the table shows them, one per line, to ``path``; with
    ``raw_path``, also every raw byte those draws consumed (rejected attempts included). Both are
    written as the draws come (buffered files): memory does not grow with ``count``."""
    if count < 0:
        raise ValueError(f"draw count must be >= 0, got {count}")
    with contextlib.ExitStack() as files:
        out = files.enter_context(open(path, "w", encoding="ascii", newline="\n"))
        raw = files.enter_context(open(raw_path, "wb")) if raw_path is not None else None
        for i in range(count):
            value, consumed = rng.draw_with_raw(low, high)
            out.write(f"{value}\n")
            if raw is not None:
                raw.write(consumed)
            if progress is not None and (i + 1) % _PROGRESS_EVERY == 0:
                progress(i + 1, count)


def _read_outcomes(path: Path | str) -> list[int]:
    return [int(line) for line in Path(path).read_text(encoding="ascii").split()]


# -- command line -------------------------------------------------------------------------------


def _range(text: str) -> tuple[int, int]:
    """``LOW-HIGH`` on the command line (``1-6``), with HIGH > LOW."""
    low, sep, high = text.partition("-")
    if not (sep and low.isdigit() and high.isdigit() and int(high) > int(low)):
        raise argparse.ArgumentTypeError(f"expected LOW-HIGH with HIGH > LOW, got {text!r}")
    return int(low), int(high)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m controller.rng.lab", description="Certified RNG lab tools"
    )
    hw = parser.add_mutually_exclusive_group()
    hw.add_argument("--hwrng", metavar="PATH", help="hardware generator to health-test too")
    hw.add_argument("--no-hwrng", action="store_true", help="do not health-test /dev/hwrng")
    commands = parser.add_subparsers(dest="command", required=True)
    capture = commands.add_parser("capture", help="capture raw bytes or final outcomes")
    capture.add_argument("kind", choices=["raw", "final"])
    capture.add_argument("count", type=int, metavar="N")
    capture.add_argument("file")
    capture.add_argument("--raw-out", metavar="RAWFILE", help="final: also the raw bytes consumed")
    capture.add_argument(
        "--range",
        type=_range,
        default=(1, 8),
        metavar="LOW-HIGH",
        help="final: outcomes LOW through HIGH (default 1-8, the pai gow number)",
    )
    test = commands.add_parser("test", help="chi-square tests over N fresh draws")
    test.add_argument("count", type=int, metavar="N")
    check = commands.add_parser("check", help="chi-square tests over a file of final outcomes")
    check.add_argument("file")
    replay = commands.add_parser("replay", help="print the outcomes a raw capture gives")
    replay.add_argument("file")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Exit status: 0 done or passed, 1 a statistical test failed, 3 RNG fault or I/O error."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "replay":
            print("\n".join(str(v) for v in outcomes_from_raw(Path(args.file).read_bytes())))
            return 0
        if args.command == "check":
            result = check_outcomes(_read_outcomes(args.file))
            print(result.format_report())
            return 0 if result.passed else 1
        rng = (
            CertifiedRng(hwrng_path=None)
            if args.no_hwrng
            else (CertifiedRng(hwrng_path=args.hwrng) if args.hwrng else CertifiedRng())
        )
        if args.command == "test":
            result = run_statistical_check(rng, args.count)
            print(result.format_report())
            return 0 if result.passed else 1
        if args.kind == "raw":
            capture_raw(rng, args.count, args.file)
        else:
            low, high = args.range
            capture_final(rng, args.count, args.file, low, high, raw_path=args.raw_out)
        print(
            f"captured {args.count} {args.kind} {'bytes' if args.kind == 'raw' else 'outcomes'}"
            f" to {args.file}"
        )
        return 0
    except (RngError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
