"""Scaling of raw bytes to outcomes: exact values from a deterministic source.

n = high - low + 1, k = (n - 1).bit_length(); each attempt takes ceil(k / 8) bytes, big-endian,
keeps the low k bits and rejects a value >= n; the result is low + value. Never modulo.
"""

from __future__ import annotations

import pytest

from controller.rng.certified import (
    CertifiedRng,
    RngFault,
    RngNotReady,
    RngRangeError,
    outcomes_from_raw,
    scaling_plan,
)

from .sources import STARTUP_BYTES, CyclingSource, ScriptedSource


def make_rng(source: object, **kwargs: object) -> CertifiedRng:
    return CertifiedRng(source, hwrng_path=None, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("low", "high", "k", "nbytes"),
    [
        (1, 8, 3, 1),
        (1, 6, 3, 1),
        (0, 255, 8, 1),
        (1, 256, 8, 1),
        (1, 257, 9, 2),
        (1, 300, 9, 2),
        (5, 5, 0, 0),
        (-3, 3, 3, 1),
        (0, 65536, 17, 3),
    ],
)
def test_plan(low: int, high: int, k: int, nbytes: int) -> None:
    assert scaling_plan(low, high) == (k, nbytes)


def test_one_to_eight_keeps_low_three_bits_of_each_byte() -> None:
    # 5324.50(a)(4): 1 through 8. n = 8 = 2**3, so no byte is ever rejected.
    source = ScriptedSource(bytes(range(256)))
    rng = make_rng(source)
    assert [rng.draw(1, 8) for _ in range(256)] == [(b & 7) + 1 for b in range(256)]
    assert source.taken == len(STARTUP_BYTES) + 256


def test_exact_values_and_raw_bytes() -> None:
    source = ScriptedSource(b"\x00\xff\x0a\x0b")
    rng = make_rng(source)
    assert rng.draw_with_raw() == (1, b"\x00")
    assert rng.draw_with_raw(1, 8) == (8, b"\xff")
    assert rng.draw() == 3  # 0x0a & 7 = 2
    assert rng.last_raw == b"\x0a"
    assert rng.draw(1, 8) == 4


def test_rejection_not_modulo() -> None:
    # 1..6: k = 3; 0x06 and 0x07 are rejected (modulo would have given 1 and 2), 0x0d -> 5 -> 6.
    source = ScriptedSource(b"\x06\x07\x0d")
    rng = make_rng(source)
    assert rng.draw_with_raw(1, 6) == (6, b"\x06\x07\x0d")
    assert source.taken == len(STARTUP_BYTES) + 3


def test_high_bits_above_k_are_dropped_before_the_rejection_test() -> None:
    # 0xf8 has low three bits 000: accepted as 1 even though the byte is far above n.
    rng = make_rng(ScriptedSource(b"\xf8\xfd\x44"))
    assert rng.draw_with_raw(1, 5) == (1, b"\xf8")
    # 0xfd & 7 = 5 is rejected (>= n = 5); 0x44 & 7 = 4 gives 5.
    assert rng.draw_with_raw(1, 5) == (5, b"\xfd\x44")


def test_multi_byte_range_big_endian_with_rejection() -> None:
    # 1..300: n = 300, k = 9, two bytes per attempt, low 9 bits (mask 0x1ff).
    #   01 2c -> 300: rejected;  ff ff -> 511: rejected;  80 05 -> 5: result 6.
    source = ScriptedSource(b"\x01\x2c\xff\xff\x80\x05\x01\x2b\x00\x01\xfe\x00")
    rng = make_rng(source)
    assert rng.draw_with_raw(1, 300) == (6, b"\x01\x2c\xff\xff\x80\x05")
    assert rng.draw(1, 300) == 300  # 0x012b = 299, the largest accepted value
    assert rng.draw(1, 300) == 2  # big-endian: 0x0001, not 0x0100
    assert rng.draw(1, 300) == 1  # 0xfe00 & 0x1ff = 0
    assert source.taken == len(STARTUP_BYTES) + 12


def test_three_byte_range() -> None:
    # 0..65536: n = 65537, k = 17, three bytes; 0xfe0001 & 0x1ffff = 0x00001.
    rng = make_rng(ScriptedSource(b"\xfe\x00\x01"))
    assert rng.draw_with_raw(0, 65536) == (1, b"\xfe\x00\x01")


def test_negative_low() -> None:
    rng = make_rng(ScriptedSource(b"\x07\x06"))
    assert rng.draw(-3, 3) == 3  # 7 rejected (n = 7), 6 -> -3 + 6


def test_single_value_range_takes_no_bytes() -> None:
    source = ScriptedSource(b"")
    rng = make_rng(source)
    assert rng.draw_with_raw(5, 5) == (5, b"")
    assert source.taken == len(STARTUP_BYTES)  # only the start-up test read anything


def test_single_value_range_still_refuses_in_fault() -> None:
    source = CyclingSource()
    source.stuck = 0
    rng = make_rng(source)
    with pytest.raises(RngFault):
        rng.draw(5, 5)


@pytest.mark.parametrize(("low", "high"), [(2, 1), (8, 1)])
def test_empty_range_is_a_value_error_not_a_fault(low: int, high: int) -> None:
    rng = make_rng(CyclingSource())
    with pytest.raises(RngRangeError):
        rng.draw(low, high)
    with pytest.raises(ValueError):
        rng.draw(low, high)
    assert not rng.faulted


def test_replay_raw_into_outcomes_matches_the_draws() -> None:
    source = CyclingSource()
    rng = make_rng(source)
    for low, high in [(1, 8), (1, 6), (1, 300), (0, 255)]:
        draws = [rng.draw_with_raw(low, high) for _ in range(300)]
        raw = b"".join(r for _, r in draws)
        assert outcomes_from_raw(raw, low, high) == [v for v, _ in draws]


def test_replay_refuses_a_capture_cut_mid_draw() -> None:
    with pytest.raises(ValueError):
        outcomes_from_raw(b"\x06", 1, 6)  # a rejected attempt with nothing after it
    with pytest.raises(ValueError):
        outcomes_from_raw(b"\x00\x01\x02", 1, 300)  # half an attempt left over


def test_waits_for_the_kernel_generator() -> None:
    ready = False
    source = ScriptedSource(b"\x02")
    rng = make_rng(source, entropy_ready=lambda: ready)
    with pytest.raises(RngNotReady):
        rng.draw()
    assert source.taken == 0  # nothing read before the kernel is initialised
    assert not rng.faulted  # not latched: it is not a failure
    ready = True
    assert rng.draw() == 3


def test_kernel_check_is_cached_once_ready() -> None:
    calls = []

    def ready() -> bool:
        calls.append(1)
        return True

    rng = make_rng(CyclingSource(), entropy_ready=ready)
    for _ in range(10):
        rng.draw()
    assert len(calls) == 1
