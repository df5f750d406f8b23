"""Hardware profiles: one TOML file per table build, layered, refusing mistakes (issue 6).

A profile names the game, the driver for each device (real or simulated), GPIO pins, serial
ports, the console port, the journal's files and the table's default rule settings. A profile may
``include = "other.toml"`` (relative to the including file) and override it key by key: tables
merge deeply, values replace. Unknown or misspelt keys, wrong types, out-of-range values, a GPIO
pin used twice and a device the game needs but lacks are :class:`ProfileError` naming the file,
the dotted key and what is wrong (the habits of Klipper's ``configfile``; docs/design.md).
"""

from __future__ import annotations

import datetime
import difflib
import ipaddress
import os
import re
import tomllib
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from types import MappingProxyType
from typing import Final, Literal, TypeVar

from controller.config.declare import (
    REQUIRED,
    AbsPath,
    Address,
    Bool,
    BrokerUrl,
    Date,
    Declared,
    Float,
    HostName,
    Int,
    Invalid,
    Kind,
    ListOf,
    OneOf,
    Pattern,
    PemFile,
    PublicKeyPem,
    Required,
    Sha256,
    StatePath,
    Tcti,
    Text,
    about,
    declared,
    setting,
    toml_text,
)
from controller.config.settings import SETTING_KEYS, RuleSettings
from controller.fields.readers import FieldError, as_bool, as_int, as_str

__all__ = [
    "BACCARAT_BUTTONS",
    "PROFILE_GROUPS",
    "BACCARAT_OPTIONAL_BUTTONS",
    "GAMES",
    "PAIGOW_BUTTONS",
    "STARTPOS_BUTTONS",
    "STARTPOS_OPTIONAL_BUTTONS",
    "StartposSettings",
    "PAIGOW_OPTIONAL_BUTTONS",
    "SIGNERS",
    "STANDARD_BAUDS",
    "TOPIC_ID_PATTERN",
    "BOARD_OVERLAYS",
    "GPIO_SIM_DEBOUNCE",
    "BoardSettings",
    "ButtonSettings",
    "ConsoleSettings",
    "DealerDisplaySettings",
    "DisplaySettings",
    "FeedSettings",
    "JournalSettings",
    "PowerFailSettings",
    "DoorSettings",
    "Profile",
    "ProfileError",
    "RngSettings",
    "ScoreboardSettings",
    "SeatLampSettings",
    "ShoeSettings",
    "check_profile_report",
    "load_profile",
]

Game = Literal["paigow", "baccarat", "startpos"]
GAMES: Final[tuple[Game, ...]] = ("paigow", "baccarat", "startpos")
#: The dealer's buttons, one per step of the round the dealer confirms (5324.50(d)-(f)).
PAIGOW_BUTTONS: Final = ("shuffled", "no_more_bets", "draw", "dealt", "hands_set", "settled")
PAIGOW_OPTIONAL_BUTTONS: Final = ("void",)
#: 5324.20(b)(3), (f)(4), (g); ``disclose`` reports a disclosed card, (i)(1)-(2).
BACCARAT_BUTTONS: Final = ("shuffled", "no_more_bets", "settled")
#: ``shoe_resume``: the dealer confirms a new shoe session (docs/design.md, the shoe protocol).
BACCARAT_OPTIONAL_BUTTONS: Final = ("disclose", "shoe_resume")
#: The starting-position table (docs/startpos-table.md): pai gow's names where they mean the same.
STARTPOS_BUTTONS: Final = ("no_more_bets", "draw", "dealt", "settled")
STARTPOS_OPTIONAL_BUTTONS: Final = ("void",)
STANDARD_BAUDS: Final = (
    1200,
    2400,
    4800,
    9600,
    19200,
    38400,
    57600,
    115200,
    230400,
    460800,
    921600,
)
GPIO_MIN: Final = 2  # BCM numbering; the 40-pin header exposes GPIO 2-27
GPIO_MAX: Final = 27
#: Until a program sets them up, GPIO 0 to this pull up and the rest pull down (BCM2835 ARM
#: Peripherals, p. 102; the BCM2711 keeps those defaults): an output there is on at power-on.
PULLED_UP_AT_POWER_ON: Final = 8
#: The header UART is on GPIO 14 (TXD) and 15 (RXD) on a Pi 4 and a Pi 5.
HEADER_UART_PORTS: Final = ("/dev/serial0", "/dev/ttyAMA0", "/dev/ttyS0")
HEADER_UART_PINS: Final = {14: "TXD", 15: "RXD"}
SEGMENTS: Final = ("a", "b", "c", "d", "e", "f", "g")
#: A seven-segment display's common pin (the wrong one inverts every segment).
Common = Literal["anode", "cathode"]
COMMONS: Final[tuple[Common, ...]] = ("anode", "cathode")
#: How the GPIO is driven: the board's (RPi.GPIO/rpi-lgpio) or simulated.
GpioBackend = Literal["rpi", "sim"]
GPIO_BACKENDS: Final[tuple[GpioBackend, ...]] = ("rpi", "sim")
#: Whose debounce the simulated GPIO has (drivers/sim/gpio.py ``DEBOUNCE_MODES``, the same
#: names): rpi-lgpio's, which the release ships, first.
GpioSimDebounce = Literal["rpi-lgpio", "rpi-gpio"]
GPIO_SIM_DEBOUNCE: Final[tuple[GpioSimDebounce, ...]] = ("rpi-lgpio", "rpi-gpio")
#: Device-tree overlays a board's config.txt may load that take header pins from the profile's
#: devices (docs/hardware.md "Bring-up"): the overlay, the bus it enables and the GPIO it claims.
#: tpm-slb9670 (an Infineon SLB 9670 TPM) enables SPI0: GPIO 7 CE1, 8 CE0, 9 MISO, 10 MOSI,
#: 11 SCLK; i2c-rtc (a DS3231 or similar RTC) is on I2C1: GPIO 2 SDA, 3 SCL.
BOARD_OVERLAYS: Final[Mapping[str, tuple[str, Mapping[int, str]]]] = {
    "tpm-slb9670": ("SPI0", {7: "CE1", 8: "CE0", 9: "MISO", 10: "MOSI", 11: "SCLK"}),
    "i2c-rtc": ("I2C1", {2: "SDA", 3: "SCL"}),
}
#: A site or table id of the host feed: one MQTT topic level (no wildcard, separator or space)
#: and a safe file name (the collector's keys directory holds ``<table>.pem``).
TOPIC_ID_PATTERN: Final = r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}"
#: Hosts a plain-TCP (``mqtt://``) broker may be on: this machine only (development).
LOOPBACK_HOSTS: Final = ("127.0.0.1", "localhost", "::1")
#: The monitor's languages (controller/scoreboard/labels.py): English, traditional and
#: simplified Chinese; a page shows one or two of them.
SCOREBOARD_LANGUAGES: Final = ("en", "zh-Hant", "zh-Hans")
#: The monitor's densities: big-road columns across the screen at the start of a shoe
#: (docs/scoreboard.md; standard and dense grow to hold a long shoe whole, large scrolls).
SCOREBOARD_DENSITIES: Final = {"standard": 40, "large": 14, "dense": 48}

