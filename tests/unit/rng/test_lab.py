"""Lab tools: chi-square p-values, the statistical check, capture files, the command line."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from controller.rng.certified import CertifiedRng, outcomes_from_raw
from controller.rng.lab import (
    capture_final,
    capture_raw,
    check_outcomes,
    chi2_sf,
    frequency_chi_square,
    main,
    regularized_gamma_q,
    run_statistical_check,
    serial_pair_chi_square,
)

from .sources import CyclingSource, ScriptedSource


def make_rng(source: object) -> CertifiedRng:
    return CertifiedRng(source, hwrng_path=None)  # type: ignore[arg-type]


# -- p-values against chi-square tables -----------------------------------------------------------


@pytest.mark.parametrize(
    ("statistic", "df", "p"),
    [
        (18.475, 7, 0.01),  # critical values from standard chi-square tables
        (14.067, 7, 0.05),
        (2.833, 7, 0.90),
        (92.010, 63, 0.01),
        (82.529, 63, 0.05),
        (3.841, 1, 0.05),
        (6.635, 1, 0.01),
        (24.322, 7, 0.001),
    ],
)
def test_chi2_survival_matches_tables(statistic: float, df: int, p: float) -> None:
    assert chi2_sf(statistic, df) == pytest.approx(p, rel=2e-3)


def test_chi2_survival_closed_forms() -> None:
    # df = 2: Q(1, x/2) = exp(-x/2) exactly, on both sides of the series/fraction switch.
    for x in (0.1, 1.0, 3.9, 4.1, 10.0, 80.0):
        assert chi2_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-12)
    # df = 1: P(chi2 >= x) = erfc(sqrt(x / 2)).
    for x in (0.01, 0.5, 2.0, 9.0, 40.0):
        assert chi2_sf(x, 1) == pytest.approx(math.erfc(math.sqrt(x / 2)), rel=1e-10)
    assert chi2_sf(0, 7) == 1.0
    assert regularized_gamma_q(3.5, 1e-9) == pytest.approx(1.0)


def test_chi2_rejects_nonsense() -> None:
    with pytest.raises(ValueError):
        chi2_sf(1.0, 0)
    with pytest.raises(ValueError):
        regularized_gamma_q(1.0, -1.0)


# -- the tests themselves -------------------------------------------------------------------------


def test_perfectly_even_outcomes() -> None:
    # Every ordered pair (a, b) exactly once: both statistics are 0, p = 1.
    outcomes = [v for a in range(1, 9) for b in range(1, 9) for v in (a, b)]
    result = check_outcomes(outcomes)
    assert result.frequency.statistic == 0 and result.frequency.df == 7
    assert result.serial.statistic == 0 and result.serial.df == 63
    assert result.frequency.p_value == 1.0 and result.passed
    assert result.counts == (16,) * 8


def test_exact_statistics() -> None:
    outcomes = [1] * 20 + [2] * 4  # 24 outcomes, expected 3 per value
    freq = frequency_chi_square(outcomes)
    assert freq.statistic == pytest.approx(((20 - 3) ** 2 + (4 - 3) ** 2 + 6 * 9) / 3)
    serial = serial_pair_chi_square(outcomes)  # 10 pairs (1,1), 2 pairs (2,2); 12 / 64 each
    e = 12 / 64
    assert serial.statistic == pytest.approx(((10 - e) ** 2 + (2 - e) ** 2 + 62 * e * e) / e)
    assert not freq.passed


def test_serial_test_catches_what_the_frequency_test_cannot() -> None:
    # Uniform counts, but each pair is (a, a): the frequency test passes, the serial test fails.
    outcomes = [v for _ in range(100) for a in range(1, 9) for v in (a, a)]
    result = check_outcomes(outcomes)
    assert result.frequency.passed and not result.serial.passed and not result.passed
    assert "FAIL" in result.format_report()


def test_out_of_range_outcome_is_refused() -> None:
    with pytest.raises(ValueError):
        check_outcomes([1, 2, 9])


def test_statistical_check_over_100k_draws_of_os_urandom() -> None:
    # Issue 4 "Done means": over >= 100,000 draws, a false-alarm rate below one in 10,000. Each of
    # the two tests fails only when its p-value is below 4e-5, so a good generator fails this test
    # with probability at most 2 * 4e-5 = 8e-5 < 1e-4. (Pass/fail at 99% is what the lab report
    # prints; this threshold is only for the unit test, which must not be flaky.)
    result = run_statistical_check(make_rng(os.urandom), 100_000)
    assert result.draws == 100_000 and sum(result.counts) == 100_000
    assert result.frequency.p_value >= 4e-5, result.format_report()
    assert result.serial.p_value >= 4e-5, result.format_report()


def test_report_prints_each_statistic_p_value_and_verdict() -> None:
    report = run_statistical_check(make_rng(CyclingSource()), 2048).format_report()
    assert "2048 draws of 1-8" in report
    assert "frequency: chi2 = 0.000, df = 7, p = 1.0000 -> PASS at 99%" in report
    assert "serial pairs: chi2 = " in report and "df = 63" in report


# -- captures -------------------------------------------------------------------------------------


def test_capture_raw_writes_exactly_the_source_bytes(tmp_path: Path) -> None:
    data = bytes((i * 37 + 11) % 256 for i in range(100_000))
    out = tmp_path / "raw.bin"
    capture_raw(make_rng(ScriptedSource(data)), 100_000, out)
    assert out.read_bytes() == data


def test_capture_final_exact_contents(tmp_path: Path) -> None:
    out, raw = tmp_path / "final.txt", tmp_path / "consumed.bin"
    capture_final(make_rng(ScriptedSource(b"\x00\xff\x0a\x13")), 4, out, raw_path=raw)
    assert out.read_bytes() == b"1\n8\n3\n4\n"
    assert raw.read_bytes() == b"\x00\xff\x0a\x13"
    assert outcomes_from_raw(raw.read_bytes()) == [1, 8, 3, 4]


def test_capture_final_with_rejections_replays(tmp_path: Path) -> None:
    out, raw = tmp_path / "final.txt", tmp_path / "consumed.bin"
    capture_final(make_rng(ScriptedSource(b"\x00\x07\x0f\xf9\x06\x0d")), 3, out, 1, 6, raw)
    # 0x00 -> 1; 0x07, 0x0f rejected, 0xf9 -> 2; 0x06 rejected, 0x0d -> 6.
    assert out.read_text() == "1\n2\n6\n"
    assert raw.read_bytes() == b"\x00\x07\x0f\xf9\x06\x0d"
    assert outcomes_from_raw(raw.read_bytes(), 1, 6) == [1, 2, 6]


# -- command line ---------------------------------------------------------------------------------


def test_cli_capture_check_and_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    final, raw = tmp_path / "final.txt", tmp_path / "raw.bin"
    assert main(["--no-hwrng", "capture", "final", "2000", str(final), "--raw-out", str(raw)]) == 0
    lines = final.read_text().splitlines()
    assert len(lines) == 2000 and set(lines) <= {str(v) for v in range(1, 9)}
    assert main(["replay", str(raw)]) == 0
    assert capsys.readouterr().out.splitlines()[-2000:] == lines
    main(["check", str(final)])
    assert "2000 draws of 1-8" in capsys.readouterr().out
    assert main(["--no-hwrng", "capture", "raw", "4096", str(raw)]) == 0
    assert len(raw.read_bytes()) == 4096
    assert main(["--no-hwrng", "test", "1000"]) in (0, 1)
    assert "serial pairs" in capsys.readouterr().out


def test_cli_reports_a_bad_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("1\n9\n")
    assert main(["check", str(bad)]) == 3
    assert "outside" in capsys.readouterr().err
