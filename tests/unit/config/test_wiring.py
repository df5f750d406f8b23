"""The wiring diagrams in docs/img are what controller/config/wiring.py draws from the shipped
profiles' pins today (regenerate: python -m controller.config.wiring), and they show what the
profile wires."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.config.profile import load_profile
from controller.config.wiring import HEADER, diagram_path, pin_roles, shipped, wiring_svg
from drivers.sim.gpio import _BOARD_TO_BCM
from tests.unit.config.test_profile import PAIGOW, ROOT, write

PI_PROFILES = sorted((ROOT / "hw_profiles").glob("rpi*.toml"))


def test_every_pi_profile_has_a_diagram_and_no_other_is_kept() -> None:
    assert shipped() == PI_PROFILES and PI_PROFILES
    kept = sorted((ROOT / "docs" / "img").glob("wiring-*.svg"))
    assert kept == sorted(diagram_path(p) for p in PI_PROFILES)


@pytest.mark.parametrize("path", PI_PROFILES, ids=lambda p: p.name)
def test_the_committed_diagram_is_the_profiles(path: Path) -> None:
    drawn = wiring_svg(load_profile(path), str(path.relative_to(ROOT)))
    assert diagram_path(path).read_text(encoding="utf-8") == drawn, (
        f"{diagram_path(path).name} differs from {path.name}'s pins:"
        " run python -m controller.config.wiring"
    )


def test_header_agrees_with_rpi_gpio_board_numbering() -> None:
    # the simulator's BOARD table is RPi.GPIO's (source/c_gpio.c); the rest are supplies
    gpio = {phys: int(label.split()[1]) for phys, label in HEADER.items() if "GPIO" in label}
    assert gpio == _BOARD_TO_BCM
    supplies = {phys: label for phys, label in HEADER.items() if "GPIO" not in label}
    assert sorted(supplies) == [1, 2, 4, 6, 9, 14, 17, 20, 25, 30, 34, 39]
    assert {label for label in supplies.values()} == {"3V3", "5V", "GND"}


def test_a_moved_pin_moves_in_the_diagram(tmp_path: Path) -> None:
    before = load_profile(write(tmp_path, "t.toml", PAIGOW))
    after = load_profile(write(tmp_path, "u.toml", PAIGOW.replace("draw = 17", "draw = 24")))
    assert pin_roles(before)[17] == ("in", "button draw") == pin_roles(after)[24]
    assert pin_roles(after)[17] == ("unused", "not used")
    assert wiring_svg(before, "t.toml") != wiring_svg(after, "t.toml")
    assert "GPIO 24: button draw" in wiring_svg(after, "t.toml")


def test_the_tpm_takes_spi0_in_the_diagram() -> None:
    base = pin_roles(load_profile(ROOT / "hw_profiles" / "rpi4-paigow.toml"))
    tpm = pin_roles(load_profile(ROOT / "hw_profiles" / "rpi4-paigow-tpm.toml"))
    assert base[9] == ("free", "SPI0 MISO: free for tpm-slb9670")
    assert tpm[9] == ("bus", "SPI0 MISO: tpm-slb9670")
    assert base[2] == tpm[2] == ("free", "I2C1 SDA: free for i2c-rtc")
    assert base[14] == ("bus", "console TXD (/dev/serial0)")
    # outputs on driver channels in pin order: segment a on GPIO 16 is U1's first input
    assert base[16] == ("out", "segment a -> U1 IN1")


def _doc_pin_map() -> dict[int, tuple[int, str, str, str]]:
    """docs/hardware.md "Pin map": GPIO -> (header pin, pai gow, baccarat, stage)."""
    text = (ROOT / "docs" / "hardware.md").read_text(encoding="utf-8")
    section = text.split("## Pin map", 1)[1].split("\n## ", 1)[0]
    rows: dict[int, tuple[int, str, str, str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0].isdigit():
            rows[int(cells[0])] = (int(cells[1]), cells[2], cells[3], cells[4])
    return rows


def _doc_role(profile_roles: dict[int, tuple[str, str]], pin: int) -> tuple[str, str]:
    """What the pin map's game column and stage column say for ``pin`` under a profile."""
    kind, text = profile_roles[pin]
    if kind == "in":
        name = text.removeprefix("button ")
        return f"button `{name}`", "button input"
    if kind == "out":
        what, _, stage = text.partition(" -> ")
        unit, channel = stage.split(" IN")
        return what, f"{unit} input {channel}"
    return "(free)", ""


@pytest.mark.parametrize("board", ["rpi4", "rpi5"])
def test_the_pin_map_in_the_reference_design_is_the_profiles(board: str) -> None:
    """The table a maker wires from (docs/hardware.md "Pin map") is every pin the shipped
    profiles drive, on the header pin the board has it, with the role each game gives it."""
    doc = _doc_pin_map()
    paigow = pin_roles(load_profile(ROOT / "hw_profiles" / f"{board}-paigow.toml"))
    baccarat = pin_roles(load_profile(ROOT / "hw_profiles" / f"{board}-baccarat.toml"))
    used = {p for roles in (paigow, baccarat) for p, (k, _) in roles.items() if k in ("in", "out")}
    assert set(doc) == used
    board_pin = {int(label.split()[1]): phys for phys, label in HEADER.items() if "GPIO" in label}
    for pin, (header, pg, bac, stage) in doc.items():
        assert header == board_pin[pin], pin
        pg_role, pg_stage = _doc_role(paigow, pin)
        bac_role, bac_stage = _doc_role(baccarat, pin)
        assert (pg, bac) == (pg_role, bac_role), pin
        assert stage in {pg_stage, bac_stage} - {""}, pin
        assert "" in (pg_stage, bac_stage) or pg_stage == bac_stage, pin  # one board serves both