_DEVICES: Final[Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {
    # game: (required devices, optional devices)
    "paigow": (("display", "buttons"), ("seat_lamps", "power_fail", "door")),
    "baccarat": (("shoe", "dealer_display", "buttons"), ("seat_lamps", "power_fail", "door")),
    "startpos": (("display", "buttons"), ("power_fail", "door")),
}
_BUTTONS: Final[Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {
    "paigow": (PAIGOW_BUTTONS, PAIGOW_OPTIONAL_BUTTONS),
    "baccarat": (BACCARAT_BUTTONS, BACCARAT_OPTIONAL_BUTTONS),
    "startpos": (STARTPOS_BUTTONS, STARTPOS_OPTIONAL_BUTTONS),
}


class ProfileError(ValueError):
    """A profile was refused. ``file``, ``key`` (dotted) and ``problem`` are also attributes;
    ``errors`` holds every error the reading found (this one first), so one run of
    ``check-profile`` reports them all."""

    def __init__(
        self, file: str, key: str, problem: str, errors: tuple[ProfileError, ...] = ()
    ) -> None:
        super().__init__(f"{file}: {key}: {problem}" if key else f"{file}: {problem}")
        self.file = file
        self.key = key
        self.problem = problem
        self.errors: tuple[ProfileError, ...] = errors or (self,)


# -- the typed result: every setting declared once (controller/config/declare.py) ---------------


#: The journal's signer backends (docs/journal.md "Signer").
SIGNERS: Final = ("file", "pkcs11")
_STATE: Final = 'docs/configuration.md "State files"'


@dataclass(frozen=True)
class JournalSettings:
    """Where the journal, its anchor and its archive live (every file inside the state directory;
    the anchor possibly under ``second_medium``), how its heads are signed, and how long rows
    stay live."""

    path: str = setting(StatePath(), "journal.sqlite", ref=_STATE, doc="the journal's database")
    second_medium: str | None = setting(
        AbsPath(),
        None,
        ref=_STATE,
        doc="an absolute directory on another medium (a second SD card, a USB stick) the anchor"
        " may live under",
    )
    table_id: str | None = setting(
        Text(),
        None,
        ref='docs/journal.md "Signed head"',
        doc="the name signed into every head (and the feed's topics); default: feed.table if"
        " [feed] names one, else the profile's name",
    )
    signer: str = setting(
        OneOf(SIGNERS),
        "file",
        ref='docs/journal.md "Signer"',
        doc="file: a PEM key; pkcs11: a token (a TPM 2.0, a secure element)",
    )
    key_path: str = setting(
        StatePath(),
        "journal-key.pem",
        ref='docs/journal.md "Signer"',
        doc="file signer: the private key (0600), made with a new journal",
    )
    pkcs11_module: str | None = setting(
        AbsPath(), None, ref='docs/journal.md "Signer"', doc="pkcs11: the module (required)"
    )
    pkcs11_module_sha256: str | None = setting(
        Sha256(),
        None,
        ref="docs/program-verification.md",
        doc="the module's sha256sum: code loaded from outside the release; required in a sealed"
        " profile, a mismatch refuses the start",
    )
    pkcs11_token: str | None = setting(
        Text(), None, ref='docs/journal.md "Signer"', doc="pkcs11: the token's label (required)"
    )
    pkcs11_key_label: str = setting(
        Text(), "table-journal", ref='docs/journal.md "Signer"', doc="pkcs11: the key's label"
    )
    pkcs11_pin_file: str | None = setting(
        AbsPath(),
        None,
        ref='docs/journal.md "Signer"',
        doc="pkcs11: a file holding the user PIN (required)",
    )
    anchor_path: str = setting(
        StatePath(medium=True),
        "journal.anchor",
        ref='docs/journal.md "Anchor"',
        doc="every signed head, appended and synced: better on a second medium",
    )
    archive_dir: str = setting(
        StatePath(),
        "archive",
        ref='docs/journal.md "Retention"',
        doc="signed archive segments of rows past retain_days",
    )
    clock_floor: datetime.date = setting(
        Date(),
        datetime.date(2026, 1, 1),
        ref='docs/journal.md "Row"',
        doc="a TOML date, unquoted; an earlier wall clock is unset",
    )
    retain_days: int = setting(
        Int(90, 3650),
        90,
        ref='docs/journal.md "Retention"',
        doc="days a row stays in the live journal (at least 90), then archived",
    )
    scrub_hours: int = setting(
        Int(1, 24 * 7),
        24,
        ref='docs/journal.md "Start-up, the scrub, and a fault that stops play"',
        doc="hours between passes of the background scrub",
    )
    counter: str = setting(
        Tcti(),
        "none",
        ref='docs/journal.md "The TPM counter"',
        doc='"none" (no TPM: a restored state is not detected) or the TPM\'s TCTI'
        ' ("device:/dev/tpmrm0", "swtpm:host=127.0.0.1,port=2321")',
    )
    counter_index: int = setting(
        Int(0x01000000, 0x01BFFFFF, hexadecimal=True),
        0x01500016,
        ref='docs/journal.md "The TPM counter"',
        doc="the counter's NV index (the TPM owner's range)",
        default_text="0x01500016",
    )


@dataclass(frozen=True)
class ConsoleSettings:
    """The technician's console: ``stdio``, ``none`` or a serial device path. ``line_editing``
    makes it a terminal line (echo, prompt, BS/DEL, Ctrl-U, Ctrl-C) for a technician's
    terminal; false for a machine peer (the HIL rig, a host script)."""

    port: str = setting(
        AbsPath(("stdio", "none")), "stdio", ref="docs/console.md", doc="where the console runs"
    )
    baud: int = setting(OneOf(STANDARD_BAUDS), 115200, ref="docs/console.md", doc="8N1")
    line_editing: bool = setting(
        Bool(),
        True,
        ref='docs/console.md "The line: a terminal, or a machine"',
        doc="a technician's terminal: echo, prompt, editing; false for a machine peer",
    )


@dataclass(frozen=True)
class RngSettings:
    """The certified RNG; ``hwrng_path`` adds the board's hardware generator to the health
    tests when set; ``background_cycle`` runs controller/rng/cycle.py where a jurisdiction's
    rules ask for an RNG that cycles in the background."""

    hwrng_path: str | None = setting(
        AbsPath(),
        None,
        ref="NIST SP 800-90B 4.4; docs/rng.md",
        doc="also health-test the board's hardware generator",
    )
    background_cycle: bool = setting(
        Bool(),
        False,
        ref='N.J.A.C. 13:69E-1.28G(b)4; OAC 325:85-15-50(5); docs/rng.md "Cycling and seeding"',
        doc="draw and discard from the source at random intervals, between and during games",
    )


@dataclass(frozen=True)
class DisplaySettings:
    """The 1-8 display. ``seven-segment``: ``pins`` (a-g, optional dp) and ``common``;
    ``serial-led``: ``port`` (device path or ``sim``) and ``baud``."""

    driver: Literal["seven-segment", "serial-led"] = field(
        metadata=about(
            OneOf(("seven-segment", "serial-led")),
            ref="5324.50(a)(4); docs/drivers-display-buttons.md",
            doc="the number's display",
        )
    )
    pins: Mapping[str, int] | None = None
    common: Common | None = setting(
        OneOf(COMMONS),
        None,
        ref="docs/drivers-display-buttons.md",
        doc="seven-segment: required (wrong, every segment inverts)",
    )
    port: str | None = setting(
        AbsPath(("sim",)), None, ref="docs/drivers-display-buttons.md", doc="serial-led: required"
    )
    baud: int | None = setting(
        OneOf(STANDARD_BAUDS),
        None,
        ref="docs/drivers-display-buttons.md",
        doc="serial-led (default 9600)",
    )
    ack: bool | None = setting(
        Bool(),
        None,
        ref="docs/drivers-display-buttons.md",
        doc="serial-led (default true): wait for each line's OK; false: write-only hardware",
    )


@dataclass(frozen=True)
class ButtonSettings:
    """The dealer's buttons by name (:data:`PAIGOW_BUTTONS`, :data:`BACCARAT_BUTTONS`)."""

    pins: Mapping[str, int]
    bounce_ms: int = setting(
        Int(1, 500), 30, ref="docs/drivers-display-buttons.md", doc="debounce time (ms)"
    )
    active_low: bool = setting(
        Bool(),
        True,
        ref="docs/drivers-display-buttons.md",
        doc="a press pulls the pin low (switch to GND, internal pull-up)",
    )


_POWER: Final = "docs/power-and-storage.md"


@dataclass(frozen=True)
class PowerFailSettings:
    """A UPS's power-fail signal on a GPIO input (none by default): while it is asserted the
    table starts no new round or coup, and the journal is synced at once."""

    pin: int = field(
        metadata=about(
            Int(GPIO_MIN, GPIO_MAX),
            ref=f'{_POWER} "A power-fail input"',
            doc="the UPS's signal (BCM)",
        )
    )
    active_low: bool = setting(
        Bool(),
        True,
        ref=f'{_POWER} "A power-fail input"',
        doc="the UPS pulls the line low on battery (internal pull-up); false: it drives it high",
    )


@dataclass(frozen=True)
class DoorSettings:
    """The enclosure door's switch on a GPIO input (none by default): each opening is an event
    (110), a meter and an alarm; with ``hold_play`` no new round starts while it is open nor
    after, until a technician's ``door ack``."""

    pin: int = field(
        metadata=about(
            Int(GPIO_MIN, GPIO_MAX),
            ref='docs/console.md "The enclosure door"',
            doc="the door switch's input (BCM)",
        )
    )
    active_low: bool = setting(
        Bool(),
        True,
        ref='docs/console.md "The enclosure door"',
        doc="the line reads low while the door is open (internal pull-down); false: high",
    )
    bounce_ms: int = setting(
        Int(1, 1000),
        50,
        ref='docs/console.md "The enclosure door"',
        doc="edges closer than this are contact bounce (ms)",
    )
    hold_play: bool = setting(
        Bool(),
        True,
        ref='docs/console.md "The enclosure door"',
        doc="no new round while the door is open, nor until `door ack` after; false: play on",
    )


@dataclass(frozen=True)
class SeatLampSettings:
    """The seat lamps by seat number (1-8) and how a lamp is lit: ``active_high`` (a HIGH pin
    lights it: an LED to ground, or a low-side driver such as a ULN2803A) or not (LOW lights
    it: an LED to 3.3 V, or a P-channel high-side stage)."""

    pins: Mapping[int, int]
    active_high: bool = setting(
        Bool(),
        True,
        ref='docs/hardware.md "Lamps"',
        doc="true: a HIGH pin lights the lamp; false: a LOW pin does",
    )


@dataclass(frozen=True)
class BoardSettings:
    """The board itself: what its firmware (config.txt) takes from the 40-pin header (the
    overlays that claim GPIO pins, so that ``check-profile`` refuses a device on them), and
    where its own sensors and clock are read (sysfs; ``sim``: a simulated board in the state
    directory), how often, and the temperature at which the firmware throttles."""

    overlays: tuple[str, ...] = setting(
        ListOf(OneOf(tuple(BOARD_OVERLAYS)), most=len(BOARD_OVERLAYS)),
        (),
        ref='docs/hardware.md "Bring-up"',
        doc="the dtoverlay lines of config.txt that take header pins (tpm-slb9670: SPI0,"
        " GPIO 7-11; i2c-rtc: I2C1, GPIO 2-3)",
        default_text="[] (none)",
    )
    hwmon: str = setting(
        AbsPath(("sim",)),
        "/sys/class/hwmon",
        ref=f'{_POWER} "Undervoltage and throttling"',
        doc="the hwmon root: rpi_volt (undervoltage) and cpu_thermal are looked up by name",
    )
    rtc: str = setting(
        AbsPath(("sim",)),
        "/sys/class/rtc",
        ref=f'{_POWER} "The clock"',
        doc="the RTC class root: rtc0 is the Pi 5's clock, or a DS3231 on a Pi 4",
    )
    poll_s: float = setting(
        Float(0.5, 60.0),
        2.0,
        ref=f'{_POWER} "Undervoltage and throttling"',
        doc="seconds between reads (the kernel polls the firmware every 2 s)",
    )
    throttle_c: float = setting(
        Float(50.0, 85.0),
        80.0,
        ref=f'{_POWER} "Undervoltage and throttling"',
        doc="the SoC temperature journaled as throttling (the firmware slows the Arm cores"
        " from 80 C)",
    )


@dataclass(frozen=True)
class ShoeSettings:
    """The card shoe's serial port (``sim``: an in-process simulated shoe on a pseudo-terminal);
    the ``sim_*`` settings apply only to the simulated shoe."""

    port: str = field(
        metadata=about(
            AbsPath(("sim",)),
            ref='docs/design.md "Reference shoe protocol, revision 3"',
            doc="the shoe",
        )
    )
    baud: int = setting(
        OneOf(STANDARD_BAUDS),
        115200,
        ref='docs/design.md "Reference shoe protocol, revision 3"',
        doc="8N1, no flow control",
    )
    watchdog_s: float = setting(
        Float(1.0, 30.0),
        3.0,
        ref='docs/design.md "Reference shoe protocol, revision 3"',
        doc="seconds without a valid frame that are a fault",
    )
    sim_decks: int = setting(
        Int(6, 8), 8, ref="docs/shoe-protocol.md", doc='port = "sim": = rules.baccarat.decks'
    )
    sim_seed: int | None = setting(
        Int(0, 2**63 - 1),
        None,
        ref="docs/shoe-protocol.md",
        doc='port = "sim": the shuffle\'s seed',
    )
    sim_auto_deal_s: float | None = setting(
        Float(0.01, 600.0),
        None,
        ref="docs/baccarat-table.md",
        doc='port = "sim": the simulated dealer deals every N s',
    )


@dataclass(frozen=True)
class DisplayText(Text):
    """A text the monitor shows: at most ``most`` characters, none of them a control character
    (a line break or an escape would break the page's layout; it is only ever text there)."""

    most: int = 60
    empty: bool = False

    def convert(self, raw: object) -> str:
        if isinstance(raw, str) and not raw and self.empty:
            return raw
        return super().convert(raw)

    def problem(self, value: str) -> str | None:
        if len(value) > self.most:
            return f"{len(value)} characters: at most {self.most} fit the monitor"
        bad = [ch for ch in value if unicodedata.category(ch).startswith("C")]
        return f"holds a control character ({ascii(bad[0])})" if bad else None

    def range_text(self) -> str:
        return f"at most {self.most} characters"


@dataclass(frozen=True)
class Languages(ListOf[str]):
    """One or two of :data:`SCOREBOARD_LANGUAGES`, each once (two: every label shows both)."""

    item: Kind[str] = OneOf(SCOREBOARD_LANGUAGES)
    most: int = 2

    @property
    def type_name(self) -> str:  # type: ignore[override]
        return "a list of one or two languages"

    def convert(self, raw: object) -> list[object]:
        if not isinstance(raw, list) or not raw:
            raise self.wrong_type(raw)
        return super().convert(raw)

    def read(self, raw: object) -> tuple[str, ...]:
        langs = super().read(raw)
        if len(set(langs)) != len(langs):
            raise Invalid("RANGE", "names a language twice")
        return langs

    def range_text(self) -> str:
        return "one or two of " + ", ".join(SCOREBOARD_LANGUAGES)


@dataclass(frozen=True)
class IdleMinutes(Float):
    """0 (never idle) or 0.05 to 1440 minutes (a fraction of a minute for a test bench)."""

    lo: float = 0.0
    hi: float = 1440.0

    def read(self, raw: object) -> float:
        value = super().read(raw)
        if 0 < value < 0.05:
            raise Invalid("RANGE", f"{raw} is out of range: 0 (never) or 0.05..1440")
        return value

    def range_text(self) -> str:
        return "0 (never) or 0.05..1440"


@dataclass(frozen=True)
class ScoreboardSettings:
    """The table's monitor pages (controller/scoreboard, docs/scoreboard.md): served on
    ``address``:``port`` while ``enabled``; port 0 takes any free port (tests run several
    tables at once); at most ``max_clients`` connections at once, more are answered 503, at
    most ``per_peer`` from one address other than the ``kiosk`` addresses (which also have
    slots kept for them); a request whose ``Host`` is neither the bound address nor one of
    ``names`` is refused (DNS rebinding)."""

    enabled: bool = setting(
        Bool(),
        False,
        ref="docs/scoreboard.md",
        doc="default: true when the section is present, off when absent",
        default_text="true with [scoreboard], else false",
    )
    address: str = setting(
        Address(),
        "127.0.0.1",
        ref="docs/scoreboard.md",
        doc="not loopback: check-profile warns",
    )
    port: int = setting(
        Int(0, 65535), 8080, ref="docs/scoreboard.md", doc="0 = any free port, shown on status"
    )
    max_clients: int = setting(
        Int(1, 256), 16, ref="docs/scoreboard.md", doc="connections at once; more are answered 503"
    )
    per_peer: int = setting(
        Int(1, 256),
        4,
        ref='docs/scoreboard.md "Keeping the monitor lit"',
        doc="connections from any one address but the kiosk's",
    )
    kiosk: tuple[str, ...] = setting(
        ListOf(Address()),
        ("127.0.0.1", "::1"),
        ref='docs/scoreboard.md "Keeping the monitor lit"',
        doc="the monitor's browser: connections kept for it",
    )
    names: tuple[str, ...] = setting(
        ListOf(HostName()),
        (),
        ref='docs/scoreboard.md "Keeping the monitor lit"',
        doc="DNS names the page is reached by (any other Host is refused)",
    )
    # What the monitor shows besides the table's state: its name in the header, the labels'
    # languages, the idle screen and how many big-road columns a screen holds (a monitor's
    # address may choose its own languages and density).
    table_name: str = setting(
        DisplayText(32, empty=True),
        "",
        ref='docs/scoreboard.md "The baccarat board"',
        doc="the header's name of the table",
        default_text='"" (the table\'s id)',
    )
    languages: tuple[str, ...] = setting(
        Languages(),
        ("en",),
        ref='docs/scoreboard.md "Languages and the Chinese font"',
        doc="the labels' languages: with two, every label shows both",
    )
    idle_minutes: float = setting(
        IdleMinutes(),
        10.0,
        ref='docs/scoreboard.md "Idle screen and burn-in"',
        doc="the idle screen after this long without a change, between rounds",
    )
    idle_text: tuple[str, ...] = setting(
        ListOf(DisplayText(60)),
        (),
        ref='docs/scoreboard.md "Idle screen and burn-in"',
        doc="texts the idle screen shows in turn",
    )
    density: str = setting(
        OneOf(tuple(SCOREBOARD_DENSITIES)),
        "standard",
        ref='docs/scoreboard.md "The baccarat board"',
        doc="standard: the whole shoe; large: bigger cells, the newest columns; dense",
    )

    @property
    def loopback(self) -> bool:
        """True when only this machine can connect (127.0.0.0/8, ::1)."""
        return ipaddress.ip_address(self.address).is_loopback


@dataclass(frozen=True)
class DealerDisplaySettings:
    """The dealer's text display: ``serial-text`` (``port``, ``baud``) or ``sim``."""

    driver: Literal["serial-text", "sim"] = field(
        metadata=about(
            OneOf(("serial-text", "sim")), ref="docs/baccarat-table.md", doc="the dealer's display"
        )
    )
    port: str | None = setting(
        AbsPath(), None, ref="docs/drivers-display-buttons.md", doc="serial-text: required"
    )
    baud: int | None = setting(
        OneOf(STANDARD_BAUDS),
        None,
        ref="docs/drivers-display-buttons.md",
        doc="serial-text (default 9600)",
    )
    ack: bool | None = setting(
        Bool(),
        None,
        ref="docs/drivers-display-buttons.md",
        doc="serial-text (default true): wait for each line's OK; false: write-only hardware",
    )


_TOPIC_LEVEL: Final = (
    "cannot be an MQTT topic level: letters, digits, '.', '_' and '-', at most 64, starting"
    " with a letter or digit"
)


@dataclass(frozen=True)
class FeedSettings:
    """The host feed (docs/feed.md): the broker (``mqtts://host:port``; ``mqtt://`` only to
    this machine, for development), the site and table ids in the topics, and the TLS files
    (absolute paths). ``position_path`` is relative to the state directory unless absolute."""

    broker: str = field(
        metadata=about(
            BrokerUrl(LOOPBACK_HOSTS),
            ref='docs/feed.md "The broker"',
            doc="mqtts://host:port of the casino's broker; mqtt:// only to this machine",
        )
    )
    site: str = field(
        metadata=about(
            Pattern(TOPIC_ID_PATTERN, _TOPIC_LEVEL, "letters, digits, . _ -, at most 64"),
            ref='docs/feed.md "Topics and messages"',
            doc="the casino's site id, in every topic",
        )
    )
    #: The journal's table id (one name for both; docs/feed.md).
    table: str = field(
        metadata=about(
            Pattern(TOPIC_ID_PATTERN, _TOPIC_LEVEL, "letters, digits, . _ -, at most 64"),
            ref='docs/feed.md "Topics and messages"',
            doc="the table in every topic (and the journal's table id); the client"
            " certificate's CN",
            default_text="journal.table_id, else name",
        )
    )
    ca: str | None = setting(PemFile(), None, ref="docs/feed.md", doc="the broker's CA")
    cert: str | None = setting(
        PemFile(), None, ref="docs/feed.md", doc="the table's client certificate (mqtts://)"
    )
    key: str | None = setting(PemFile(), None, ref="docs/feed.md", doc="its key (mqtts://)")
    position_path: str = setting(
        StatePath(),
        "feed.position",
        ref='docs/feed.md "The publisher (on the table)"',
        doc="the last acknowledged row",
    )
    heartbeat_s: float = setting(
        Float(5.0, 3600.0),
        60.0,
        ref='docs/feed.md "Topics and messages"',
        doc='"online" repeated so the collector sees silence',
    )
    window: int = setting(Int(1, 1000), 20, ref="docs/feed.md", doc="messages in flight")
    #: Withhold the next draw (pai gow) or coup (baccarat, at no more bets) while the broker has
    #: not acknowledged the journal up to the last decision for more than this many seconds;
    #: 0 (the default) never withholds.
    hold_decisions_unacked_s: int = setting(
        Int(0, 86400),
        0,
        ref='docs/feed.md "Holding play for the feed"',
        doc="N > 0 withholds the next draw or coup while the last decision is unacknowledged"
        " for more than N s; 0 never holds play",
    )
    #: The host's public key (docs/host-commands.md): commands on ``tc/<site>/<table>/cmd``
    #: signed with its private key are obeyed; none: the table takes no commands.
    host_key: str | None = setting(
        PublicKeyPem(),
        None,
        ref='docs/host-commands.md "Commissioning"',
        doc="the host's ECDSA P-256 public key (PEM inline or a path); none: no commands",
    )
    command_max_age_s: int = setting(
        Int(5, 86400),
        300,
        ref='docs/host-commands.md "Checks"',
        doc="a command whose time is further than this from the table's clock is refused",
    )
    commands_per_minute: int = setting(
        Int(1, 6000),
        60,
        ref='docs/host-commands.md "Checks"',
        doc="commands taken per minute; more are dropped unread and counted (a flood)",
    )


_STARTPOS = "docs/startpos-table.md"


@dataclass(frozen=True)
class StartposSettings:
    """The starting-position table's game (game = "startpos"): the range of its number and how
    it is counted around the table (N.J.A.C. 13:69F-31.11(c))."""

    range: int = setting(
        Int(1, 36), 7, ref=_STARTPOS, doc="the RNG draws a number from 1 through this"
    )
    positions: tuple[str, ...] = setting(
        ListOf(Text()),
        ("dealer", "6", "5", "4", "3", "2", "1"),
        ref=_STARTPOS,
        doc="the positions in clockwise order seen from above, the one counted first included",
    )
    one: str = setting(Text(), "dealer", ref=_STARTPOS, doc="the position counted as number one")
    direction: str = setting(
        OneOf(("counterclockwise", "clockwise")),
        "counterclockwise",
        ref=_STARTPOS,
        doc="the way the count goes from position one",
    )
    count_empty: bool = setting(
        Bool(), True, ref=_STARTPOS, doc="a position counts whether or not it has a wager"
    )


@dataclass(frozen=True)
class Profile:
    """A whole, checked hardware profile."""

    name: str = field(
        metadata=about(
            Text(),
            ref="docs/configuration.md",
            doc="the table's name in reports",
            default_text="the file name without .toml",
        )
    )
    game: Game = field(
        metadata=about(OneOf(GAMES), ref="docs/configuration.md", doc="the table's game")
    )
    source_files: tuple[str, ...]
    gpio_backend: GpioBackend = field(
        metadata=about(
            OneOf(GPIO_BACKENDS),
            ref="docs/drivers-display-buttons.md",
            doc="rpi: RPi.GPIO/rpi-lgpio",
        )
    )
    journal: JournalSettings
    console: ConsoleSettings
    rng: RngSettings
    rules: RuleSettings
    gpio_sim_debounce: GpioSimDebounce = setting(
        OneOf(GPIO_SIM_DEBOUNCE),
        "rpi-lgpio",
        ref='docs/drivers-display-buttons.md "Debounce"',
        doc='gpio_backend = "sim": whose debounce the simulated GPIO has (rpi-lgpio, as the'
        " release ships, or RPi.GPIO's)",
    )
    board: BoardSettings = BoardSettings()
    display: DisplaySettings | None = None
    buttons: ButtonSettings | None = None
    seat_lamps: SeatLampSettings | None = None
    shoe: ShoeSettings | None = None
    dealer_display: DealerDisplaySettings | None = None
    scoreboard: ScoreboardSettings = ScoreboardSettings()
    feed: FeedSettings | None = None
    power_fail: PowerFailSettings | None = None
    door: DoorSettings | None = None
    startpos: StartposSettings | None = None


#: Every table of a profile whose settings are declared, by its dotted name ("" is the top):
#: what docs/configuration.md lists (controller/config/markdown.py). The rule settings are
#: ``[rules]`` (controller/config/settings.py).
PROFILE_GROUPS: Final[tuple[tuple[str, type], ...]] = (
    ("", Profile),
    ("journal", JournalSettings),
    ("console", ConsoleSettings),
    ("rng", RngSettings),
    ("board", BoardSettings),
    ("devices.display", DisplaySettings),
    ("devices.buttons", ButtonSettings),
    ("devices.seat_lamps", SeatLampSettings),
    ("devices.shoe", ShoeSettings),
    ("devices.dealer_display", DealerDisplaySettings),
    ("devices.power_fail", PowerFailSettings),
    ("devices.door", DoorSettings),
    ("feed", FeedSettings),
    ("scoreboard", ScoreboardSettings),
    ("startpos", StartposSettings),
)


# -- public functions --------------------------------------------------------------------------


def load_profile(path: str | os.PathLike[str]) -> Profile:
    """Load, merge and check a profile; raises :class:`ProfileError`."""
    return _resolve(path)[0]


def check_profile_report(path: str | os.PathLike[str]) -> str:
    """What a profile resolves to: every effective value and the file it came from
    (``(default)`` where no file sets it). Raises :class:`ProfileError`."""
    profile, reader = _resolve(path)
    lines = [
        f"profile {profile.name!r}: game {profile.game}, from {reader.top}",
        "files (each overrides the ones above it):",
    ]
    lines += [f"  {f}" for f in profile.source_files]
    lines.append("values:")
    width = min(56, max(len(f"{k} = {v}") for k, v, _ in reader.report))
    for key, text, source in reader.report:
        lines.append(f"  {f'{key} = {text}':<{width}}  # {source}")
    lines += [f"WARNING {w}" for w in profile_warnings(profile)]
    return "\n".join(lines)


#: Kernel names of USB serial adapters: numbered in the order USB finds them, which can change
#: from one boot to the next (two identical adapters swap). udev's by-path names do not.
_NUMBERED_USB_SERIAL: Final = re.compile(r"/dev/tty(USB|ACM)[0-9]+")


#: The name the release's udev rules (systemd/udev/70-table-controller-serial.rules) give the
#: adapter of each serial setting, by the USB port it is plugged into.
_STABLE_NAME: Final = {
    "console.port": "/dev/tc-console",
    "devices.shoe.port": "/dev/tc-shoe",
    "devices.display.port": "/dev/tc-display",
    "devices.dealer_display.port": "/dev/tc-display",
}


def profile_warnings(profile: Profile) -> list[str]:
    """Choices a profile may make that deserve a second look (printed by check-profile)."""
    out = []
    ports = {
        "console.port": profile.console.port,
        "devices.shoe.port": profile.shoe.port if profile.shoe else None,
        "devices.display.port": profile.display.port if profile.display else None,
        "devices.dealer_display.port": (
            profile.dealer_display.port if profile.dealer_display else None
        ),
    }
    for key, port in ports.items():
        if port is not None and _NUMBERED_USB_SERIAL.fullmatch(port):
            out.append(
                f'{key} = "{port}" is numbered in the order USB finds the adapters, which can'
                " change between boots (the shoe could come up on the display's port): name"
                f" it by the USB port it is plugged into, {_STABLE_NAME[key]} from the"
                " release's udev rules, or /dev/serial/by-path/..."
                ' (docs/configuration.md "Stable device names")'
            )
    tpm_overlays = [o for o in profile.board.overlays if o.startswith("tpm-")]
    if (
        profile.gpio_backend == "rpi"
        and profile.journal.counter.startswith("device:")
        and not tpm_overlays
    ):
        # The TPM is on the header's SPI0 (docs/hardware.md "Pin map"): without its overlay
        # named, a button or lamp wired to GPIO 7-11 is not refused.
        out.append(
            f'journal.counter = "{profile.journal.counter}" uses a TPM, but board.overlays'
            ' names no TPM overlay: add "tpm-slb9670" (the dtoverlay line of config.txt) so'
            " that a device on the pins its SPI0 takes (GPIO 7-11) is refused"
            ' (docs/hardware.md "Pin map")'
        )
    if profile.gpio_backend == "rpi":
        outputs: list[tuple[str, int]] = []
        if profile.display is not None and profile.display.pins:
            outputs += [(f"devices.display.pins.{k}", v) for k, v in profile.display.pins.items()]
        if profile.seat_lamps is not None:
            outputs += [
                (f"devices.seat_lamps.pins.{k}", v) for k, v in profile.seat_lamps.pins.items()
            ]
        for key, pin in outputs:
            if pin <= PULLED_UP_AT_POWER_ON:
                out.append(
                    f"{key} = {pin}: GPIO 0-{PULLED_UP_AT_POWER_ON} pull up at power-on, so"
                    " what it drives can light during boot and while the program is not"
                    " running; use GPIO 9-27, or a pull-down on its driver input"
                    ' (docs/hardware.md "Pin map")'
                )
    board = profile.scoreboard
    if board.enabled and not board.loopback:
        out.append(
            f'scoreboard.address = "{board.address}" is not loopback: every device'
            " that can reach this address can read the table's results and load the"
            " server; the systemd unit allows loopback only (docs/scoreboard.md)"
        )
    return out


# -- loading and merging layers ----------------------------------------------------------------


def _read_layers(
    path: Path,
    shown: str,
    chain: tuple[Path, ...],
    data: dict[str, object],
    origin: dict[str, str],
    files: list[str],
) -> None:
    """Merge ``path`` (after the files it includes) into ``data``; ``origin`` maps each dotted
    key to the last file that set it."""
    real = path.resolve()
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise ProfileError(shown, "", "file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ProfileError(shown, "", f"cannot read: {exc}") from None
    try:
        layer = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(shown, "", f"invalid TOML: {exc}") from None
    include = layer.pop("include", None)
    if include is not None:
        if not isinstance(include, str) or not include:
            raise ProfileError(shown, "include", f"expected a file name, got {include!r}")
        inc = path.parent / include
        inc_shown = os.path.normpath(os.path.join(os.path.dirname(shown), include))
        if not inc.is_file():
            raise ProfileError(shown, "include", f"included file not found: {inc_shown}")
        loop = (*chain, real)
        if inc.resolve() in loop:
            names = [*(p.name for p in loop[loop.index(inc.resolve()) :]), inc.name]
            raise ProfileError(shown, "include", f"include cycle: {' -> '.join(names)}")
        _read_layers(inc, inc_shown, loop, data, origin, files)
    _merge(data, layer, origin, shown, "")
    files.append(shown)


def _merge(
    base: dict[str, object],
    over: Mapping[str, object],
    origin: dict[str, str],
    file: str,
    prefix: str,
) -> None:
    for k, v in over.items():
        key = f"{prefix}{k}"
        old = base.get(k)
        if isinstance(v, dict):
            sub = base.setdefault(k, {})
            if not isinstance(sub, dict):
                raise ProfileError(file, key, f"is a table here but a value in {origin[key]}")
            _merge(sub, v, origin, file, f"{key}.")
        else:
            if isinstance(old, dict):
                raise ProfileError(file, key, f"is a value here but a table in {origin[key]}")
            base[k] = v
        origin[key] = file


# -- the reader ------------------------------------------------------------------------------

T = TypeVar("T")
V = TypeVar("V")
L = TypeVar("L", bound=str)
#: A GPIO pin: BCM numbering, the 40-pin header's GPIO 2-27.
PIN: Final = Int(GPIO_MIN, GPIO_MAX)


#: ``_Section.setting``'s default: the declared one.
_DECLARED: Final = object()


def _choice(choices: tuple[L, ...]) -> Callable[[object, str], L]:
    """A reader of a value ``OneOf(choices)`` has read, as the type of its choices."""

    def one(value: object, what: str) -> L:
        for choice in choices:
            if choice == value:
                return choice
        raise FieldError(f"{what} must be one of {', '.join(choices)}, not {value!r}")

    return one


def _opt_str(value: object, what: str) -> str | None:
    """A string setting that may be unset."""
    return None if value is None else as_str(value, what)


class _Skip(Exception):
    """A value that is needed could not be read; its error is recorded (the reader goes on)."""


class _Reader:
    """Merged data plus where each key came from; records what was read for the report and
    every error it finds, so one run reports them all."""

    def __init__(self, data: dict[str, object], origin: dict[str, str], top: str) -> None:
        self.data = data
        self.origin = origin
        self.top = top
        self.used: set[str] = set()
        self.asked: dict[str, set[str]] = {}
        self.report: list[tuple[str, str, str]] = []
        self.errors: list[ProfileError] = []

    def file_of(self, key: str) -> str:
        while key:
            if key in self.origin:
                return self.origin[key]
            key = key.rpartition(".")[0]
        return self.top

    def error(self, key: str, problem: str) -> ProfileError:
        return ProfileError(self.file_of(key), key, problem)

    def fail(self, error: ProfileError) -> None:
        """Record an error (once per key and problem)."""
        if all((e.key, e.problem) != (error.key, error.problem) for e in self.errors):
            self.errors.append(error)

    def record(self, key: str, value: object, given: bool) -> None:
        self.report.append((key, toml_text(value), self.origin[key] if given else "(default)"))

    def attempt(self, read: Callable[[], T], skipped: _Section | None = None) -> T | None:
        """``read()``, or None when it failed: its error is recorded, and the keys of
        ``skipped`` (a table it could not finish) count as read, so they are not also reported
        as unknown."""
        try:
            return read()
        except ProfileError as exc:
            self.fail(exc)
        except _Skip:
            pass
        if skipped is not None:
            _mark_all(self, skipped.table, skipped.prefix)
        return None

    def check_unused(self, table: Mapping[str, object] | None = None, prefix: str = "") -> None:
        """Every key not read is an error, with the nearest known key as a hint."""
        for k, v in (self.data if table is None else table).items():
            key = f"{prefix}{k}"
            if key not in self.used:
                known = sorted(self.asked.get(prefix, set()))
                near = difflib.get_close_matches(k, known, n=1)
                hint = (
                    f" (did you mean {near[0]!r}?)"
                    if near
                    else (f"; known here: {', '.join(known)}" if known else "")
                )
                self.fail(self.error(key, f"unknown key{hint}"))
            elif isinstance(v, dict):
                self.check_unused(v, f"{key}.")


class _Section:
    """One table of the merged profile, read by the declarations of a settings class."""

    def __init__(self, reader: _Reader, prefix: str, table: dict[str, object]) -> None:
        self.r = reader
        self.prefix = prefix
        self.table = table

    def key(self, name: str) -> str:
        return f"{self.prefix}{name}"

    def _ask(self, name: str) -> None:
        self.r.asked.setdefault(self.prefix, set()).add(name)

    def missing(self, name: str, why: str = "") -> ProfileError:
        """A required key is absent: if an unread key here looks like it, report that one."""
        unread = [
            k
            for k in self.table
            if self.key(k) not in self.r.used and k not in self.r.asked.get(self.prefix, set())
        ]
        near = difflib.get_close_matches(name, unread, n=1)
        if near:
            return self.r.error(self.key(near[0]), f"unknown key (did you mean {name!r}?)")
        key = self.key(name)
        stray = [
            k
            for k in self.r.origin
            if k.endswith(f".{name}")
            and k.startswith(self.prefix)
            and k.count(".") == key.count(".") + 1
        ]
        if stray:
            why += (
                f" (found {stray[0]} instead: in TOML a key after a [table] header belongs"
                " to that table)"
            )
        return ProfileError(
            self.r.file_of(key.rpartition(".")[0]) if self.prefix else self.r.top,
            key,
            f"missing{why}",
        )

    def value(self, name: str, kind: Kind[V], default: V | Required = REQUIRED, why: str = "") -> V:
        """The value of ``name`` read as ``kind``; absent, ``default``. An absent required key
        or a bad value is recorded; the default stands in for a bad value when there is one,
        else :class:`_Skip` is raised."""
        self._ask(name)
        key = self.key(name)
        if name not in self.table:
            if default is REQUIRED:
                self.r.fail(self.missing(name, why))
                raise _Skip(key)
            self.r.record(key, default, given=False)
            return default
        self.r.used.add(key)
        try:
            result = kind.read(self.table[name])
        except Invalid as exc:
            wrong = "wrong type: " if exc.code == "SYNTAX" else ""
            self.r.fail(self.r.error(key + exc.at, wrong + exc.problem))
            if default is REQUIRED:
                raise _Skip(key) from None
            return default
        self.r.record(key, result, given=True)
        return result

    def setting(
        self,
        cls: type,
        name: str,
        of: Callable[[object, str], V],
        *,
        default: object = _DECLARED,
        why: str = "",
    ) -> V:
        """One declared setting of ``cls`` (its kind and default; ``default`` replaces the
        declared one, ``why`` explains a missing required key), as the type ``of`` says
        (``as_str``, :func:`_choice`): a dataclass's declarations do not carry their types."""
        d = _declared_of(cls)[name]
        value = self.value(name, d.spec.kind, d.default if default is _DECLARED else default, why)
        return of(value, self.key(name))

    def read(
        self,
        cls: type[T],
        *,
        defaults: Mapping[str, object] | None = None,
        required: Mapping[str, str] | None = None,
        kinds: Mapping[str, Kind[object]] | None = None,
        values: Mapping[str, object] | None = None,
    ) -> T:
        """An instance of ``cls`` from its declared settings, in declaration order. ``defaults``
        replace declared defaults, ``required`` makes keys required (with why), ``kinds``
        replaces kinds, ``values`` are given as they are (read already, or not settings).
        Every key is read before a required one that failed raises :class:`_Skip`."""
        out: dict[str, object] = dict(values or {})
        failed = False
        for d in declared(cls):
            if d.name in out:
                continue
            default = (defaults or {}).get(d.name, d.default)
            why = ""
            if required and d.name in required:
                default, why = REQUIRED, required[d.name]
            try:
                out[d.name] = self.value(
                    d.name, (kinds or {}).get(d.name, d.spec.kind), default, why
                )
            except _Skip:
                failed = True
        if failed:
            raise _Skip(self.prefix)
        return cls(**out)

    def section(self, name: str, required: bool = False, why: str = "") -> _Section | None:
        self._ask(name)
        key = self.key(name)
        if name not in self.table:
            if required:
                self.r.fail(self.missing(name, why))
                raise _Skip(key)
            return None
        sub = self.table[name]
        self.r.used.add(key)
        if not isinstance(sub, dict):
            self.r.fail(self.r.error(key, f"expected a table, got {sub!r}"))
            raise _Skip(key)
        return _Section(self.r, f"{key}.", sub)

    def refuse(self, names: tuple[str, ...], why: str) -> None:
        for name in names:
            if name in self.table:
                self.r.used.add(self.key(name))
                self.r.fail(self.r.error(self.key(name), f"not allowed: {why}"))


def _declared_of(cls: type) -> dict[str, Declared]:
    return {d.name: d for d in declared(cls)}


def _mark_all(r: _Reader, table: Mapping[str, object], prefix: str) -> None:
    for k, v in table.items():
        r.used.add(f"{prefix}{k}")
        if isinstance(v, dict):
            _mark_all(r, v, f"{prefix}{k}.")


# -- reading a profile -------------------------------------------------------------------------


def _resolve(path: str | os.PathLike[str]) -> tuple[Profile, _Reader]:
    """Read and check every setting; raise the first error found, carrying all of them."""
    shown = os.fspath(path)
    data: dict[str, object] = {}
    origin: dict[str, str] = {}
    files: list[str] = []
    _read_layers(Path(shown), shown, (), data, origin, files)
    r = _Reader(data, origin, shown)
    profile = r.attempt(lambda: _read(r, shown, files))
    if profile is None or r.errors:
        first = r.errors[0]
        raise ProfileError(first.file, first.key, first.problem, tuple(r.errors))
    return profile, r


def _read(r: _Reader, shown: str, files: list[str]) -> Profile:
    top = _Section(r, "", r.data)
    name = r.attempt(lambda: top.setting(Profile, "name", as_str, default=Path(shown).stem))
    game = r.attempt(lambda: top.setting(Profile, "game", _choice(GAMES)))
    gpio_backend = r.attempt(lambda: top.setting(Profile, "gpio_backend", _choice(GPIO_BACKENDS)))
    if gpio_backend == "sim":
        sim_debounce = r.attempt(
            lambda: top.setting(Profile, "gpio_sim_debounce", _choice(GPIO_SIM_DEBOUNCE))
        )
    else:
        top.refuse(("gpio_sim_debounce",), 'only with gpio_backend = "sim"')
        sim_debounce = "rpi-lgpio"
    board = _group(top, r, "board", BoardSettings) or BoardSettings()
    journal = _journal(top, r) or JournalSettings()
    console = _group(top, r, "console", ConsoleSettings) or ConsoleSettings()
    rng = _group(top, r, "rng", RngSettings) or RngSettings()
    rules = _rules(top, r)
    scoreboard = _scoreboard(top, r) or ScoreboardSettings()
    feed = _feed(top, r, journal, name or Path(shown).stem)
    if feed is not None and journal.table_id is None and "table" in _table(r.data, "feed"):
        # [feed] table alone names the table; the journal signs its heads with it
        journal = replace(journal, table_id=feed.table)
        r.report = [
            (k, toml_text(feed.table), "(feed.table)")
            if k == "journal.table_id"
            else (k, text, source)
            for k, text, source in r.report
        ]
    devices = _devices(top, r, game, rules) if game is not None else None
    startpos = _startpos(top, r) if game == "startpos" else None
    if game != "startpos" and "startpos" in r.data:
        r.used.add("startpos")
        _mark_all(r, _table(r.data, "startpos"), "startpos.")
        r.fail(r.error("startpos", 'only with game = "startpos"'))
    if game is None:
        _mark_all(r, _table(r.data, "devices"), "devices.")
        r.used.add("devices")

    r.check_unused()
    if gpio_backend is not None:
        _check_pins(r, gpio_backend, console, board)
    _check_serial_ports(r)
    if (
        name is None
        or game is None
        or gpio_backend is None
        or sim_debounce is None
        or devices is None
    ):
        raise _Skip("profile")
    return Profile(
        name=name,
        game=game,
        source_files=tuple(files),
        gpio_backend=gpio_backend,
        journal=journal,
        console=console,
        rng=rng,
        rules=rules,
        gpio_sim_debounce=sim_debounce,
        board=board,
        display=devices.display,
        buttons=devices.buttons,
        seat_lamps=devices.seat_lamps,
        shoe=devices.shoe,
        dealer_display=devices.dealer_display,
        scoreboard=scoreboard,
        feed=feed,
        power_fail=devices.power_fail,
        door=devices.door,
        startpos=startpos,
    )


def _table(data: Mapping[str, object], name: str) -> dict[str, object]:
    sub = data.get(name)
    return sub if isinstance(sub, dict) else {}


def _optional(top: _Section, r: _Reader, name: str) -> _Section:
    """An optional table; absent (or not a table), an empty one, so its defaults are
    reported."""
    sec = r.attempt(lambda: top.section(name))
    return sec if sec is not None else _Section(r, f"{name}.", {})


def _group(top: _Section, r: _Reader, name: str, cls: type[T]) -> T | None:
    """A table read by its declarations alone."""
    s = _optional(top, r, name)
    return r.attempt(lambda: s.read(cls), s)


def _startpos(top: _Section, r: _Reader) -> StartposSettings | None:
    """``[startpos]``: the layout must count (position one among the positions, distinct)."""
    settings = _group(top, r, "startpos", StartposSettings)
    if settings is None:
        return None
    if len(set(settings.positions)) != len(settings.positions) or not settings.positions:
        r.fail(r.error("startpos.positions", "the positions must be distinct and not empty"))
    if settings.one not in settings.positions:
        r.fail(r.error("startpos.one", f"{settings.one!r} is not one of startpos.positions"))
    return settings


def _journal(top: _Section, r: _Reader) -> JournalSettings | None:
    s = _optional(top, r, "journal")

    def read() -> JournalSettings:
        medium = s.setting(JournalSettings, "second_medium", _opt_str)
        signer = s.setting(JournalSettings, "signer", as_str)
        why = ' (signer = "pkcs11" needs the module, the token\'s label and the PIN file)'
        pkcs11 = ("pkcs11_module", "pkcs11_token", "pkcs11_pin_file")
        return s.read(
            JournalSettings,
            values={"second_medium": medium, "signer": signer},
            required={k: why for k in pkcs11} if signer == "pkcs11" else None,
            kinds={"anchor_path": StatePath(medium=True, medium_dir=medium)},
        )

    return r.attempt(read, s)


def _scoreboard(top: _Section, r: _Reader) -> ScoreboardSettings | None:
    """Absent: off. Present: on unless ``enabled = false``, loopback port 8080 by default."""
    present = isinstance(r.data.get("scoreboard"), dict)
    s = _optional(top, r, "scoreboard")
    return r.attempt(lambda: s.read(ScoreboardSettings, defaults={"enabled": present}), s)


def _feed(top: _Section, r: _Reader, journal: JournalSettings, name: str) -> FeedSettings | None:
    sec = r.attempt(lambda: top.section("feed"))
    if sec is None:
        return None
    s = sec

    def read() -> FeedSettings:
        broker = s.setting(
            FeedSettings, "broker", as_str, why=" (mqtts://host:port of the casino's broker)"
        )
        tls = broker.startswith("mqtts:")
        if not tls:
            s.refuse(("ca", "cert", "key"), "TLS files need mqtts://")
        why = (
            " (mqtts:// needs the table's client certificate and key: the broker's ACL knows"
            " the table by it)"
        )
        # the journal signs its heads with its table id: the feed's topics must name the
        # same table, or the collector refuses every head. One name for both: feed.table
        # alone is the journal's too (_read), journal.table_id alone is the feed's; only two
        # that differ are refused.
        journal_id = journal.table_id
        default = journal_id or name
        table = s.setting(FeedSettings, "table", as_str, default=default)
        wrong: list[ProfileError] = []
        if journal_id is not None and table != journal_id:
            wrong.append(
                r.error(
                    s.key("table"),
                    f"{table!r} differs from journal.table_id"
                    f" ({journal_id!r}), the table id the journal signs"
                    " its heads with: the feed's topics must name the same"
                    " table; set one of them, or both the same",
                )
            )
        if re.fullmatch(TOPIC_ID_PATTERN, table) is None:
            wrong.append(
                s.missing(
                    "table",
                    f": the table id {default!r} (journal.table_id, else the"
                    " profile's name) cannot be a topic level",
                )
            )
        for error in wrong:
            r.fail(error)
        site_why = " (the casino's site id, in every topic)"
        # refused above when given without TLS: not read again
        no_tls: dict[str, object] = {}
        if not tls:
            no_tls = {k: None for k in ("ca", "cert", "key") if k in s.table}
        feed = s.read(
            FeedSettings,
            values={"broker": broker, "table": table, **no_tls},
            required={"site": site_why, **({"cert": why, "key": why} if tls else {})},
        )
        if wrong:
            raise _Skip(s.prefix)
        return feed

    return r.attempt(read, s)


def _rules(top: _Section, r: _Reader) -> RuleSettings:
    """The ``[rules]`` table by the rule settings' declarations (controller/config/settings.py):
    every error reported, the defaults standing in for what is wrong."""
    sec = r.attempt(lambda: top.section("rules"))
    table = sec.table if sec else {}
    if sec is not None:
        _mark_all(r, table, "rules.")
    rules, problems = RuleSettings.read(table)
    for exc in problems:
        key = f"rules.{exc.key}" if exc.key else "rules"
        problem = {"UNKNOWN": "unknown key", "SYNTAX": "wrong type", "RANGE": "not allowed"}[
            exc.code
        ]
        r.fail(r.error(key, f"{problem}: {exc.reason}"))
    for k in SETTING_KEYS:
        key = f"rules.{k}"
        given = key in r.origin
        r.report.append((key, toml_text(rules.get(k)), r.origin[key] if given else "(default)"))
    return rules


@dataclass(frozen=True)
class _Devices:
    """The devices a profile names for its game (None: the game has no such device, or an
    optional one is absent)."""

    display: DisplaySettings | None = None
    buttons: ButtonSettings | None = None
    seat_lamps: SeatLampSettings | None = None
    shoe: ShoeSettings | None = None
    dealer_display: DealerDisplaySettings | None = None
    power_fail: PowerFailSettings | None = None
    door: DoorSettings | None = None


def _devices(top: _Section, r: _Reader, game: Game, rules: RuleSettings) -> _Devices | None:
    """The devices the game needs (and may have), each read by its reader."""
    required, optional = _DEVICES[game]
    why = f" (game {game} needs devices {', '.join(required)})"
    devices = r.attempt(lambda: top.section("devices", required=True, why=why))
    if devices is None:
        return None
    every = {d for pair in _DEVICES.values() for d in pair[0] + pair[1]}
    for dev in sorted(set(devices.table) - set(required) - set(optional)):
        if dev in every:
            devices.r.used.add(devices.key(dev))
            _mark_all(r, _table(devices.table, dev), devices.key(dev) + ".")
            r.fail(
                r.error(
                    devices.key(dev),
                    f"not used by game {game} (it uses {', '.join(required + optional)})",
                )
            )
    complete = True

    def device(dev: str, read: Callable[[_Section], T]) -> T | None:
        nonlocal complete
        if dev not in required + optional:
            return None
        need = f": game {game} needs this device"
        sec = r.attempt(partial(devices.section, dev, dev in required, need))
        if sec is None:
            complete = complete and dev not in required
            return None
        value = r.attempt(partial(read, sec), sec)
        complete = complete and value is not None
        return value

    found = _Devices(  # read in this order (the errors are reported in it)
        display=device("display", lambda s: _display(s, r)),
        buttons=device("buttons", lambda s: _buttons(s, r, game)),
        seat_lamps=device("seat_lamps", lambda s: _seat_lamps(s, r)),
        shoe=device("shoe", lambda s: _shoe(s, r, rules)),
        dealer_display=device("dealer_display", lambda s: _dealer_display(s, r)),
        power_fail=device("power_fail", lambda s: s.read(PowerFailSettings)),
        door=device("door", lambda s: s.read(DoorSettings)),
    )
    return found if complete else None


def _display(s: _Section, r: _Reader) -> DisplaySettings:
    driver = s.setting(DisplaySettings, "driver", as_str)
    if driver == "seven-segment":
        s.refuse(("port", "baud", "ack"), "only with driver serial-led")
        pins_sec = s.section("pins", required=True, why=" (segments a-g, optional dp)")
        assert pins_sec is not None
        pins = _named_pins(pins_sec, r, SEGMENTS, ("dp",), "segment")
        why = ': "anode" or "cathode" (wrong, every segment inverts)'
        common = s.setting(DisplaySettings, "common", _choice(COMMONS), default=REQUIRED, why=why)
        return DisplaySettings("seven-segment", pins=MappingProxyType(pins), common=common)
    s.refuse(("pins", "common"), "only with driver seven-segment")
    return DisplaySettings(
        "serial-led",
        port=s.setting(DisplaySettings, "port", as_str, default=REQUIRED),
        baud=s.setting(DisplaySettings, "baud", as_int, default=9600),
        ack=s.setting(DisplaySettings, "ack", as_bool, default=True),
    )


def _named_pins(
    s: _Section,
    r: _Reader,
    required: tuple[str, ...],
    optional: tuple[str, ...],
    what: str,
    context: str = "",
) -> dict[str, int]:
    known = required + optional
    for name in s.table:
        if name not in known:
            near = difflib.get_close_matches(name, known, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            s.r.used.add(s.key(name))
            r.fail(
                r.error(s.key(name), f"unknown {what}{context}{hint}; known: {', '.join(known)}")
            )
    pins: dict[str, int] = {}
    failed = False
    for name in known:
        if name in required or name in s.table:
            why = f": {what} required{context}; needs {', '.join(required)}"
            try:
                pins[name] = s.value(name, PIN, why=why)
            except _Skip:
                failed = True
    if failed:
        raise _Skip(s.prefix)
    return pins


def _buttons(s: _Section, r: _Reader, game: str) -> ButtonSettings:
    required, optional = _BUTTONS[game]
    pins_sec = s.section("pins", required=True, why=f" (buttons {', '.join(required)})")
    assert pins_sec is not None
    pins = r.attempt(lambda: _named_pins(pins_sec, r, required, optional, "button", f" for {game}"))
    settings = s.read(ButtonSettings, values={"pins": MappingProxyType(pins or {})})
    if pins is None:
        raise _Skip(s.prefix)
    return settings


def _seat_lamps(s: _Section, r: _Reader) -> SeatLampSettings:
    pins_sec = s.section("pins", required=True, why=" (seat number 1-8 = GPIO pin)")
    assert pins_sec is not None
    seats = tuple(str(n) for n in range(1, 9))
    pins = r.attempt(lambda: _named_pins(pins_sec, r, (), seats, "seat"))
    if pins is not None and not pins and not pins_sec.table:
        r.fail(r.error(pins_sec.prefix.rstrip("."), "names no seat; remove the table instead"))
        pins = None
    by_seat = MappingProxyType({int(k): v for k, v in (pins or {}).items()})
    lamps = s.read(SeatLampSettings, values={"pins": by_seat})
    if pins is None:
        raise _Skip(s.prefix)
    return lamps


def _shoe(s: _Section, r: _Reader, rules: RuleSettings) -> ShoeSettings:
    port = s.setting(ShoeSettings, "port", as_str)
    sim_keys = ("sim_decks", "sim_seed", "sim_auto_deal_s")
    if port != "sim":
        s.refuse(sim_keys, 'only with port = "sim"')
        d = ShoeSettings(port)
        return s.read(ShoeSettings, values={"port": port, **{k: getattr(d, k) for k in sim_keys}})
    decks = rules.baccarat.decks
    shoe = s.read(ShoeSettings, values={"port": port}, defaults={"sim_decks": decks})
    if shoe.sim_decks != decks:
        raise r.error(
            s.key("sim_decks"), f"{shoe.sim_decks} differs from rules.baccarat.decks {decks}"
        )
    return shoe


def _dealer_display(s: _Section, r: _Reader) -> DealerDisplaySettings:
    driver = s.setting(DealerDisplaySettings, "driver", as_str)
    if driver == "sim":
        s.refuse(("port", "baud", "ack"), "only with driver serial-text")
        return DealerDisplaySettings("sim")
    return DealerDisplaySettings(
        "serial-text",
        port=s.setting(DealerDisplaySettings, "port", as_str, default=REQUIRED),
        baud=s.setting(DealerDisplaySettings, "baud", as_int, default=9600),
        ack=s.setting(DealerDisplaySettings, "ack", as_bool, default=True),
    )


def _check_pins(r: _Reader, backend: str, console: ConsoleSettings, board: BoardSettings) -> None:
    """One GPIO pin, one use, across every device and the board's overlays (5324.50/20 say
    nothing; wiring does): a button on a pin the TPM's SPI0 or the RTC's I2C1 drives would read
    the bus, a lamp there would fight it."""
    claimed: dict[int, str] = {}
    for overlay in board.overlays:
        bus, pins = BOARD_OVERLAYS[overlay]
        for pin, signal in pins.items():
            claimed[pin] = f"{bus} {signal}, taken by board.overlays {overlay}"
    users: dict[int, str] = {}
    for key, _text, _src in r.report:
        if not _is_pin_key(key):
            continue
        pin = as_int(_get(r.data, key), key)
        if pin in users:
            r.fail(
                r.error(key, f"GPIO {pin} is also used by {users[pin]} ({r.file_of(users[pin])})")
            )
            continue
        if pin in claimed:
            r.fail(r.error(key, f"GPIO {pin} is {claimed[pin]}"))
            continue
        if backend == "rpi" and console.port in HEADER_UART_PORTS and pin in HEADER_UART_PINS:
            r.fail(
                r.error(
                    key,
                    f"GPIO {pin} is the header UART's {HEADER_UART_PINS[pin]},"
                    f" used by console.port {console.port}",
                )
            )
        users[pin] = key


#: Keys that name a serial device, and the names that are no device.
_PORT_KEYS: Final = (
    "console.port",
    "devices.shoe.port",
    "devices.display.port",
    "devices.dealer_display.port",
)
_NOT_A_DEVICE: Final = ("stdio", "none", "sim")


def _check_serial_ports(r: _Reader) -> None:
    """One serial device, one role (as one GPIO pin, one use): a console and a shoe on the same
    port would each read the other's bytes. Symlinks are followed (``/dev/serial0`` is the
    header UART ``/dev/ttyAMA0`` or ``/dev/ttyS0``; ``/dev/serial/by-id/...`` names a USB port)."""
    users: dict[str, str] = {}
    read = {key for key, _text, source in r.report if source != "(default)"}
    for key in _PORT_KEYS:
        if key not in read:
            continue  # not given, or refused already
        port = _get(r.data, key)
        if not isinstance(port, str) or port in _NOT_A_DEVICE:
            continue
        device = os.path.realpath(port)
        if device in users:
            other = users[device]
            same = "" if _get(r.data, other) == port else f" (both are {device})"
            r.fail(
                r.error(
                    key,
                    f"{port} is also {other} ({r.file_of(other)}){same}:"
                    " one serial device, one role",
                )
            )
            continue
        users[device] = key


def _is_pin_key(key: str) -> bool:
    parts = key.split(".")
    if parts in (["devices", "power_fail", "pin"], ["devices", "door", "pin"]):
        return True
    return len(parts) == 4 and parts[0] == "devices" and parts[2] == "pins"


def _get(data: Mapping[str, object], key: str) -> object:
    value: object = data
    for part in key.split("."):
        assert isinstance(value, dict)
        value = value[part]
    return value
