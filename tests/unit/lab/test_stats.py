"""The lab package's statistics (controller/lab/stats.py): the mono-bit and runs tests give NIST SP
800-22's own worked examples; the streaming counts over files equal a plain count written here
independently (bit strings, lists); a file of any size is read in the same memory."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from controller.lab import stats
from controller.rng.lab import chi2_sf

# SP 800-22 rev. 1a, 2.1.8 and 2.3.8: the first 100 binary digits of the expansion of e.
E_100 = (
    "11001001000011111101101010100010001000010110100011"
    "00001000110100110001001100011001100010100010111000"
)


def test_monobit_gives_the_standards_examples() -> None:
    # 2.1.4 (3)-(5): epsilon = 1011010101, n = 10: S = 2, s_obs = 0.632455532, p = 0.527089
    r = stats.monobit_test("x", "1011010101".count("1"), 10)
    assert r.statistic == pytest.approx(0.632455532, abs=1e-9)
    assert r.p_value == pytest.approx(0.527089, abs=1e-6)
    # 2.1.8: the 100 bits of e: p = 0.109599
    assert stats.monobit_test("e", E_100.count("1"), 100).p_value == pytest.approx(
        0.109599, abs=1e-6
    )


def _transitions(bits: str) -> int:
    return sum(1 for a, b in zip(bits, bits[1:], strict=False) if a != b)


def test_runs_gives_the_standards_examples() -> None:
    # 2.3.4: epsilon = 1001101011, n = 10: pi = 3/5, V = 7, p = 0.147232
    small = "1001101011"
    r = stats.runs_test("x", small.count("1"), _transitions(small), 10)
    assert r.statistic == 7
    assert r.p_value == pytest.approx(0.147232, abs=1e-6)
    # 2.3.8: the 100 bits of e: pi = 0.42, V = 52, p = 0.500798
    r = stats.runs_test("e", E_100.count("1"), _transitions(E_100), 100)
    assert r.statistic == 52
    assert r.p_value == pytest.approx(0.500798, abs=1e-6)


def test_runs_fails_its_prerequisite_on_a_biased_sequence() -> None:
    r = stats.runs_test("x", 90, 20, 100)  # pi = 0.9: |pi - 1/2| >= 2/sqrt(100)
    assert r.p_value == 0.0 and not r.passed and "prerequisite" in r.note


def _bit_string(data: bytes) -> str:
    return "".join(format(b, "08b") for b in data)


def test_byte_tests_equal_an_independent_count_across_chunks(tmp_path: Path) -> None:
    data = os.urandom(3 * stats.CHUNK + 12_345)  # odd length, crossing chunk boundaries
    path = tmp_path / "raw.bin"
    path.write_bytes(data)
    got = {r.test: r for r in stats.raw_capture_tests(path, "raw.bin")}
    bits = _bit_string(data)
    counts = Counter(data)
    expected = len(data) / 256
    chi = sum((counts[v] - expected) ** 2 for v in range(256)) / expected
    freq = got["frequency chi-square (256 byte values)"]
    assert freq.statistic == pytest.approx(chi, rel=1e-12) and freq.df == 255
    assert freq.p_value == pytest.approx(chi2_sf(chi, 255), rel=1e-12)
    pairs = Counter(zip(data[0::2], data[1::2], strict=False))
    n_pairs = len(data) // 2
    chi_pairs = sum((pairs[(a, b)] - n_pairs / 65536) ** 2 for a in range(256) for b in range(256))
    serial = got["serial pairs chi-square (65,536 byte pairs)"]
    assert serial.statistic == pytest.approx(chi_pairs / (n_pairs / 65536), rel=1e-9)
    assert serial.samples == n_pairs and serial.df == 65535
    mono = got["mono-bit (SP 800-22 2.1)"]
    assert mono.samples == len(bits)
    assert mono.statistic == pytest.approx(abs(2 * bits.count("1") - len(bits)) / len(bits) ** 0.5)
    assert got["runs (SP 800-22 2.3)"].statistic == _transitions(bits) + 1


def test_outcome_tests_equal_an_independent_count(tmp_path: Path) -> None:
    outcomes = [1 + b % 7 for b in os.urandom(5001)]
    path = tmp_path / "final.txt"
    path.write_text("".join(f"{v}\n" for v in outcomes))
    got = stats.outcome_tests(path, "final.txt", 1, 7)
    freq, serial, runs = got
    expected = len(outcomes) / 7
    counts = Counter(outcomes)
    assert freq.statistic == pytest.approx(
        sum((counts[v] - expected) ** 2 for v in range(1, 8)) / expected
    )
    assert freq.df == 6 and serial.df == 48 and serial.samples == 2500
    changes = sum(1 for a, b in zip(outcomes, outcomes[1:], strict=False) if a != b)
    q, trials = 6 / 7, len(outcomes) - 1
    z = (changes - trials * q) / math.sqrt(trials * q * (1 - q))
    assert runs.statistic == pytest.approx(z)
    assert runs.p_value == pytest.approx(math.erfc(abs(z) / math.sqrt(2)))


def test_a_repeating_generator_fails_the_runs_of_outcomes(tmp_path: Path) -> None:
    """Each outcome shown twice: every count and pair is even, but half the runs are missing."""
    outcomes = [1 + b % 8 for b in os.urandom(2000) for _ in range(2)]
    path = tmp_path / "final.txt"
    path.write_text("".join(f"{v}\n" for v in outcomes))
    runs = stats.outcome_tests(path, "final.txt", 1, 8)[2]
    assert not runs.passed and runs.p_value < 1e-10


def test_an_outcome_out_of_range_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "final.txt"
    path.write_text("1\n2\n9\n")
    with pytest.raises(ValueError, match="line 3: '9' is not an outcome 1-8"):
        stats.outcome_tests(path, "final.txt", 1, 8)


PEAK = """
import resource, sys
from pathlib import Path
from controller.lab import stats
stats.raw_capture_tests(Path(sys.argv[1]), "raw.bin")
stats.outcome_tests(Path(sys.argv[2]), "final.txt", 1, 8)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def _peak_kib(folder: Path, raw_mib: int) -> int:
    raw, final = folder / f"raw{raw_mib}.bin", folder / f"final{raw_mib}.txt"
    with open(raw, "wb") as fh, open(final, "w") as out:
        for _ in range(raw_mib * 16):
            block = os.urandom(1 << 16)
            fh.write(block)
            out.write("".join(f"{1 + b % 8}\n" for b in block[:8192]))
    done = subprocess.run(
        [sys.executable, "-c", PEAK, str(raw), str(final)],
        cwd=Path(__file__).resolve().parents[3],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return int(done.stdout.strip())


def test_a_big_capture_is_read_in_the_same_memory(tmp_path: Path) -> None:
    """Peak memory (the process's high-water mark) for a capture 8 times larger grows by far
    less than the capture: the files are streamed, never held."""
    small = _peak_kib(tmp_path, 1)
    big = _peak_kib(tmp_path, 8)  # 8 MiB raw, 1 M outcomes (2 MiB of text)
    assert big - small < 2048, (small, big)


def test_the_report_says_how_many_failures_chance_explains() -> None:
    results = [stats.monobit_test("x", 50, 100), stats.monobit_test("y", 90, 100)]
    lines = stats.report_lines(results)
    assert "1 of 2 tests pass at 99% (p >= 0.01)." in lines
    assert any("about 0.02 of 2 tests are expected to fail by chance" in line for line in lines)
