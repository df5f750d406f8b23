"""How a setting is declared: once, as a field of the dataclass that holds it, with its kind
(type and range), its default and its reference next to it.

    bounce_ms: int = setting(Int(1, 500), 30, ref="docs/drivers-display-buttons.md",
                             doc="the buttons' debounce time (ms)")
    port: str = field(metadata=about(AbsPath(("sim",)), ref="...", doc="..."))  # required

Hardware profile settings (controller/config/profile.py) and rule settings
(controller/config/settings.py) are declared alike; the profile's reader, ``config show``,
``check-profile`` and docs/configuration.md's generated tables all read these declarations, so
a setting added here is read, checked, shown and documented without a second list.

A :class:`Kind` reads a TOML value as the setting's value (a ``Kind[int]`` an integer) or
says what is wrong with it (:class:`Invalid`): ``SYNTAX`` for a value of the wrong type,
``RANGE`` for one it does not allow. The reader adds the file and the dotted key.
"""

from __future__ import annotations

import dataclasses
import datetime
import difflib
import enum
import ipaddress
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Final, Generic, Literal, TypeVar
from urllib.parse import urlsplit

#: The metadata key of a declared field.
SPEC: Final = "setting"


class Required(enum.Enum):
    """The type of :data:`REQUIRED`."""

    REQUIRED = "required"


#: No default: the key must be given (a declared field without a default has it; a reader
#: passes it to make a key required where another setting asks for it).
REQUIRED: Final = Required.REQUIRED

#: The value a kind reads (covariant: a ``Kind[int]`` is a ``Kind[object]``).
V_co = TypeVar("V_co", covariant=True)
#: A setting's value, in a declaration.
V = TypeVar("V")
#: A choice of :class:`OneOf`: a string or a whole number (a ``Literal`` type stays one).
C = TypeVar("C", bound=int | str)
#: An item of :class:`ListOf`.
E = TypeVar("E")


class Invalid(ValueError):
    """A value a setting does not take. ``code``: ``SYNTAX`` (wrong type) or ``RANGE``;
    ``at``: a suffix of the key that is wrong (``[2]``, an item of a list)."""

    def __init__(self, code: Literal["SYNTAX", "RANGE"], problem: str, at: str = "") -> None:
        super().__init__(problem)
        self.code: Literal["SYNTAX", "RANGE"] = code
        self.problem = problem
        self.at = at


def toml_text(value: object) -> str:
    """A value as a profile would write it (the check-profile report, error messages)."""
    if value is None:
        return "(none)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, tuple | list):
        return "[" + ", ".join(toml_text(v) for v in value) + "]"
    return str(value)


# -- kinds -------------------------------------------------------------------------------------


class Kind(Generic[V_co]):
    """A setting's type and range. ``tag`` names the type in docs/configuration.md (and the
    rule settings' checks); ``lo``, ``hi`` and ``choices`` are the range, where it has one."""

    tag: ClassVar[str] = "text"
    type_name: ClassVar[str] = "a value"
    lo: int | float | None = None
    hi: int | float | None = None
    choices: tuple[object, ...] = ()

    def read(self, raw: object) -> V_co:
        """Type, then range: the TOML value as the setting's value, or :class:`Invalid` (SYNTAX
        when it is not of the setting's type, RANGE when the setting does not allow it)."""
        raise NotImplementedError

    def wrong_type(self, raw: object) -> Invalid:
        return Invalid(
            "SYNTAX", f"expected {self.type_name}, got {toml_text(raw)} ({type(raw).__name__})"
        )

    def range_text(self) -> str:
        """The range as docs/configuration.md and ``config show`` print it."""
        return ""


class Bool(Kind[bool]):
    tag = "bool"
    type_name = "true or false"

    def read(self, raw: object) -> bool:
        if not isinstance(raw, bool):
            raise self.wrong_type(raw)
        return raw

    def range_text(self) -> str:
        return "true|false"


