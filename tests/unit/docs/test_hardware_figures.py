"""The reference design's arithmetic (docs/hardware.md) recomputed from the figures it states:
each series resistor from its supply, forward voltage, driver drop and current, rounded to the
nearest E12 value, and the current that value gives; the GPIO side of the driver stage; the
button RC's edges. A figure edited without its sums, or a sum edited without its figure, fails.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

#: The page with its line breaks and runs of spaces as single spaces (a sum may wrap).
DOC = " ".join(
    (Path(__file__).resolve().parents[3] / "docs" / "hardware.md").read_text("utf-8").split()
)
#: IEC 60063's E12 series, one decade.
E12 = (10, 12, 15, 18, 22, 27, 33, 39, 47, 56, 68, 82)
#: ``R(x) = (12 V - 8.0 V - 1.1 V) / 20 mA = 145 ohm -> 150 ohm ...: 19.3 mA``
RESISTOR = re.compile(
    r"R(?:\((?P<what>\w+)\))?\s*=\s*"
    r"\((?P<supply>[\d.]+) V - (?P<vf>[\d.]+) V - (?P<drop>[\d.]+) V\) / (?P<ma>[\d.]+) mA"
    r" = (?P<exact>\d+) ohm\s*->\s*(?P<chosen>\d+) ohm(?: \(E12\))?[^\d]*?(?P<got>[\d.]+) mA"
)
#: ``(12 - 7.2 - 0.9) / 150 = 26 mA``: the other end of the tolerances.
WORST = re.compile(
    r"\((?P<supply>[\d.]+) - (?P<vf>[\d.]+) - (?P<drop>[\d.]+)\) / (?P<r>\d+) = (?P<ma>\d+) mA"
)


def _e12(ohms: float) -> list[int]:
    """The E12 value nearest ``ohms`` by ratio (both, at a tie)."""
    decade = 10 ** math.floor(math.log10(ohms) - 1)
    values = [v * decade for v in E12] + [E12[0] * decade * 10]
    best = min(abs(math.log(v / ohms)) for v in values)
    return [round(v) for v in values if abs(math.log(v / ohms)) - best < 1e-9]


def test_every_series_resistor_is_computed_from_its_figures() -> None:
    found = list(RESISTOR.finditer(DOC))
    assert len(found) == 3  # the segment, the decimal point, a two-LED lamp
    for m in found:
        supply, vf, drop = float(m["supply"]), float(m["vf"]), float(m["drop"])
        exact = (supply - vf - drop) / (float(m["ma"]) / 1000)
        assert round(exact) == int(m["exact"]), m[0]
        assert int(m["chosen"]) in _e12(exact), m[0]
        got = (supply - vf - drop) / int(m["chosen"]) * 1000
        assert round(got, 1) == float(m["got"]), m[0]


def test_the_worst_case_current_and_its_dissipation() -> None:
    (m,) = WORST.finditer(DOC)
    ma = (float(m["supply"]) - float(m["vf"]) - float(m["drop"])) / int(m["r"]) * 1000
    assert round(ma) == int(m["ma"])
    # "dissipates 26 mA^2 x 150 ohm = 0.10 W"; every segment on: "8 x 26 mA = 0.21 A"
    assert f"= {(ma / 1000) ** 2 * int(m['r']):.2f} W" in DOC
    assert f"8 x {round(ma)} mA = {8 * ma / 1000:.2f} A" in DOC


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # the ULN2803A's input: 2.7 k in series with two base-emitter junctions (1.4 V)
        ("(3.3 - 1.4) / 2.7 k = {:.1f} mA", (3.3 - 1.4) / 2.7),
        ("3.3 / 10 k = {:.2f} mA", 3.3 / 10),
        # an input pulled up by the SoC (33 k at its strongest) against the 10 k pull-down
        ("3.3 x 10 / 43 = {:.2f} V", 3.3 * 10 / 43),
        # a 60 mA lamp through a driver dropping 1.1 V
        ("8 x 60 mA x 1.1 V = {:.2f} W", 8 * 0.060 * 1.1),
    ],
)
def test_the_driver_stage_sums(text: str, value: float) -> None:
    assert text.format(value) in DOC


def test_the_button_rc_edges() -> None:
    to_input_high = math.log(3.3 / (3.3 - 2.0))  # time constants to the 2.0 V input-high level
    assert f"{to_input_high:.2f} time constants" in DOC
    # press: the 1 k into 100 nF
    assert f"1 k x 100 nF = {1e3 * 100e-9 * 1e3:.1f} ms" in DOC
    # release, external 10 k (+ the 1 k) in parallel with the internal 33-73 k
    lo, hi = (11e3 * r / (11e3 + r) * 100e-9 * 1e3 for r in (33e3, 73e3))
    assert f"= {lo:.1f}-{hi:.1f} ms (to the 2.0 V" in DOC
    # release, the internal pull-up alone
    lo, hi = (r * 100e-9 * 1e3 for r in (33e3, 73e3))
    assert f"33-73 k x 100 nF = {lo:.1f}-{hi:.1f} ms" in DOC
    assert f"({lo * to_input_high:.1f}-{hi * to_input_high:.1f} ms to 2.0 V)" in DOC
    # the switch's current: the external pull-up alone is in its path
    assert f"3.3 V / 10 k = {3.3 / 10:.2f} mA through the switch" in DOC
