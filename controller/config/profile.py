"""Hardware profiles: one TOML file per table build, layered, refusing mistakes (issue 6).

A profile names the game, the driver for each device (real or simulated), GPIO pins, serial
ports, the console port, the journal's files and the table's default rule settings. A profile may
``include = "other.toml"`` (relative to the including file) and override it key by key: tables
merge deeply, values replace. Unknown or misspelt keys, wrong types, out-of-range values, a GPIO
pin used twice and a device the game needs but lacks are :class:`ProfileError` naming the file,
the dotted key and what is wrong (the habits of Klipper's ``configfile``; STYLE.md).
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
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final, Literal, TypeVar, cast
from urllib.parse import urlsplit

from controller.config.settings import SETTING_KEYS, ConfigError, RuleSettings

__all__ = [
    "BACCARAT_BUTTONS",
    "BACCARAT_OPTIONAL_BUTTONS",
    "GAMES",
    "PAIGOW_BUTTONS",
    "PAIGOW_OPTIONAL_BUTTONS",
    "SIGNERS",
    "STANDARD_BAUDS",
    "TOPIC_ID_PATTERN",
    "ButtonSettings",
    "ConsoleSettings",
    "DealerDisplaySettings",
    "DisplaySettings",
    "FeedSettings",
    "JournalSettings",
    "Profile",
    "ProfileError",
    "RngSettings",
    "ScoreboardSettings",
    "ShoeSettings",
    "check_profile_report",
    "load_profile",
]

Game = Literal["paigow", "baccarat"]
GAMES: Final = ("paigow", "baccarat")
#: The dealer's buttons, one per step of the round the dealer confirms (5324.50(d)-(f)).
PAIGOW_BUTTONS: Final = ("shuffled", "no_more_bets", "draw", "dealt", "hands_set", "settled")
PAIGOW_OPTIONAL_BUTTONS: Final = ("void",)
#: 5324.20(b)(3), (f)(4), (g); ``disclose`` reports a disclosed card, (i)(1)-(2).
BACCARAT_BUTTONS: Final = ("shuffled", "no_more_bets", "settled")
#: ``shoe_resume``: the dealer confirms a new shoe session (DESIGN.md shoe protocol revision 2).
BACCARAT_OPTIONAL_BUTTONS: Final = ("disclose", "shoe_resume")
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
#: The header UART is on GPIO 14 (TXD) and 15 (RXD) on a Pi 4 and a Pi 5.
HEADER_UART_PORTS: Final = ("/dev/serial0", "/dev/ttyAMA0", "/dev/ttyS0")
HEADER_UART_PINS: Final = {14: "TXD", 15: "RXD"}
SEGMENTS: Final = ("a", "b", "c", "d", "e", "f", "g")
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
    "paigow": (("display", "buttons"), ("seat_lamps",)),
    "baccarat": (("shoe", "dealer_display", "buttons"), ("seat_lamps",)),
}
_BUTTONS: Final[Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {
    "paigow": (PAIGOW_BUTTONS, PAIGOW_OPTIONAL_BUTTONS),
    "baccarat": (BACCARAT_BUTTONS, BACCARAT_OPTIONAL_BUTTONS),
}


class ProfileError(ValueError):
    """A profile was refused. ``file``, ``key`` (dotted) and ``problem`` are also attributes."""

    def __init__(self, file: str, key: str, problem: str) -> None:
        super().__init__(f"{file}: {key}: {problem}" if key else f"{file}: {problem}")
        self.file = file
        self.key = key
        self.problem = problem


# -- the typed result --------------------------------------------------------------------------


#: The journal's signer backends (docs/journal.md "Signer").
SIGNERS: Final = ("file", "pkcs11")


@dataclass(frozen=True)
class JournalSettings:
    """Where the journal, its anchor and its archive live (every file inside the state directory:
    relative paths; the anchor possibly under ``second_medium``, :func:`_rel_path`), how its
    heads are signed, and how long rows stay live."""

    path: str = "journal.sqlite"
    #: A directory on another medium (a second SD card, a USB stick) where the anchor may live
    #: instead of the state directory (docs/configuration.md "State files").
    second_medium: str | None = None
    #: The name signed into every head (the feed's collector knows the table by it); when
    #: unset, ``feed.table`` if the profile's ``[feed]`` names one, else the profile's ``name``.
    table_id: str | None = None
    signer: str = "file"
    #: ``file`` signer: the PEM private key (mode 0600), created only with a new journal.
    key_path: str = "journal-key.pem"
    #: ``pkcs11`` signer: the module (e.g. /usr/lib/aarch64-linux-gnu/pkcs11/libtpm2_pkcs11.so),
    #: the token's label, the key's label and a file holding the user PIN (absolute paths).
    pkcs11_module: str | None = None
    #: The module's SHA-256 (64 hex digits): the module is code loaded into the process from
    #: outside the release, so a sealed profile pins it and a mismatch refuses the start
    #: (docs/program-verification.md); required when the profile is sealed.
    pkcs11_module_sha256: str | None = None
    pkcs11_token: str | None = None
    pkcs11_key_label: str = "table-journal"
    pkcs11_pin_file: str | None = None
    #: Every signed head is also appended here and synced: better on a second medium.
    anchor_path: str = "journal.anchor"
    archive_dir: str = "archive"
    clock_floor: datetime.date = datetime.date(2026, 1, 1)
    retain_days: int = 90
    #: Hours between the starts of two background passes over the whole journal.
    scrub_hours: int = 24
    #: The TPM 2.0 NV counter signed into every anchored head, as a TCTI string
    #: (``device:/dev/tpmrm0``, ``swtpm:host=...,port=...``), or ``none`` (no TPM: a journal
    #: restored from a copy while the feed was down is not detected; docs/journal.md).
    counter: str = "none"
    #: The counter's NV index (the TPM owner's range 0x01000000-0x01bfffff).
    counter_index: int = 0x01500016


@dataclass(frozen=True)
class ConsoleSettings:
    """The technician's console: ``stdio``, ``none`` or a serial device path. ``line_editing``
    makes it a terminal line (echo, prompt, BS/DEL, Ctrl-U, Ctrl-C) for a technician's
    terminal; false for a machine peer (the HIL rig, a host script)."""

    port: str = "stdio"
    baud: int = 115200
    line_editing: bool = True


@dataclass(frozen=True)
class RngSettings:
    """The certified RNG; ``hwrng_path`` adds the board's hardware generator to the health
    tests when set."""

    hwrng_path: str | None = None


@dataclass(frozen=True)
class DisplaySettings:
    """The 1-8 display. ``seven-segment``: ``pins`` (a-g, optional dp) and ``common``;
    ``serial-led``: ``port`` (device path or ``sim``) and ``baud``."""

    driver: Literal["seven-segment", "serial-led"]
    pins: Mapping[str, int] | None = None
    common: Literal["anode", "cathode"] | None = None
    port: str | None = None
    baud: int | None = None


@dataclass(frozen=True)
class ButtonSettings:
    """The dealer's buttons by name (:data:`PAIGOW_BUTTONS`, :data:`BACCARAT_BUTTONS`)."""

    pins: Mapping[str, int]
    bounce_ms: int = 30
    active_low: bool = True


