"""The wiring diagram of a hardware profile: the 40-pin header with what the profile puts on
each pin, as SVG (docs/hardware.md "Wiring diagram").

Drawn from the profile itself (buttons, display segments, seat lamps, the console on the header
UART, the buses the board's overlays take), so the picture in docs/img never drifts from the pins
the code drives: ``python -m controller.config.wiring`` writes docs/img/wiring-<profile>.svg for
every shipped Raspberry Pi profile, and a test compares the committed files with what this
module draws.

The reference design's stages (docs/hardware.md): every output drives one input of a ULN2803A
sink driver (eight channels, U1 then U2), with a 10 k pull-down on it; every button comes in
through a 10 k pull-up, a 1 k series resistor, 100 nF to ground and a TVS diode at the cable.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Final
from xml.sax.saxutils import escape

from controller.config.profile import (
    BOARD_OVERLAYS,
    HEADER_UART_PINS,
    HEADER_UART_PORTS,
    Profile,
    load_profile,
)

__all__ = ["HEADER", "diagram_path", "main", "pin_roles", "wiring_svg"]

REPO: Final = Path(__file__).resolve().parents[2]

#: The 40-pin header of a Raspberry Pi 4 or 5, physical pin -> what is on it ("GPIO n" or a
#: supply), from the Raspberry Pi documentation's header pinout.
HEADER: Final[dict[int, str]] = {
    1: "3V3",
    2: "5V",
    3: "GPIO 2",
    4: "5V",
    5: "GPIO 3",
    6: "GND",
    7: "GPIO 4",
    8: "GPIO 14",
    9: "GND",
    10: "GPIO 15",
    11: "GPIO 17",
    12: "GPIO 18",
    13: "GPIO 27",
    14: "GND",
    15: "GPIO 22",
    16: "GPIO 23",
    17: "3V3",
    18: "GPIO 24",
    19: "GPIO 10",
    20: "GND",
    21: "GPIO 9",
    22: "GPIO 25",
    23: "GPIO 11",
    24: "GPIO 8",
    25: "GND",
    26: "GPIO 7",
    27: "GPIO 0",
    28: "GPIO 1",
    29: "GPIO 5",
    30: "GND",
    31: "GPIO 6",
    32: "GPIO 12",
    33: "GPIO 13",
    34: "GND",
    35: "GPIO 19",
    36: "GPIO 16",
    37: "GPIO 26",
    38: "GPIO 20",
    39: "GND",
    40: "GPIO 21",
}

#: What a role's colour means (the legend).
_COLOURS: Final = {
    "in": ("#1f5fbf", "button input: 10 k pull-up, 1 k series, 100 nF, TVS"),
    "out": ("#c05a00", "output: ULN2803A input with a 10 k pull-down"),
    "bus": ("#6b3fa0", "console UART / a bus an overlay takes"),
    "free": ("#8a8a8a", "kept free"),
    "power": ("#b00020", "supply"),
    "gnd": ("#202020", "ground"),
    "unused": ("#c8c8c8", "not used"),
}
_ROW: Final = 26
_TOP: Final = 96
_WIDTH: Final = 1000
_PIN_X: Final = (470, 530)  # odd pins left, even pins right


def _bcm(label: str) -> int | None:
    return int(label.split()[1]) if label.startswith("GPIO ") else None


def pin_roles(profile: Profile) -> dict[int, tuple[str, str]]:
    """BCM pin -> (kind, text) for every header GPIO: what the profile wires to it (kinds: the
    keys of the legend)."""
    roles: dict[int, tuple[str, str]] = {}
    outputs: list[tuple[int, str]] = []
    if profile.display is not None and profile.display.pins:
        outputs += [(pin, f"segment {name}") for name, pin in profile.display.pins.items()]
    if profile.seat_lamps is not None:
        outputs += [(pin, f"seat lamp {seat}") for seat, pin in profile.seat_lamps.pins.items()]
    for n, (pin, what) in enumerate(sorted(outputs)):
        roles[pin] = ("out", f"{what} -> U{n // 8 + 1} IN{n % 8 + 1}")
    if profile.buttons is not None:
        for name, pin in profile.buttons.pins.items():
            roles[pin] = ("in", f"button {name}")
    if profile.console.port in HEADER_UART_PORTS and profile.gpio_backend == "rpi":
        for pin, signal in HEADER_UART_PINS.items():
            roles[pin] = ("bus", f"console {signal} ({profile.console.port})")
    for overlay, (bus, pins) in BOARD_OVERLAYS.items():
        taken = overlay in profile.board.overlays
        for pin, signal in pins.items():
            if pin in roles:
                continue
            if taken:
                roles[pin] = ("bus", f"{bus} {signal}: {overlay}")
            else:
                roles[pin] = ("free", f"{bus} {signal}: free for {overlay}")
    for pin, signal in ((0, "ID_SD"), (1, "ID_SC")):
        roles.setdefault(pin, ("free", f"HAT EEPROM {signal}: free"))
    for label in HEADER.values():
        bcm = _bcm(label)
        if bcm is not None:
            roles.setdefault(bcm, ("unused", "not used"))
    return roles


def wiring_svg(profile: Profile, source: str) -> str:
    """The header diagram of ``profile`` (read from ``source``, named in the picture)."""
    roles = pin_roles(profile)
    height = _TOP + 20 * _ROW + 40 + len(_COLOURS) * 22 + 40
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{height}"'
        f' viewBox="0 0 {_WIDTH} {height}" font-family="DejaVu Sans, Arial, sans-serif"'
        ' font-size="13">',
        f'<rect x="0" y="0" width="{_WIDTH}" height="{height}" fill="#ffffff"/>',
        f'<text x="20" y="32" font-size="20" font-weight="bold">{escape(profile.name)}:'
        f" the 40-pin header ({escape(profile.game)})</text>",
        f'<text x="20" y="56" fill="#444444">Generated from {escape(source)} by'
        " python -m controller.config.wiring: do not edit. BCM numbers; pin 1 at top left.</text>",
        f'<rect x="440" y="{_TOP - 18}" width="120" height="{20 * _ROW + 10}" rx="6"'
        ' fill="#f2f2f2" stroke="#444444"/>',
    ]
    for phys in range(1, 41):
        label = HEADER[phys]
        row, right = (phys - 1) // 2, phys % 2 == 0
        y = _TOP + row * _ROW
        x = _PIN_X[1] if right else _PIN_X[0]
        bcm = _bcm(label)
        if bcm is None:
            kind, text = ("gnd", "") if label == "GND" else ("power", "")
        else:
            kind, text = roles[bcm]
        colour = _COLOURS[kind][0]
        shape = "rect" if phys == 1 else "circle"
        if shape == "rect":
            out.append(f'<rect x="{x - 8}" y="{y - 8}" width="16" height="16" fill="{colour}"/>')
        else:
            out.append(f'<circle cx="{x}" cy="{y}" r="8" fill="{colour}"/>')
        out.append(
            f'<text x="{x + (14 if right else -14)}" y="{y + 4}" font-size="10"'
            f' text-anchor="{"start" if right else "end"}" fill="#444444">{phys}</text>'
        )
        name = label if not text else f"{label}: {text}"
        anchor, tx = ("start", x + 40) if right else ("end", x - 40)
        out.append(
            f'<text x="{tx}" y="{y + 4}" text-anchor="{anchor}" fill="{colour}">'
            f"{escape(name)}</text>"
        )
    y = _TOP + 20 * _ROW + 30
    out.append(f'<text x="20" y="{y}" font-weight="bold">Legend</text>')
    for n, (colour, meaning) in enumerate(_COLOURS.values()):
        ly = y + 22 * (n + 1)
        out.append(f'<circle cx="30" cy="{ly - 4}" r="7" fill="{colour}"/>')
        out.append(f'<text x="46" y="{ly}">{escape(meaning)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def diagram_path(profile_path: Path) -> Path:
    """Where a profile's diagram is kept: docs/img/wiring-<profile file name>.svg."""
    return REPO / "docs" / "img" / f"wiring-{profile_path.stem}.svg"


def shipped() -> list[Path]:
    """The profiles that have a diagram: every shipped Raspberry Pi profile."""
    return sorted((REPO / "hw_profiles").glob("rpi*.toml"))


def main() -> int:
    for path in shipped():
        source = str(path.relative_to(REPO))
        diagram_path(path).write_text(wiring_svg(load_profile(path), source), encoding="utf-8")
        print(f"wrote {diagram_path(path).relative_to(REPO)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
