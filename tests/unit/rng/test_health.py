"""SP 800-90B section 4.4 health tests, the start-up test, the latch and the technician's clear."""

from __future__ import annotations

import itertools
import math
import os
from fractions import Fraction
from pathlib import Path

import pytest

from controller.rng.certified import CertifiedRng, RngFault, RngNotReady
from controller.rng.health import (
    HWRNG_PARAMS,
    OS_SOURCE_PARAMS,
    STARTUP_SAMPLES,
    HealthMonitor,
    HealthParams,
    HealthTestFailure,
    apt_cutoff,
    apt_cutoff_sp800_90b,
    apt_false_alarm_per_window,
    rct_cutoff,
)

from .sources import STARTUP_BYTES, CyclingSource, ScriptedSource

RCT_C = OS_SOURCE_PARAMS.rct_cutoff
APT_C = OS_SOURCE_PARAMS.apt_cutoff


def make_rng(source: object, **kwargs: object) -> CertifiedRng:
    kwargs.setdefault("hwrng_path", None)
    return CertifiedRng(source, **kwargs)  # type: ignore[arg-type]


# -- cutoffs --------------------------------------------------------------------------------------


def test_rct_cutoffs_follow_the_formula() -> None:
    assert rct_cutoff(Fraction(8), 56) == 1 + math.ceil(56 / 8) == 8
    assert rct_cutoff(Fraction(2), 56) == 29
    assert rct_cutoff(Fraction(3), 56) == 1 + 19  # ceil(56 / 3) = 19
    assert rct_cutoff(Fraction(8), 20) == 4  # SP 800-90B's example: H = 8, alpha = 2^-20


def _tail(trials: int, p: Fraction, j: int) -> Fraction:
    return sum(
        (math.comb(trials, i) * p**i * (1 - p) ** (trials - i) for i in range(j, trials + 1)),
        Fraction(0),
    )


@pytest.mark.parametrize("params", [OS_SOURCE_PARAMS, HWRNG_PARAMS])
def test_apt_cutoff_is_the_smallest_count_with_probability_at_most_alpha(
    params: HealthParams,
) -> None:
    # Exact binomial arithmetic, independent of the module's own tail table: the count in a window
    # is 1 (the reference) + Binomial(W - 1, 2^-H); fail at >= C.
    c = params.apt_cutoff
    p = Fraction(1, 2 ** int(params.min_entropy))
    assert _tail(params.window - 1, p, c - 1) <= params.alpha
    assert _tail(params.window - 1, p, c - 2) > params.alpha
    assert apt_false_alarm_per_window(params.window, params.min_entropy, c) == _tail(
        params.window - 1, p, c - 1
    )


def test_printed_formula_reproduces_sp800_90b_table_2() -> None:
    # SP 800-90B Table 2, non-binary (W = 512), alpha = 2^-20: C = 1 + CRITBINOM(W, 2^-H, 1 - a).
    table = {
        Fraction(1, 2): 410,
        Fraction(1): 311,
        Fraction(2): 177,
        Fraction(4): 62,
        Fraction(8): 13,
    }
    for h, c in table.items():
        assert apt_cutoff_sp800_90b(512, h, 20) == c
        # The exact cutoff is never below the printed one.
        assert apt_cutoff(512, h, 20) >= c


def test_parameters_used_at_the_table() -> None:
    # docs/rng.md quotes these; a change must be a reviewed change of the docs too.
    assert (OS_SOURCE_PARAMS.rct_cutoff, OS_SOURCE_PARAMS.apt_cutoff) == (8, 25)
    assert (HWRNG_PARAMS.rct_cutoff, HWRNG_PARAMS.apt_cutoff) == (29, 217)
    assert STARTUP_SAMPLES == 1024


def test_docs_quote_the_arithmetic_the_code_computes() -> None:
    from controller.rng.health import false_alarm_report

    docs = Path(__file__).resolve().parents[3] / "docs" / "rng.md"
    assert false_alarm_report() in docs.read_text(encoding="utf-8")


# -- the monitor ----------------------------------------------------------------------------------