@dataclass(frozen=True)
class ShoeSettings:
    """The card shoe's serial port (``sim``: an in-process simulated shoe on a pseudo-terminal);
    the ``sim_*`` settings apply only to the simulated shoe."""

    port: str
    baud: int = 115200  # DESIGN.md shoe protocol revision 2: 115200 by default
    watchdog_s: float = 3.0
    sim_decks: int = 8
    sim_seed: int | None = None
    sim_auto_deal_s: float | None = None


@dataclass(frozen=True)
class ScoreboardSettings:
    """The table's monitor pages (controller/scoreboard, docs/scoreboard.md): served on
    ``address``:``port`` while ``enabled``; port 0 takes any free port (tests run several
    tables at once); at most ``max_clients`` connections at once, more are answered 503, at
    most ``per_peer`` from one address other than the ``kiosk`` addresses (which also have
    slots kept for them); a request whose ``Host`` is neither the bound address nor one of
    ``names`` is refused (DNS rebinding)."""

    enabled: bool = False
    address: str = "127.0.0.1"
    port: int = 8080
    max_clients: int = 16
    per_peer: int = 4
    kiosk: tuple[str, ...] = ("127.0.0.1", "::1")
    names: tuple[str, ...] = ()
    # What the monitor shows besides the table's state (docs/scoreboard.md): the table's name
    # in the header ("": the table's id), the labels' languages, after how many minutes without
    # a coup or round the idle screen comes (0: never) and the texts it shows, and how many
    # big-road columns a screen holds (a monitor's address may choose another).
    table_name: str = ""
    languages: tuple[str, ...] = ("en",)
    idle_minutes: float = 10.0
    idle_text: tuple[str, ...] = ()
    density: str = "standard"

    @property
    def loopback(self) -> bool:
        """True when only this machine can connect (127.0.0.0/8, ::1)."""
        return ipaddress.ip_address(self.address).is_loopback


@dataclass(frozen=True)
class DealerDisplaySettings:
    """The dealer's text display: ``serial-text`` (``port``, ``baud``) or ``sim``."""

    driver: Literal["serial-text", "sim"]
    port: str | None = None
    baud: int | None = None


@dataclass(frozen=True)
class FeedSettings:
    """The host feed (docs/feed.md): the broker (``mqtts://host:port``; ``mqtt://`` only to
    this machine, for development), the site and table ids in the topics, and the TLS files
    (absolute paths). ``position_path`` is relative to the state directory unless absolute."""

    broker: str
    site: str
    table: str  # the journal's table id (one name for both; docs/feed.md)
    ca: str | None = None
    cert: str | None = None
    key: str | None = None
    position_path: str = "feed.position"
    heartbeat_s: float = 60.0
    window: int = 20
    #: Withhold the next draw (pai gow) or coup (baccarat, at no more bets) while the broker has
    #: not acknowledged the journal up to the last decision for more than this many seconds;
    #: 0 (the default) never withholds (docs/feed.md "Holding play for the feed").
    hold_decisions_unacked_s: int = 0