def _is_int(raw: object) -> bool:
    return isinstance(raw, int) and not isinstance(raw, bool)


@dataclass(frozen=True)
class Int(Kind[int]):
    """A whole number in ``lo..hi`` (either end may be open)."""

    lo: int | None = None
    hi: int | None = None
    #: Say the range in hexadecimal (a TPM's NV index).
    hexadecimal: bool = False
    tag: ClassVar[str] = "int"
    type_name: ClassVar[str] = "a whole number"

    def convert(self, raw: object) -> int:
        if not _is_int(raw):
            raise self.wrong_type(raw)
        assert isinstance(raw, int)
        return raw

    def problem(self, value: int) -> str | None:
        if (self.lo is not None and value < self.lo) or (self.hi is not None and value > self.hi):
            return f"{value} is out of range {self.lo}..{self.hi}"
        return None

    def read(self, raw: object) -> int:
        value = self.convert(raw)
        why = self.problem(value)
        if why:
            raise Invalid("RANGE", why)
        return value

    def range_text(self) -> str:
        if self.hi is None:
            return f">= {self.lo}"
        if self.lo is None:
            return f"<= {self.hi}"
        if self.hexadecimal:
            return f"{self.lo:#010x}..{self.hi:#010x}"
        return f"{self.lo}..{self.hi}"


@dataclass(frozen=True)
class Float(Kind[float]):
    lo: float = 0.0
    hi: float = 0.0
    tag: ClassVar[str] = "number"
    type_name: ClassVar[str] = "a number"

    def convert(self, raw: object) -> float:
        if not isinstance(raw, int | float) or isinstance(raw, bool):
            raise self.wrong_type(raw)
        return float(raw)

    def read(self, raw: object) -> float:
        value = self.convert(raw)
        if not self.lo <= value <= self.hi:
            raise Invalid("RANGE", f"{raw} is out of range {self.lo}..{self.hi}")
        return value

    def range_text(self) -> str:
        return f"{self.lo}..{self.hi}"


class Text(Kind[str]):
    """A non-empty string; subclasses check its form."""

    tag: ClassVar[str] = "text"
    type_name: ClassVar[str] = "a non-empty string"

    def convert(self, raw: object) -> str:
        """The TOML value as a string; :class:`Invalid` (SYNTAX) when it is not one."""
        if not isinstance(raw, str) or not raw:
            raise self.wrong_type(raw)
        return raw

    def problem(self, value: str) -> str | None:
        """What is wrong with the string (its form), or None."""
        return None

    def read(self, raw: object) -> str:
        value = self.convert(raw)
        why = self.problem(value)
        if why:
            raise Invalid("RANGE", why)
        return value