def test_rct_trips_at_exactly_c_repeats() -> None:
    monitor = HealthMonitor("t", OS_SOURCE_PARAMS)
    monitor.feed(b"\x01" + b"\x41" * (RCT_C - 1) + b"\x02")  # C - 1 in a row: fine
    with pytest.raises(HealthTestFailure, match="repetition count"):
        monitor.feed(b"\x41" * RCT_C)


def test_rct_run_carries_across_feeds() -> None:
    monitor = HealthMonitor("t", OS_SOURCE_PARAMS)
    for _ in range(RCT_C - 1):
        monitor.feed(b"\x41")
    with pytest.raises(HealthTestFailure, match="repetition count"):
        monitor.feed(b"\x41")


def _biased_window(reference: int, hits: int, window: int = 512) -> bytes:
    """A window starting with ``reference`` and holding it ``hits`` times, never twice in a row;
    the other places cycle through the other 255 values (at most twice each)."""
    fillers = itertools.cycle([b for b in range(256) if b != reference])
    return bytes(
        reference if i % 2 == 0 and i // 2 < hits else next(fillers) for i in range(window)
    )


def test_apt_trips_on_the_cth_occurrence_in_a_window() -> None:
    monitor = HealthMonitor("t", OS_SOURCE_PARAMS)
    window = _biased_window(0x41, APT_C - 1)
    assert window.count(0x41) == APT_C - 1 and len(window) == 512
    for _ in range(4):  # C - 1 per window, window after window: fine
        monitor.feed(window)
    with pytest.raises(HealthTestFailure, match="adaptive proportion"):
        monitor.feed(_biased_window(0x41, APT_C))


def test_biased_source_trips_the_apt_not_the_rct() -> None:
    # Every other byte is 0x00 (probability 1/2): no runs, but far too common.
    biased = bytes(x for i in range(1, 257) for x in (0, i % 256 or 1))
    source = ScriptedSource(biased * 4)
    rng = make_rng(source)
    with pytest.raises(RngFault, match="adaptive proportion"):
        for _ in range(len(biased) * 4):
            rng.draw()
    assert rng.faulted


def test_good_source_passes() -> None:
    monitor = HealthMonitor("t", OS_SOURCE_PARAMS)
    monitor.feed(os.urandom(1_000_000))  # false alarm probability < 1e6 * 2^-55
    rng = make_rng(os.urandom)
    for _ in range(20_000):
        rng.draw()
    assert not rng.faulted


# -- start-up test --------------------------------------------------------------------------------


@pytest.mark.parametrize("stuck", [0x00, 0xFF, 0x5A])
def test_stuck_source_fails_within_the_startup_test(stuck: int) -> None:
    source = CyclingSource()
    source.stuck = stuck
    taken = []

    def counted(n: int) -> bytes:
        taken.append(n)
        return source(n)

    rng = make_rng(counted)
    with pytest.raises(RngFault, match="repetition count test"):
        rng.draw()
    assert sum(taken) == STARTUP_SAMPLES  # failed inside the start-up test, before any draw
    assert rng.faulted


def test_startup_test_runs_before_the_first_draw_and_its_samples_are_discarded() -> None:
    source = ScriptedSource(b"\x03")
    rng = make_rng(source)
    assert source.taken == 0  # constructing reads nothing
    assert rng.draw_with_raw() == (4, b"\x03")
    assert source.taken == STARTUP_SAMPLES + 1


def test_startup_needs_at_least_1024_samples() -> None:
    with pytest.raises(ValueError):
        make_rng(os.urandom, startup_samples=512)


# -- latch and clear ------------------------------------------------------------------------------


def test_fault_latches_until_a_passing_self_test_and_clear() -> None:
    source = CyclingSource()
    rng = make_rng(source)
    rng.draw()
    source.stuck = 0x41
    with pytest.raises(RngFault, match="repetition count"):
        for _ in range(RCT_C + 1):
            rng.draw()
    reason = rng.fault_reason
    assert reason is not None and "repetition count" in reason

    source.stuck = None  # the source is healthy again: still refused
    with pytest.raises(RngFault, match="in fault"):
        rng.draw()
    with pytest.raises(RngFault, match="self-test"):
        rng.clear_fault()  # no self-test yet
    assert rng.faulted

    source.stuck = 0x41
    report = rng.self_test()
    assert not report.passed and "repetition count" in (report.failure or "")
    with pytest.raises(RngFault):
        rng.clear_fault()  # a failed self-test does not count

    source.stuck = None
    report = rng.self_test()
    assert report.passed and report.samples == STARTUP_SAMPLES
    assert "PASS" in report.format()
    with pytest.raises(RngFault):
        rng.draw()  # a passing self-test alone does not clear the fault
    rng.clear_fault()
    assert not rng.faulted and rng.fault_reason is None
    assert 1 <= rng.draw() <= 8