@dataclass(frozen=True)
class Profile:
    """A whole, checked hardware profile."""

    name: str
    game: Game
    source_files: tuple[str, ...]
    gpio_backend: Literal["rpi", "sim"]
    journal: JournalSettings
    console: ConsoleSettings
    rng: RngSettings
    rules: RuleSettings
    display: DisplaySettings | None = None
    buttons: ButtonSettings | None = None
    seat_lamps: Mapping[int, int] | None = None
    shoe: ShoeSettings | None = None
    dealer_display: DealerDisplaySettings | None = None
    scoreboard: ScoreboardSettings = ScoreboardSettings()
    feed: FeedSettings | None = None


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


def profile_warnings(profile: Profile) -> list[str]:
    """Choices a profile may make that deserve a second look (printed by check-profile)."""
    out = []
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
    data: dict[str, Any],
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
    base: dict[str, Any], over: Mapping[str, Any], origin: dict[str, str], file: str, prefix: str
) -> None:
    for k, v in over.items():
        key = f"{prefix}{k}"
        old = base.get(k)
        if isinstance(v, dict):
            if k in base and not isinstance(old, dict):
                raise ProfileError(file, key, f"is a table here but a value in {origin[key]}")
            _merge(base.setdefault(k, {}), v, origin, file, f"{key}.")
        else:
            if isinstance(old, dict):
                raise ProfileError(file, key, f"is a value here but a table in {origin[key]}")
            base[k] = v
        origin[key] = file


# -- the typed reader --------------------------------------------------------------------------

T = TypeVar("T")
_REQUIRED: Final = object()


class _Reader:
    """Merged data plus where each key came from; records what was read for the report."""

    def __init__(self, data: dict[str, Any], origin: dict[str, str], top: str) -> None:
        self.data = data
        self.origin = origin
        self.top = top
        self.used: set[str] = set()
        self.asked: dict[str, set[str]] = {}
        self.report: list[tuple[str, str, str]] = []
        #: ``journal.second_medium`` once read (the anchor may live there).
        self.second_medium: str | None = None

    def file_of(self, key: str) -> str:
        while key:
            if key in self.origin:
                return self.origin[key]
            key = key.rpartition(".")[0]
        return self.top

    def error(self, key: str, problem: str) -> ProfileError:
        return ProfileError(self.file_of(key), key, problem)

    def record(self, key: str, value: object, given: bool) -> None:
        self.report.append((key, _toml_text(value), self.origin[key] if given else "(default)"))

    def check_unused(self, table: Mapping[str, Any] | None = None, prefix: str = "") -> None:
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
                raise self.error(key, f"unknown key{hint}")
            if isinstance(v, dict):
                self.check_unused(v, f"{key}.")


class _Section:
    """One table of the merged profile, read with typed getters."""

    def __init__(self, reader: _Reader, prefix: str, table: dict[str, Any]) -> None:
        self.r = reader
        self.prefix = prefix
        self.table = table

    def key(self, name: str) -> str:
        return f"{self.prefix}{name}"

    def _ask(self, name: str) -> None:
        self.r.asked.setdefault(self.prefix, set()).add(name)

    def has(self, name: str) -> bool:
        self._ask(name)
        return name in self.table

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

    def value(
        self, name: str, conv: Callable[[str, Any], T], default: Any = _REQUIRED, why: str = ""
    ) -> T:
        self._ask(name)
        key = self.key(name)
        if name not in self.table:
            if default is _REQUIRED:
                raise self.missing(name, why)
            self.r.record(key, default, given=False)
            return default  # type: ignore[no-any-return]
        self.r.used.add(key)
        result = conv(key, self.table[name])
        self.r.record(key, result, given=True)
        return result

    def section(self, name: str, required: bool = False, why: str = "") -> _Section | None:
        self._ask(name)
        key = self.key(name)
        if name not in self.table:
            if required:
                raise self.missing(name, why)
            return None
        sub = self.table[name]
        if not isinstance(sub, dict):
            raise self.r.error(key, f"expected a table, got {sub!r}")
        self.r.used.add(key)
        return _Section(self.r, f"{key}.", sub)

    def refuse(self, names: tuple[str, ...], why: str) -> None:
        for name in names:
            if name in self.table:
                raise self.r.error(self.key(name), f"not allowed: {why}")


def _toml_text(value: object) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_toml_text(v) for v in value) + "]"
    return str(value)


def _type_error(reader: _Reader, key: str, wanted: str, raw: object) -> ProfileError:
    return reader.error(
        key, f"wrong type: expected {wanted}, got {_toml_text(raw)} ({type(raw).__name__})"
    )


