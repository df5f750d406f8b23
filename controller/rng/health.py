"""Health tests of the RNG's raw bytes: NIST SP 800-90B section 4.4.

Two continuous tests run on every byte the certified RNG takes from a source (the kernel's CSPRNG
and, where the board has one, the hardware generator), and a start-up test runs both over at least
1,024 consecutive samples before the first draw (section 4.3):

- the repetition count test (RCT, 4.4.1): a run of ``C`` identical samples fails, with
  ``C = 1 + ceil(-log2(alpha) / H)``;
- the adaptive proportion test (APT, 4.4.2): in each window of ``W = 512`` samples (non-binary
  samples), the first sample is the reference and the window fails once the reference value has
  occurred ``C`` times. ``C`` is the smallest count whose probability under a source of assessed
  min-entropy ``H`` is at most ``alpha``, computed here with exact binomial arithmetic
  (``fractions``), never a copied constant.

The APT cutoff counts the reference sample itself, which always matches: the count is
``1 + Binomial(W - 1, 2**-H)``, so ``C = 2 + (the (1 - alpha) quantile of Binomial(W - 1, p))``.
The formula printed in SP 800-90B (``C = 1 + CRITBINOM(W, 2**-H, 1 - alpha)``) treats all ``W``
samples as trials and so can let the false-alarm probability exceed ``alpha``; the exact form used
here never does, and is one or two counts higher. :func:`apt_cutoff_sp800_90b` reproduces the
printed formula (and the standard's Table 2) for comparison only.

``python -m controller.rng.health`` prints the cutoffs and the false-alarm arithmetic that
``docs/rng.md`` quotes (a test keeps the two identical).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

__all__ = [
    "APT_WINDOW",
    "STARTUP_SAMPLES",
    "BYTES_PER_YEAR_BOUND",
    "HealthParams",
    "HealthTestFailure",
    "HealthMonitor",
    "OS_SOURCE_PARAMS",
    "HWRNG_PARAMS",
    "rct_cutoff",
    "apt_cutoff",
    "apt_cutoff_sp800_90b",
    "apt_false_alarm_per_window",
    "rct_false_alarm_per_sample",
    "false_alarm_report",
]

APT_WINDOW = 512
"""SP 800-90B 4.4.2: the window for samples that are not binary (ours are bytes)."""

STARTUP_SAMPLES = 1024
"""SP 800-90B 4.3: the start-up test covers at least 1,024 consecutive samples (two APT windows)."""

BYTES_PER_YEAR_BOUND = 10**14
"""Worst case bytes tested per monitor per year used in the false-alarm arithmetic: 3.2 MB/s
sustained for a whole year, far above what the controller can draw (see ``bench/bench_rng.py``)."""


@dataclass(frozen=True)
class HealthParams:
    """What the cutoffs are derived from: assessed min-entropy and false-positive probability.

    ``min_entropy`` is H in bits per 8-bit sample (0 < H <= 8); ``alpha_log2`` is -log2(alpha), so
    56 means alpha = 2**-56 per sample (RCT) and per window (APT).
    """

    min_entropy: Fraction
    alpha_log2: int
    window: int = APT_WINDOW

    def __post_init__(self) -> None:
        if not 0 < self.min_entropy <= 8:
            raise ValueError(f"min-entropy must be in (0, 8] bits per byte, got {self.min_entropy}")
        if self.alpha_log2 < 1:
            raise ValueError(f"alpha_log2 must be >= 1, got {self.alpha_log2}")
        if self.window < 2:
            raise ValueError(f"APT window must be >= 2, got {self.window}")

    @property
    def alpha(self) -> Fraction:
        return Fraction(1, 2**self.alpha_log2)

    @property
    def p_max(self) -> Fraction:
        """2**-H, the largest probability of any byte value a source of min-entropy H may have."""
        return _p_max(self.min_entropy)

    @property
    def rct_cutoff(self) -> int:
        return rct_cutoff(self.min_entropy, self.alpha_log2)

    @property
    def apt_cutoff(self) -> int:
        return apt_cutoff(self.window, self.min_entropy, self.alpha_log2)


# The kernel's CSPRNG output (ChaCha20 DRBG) is computationally indistinguishable from uniform
# bytes: full entropy, H = 8. Tests on it can only catch gross failures of the path (a stuck,
# zero-filled or short-cycling source), which is what they are for.
OS_SOURCE_PARAMS = HealthParams(min_entropy=Fraction(8), alpha_log2=56)

# No entropy assessment of the Raspberry Pi's hardware generator is published, so its raw bytes
# are assessed conservatively at 2 bits per byte: any working generator stays far from a false
# alarm while a stuck one still fails within the start-up test. A lab's SP 800-90B assessment of
# the board's noise source replaces this figure (``CertifiedRng(hwrng_health=...)``).
HWRNG_PARAMS = HealthParams(min_entropy=Fraction(2), alpha_log2=56)


def _p_max(min_entropy: Fraction) -> Fraction:
    if min_entropy.denominator == 1:
        return Fraction(1, 2 ** int(min_entropy))
    # A non-integer H has an irrational 2**-H; the nearest binary float is exact as a Fraction and
    # errs by less than one part in 2**52, far below what the cutoffs can resolve.
    return Fraction(2.0 ** -float(min_entropy))


def rct_cutoff(min_entropy: Fraction, alpha_log2: int) -> int:
    """SP 800-90B 4.4.1: ``C = 1 + ceil(-log2(alpha) / H)``, in exact rational arithmetic."""
    return 1 + math.ceil(Fraction(alpha_log2) / Fraction(min_entropy))


@lru_cache(maxsize=32)
def _binomial_upper_tails(trials: int, p: Fraction) -> tuple[tuple[int, ...], int]:
    """``P(X >= j) = tails[j] / denominator`` for X ~ Binomial(trials, p), j = 0 .. trials + 1,
    exactly: with p = a/b, ``P(X = i) = C(n, i) a^i (b-a)^(n-i) / b^n``, so every tail is an
    integer over ``b^n`` (integers, not Fractions: no gcd per term; this runs at start-up)."""
    a, b = p.numerator, p.denominator
    c = b - a
    tails = [0] * (trials + 2)
    term = a**trials  # P(X = n) * b^n; each lower term follows from the one above exactly
    for j in range(trials, -1, -1):
        tails[j] = tails[j + 1] + term
        if j:
            term = term * j * c // ((trials - j + 1) * a) if a else 0
    if not a:  # p = 0: X = 0 always
        tails = [c**trials] + [0] * (trials + 1)
    return tuple(tails), b**trials


def _tail_at_most(tails: tuple[tuple[int, ...], int], j: int, alpha: Fraction) -> bool:
    numerators, denominator = tails
    return numerators[j] * alpha.denominator <= alpha.numerator * denominator


def apt_false_alarm_per_window(window: int, min_entropy: Fraction, cutoff: int) -> Fraction:
    """Exact probability that one APT window reaches ``cutoff`` for a source of min-entropy H.

    The reference sample counts once by itself; each of the other ``window - 1`` samples matches it
    with probability at most 2**-H. (A reference value rarer than 2**-H only lowers this.)
    """
    numerators, denominator = _binomial_upper_tails(window - 1, _p_max(Fraction(min_entropy)))
    needed = cutoff - 1
    if needed <= 0:
        return Fraction(1)
    return Fraction(numerators[needed], denominator) if needed < len(numerators) else Fraction(0)


def apt_cutoff(window: int, min_entropy: Fraction, alpha_log2: int) -> int:
    """Smallest cutoff C with P(1 + Binomial(W - 1, 2**-H) >= C) <= alpha (exact)."""
    alpha = Fraction(1, 2**alpha_log2)
    tails = _binomial_upper_tails(window - 1, _p_max(Fraction(min_entropy)))
    for cutoff in range(2, window + 1):
        if _tail_at_most(tails, cutoff - 1, alpha):
            return cutoff
    raise ValueError(
        f"no APT cutoff within a window of {window} reaches alpha = 2^-{alpha_log2} "
        f"for H = {min_entropy}: choose a larger H or alpha"
    )


def apt_cutoff_sp800_90b(window: int, min_entropy: Fraction, alpha_log2: int) -> int:
    """The formula as printed in SP 800-90B: ``1 + CRITBINOM(W, 2**-H, 1 - alpha)``, for comparison.

    CRITBINOM(n, p, a) is the smallest k with P(Binomial(n, p) <= k) >= a.
    """
    alpha = Fraction(1, 2**alpha_log2)
    tails = _binomial_upper_tails(window, _p_max(Fraction(min_entropy)))
    for k in range(window + 1):
        if _tail_at_most(tails, k + 1, alpha):  # P(X <= k) >= 1 - alpha
            return 1 + k
    return 1 + window


def rct_false_alarm_per_sample(min_entropy: Fraction, cutoff: int) -> Fraction:
    """Upper bound on the probability that a run of ``cutoff`` identical samples ends at a given
    sample: the ``cutoff - 1`` samples after the first each repeat it with probability <= 2**-H."""
    return _p_max(Fraction(min_entropy)) ** (cutoff - 1)


class HealthTestFailure(Exception):
    """A health test failed; :class:`controller.rng.certified.CertifiedRng` turns it into
    ``RngFault``."""

    def __init__(self, monitor: str, test: str, detail: str) -> None:
        super().__init__(f"{monitor}: {test} failed: {detail}")
        self.monitor = monitor
        self.test = test
        self.detail = detail


class HealthMonitor:
    """The RCT and the APT running over one stream of bytes (one source).

    ``feed`` tests every byte in order and raises :class:`HealthTestFailure` at the first failure.
    The state carries over between calls, so consecutive draws form one continuous stream.
    """

    def __init__(self, name: str, params: HealthParams) -> None:
        self.name = name
        self.params = params
        self._rct_cutoff = params.rct_cutoff
        self._apt_cutoff = params.apt_cutoff
        self._window = params.window
        self.reset()

    def reset(self) -> None:
        self.samples = 0
        self._rct_value = -1
        self._rct_run = 0
        self._apt_ref = -1
        self._apt_count = 0
        self._apt_seen = 0  # samples of the current window seen so far, 0 = start a new window

    def feed(self, data: bytes) -> None:
        rct_value, rct_run = self._rct_value, self._rct_run
        apt_ref, apt_count, apt_seen = self._apt_ref, self._apt_count, self._apt_seen
        rct_cutoff, apt_cutoff, window = self._rct_cutoff, self._apt_cutoff, self._window
        try:
            for index, byte in enumerate(data):
                # SP 800-90B 4.4.1 repetition count test
                if byte == rct_value:
                    rct_run += 1
                    if rct_run >= rct_cutoff:
                        raise HealthTestFailure(
                            self.name,
                            "repetition count test",
                            f"byte 0x{byte:02x} repeated {rct_run} times in a row "
                            f"(cutoff {rct_cutoff}) at sample {self.samples + index + 1}",
                        )
                else:
                    rct_value, rct_run = byte, 1
                # SP 800-90B 4.4.2 adaptive proportion test
                if apt_seen == 0:
                    apt_ref, apt_count = byte, 1
                elif byte == apt_ref:
                    apt_count += 1
                    if apt_count >= apt_cutoff:
                        raise HealthTestFailure(
                            self.name,
                            "adaptive proportion test",
                            f"byte 0x{byte:02x} occurred {apt_count} times within "
                            f"{apt_seen + 1} samples of a {window}-sample window "
                            f"(cutoff {apt_cutoff}) at sample {self.samples + index + 1}",
                        )
                apt_seen += 1
                if apt_seen == window:
                    apt_seen = 0
        finally:
            self._rct_value, self._rct_run = rct_value, rct_run
            self._apt_ref, self._apt_count, self._apt_seen = apt_ref, apt_count, apt_seen
        self.samples += len(data)


def false_alarm_report(
    monitors: tuple[tuple[str, HealthParams], ...] = (
        ("kernel CSPRNG", OS_SOURCE_PARAMS),
        ("hardware RNG", HWRNG_PARAMS),
    ),
    bytes_per_year: int = BYTES_PER_YEAR_BOUND,
) -> str:
    """The cutoff and false-alarm arithmetic, as quoted in docs/rng.md."""
    lines = [
        f"bytes tested per monitor per year (bound): {bytes_per_year:.1e}",
        "",
    ]
    total = Fraction(0)
    for name, params in monitors:
        h = params.min_entropy
        rct = params.rct_cutoff
        apt = params.apt_cutoff
        rct_rate = rct_false_alarm_per_sample(h, rct)
        apt_rate = apt_false_alarm_per_window(params.window, h, apt)
        per_year = bytes_per_year * rct_rate + Fraction(bytes_per_year, params.window) * apt_rate
        total += per_year
        lines += [
            f"{name}: H = {h} bits/byte, alpha = 2^-{params.alpha_log2}, W = {params.window}",
            f"  RCT cutoff C = 1 + ceil({params.alpha_log2} / {h}) = {rct}",
            f"  RCT false alarm per sample <= (2^-{h})^{rct - 1} = {float(rct_rate):.3e}",
            f"  APT cutoff C = {apt} (SP 800-90B printed formula: "
            f"{apt_cutoff_sp800_90b(params.window, h, params.alpha_log2)})",
            f"  APT false alarm per window = P(Bin({params.window - 1}, 2^-{h}) >= {apt - 1}) "
            f"= {float(apt_rate):.3e}",
            f"  expected false alarms per year <= {float(per_year):.3e}",
            f"  constant bytes fail the RCT at sample {rct} and the APT at sample {apt}"
            f" (start-up test: {STARTUP_SAMPLES} samples)",
            "",
        ]
    lines.append(
        f"all monitors: expected false alarms per year <= {float(total):.3e}"
        f" (one in {float(1 / total):.3g} years)"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    print(false_alarm_report())