def test_a_self_test_passed_before_the_fault_does_not_clear_it() -> None:
    source = CyclingSource()
    rng = make_rng(source)
    assert rng.self_test().passed
    source.stuck = 0
    with pytest.raises(RngFault):
        for _ in range(RCT_C):
            rng.draw()
    source.stuck = None
    with pytest.raises(RngFault):
        rng.clear_fault()


def test_failed_self_test_latches_a_fault() -> None:
    source = CyclingSource()
    rng = make_rng(source)
    rng.draw()
    source.stuck = 7
    assert not rng.self_test().passed
    source.stuck = None
    with pytest.raises(RngFault):
        rng.draw()


def test_clear_without_fault_is_a_no_op() -> None:
    rng = make_rng(CyclingSource())
    rng.clear_fault()
    assert not rng.faulted


def test_self_test_waits_for_the_kernel_without_latching() -> None:
    rng = make_rng(CyclingSource(), entropy_ready=lambda: False)
    with pytest.raises(RngNotReady):
        rng.self_test()
    assert not rng.faulted


@pytest.mark.parametrize("failure", ["short", "oserror"])
def test_a_failing_source_latches_a_fault(failure: str) -> None:
    source = CyclingSource()
    broken = False

    def read(n: int) -> bytes:
        if broken and failure == "short":
            return b""
        if broken:
            raise OSError("device gone")
        return source(n)

    rng = make_rng(read)
    rng.draw()
    broken = True
    with pytest.raises(RngFault):
        rng.draw()
    broken = False
    with pytest.raises(RngFault, match="in fault"):
        rng.draw()


def test_endless_rejection_is_a_fault() -> None:
    # For 1..5 every byte whose low three bits are 5, 6 or 7 is rejected; cycling through all 96
    # such bytes trips no health test, so only the attempt limit stops the draw.
    rejected = bytes(b for b in range(256) if b & 7 >= 5)
    source = ScriptedSource(rejected * 2)
    rng = make_rng(source)
    with pytest.raises(RngFault, match="rejected"):
        rng.draw(1, 5)
    assert rng.faulted


# -- hardware generator ---------------------------------------------------------------------------


def test_stuck_hardware_generator_fails_the_startup_test() -> None:
    hw = CyclingSource()
    hw.stuck = 0
    rng = make_rng(CyclingSource(), hwrng_reader=hw)
    assert rng.monitors_hwrng
    with pytest.raises(RngFault, match="hardware RNG: repetition count"):
        rng.draw()


def test_hardware_generator_is_tested_alongside_every_draw() -> None:
    hw = CyclingSource()
    rng = make_rng(CyclingSource(), hwrng_reader=hw)
    for _ in range(100):
        rng.draw()
    assert hw.position == STARTUP_SAMPLES + 100  # as many hw bytes as the draws took
    hw.stuck = 0x33
    with pytest.raises(RngFault, match="hardware RNG"):
        for _ in range(HWRNG_PARAMS.rct_cutoff):
            rng.draw()
    assert rng.faulted


def test_hardware_generator_that_stops_producing_is_a_fault() -> None:
    rng = make_rng(CyclingSource(), hwrng_reader=lambda n: b"")
    with pytest.raises(RngFault, match="hardware RNG"):
        rng.draw()


def test_hardware_generator_read_from_a_device_path(tmp_path: Path) -> None:
    device = tmp_path / "hwrng"
    device.write_bytes(STARTUP_BYTES + bytes(range(256)))
    rng = make_rng(CyclingSource(), hwrng_path=str(device))
    assert rng.monitors_hwrng
    for _ in range(256):
        rng.draw()
    assert not rng.faulted


def test_no_hardware_generator() -> None:
    assert not make_rng(CyclingSource(), hwrng_path=None).monitors_hwrng