def _str(reader: _Reader, choices: tuple[str, ...] = ()) -> Callable[[str, Any], str]:
    def conv(key: str, raw: Any) -> str:
        if not isinstance(raw, str) or not raw:
            raise _type_error(reader, key, "a non-empty string", raw)
        if choices and raw not in choices:
            near = difflib.get_close_matches(raw, choices, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise reader.error(key, f"{raw!r} is not one of {', '.join(choices)}{hint}")
        return raw

    return conv


def _int(
    reader: _Reader, lo: int | None = None, hi: int | None = None, choices: tuple[int, ...] = ()
) -> Callable[[str, Any], int]:
    def conv(key: str, raw: Any) -> int:
        if not isinstance(raw, int) or isinstance(raw, bool):
            raise _type_error(reader, key, "a whole number", raw)
        if choices and raw not in choices:
            raise reader.error(key, f"{raw} is not one of {', '.join(map(str, choices))}")
        if (lo is not None and raw < lo) or (hi is not None and raw > hi):
            raise reader.error(key, f"{raw} is out of range {lo}..{hi}")
        return raw

    return conv


def _float(reader: _Reader, lo: float, hi: float) -> Callable[[str, Any], float]:
    def conv(key: str, raw: Any) -> float:
        if not isinstance(raw, int | float) or isinstance(raw, bool):
            raise _type_error(reader, key, "a number", raw)
        if not lo <= raw <= hi:
            raise reader.error(key, f"{raw} is out of range {lo}..{hi}")
        return float(raw)

    return conv


def _bool(reader: _Reader) -> Callable[[str, Any], bool]:
    def conv(key: str, raw: Any) -> bool:
        if not isinstance(raw, bool):
            raise _type_error(reader, key, "true or false", raw)
        return raw

    return conv


def _date(reader: _Reader) -> Callable[[str, Any], datetime.date]:
    def conv(key: str, raw: Any) -> datetime.date:
        if not isinstance(raw, datetime.date) or isinstance(raw, datetime.datetime):
            raise _type_error(reader, key, "a date (e.g. 2026-01-01, unquoted)", raw)
        return raw

    return conv


def _sha256(reader: _Reader) -> Callable[[str, Any], str]:
    """A SHA-256 digest: 64 hexadecimal digits (as ``sha256sum`` prints it), kept lower-case."""

    def conv(key: str, raw: Any) -> str:
        text = _str(reader)(key, raw).lower()
        if len(text) != 64 or any(c not in "0123456789abcdef" for c in text):
            raise reader.error(
                key, f"{raw!r} is not a SHA-256 (64 hexadecimal digits, as sha256sum prints it)"
            )
        return text

    return conv


def _tcti(reader: _Reader) -> Callable[[str, Any], str]:
    """``none`` or a tpm2-tss TCTI string naming the TPM (``device:``, ``swtpm:``, ``mssim:``,
    ``tabrmd:``)."""

    def conv(key: str, raw: Any) -> str:
        text = _str(reader)(key, raw)
        if text == "none" or re.fullmatch(r"(device|swtpm|mssim|tabrmd)(:[\x21-\x7e]*)?", text):
            return text
        raise reader.error(
            key,
            f"{text!r} is not 'none' or a TPM's TCTI (device:/dev/tpmrm0,"
            " swtpm:host=127.0.0.1,port=2321)",
        )

    return conv


def _path(reader: _Reader, specials: tuple[str, ...] = ()) -> Callable[[str, Any], str]:
    """A device or file path (absolute), or one of ``specials``."""

    def conv(key: str, raw: Any) -> str:
        text = _str(reader)(key, raw)
        if text in specials or text.startswith("/"):
            return text
        allowed = " or ".join([*(repr(s) for s in specials), "an absolute path"])
        raise reader.error(key, f"{text!r} is not {allowed}")

    return conv


#: State files that may instead live on a second medium (DESIGN.md "Anchor": a rollback of the
#: disk must not take the anchor with it): absolute, under ``journal.second_medium``.
SECOND_MEDIUM_KEYS: Final = frozenset({"journal.anchor_path"})


def _rel_path(reader: _Reader) -> Callable[[str, Any], str]:
    """A file of the table's state: a path inside the state directory (relative, no ``..``),
    or, for :data:`SECOND_MEDIUM_KEYS`, an absolute path under ``journal.second_medium``. A
    journal, key or anchor elsewhere would let a profile point the record at a file another
    part of the system writes (Application re-checks the resolved path: symlinks)."""

    def conv(key: str, raw: Any) -> str:
        text = _str(reader)(key, raw)
        if "\0" in text:
            raise reader.error(key, "a path cannot contain a NUL byte")
        parts = Path(text).parts
        if ".." in parts:
            raise reader.error(key, f"{text!r} climbs out of the state directory with '..'")
        medium = reader.second_medium
        if text.startswith("/"):
            if key in SECOND_MEDIUM_KEYS and medium is not None and _under(text, medium):
                return text
            where = (
                f" or under journal.second_medium {medium}"
                if medium is not None and key in SECOND_MEDIUM_KEYS
                else " (a second medium: journal.second_medium)"
                if key in SECOND_MEDIUM_KEYS
                else ""
            )
            raise reader.error(
                key, f"{text!r} is outside the state directory: give a path relative to it{where}"
            )
        return text

    return conv


def _address(reader: _Reader) -> Callable[[str, Any], str]:
    """An IPv4 or IPv6 address literal (a host name would depend on name resolution at start)."""

    def conv(key: str, raw: Any) -> str:
        text = _str(reader)(key, raw)
        try:
            return str(ipaddress.ip_address(text))
        except ValueError:
            hint = " (use 127.0.0.1)" if text == "localhost" else ""
            raise reader.error(key, f"{text!r} is not an IP address{hint}") from None

    return conv


def _under(path: str, folder: str) -> bool:
    return Path(os.path.normpath(path)).is_relative_to(
        os.path.normpath(folder)
    ) and os.path.normpath(path) != os.path.normpath(folder)


def _baud(reader: _Reader) -> Callable[[str, Any], int]:
    return _int(reader, choices=STANDARD_BAUDS)


def _pin(reader: _Reader) -> Callable[[str, Any], int]:
    return _int(reader, GPIO_MIN, GPIO_MAX)


# -- reading a profile -------------------------------------------------------------------------


def _resolve(path: str | os.PathLike[str]) -> tuple[Profile, _Reader]:
    shown = os.fspath(path)
    data: dict[str, Any] = {}
    origin: dict[str, str] = {}
    files: list[str] = []
    _read_layers(Path(shown), shown, (), data, origin, files)
    r = _Reader(data, origin, shown)
    top = _Section(r, "", data)

    name = top.value("name", _str(r), Path(shown).stem)
    game = cast(Game, top.value("game", _str(r, GAMES)))
    gpio_backend = cast(Literal["rpi", "sim"], top.value("gpio_backend", _str(r, ("rpi", "sim"))))
    journal = _journal(top.section("journal"), r)
    console = _console(top.section("console"), r)
    rng_sec = top.section("rng")
    rng = RngSettings(rng_sec.value("hwrng_path", _path(r), None) if rng_sec else None)
    if rng_sec is None:
        r.record("rng.hwrng_path", None, given=False)
    rules = _rules(top, r)
    scoreboard = _scoreboard(top.section("scoreboard"), r)
    feed_sec = top.section("feed")
    feed = _feed(feed_sec, r, journal.table_id, name) if feed_sec is not None else None
    if (
        feed is not None
        and journal.table_id is None
        and feed_sec is not None
        and feed_sec.has("table")
    ):
        # issue 16: [feed] table alone names the table; the journal signs its heads with it
        journal = replace(journal, table_id=feed.table)
        r.report = [
            (k, _toml_text(feed.table), "(feed.table)")
            if k == "journal.table_id"
            else (k, text, source)
            for k, text, source in r.report
        ]

    required, optional = _DEVICES[game]
    devices = top.section(
        "devices", required=True, why=f" (game {game} needs devices {', '.join(required)})"
    )
    assert devices is not None
    for dev in sorted(set(devices.table) - set(required) - set(optional)):
        if dev in {d for pair in _DEVICES.values() for d in pair[0] + pair[1]}:
            raise r.error(
                devices.key(dev),
                f"not used by game {game} (it uses {', '.join(required + optional)})",
            )

    def need(dev: str) -> _Section | None:
        return devices.section(
            dev, required=dev in required, why=f": game {game} needs this device"
        )

    sec = need("display") if "display" in required + optional else None
    display = _display(sec, r) if sec else None
    sec = need("buttons")
    buttons = _buttons(sec, r, game) if sec else None
    sec = need("seat_lamps")
    seat_lamps = _seat_lamps(sec, r) if sec else None
    sec = need("shoe") if "shoe" in required + optional else None
    shoe = _shoe(sec, r, rules) if sec else None
    sec = need("dealer_display") if "dealer_display" in required + optional else None
    dealer = _dealer_display(sec, r) if sec else None

    r.check_unused()
    _check_pins(r, gpio_backend, console)
    _check_serial_ports(r)

    profile = Profile(
        name=name,
        game=game,
        source_files=tuple(files),
        gpio_backend=gpio_backend,
        journal=journal,
        console=console,
        rng=rng,
        rules=rules,
        display=display,
        buttons=buttons,
        seat_lamps=seat_lamps,
        shoe=shoe,
        dealer_display=dealer,
        scoreboard=scoreboard,
        feed=feed,
    )
    return profile, r


def _defaults(sec: _Section | None, r: _Reader, prefix: str) -> _Section:
    """An absent optional table reads as an empty one, so its defaults are reported."""
    return sec if sec is not None else _Section(r, prefix, {})


def _journal(sec: _Section | None, r: _Reader) -> JournalSettings:
    s = _defaults(sec, r, "journal.")
    d = JournalSettings()
    r.second_medium = s.value("second_medium", _path(r), d.second_medium)
    signer = s.value("signer", _str(r, SIGNERS), d.signer)
    pkcs11 = signer == "pkcs11"
    why = ' (signer = "pkcs11" needs the module, the token\'s label and the PIN file)'
    return JournalSettings(
        second_medium=r.second_medium,
        path=s.value("path", _rel_path(r), d.path),
        table_id=s.value("table_id", _str(r), d.table_id),
        signer=signer,
        key_path=s.value("key_path", _rel_path(r), d.key_path),
        pkcs11_module=s.value("pkcs11_module", _path(r), _REQUIRED if pkcs11 else None, why),
        pkcs11_module_sha256=s.value("pkcs11_module_sha256", _sha256(r), None),
        pkcs11_token=s.value("pkcs11_token", _str(r), _REQUIRED if pkcs11 else None, why),
        pkcs11_key_label=s.value("pkcs11_key_label", _str(r), d.pkcs11_key_label),
        pkcs11_pin_file=s.value("pkcs11_pin_file", _path(r), _REQUIRED if pkcs11 else None, why),
        anchor_path=s.value("anchor_path", _rel_path(r), d.anchor_path),
        archive_dir=s.value("archive_dir", _rel_path(r), d.archive_dir),
        clock_floor=s.value("clock_floor", _date(r), d.clock_floor),
        # issue 6: events are kept at least 90 days
        retain_days=s.value("retain_days", _int(r, 90, 3650), d.retain_days),
        scrub_hours=s.value("scrub_hours", _int(r, 1, 24 * 7), d.scrub_hours),
        counter=s.value("counter", _tcti(r), d.counter),
        counter_index=s.value("counter_index", _int(r, 0x01000000, 0x01BFFFFF), d.counter_index),
    )


def _console(sec: _Section | None, r: _Reader) -> ConsoleSettings:
    s = _defaults(sec, r, "console.")
    d = ConsoleSettings()
    return ConsoleSettings(
        port=s.value("port", _path(r, ("stdio", "none")), d.port),
        baud=s.value("baud", _baud(r), d.baud),
        line_editing=s.value("line_editing", _bool(r), d.line_editing),
    )


def _scoreboard(sec: _Section | None, r: _Reader) -> ScoreboardSettings:
    """Absent: off. Present: on unless ``enabled = false``, loopback port 8080 by default."""
    s = _defaults(sec, r, "scoreboard.")
    d = ScoreboardSettings()
    return ScoreboardSettings(
        enabled=s.value("enabled", _bool(r), sec is not None),
        address=s.value("address", _address(r), d.address),
        port=s.value("port", _int(r, 0, 65535), d.port),
        max_clients=s.value("max_clients", _int(r, 1, 256), d.max_clients),
        per_peer=s.value("per_peer", _int(r, 1, 256), d.per_peer),
        kiosk=s.value("kiosk", _list_of(r, _address(r)), d.kiosk),
        names=s.value("names", _list_of(r, _host_name(r)), d.names),
        table_name=s.value("table_name", _display_text(r, 32, empty=True), d.table_name),
        languages=s.value("languages", _languages(r), d.languages),
        idle_minutes=s.value("idle_minutes", _idle_minutes(r), d.idle_minutes),
        idle_text=s.value("idle_text", _list_of(r, _display_text(r, 60)), d.idle_text),
        density=s.value("density", _str(r, tuple(SCOREBOARD_DENSITIES)), d.density),
    )


def _display_text(reader: _Reader, most: int, empty: bool = False) -> Callable[[str, Any], str]:
    """A text the monitor shows: at most ``most`` characters, none of them a control character
    (a line break or an escape would break the page's layout, not its safety: it is text)."""

    def conv(key: str, raw: Any) -> str:
        if not isinstance(raw, str) or (not raw and not empty):
            raise _type_error(reader, key, "a non-empty string" if not empty else "a string", raw)
        if len(raw) > most:
            raise reader.error(key, f"{len(raw)} characters: at most {most} fit the monitor")
        bad = [ch for ch in raw if unicodedata.category(ch).startswith("C")]
        if bad:
            raise reader.error(key, f"holds a control character ({ascii(bad[0])})")
        return raw

    return conv


def _languages(reader: _Reader) -> Callable[[str, Any], tuple[str, ...]]:
    """One or two of :data:`SCOREBOARD_LANGUAGES`, each once (two: every label shows both)."""

    def conv(key: str, raw: Any) -> tuple[str, ...]:
        if not isinstance(raw, list) or not 1 <= len(raw) <= 2:
            raise _type_error(reader, key, "a list of one or two languages", raw)
        langs = tuple(
            _str(reader, SCOREBOARD_LANGUAGES)(f"{key}[{i}]", v) for i, v in enumerate(raw)
        )
        if len(set(langs)) != len(langs):
            raise reader.error(key, "names a language twice")
        return langs

    return conv


def _idle_minutes(reader: _Reader) -> Callable[[str, Any], float]:
    """0 (never idle) or 0.05 to 1440 minutes (a fraction of a minute for a test bench)."""
    inner = _float(reader, 0.0, 1440.0)

    def conv(key: str, raw: Any) -> float:
        value = inner(key, raw)
        if 0 < value < 0.05:
            raise reader.error(key, f"{raw} is out of range: 0 (never) or 0.05..1440")
        return value

    return conv


def _list_of(
    reader: _Reader, item: Callable[[str, Any], str]
) -> Callable[[str, Any], tuple[str, ...]]:
    """A TOML array of strings, each checked by ``item`` (at most 16)."""

    def conv(key: str, raw: Any) -> tuple[str, ...]:
        if not isinstance(raw, list) or len(raw) > 16:
            raise _type_error(reader, key, "a list of at most 16 strings", raw)
        return tuple(item(f"{key}[{i}]", v) for i, v in enumerate(raw))

    return conv


def _host_name(reader: _Reader) -> Callable[[str, Any], str]:
    """A DNS name the monitor is reached by (RFC 1123 labels), lower-cased, no port."""

    def conv(key: str, raw: Any) -> str:
        text = _str(reader)(key, raw).lower().rstrip(".")
        label = r"(?!-)[a-z0-9-]{1,63}(?<!-)"
        if len(text) > 253 or re.fullmatch(rf"{label}(\.{label})*", text) is None:
            raise reader.error(
                key,
                f"{raw!r} is not a host name (letters, digits, '-' and '.'; no port, no scheme)",
            )
        return text

    return conv


def _topic_id(reader: _Reader) -> Callable[[str, Any], str]:
    def conv(key: str, raw: Any) -> str:
        text = _str(reader)(key, raw)
        if re.fullmatch(TOPIC_ID_PATTERN, text) is None:
            raise reader.error(
                key,
                f"{text!r} cannot be an MQTT topic level: letters, digits,"
                " '.', '_' and '-', at most 64, starting with a letter or"
                " digit",
            )
        return text

    return conv


def _broker_url(reader: _Reader) -> Callable[[str, Any], str]:
    def conv(key: str, raw: Any) -> str:
        text = _str(reader)(key, raw)
        parts = urlsplit(text)
        if parts.scheme not in ("mqtt", "mqtts"):
            raise reader.error(
                key,
                f"{text!r}: the broker URL must start mqtts:// (or mqtt://"
                " for a broker on this machine)",
            )
        try:
            port = parts.port
        except ValueError:
            raise reader.error(key, f"{text!r}: bad port") from None
        if (
            not parts.hostname
            or parts.path not in ("", "/")
            or parts.query
            or parts.username
            or port == 0
        ):
            raise reader.error(key, f"{text!r}: expected mqtts://host[:port]")
        if parts.scheme == "mqtt" and parts.hostname not in LOOPBACK_HOSTS:
            raise reader.error(
                key,
                f"{text!r}: plain mqtt:// sends the journal unencrypted and"
                " unauthenticated; only to this machine (development),"
                " use mqtts:// with a client certificate",
            )
        return text

    return conv


def _pem_file(reader: _Reader) -> Callable[[str, Any], str]:
    def conv(key: str, raw: Any) -> str:
        text = _path(reader)(key, raw)
        if not os.path.isfile(text):
            raise reader.error(key, f"{text}: no such file")
        return text

    return conv


def _feed(s: _Section, r: _Reader, journal_table_id: str | None, name: str) -> FeedSettings:
    d = FeedSettings("", "", "")
    broker = s.value("broker", _broker_url(r), why=" (mqtts://host:port of the casino's broker)")
    tls = broker.startswith("mqtts:")
    if not tls:
        s.refuse(("ca", "cert", "key"), "TLS files need mqtts://")
    why = (
        " (mqtts:// needs the table's client certificate and key: the broker's ACL knows"
        " the table by it)"
    )
    cert = s.value("cert", _pem_file(r), _REQUIRED if tls else None, why)
    key = s.value("key", _pem_file(r), _REQUIRED if tls else None, why)
    # the journal signs its heads with its table id: the feed's topics must name the same
    # table, or the collector refuses every head. One name for both: feed.table alone is the
    # journal's too (_resolve), journal.table_id alone is the feed's; only two that differ are
    # refused.
    default = journal_table_id or name
    table = s.value("table", _topic_id(r), default)
    if journal_table_id is not None and table != journal_table_id:
        raise r.error(
            s.key("table"),
            f"{table!r} differs from journal.table_id"
            f" ({journal_table_id!r}), the table id the journal signs"
            " its heads with: the feed's topics must name the same"
            " table; set one of them, or both the same",
        )
    if re.fullmatch(TOPIC_ID_PATTERN, table) is None:
        raise s.missing(
            "table",
            f": the table id {default!r} (journal.table_id, else the"
            " profile's name) cannot be a topic level",
        )
    return FeedSettings(
        broker=broker,
        site=s.value("site", _topic_id(r), why=" (the casino's site id, in every topic)"),
        table=table,
        ca=s.value("ca", _pem_file(r), None),
        cert=cert,
        key=key,
        position_path=s.value("position_path", _rel_path(r), d.position_path),
        heartbeat_s=s.value("heartbeat_s", _float(r, 5.0, 3600.0), d.heartbeat_s),
        window=s.value("window", _int(r, 1, 1000), d.window),
        hold_decisions_unacked_s=s.value(
            "hold_decisions_unacked_s", _int(r, 0, 86400), d.hold_decisions_unacked_s
        ),
    )


def _rules(top: _Section, r: _Reader) -> RuleSettings:
    sec = top.section("rules")
    table = sec.table if sec else {}
    if sec is not None:
        _mark_all(r, table, "rules.")
    try:
        rules = RuleSettings.from_mapping(table)
    except ConfigError as exc:
        key = f"rules.{exc.key}" if exc.key else "rules"
        problem = {"UNKNOWN": "unknown key", "SYNTAX": "wrong type", "RANGE": "not allowed"}[
            exc.code
        ]
        raise r.error(key, f"{problem}: {exc.reason}") from None
    for k in SETTING_KEYS:
        key = f"rules.{k}"
        given = key in r.origin
        r.report.append((key, _toml_text(rules.get(k)), r.origin[key] if given else "(default)"))
    return rules


def _mark_all(r: _Reader, table: Mapping[str, Any], prefix: str) -> None:
    for k, v in table.items():
        r.used.add(f"{prefix}{k}")
        if isinstance(v, dict):
            _mark_all(r, v, f"{prefix}{k}.")


def _display(s: _Section, r: _Reader) -> DisplaySettings:
    driver = s.value("driver", _str(r, ("seven-segment", "serial-led")))
    if driver == "seven-segment":
        s.refuse(("port", "baud"), "only with driver serial-led")
        pins_sec = s.section("pins", required=True, why=" (segments a-g, optional dp)")
        assert pins_sec is not None
        pins = _named_pins(pins_sec, r, SEGMENTS, ("dp",), "segment")
        common = s.value(
            "common",
            _str(r, ("anode", "cathode")),
            why=': "anode" or "cathode" (wrong, every segment inverts)',
        )
        return DisplaySettings(
            "seven-segment",
            pins=MappingProxyType(pins),
            common=cast(Literal["anode", "cathode"], common),
        )
    s.refuse(("pins", "common"), "only with driver seven-segment")
    return DisplaySettings(
        "serial-led", port=s.value("port", _path(r, ("sim",))), baud=s.value("baud", _baud(r), 9600)
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
            raise r.error(s.key(name), f"unknown {what}{context}{hint}; known: {', '.join(known)}")
    pins: dict[str, int] = {}
    for name in known:
        if name in required or name in s.table:
            pins[name] = s.value(
                name, _pin(r), why=f": {what} required{context}; needs {', '.join(required)}"
            )
    return pins


def _buttons(s: _Section, r: _Reader, game: str) -> ButtonSettings:
    required, optional = _BUTTONS[game]
    pins_sec = s.section("pins", required=True, why=f" (buttons {', '.join(required)})")
    assert pins_sec is not None
    pins = _named_pins(pins_sec, r, required, optional, "button", f" for {game}")
    return ButtonSettings(
        pins=MappingProxyType(pins),
        bounce_ms=s.value("bounce_ms", _int(r, 1, 500), 30),
        active_low=s.value("active_low", _bool(r), True),
    )


def _seat_lamps(s: _Section, r: _Reader) -> Mapping[int, int]:
    pins_sec = s.section("pins", required=True, why=" (seat number 1-8 = GPIO pin)")
    assert pins_sec is not None
    seats = tuple(str(n) for n in range(1, 9))
    pins = _named_pins(pins_sec, r, (), seats, "seat")
    if not pins:
        raise r.error(pins_sec.prefix.rstrip("."), "names no seat; remove the table instead")
    return MappingProxyType({int(k): v for k, v in pins.items()})


def _shoe(s: _Section, r: _Reader, rules: RuleSettings) -> ShoeSettings:
    port = s.value("port", _path(r, ("sim",)))
    baud = s.value("baud", _baud(r), 115200)
    # DESIGN.md "Reference shoe protocol": no valid frame for more than 3 s is a fault
    watchdog = s.value("watchdog_s", _float(r, 1.0, 30.0), 3.0)
    sim_keys = ("sim_decks", "sim_seed", "sim_auto_deal_s")
    if port != "sim":
        s.refuse(sim_keys, 'only with port = "sim"')
        return ShoeSettings(port=port, baud=baud, watchdog_s=watchdog)
    decks = rules.baccarat.decks
    sim_decks = s.value("sim_decks", _int(r, 6, 8), decks)
    if sim_decks != decks:
        raise r.error(s.key("sim_decks"), f"{sim_decks} differs from rules.baccarat.decks {decks}")
    return ShoeSettings(
        port=port,
        baud=baud,
        watchdog_s=watchdog,
        sim_decks=sim_decks,
        sim_seed=s.value("sim_seed", _int(r, 0, 2**63 - 1), None),
        sim_auto_deal_s=s.value("sim_auto_deal_s", _float(r, 0.01, 600.0), None),
    )


def _dealer_display(s: _Section, r: _Reader) -> DealerDisplaySettings:
    driver = s.value("driver", _str(r, ("serial-text", "sim")))
    if driver == "sim":
        s.refuse(("port", "baud"), "only with driver serial-text")
        return DealerDisplaySettings("sim")
    return DealerDisplaySettings(
        "serial-text", port=s.value("port", _path(r)), baud=s.value("baud", _baud(r), 9600)
    )


def _check_pins(r: _Reader, backend: str, console: ConsoleSettings) -> None:
    """One GPIO pin, one use, across every device (5324.50/20 say nothing; wiring does)."""
    users: dict[int, str] = {}
    for key, _text, _src in r.report:
        if not _is_pin_key(key):
            continue
        pin = _get(r.data, key)
        assert isinstance(pin, int)
        if pin in users:
            raise r.error(key, f"GPIO {pin} is also used by {users[pin]} ({r.file_of(users[pin])})")
        if backend == "rpi" and console.port in HEADER_UART_PORTS and pin in HEADER_UART_PINS:
            raise r.error(
                key,
                f"GPIO {pin} is the header UART's {HEADER_UART_PINS[pin]},"
                f" used by console.port {console.port}",
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
    for key in _PORT_KEYS:
        try:
            port = _get(r.data, key)
        except (KeyError, TypeError):
            continue
        if not isinstance(port, str) or port in _NOT_A_DEVICE:
            continue
        device = os.path.realpath(port)
        if device in users:
            other = users[device]
            same = "" if _get(r.data, other) == port else f" (both are {device})"
            raise r.error(
                key,
                f"{port} is also {other} ({r.file_of(other)}){same}: one serial device, one role",
            )
        users[device] = key


def _is_pin_key(key: str) -> bool:
    parts = key.split(".")
    return len(parts) == 4 and parts[0] == "devices" and parts[2] == "pins"


def _get(data: Mapping[str, Any], key: str) -> Any:
    for part in key.split("."):
        data = data[part]
    return data
