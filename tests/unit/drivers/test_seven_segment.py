"""SevenSegmentDisplay drives the right pin levels for every digit, both polarities."""

from __future__ import annotations

import itertools

import pytest

from drivers.errors import DeviceUnavailable, DisplayValueError, PinError
from drivers.number_display import NumberDisplay, SevenSegmentDisplay
from drivers.sim.gpio import SimGPIO

# Independently written truth table, segments in order a b c d e f g, 1 = segment lit.
# (Hand-copied from a common 7-segment datasheet table, not derived from the driver.)
LIT = {
    1: "0110000",
    2: "1101101",
    3: "1111001",
    4: "0110011",
    5: "1011011",
    6: "1011111",
    7: "1110000",
    8: "1111111",
}
PINS = {"a": 5, "b": 6, "c": 13, "d": 19, "e": 26, "f": 16, "g": 20}
ORDER = "abcdefg"


def make(common: str, dp: bool = False) -> tuple[SimGPIO, SevenSegmentDisplay]:
    gpio = SimGPIO()
    pins = dict(PINS, dp=21) if dp else PINS
    return gpio, SevenSegmentDisplay(gpio, pins, common)  # type: ignore[arg-type]


def levels(gpio: SimGPIO) -> str:
    return "".join(str(gpio.level(PINS[s])) for s in ORDER)


def invert(bits: str) -> str:
    return bits.translate(str.maketrans("01", "10"))


@pytest.mark.parametrize("digit", range(1, 9))
def test_digit_levels_common_cathode(digit: int) -> None:
    gpio, disp = make("cathode")
    disp.show(digit)
    assert levels(gpio) == LIT[digit]  # cathode: HIGH lights


@pytest.mark.parametrize("digit", range(1, 9))
def test_digit_levels_common_anode(digit: int) -> None:
    gpio, disp = make("anode")
    disp.show(digit)
    assert levels(gpio) == invert(LIT[digit])  # anode: LOW lights


@pytest.mark.parametrize("common", ["anode", "cathode"])
def test_read_back_matches_truth_table(common: str) -> None:
    _, disp = make(common)
    for digit, bits in LIT.items():
        disp.show(digit)
        assert disp.read_back() == {s for s, b in zip(ORDER, bits, strict=True) if b == "1"}


@pytest.mark.parametrize("common", ["anode", "cathode"])
def test_starts_dark_blank_and_lamp_test(common: str) -> None:
    gpio, disp = make(common, dp=True)
    off = 1 if common == "anode" else 0
    # Every pin's first write is "off": nothing flashes at boot.
    assert all(gpio.history(p)[0].level == off for p in [*PINS.values(), 21])
    disp.lamp_test()
    assert disp.read_back() == set(ORDER) | {"dp"}
    assert gpio.level(21) == 1 - off
    disp.blank()
    assert disp.read_back() == set()
    assert levels(gpio) == str(off) * 7


@pytest.mark.parametrize("common", ["anode", "cathode"])
def test_fault_is_lone_middle_bar(common: str) -> None:
    gpio, disp = make(common)
    disp.fault()
    expected = "0000001"
    assert levels(gpio) == (invert(expected) if common == "anode" else expected)


def test_fault_is_at_least_three_segments_from_every_digit() -> None:
    fault = "0000001"
    for bits in LIT.values():
        assert sum(x != y for x, y in zip(fault, bits, strict=True)) >= 3


def test_digits_are_pairwise_distinct() -> None:
    for x, y in itertools.combinations(LIT.values(), 2):
        assert x != y


@pytest.mark.parametrize("bad", [0, 9, -1, True, 3.0, "3", None])
def test_out_of_range_numbers_are_refused_and_display_unchanged(bad: object) -> None:
    gpio, disp = make("cathode")
    disp.show(4)
    with pytest.raises(DisplayValueError):
        disp.show(bad)  # type: ignore[arg-type]
    assert levels(gpio) == LIT[4]


def test_bad_configuration() -> None:
    gpio = SimGPIO()
    with pytest.raises(PinError, match="missing"):
        SevenSegmentDisplay(gpio, {"a": 5}, "anode")
    with pytest.raises(PinError, match="unknown"):
        SevenSegmentDisplay(gpio, dict(PINS, h=21), "anode")
    with pytest.raises(PinError, match="common"):
        SevenSegmentDisplay(gpio, PINS, "both")  # type: ignore[arg-type]
    with pytest.raises(PinError, match="both"):
        SevenSegmentDisplay(gpio, dict(PINS, g=5), "anode")


def test_close_blanks_releases_pins_and_refuses_use() -> None:
    gpio, disp = make("anode")
    disp.show(8)
    disp.close()
    assert gpio.history(PINS["a"])[-1].level == 1  # blanked (anode: HIGH is off)
    assert all(gpio.function(p) is None for p in PINS.values())
    with pytest.raises(DeviceUnavailable):
        disp.show(1)
    disp.close()  # idempotent


def test_satisfies_protocol() -> None:
    _, disp = make("cathode")
    d: NumberDisplay = disp
    d.show(1)