@dataclass(frozen=True)
class OneOf(Kind[C]):
    """One of a fixed list: strings (``"rpi"``, ``"sim"``) or whole numbers (baud rates)."""

    choices: tuple[C, ...] = ()

    @property
    def numeric(self) -> bool:
        return _is_int(self.choices[0])

    @property
    def tag(self) -> str:  # type: ignore[override]
        return "int" if self.numeric else "choice"

    @property
    def type_name(self) -> str:  # type: ignore[override]
        return "a whole number" if self.numeric else "a non-empty string"

    def read(self, raw: object) -> C:
        """The choice ``raw`` names (SYNTAX when it is not a value of the choices' type)."""
        if self.numeric:
            if not _is_int(raw):
                raise self.wrong_type(raw)
        elif not isinstance(raw, str) or not raw:
            raise self.wrong_type(raw)
        for choice in self.choices:
            if choice == raw:
                return choice
        listed = ", ".join(map(str, self.choices))
        if not isinstance(raw, str):
            raise Invalid("RANGE", f"{raw} is not one of {listed}")
        near = difflib.get_close_matches(raw, [str(c) for c in self.choices], n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise Invalid("RANGE", f"{raw!r} is not one of {listed}{hint}")

    def range_text(self) -> str:
        return "|".join(str(c) for c in self.choices)


@dataclass(frozen=True)
class Names(Kind[tuple[str, ...]]):
    """A non-empty list of names from ``choices``, each once (a TOML array, or on the console
    a comma-separated list, ``all`` for every one)."""

    choices: tuple[str, ...] = ()
    tag: ClassVar[str] = "names"
    type_name: ClassVar[str] = "a list of names"

    def read(self, raw: object) -> tuple[str, ...]:
        if isinstance(raw, str):
            if raw.strip() == "all":
                return tuple(self.choices)
            items = tuple(x.strip() for x in raw.split(","))
            if any(not re.fullmatch(r"[A-Za-z0-9_\-]+", x) for x in items):
                raise Invalid("SYNTAX", f"{raw!r} is not a comma-separated list of names")
            return items
        if isinstance(raw, list) and all(isinstance(x, str) for x in raw):
            return tuple(raw)
        raise self.wrong_type(raw)

    def range_text(self) -> str:
        return "non-empty comma-separated subset of " + ",".join(self.choices)


class Date(Kind[datetime.date]):
    tag = "date"
    type_name = "a date (e.g. 2026-01-01, unquoted)"

    def range_text(self) -> str:
        return "a TOML date, unquoted"

    def read(self, raw: object) -> datetime.date:
        if not isinstance(raw, datetime.date) or isinstance(raw, datetime.datetime):
            raise self.wrong_type(raw)
        return raw


class Sha256(Text):
    """A SHA-256 digest: 64 hexadecimal digits (as ``sha256sum`` prints it), kept lower-case."""

    def range_text(self) -> str:
        return "64 hexadecimal digits"

    def read(self, raw: object) -> str:
        text = self.convert(raw).lower()
        if len(text) != 64 or any(c not in "0123456789abcdef" for c in text):
            raise Invalid(
                "RANGE", f"{raw!r} is not a SHA-256 (64 hexadecimal digits, as sha256sum prints it)"
            )
        return text


class Tcti(Text):
    """``none`` or a tpm2-tss TCTI string naming the TPM (``device:``, ``swtpm:``, ``mssim:``,
    ``tabrmd:``)."""

    def range_text(self) -> str:
        return '"none" or a TCTI (device:, swtpm:, mssim:, tabrmd:)'

    def problem(self, value: str) -> str | None:
        if value == "none" or re.fullmatch(r"(device|swtpm|mssim|tabrmd)(:[\x21-\x7e]*)?", value):
            return None
        return (
            f"{value!r} is not 'none' or a TPM's TCTI (device:/dev/tpmrm0,"
            " swtpm:host=127.0.0.1,port=2321)"
        )


@dataclass(frozen=True)
class AbsPath(Text):
    """A device or file path (absolute), or one of ``specials`` (``"sim"``, ``"stdio"``)."""

    specials: tuple[str, ...] = ()
    tag: ClassVar[str] = "path"

    def problem(self, value: str) -> str | None:
        if "\0" in value:
            return "a path cannot contain a NUL byte"
        if value in self.specials or value.startswith("/"):
            return None
        allowed = " or ".join([*(repr(s) for s in self.specials), "an absolute path"])
        return f"{value!r} is not {allowed}"

    def range_text(self) -> str:
        return " | ".join([*(f'"{s}"' for s in self.specials), "an absolute path"])


@dataclass(frozen=True)
class PemFile(AbsPath):
    """An absolute path to a file that exists (a certificate or key the table reads)."""

    def range_text(self) -> str:
        return "an absolute path to a file"

    def problem(self, value: str) -> str | None:
        return super().problem(value) or (
            None if os.path.isfile(value) else f"{value}: no such file"
        )


@dataclass(frozen=True)
class PublicKeyPem(Text):
    """An ECDSA P-256 public key: its PEM text inline (sealed with the profile that holds it),
    or an absolute path to a PEM file."""

    def range_text(self) -> str:
        return "an inline PEM public key (P-256) or an absolute path to one"

    def problem(self, value: str) -> str | None:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        if value.lstrip().startswith("-----BEGIN"):
            pem = value.encode()
        else:
            if not value.startswith("/") or "\0" in value:
                return f"{value[:40]!r} is neither a PEM public key nor an absolute path"
            try:
                pem = Path(value).read_bytes()
            except OSError as exc:
                return f"{value}: {exc.strerror or exc}"
        try:
            key = serialization.load_pem_public_key(pem)
        except ValueError as exc:
            return f"not a PEM public key: {exc}"
        if not isinstance(key, ec.EllipticCurvePublicKey) or key.curve.name != "secp256r1":
            return "not an ECDSA P-256 public key"
        return None


@dataclass(frozen=True)
class StatePath(Text):
    """A file of the table's state: a path inside the state directory (relative, no ``..``);
    with ``medium`` (the anchor) also an absolute path under ``journal.second_medium``, which
    the reader hands over as ``medium_dir``. A journal, key or anchor elsewhere would let a
    profile point the record at a file another part of the system writes (the application
    re-checks the resolved path: symlinks)."""

    medium: bool = False
    medium_dir: str | None = None
    tag: ClassVar[str] = "path"

    def problem(self, value: str) -> str | None:
        if "\0" in value:
            return "a path cannot contain a NUL byte"
        if ".." in Path(value).parts:
            return f"{value!r} climbs out of the state directory with '..'"
        if not value.startswith("/"):
            return None
        if self.medium and self.medium_dir is not None and _under(value, self.medium_dir):
            return None
        where = (
            f" or under journal.second_medium {self.medium_dir}"
            if self.medium and self.medium_dir is not None
            else " (a second medium: journal.second_medium)"
            if self.medium
            else ""
        )
        return f"{value!r} is outside the state directory: give a path relative to it{where}"

    def range_text(self) -> str:
        inside = "relative to the state directory"
        return f"{inside}, or absolute under journal.second_medium" if self.medium else inside


def _under(path: str, folder: str) -> bool:
    return Path(os.path.normpath(path)).is_relative_to(
        os.path.normpath(folder)
    ) and os.path.normpath(path) != os.path.normpath(folder)


class Address(Text):
    """An IPv4 or IPv6 address literal (a host name would depend on name resolution at start)."""

    def read(self, raw: object) -> str:
        text = self.convert(raw)
        try:
            return str(ipaddress.ip_address(text))
        except ValueError:
            hint = " (use 127.0.0.1)" if text == "localhost" else ""
            raise Invalid("RANGE", f"{text!r} is not an IP address{hint}") from None

    def range_text(self) -> str:
        return "an IPv4 or IPv6 address"


class HostName(Text):
    """A DNS name (RFC 1123 labels), lower-cased, no port."""

    def read(self, raw: object) -> str:
        text = self.convert(raw).lower().rstrip(".")
        label = r"(?!-)[a-z0-9-]{1,63}(?<!-)"
        if len(text) > 253 or re.fullmatch(rf"{label}(\.{label})*", text) is None:
            raise Invalid(
                "RANGE",
                f"{raw!r} is not a host name (letters, digits, '-' and '.'; no port, no scheme)",
            )
        return text

    def range_text(self) -> str:
        return "a DNS name"


@dataclass(frozen=True)
class Pattern(Text):
    """A string that fully matches ``pattern``; ``says`` what it must be."""

    pattern: str = ""
    says: str = ""
    shown: str = ""

    def range_text(self) -> str:
        return self.shown

    def problem(self, value: str) -> str | None:
        return None if re.fullmatch(self.pattern, value) else f"{value!r} {self.says}"


@dataclass(frozen=True)
class BrokerUrl(Text):
    """``mqtts://host[:port]``; ``mqtt://`` only to one of ``loopback`` (development)."""

    loopback: tuple[str, ...] = ()

    def range_text(self) -> str:
        return "mqtts://host[:port]; mqtt:// only to this machine"

    def problem(self, value: str) -> str | None:
        parts = urlsplit(value)
        if parts.scheme not in ("mqtt", "mqtts"):
            return (
                f"{value!r}: the broker URL must start mqtts:// (or mqtt://"
                " for a broker on this machine)"
            )
        try:
            port = parts.port
        except ValueError:
            return f"{value!r}: bad port"
        if (
            not parts.hostname
            or parts.path not in ("", "/")
            or parts.query
            or parts.username
            or port == 0
        ):
            return f"{value!r}: expected mqtts://host[:port]"
        if parts.scheme == "mqtt" and parts.hostname not in self.loopback:
            return (
                f"{value!r}: plain mqtt:// sends the journal unencrypted and"
                " unauthenticated; only to this machine (development),"
                " use mqtts:// with a client certificate"
            )
        return None


@dataclass(frozen=True)
class ListOf(Kind[tuple[E, ...]]):
    """A TOML array of at most ``most`` strings, each checked by ``item``."""

    item: Kind[E]
    most: int = 16
    tag: ClassVar[str] = "list"

    @property
    def type_name(self) -> str:  # type: ignore[override]
        return f"a list of at most {self.most} strings"

    def convert(self, raw: object) -> list[object]:
        """The TOML array's items, unchecked; :class:`Invalid` (SYNTAX) when it is no array
        of at most ``most`` items."""
        if not isinstance(raw, list) or len(raw) > self.most:
            raise self.wrong_type(raw)
        return list(raw)

    def range_text(self) -> str:
        item = self.item.range_text()
        return f"at most {self.most}" + (f", each {item}" if item else "")

    def read(self, raw: object) -> tuple[E, ...]:
        out: list[E] = []
        for i, value in enumerate(self.convert(raw)):
            try:
                out.append(self.item.read(value))
            except Invalid as exc:
                raise Invalid(exc.code, exc.problem, f"[{i}]") from None
        return tuple(out)


# -- declarations ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Spec:
    """A declared setting: its kind, where its rule comes from (a regulation's section or a
    page of docs/), what it does in a line, and, for a rule setting, why it has no effect under
    the other settings (``inactive``, called with the rule settings, which this module cannot
    name: they are declared with it) and how its default reads when it depends on them."""

    kind: Kind[object]
    ref: str
    doc: str = ""
    inactive: Callable[..., str | None] | None = None
    default_text: str | None = None


def setting(
    kind: Kind[V],
    default: V,
    *,
    ref: str,
    doc: str = "",
    inactive: Callable[..., str | None] | None = None,
    default_text: str | None = None,
) -> V:
    """A dataclass field declaring one setting with a default (see the module's docstring)."""
    return dataclasses.field(
        default=default,
        metadata=about(kind, ref=ref, doc=doc, inactive=inactive, default_text=default_text),
    )


def about(
    kind: Kind[object],
    *,
    ref: str,
    doc: str = "",
    inactive: Callable[..., str | None] | None = None,
    default_text: str | None = None,
) -> dict[str, Spec]:
    """The metadata of a declared setting, for a field the profile must give (no default):
    ``port: str = field(metadata=about(AbsPath(), ref=..., doc=...))`` (a type checker reads a
    ``field()`` without a default as required)."""
    return {SPEC: Spec(kind, ref, doc, inactive, default_text)}


@dataclass(frozen=True)
class Declared:
    """One declared field of a settings class: its name, its spec and its default
    (:data:`REQUIRED` when it has none)."""

    name: str
    spec: Spec
    default: object

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


def declared(cls: type) -> Iterator[Declared]:
    """The declared settings of a dataclass, in field order (fields without a declaration,
    such as a nested group or a mapping of pins, are left out)."""
    for f in dataclasses.fields(cls):
        spec = f.metadata.get(SPEC)
        if isinstance(spec, Spec):
            default = REQUIRED if f.default is dataclasses.MISSING else f.default
            yield Declared(f.name, spec, default)
