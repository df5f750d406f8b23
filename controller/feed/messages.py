"""The feed's topics and message shapes (docs/journal.md "Feed message shapes"; docs/feed.md).

One module for both ends: the table's publisher encodes with it and the collector decodes with
it, so a shape cannot drift between them. Decoding is strict: a payload that is not exactly one
of the shapes is a :class:`MessageError` naming what is wrong; it is never half-accepted.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final, Literal, NoReturn, NotRequired, TypedDict, TypeVar

from controller.config.profile import TOPIC_ID_PATTERN
from controller.fields.readers import (
    FieldError,
    as_int,
    int_of,
    map_of,
    opt_int_of,
    opt_map_of,
    str_of,
)
from controller.journal.chain import ROW_FIELDS, canonical

#: The feed's message version (the journal's revision).
VERSION: Final = 2
_TOKEN: Final = re.compile(TOPIC_ID_PATTERN)
_HEX64: Final = re.compile(r"[0-9a-f]{64}")
_HEX: Final = re.compile(r"(?:[0-9a-f]{2})+")
_KEY_ID: Final = re.compile(r"[0-9a-f]{16}")
#: The sub-topics a table publishes of itself: its journal rows, its signed heads, its
#: online/offline status, its coded events and its meters.
CHANNELS: Final = ("rows", "heads", "status", "events", "meters")
#: The host's conversation with a table (docs/host-commands.md): commands to it and its
#: replies. They share the table's subtree; they are not its record.
HOST_CHANNELS: Final = ("cmd", "reply")
#: A message larger than this is refused before parsing (a journal row is well under 4 KiB).
MAX_PAYLOAD: Final = 256 * 1024
#: The largest integer a row, head or status may carry: the store's columns are signed 64-bit.
MAX_INT: Final = 2**63 - 1
#: Objects and arrays nested deeper than this are refused (a journal row's data nests a few).
MAX_DEPTH: Final = 32

Channel = Literal["rows", "heads", "status", "events", "meters", "cmd", "reply"]


class MessageError(ValueError):
    """A topic or payload that is not one of the feed's shapes."""


class RowMessage(TypedDict):
    """A journal row as the feed carries it (docs/journal.md "Row"): the hashed fields, its
    ``prev`` and its ``hash``."""

    seq: int
    ts: int
    boot: str
    mono: int
    kind: str
    round: int | None
    data: dict[str, object]
    prev: str
    hash: str


class HeadMessage(TypedDict):
    """A signed head (docs/feed.md "Topics and messages"); ``counter``, the table's TPM
    counter, when it has one (signed with the rest; "The TPM counter")."""

    table: str
    seq: int
    hash: str
    ts: int
    sig: str
    key_id: str
    counter: NotRequired[int]


class StatusMessage(TypedDict):
    """The table's ``online`` (repeated every minute) or ``offline`` (its will, its stop)."""

    state: Literal["online", "offline"]
    ts: int


class MetersMessage(TypedDict):
    """A table's meters folded to row ``seq`` (docs/feed.md "Events and meters")."""

    table: str
    seq: int
    game: str
    release: dict[str, str | None] | None
    shift_from_seq: int
    lifetime: dict[str, int]
    shift: dict[str, int]


class EventMessage(TypedDict):
    """A coded event of the catalogue (controller/floor/events.py) read from row ``seq``."""

    table: str
    code: int
    name: str
    severity: str
    seq: int
    ts: int
    round: int | None
    details: dict[str, object]


_T = TypeVar("_T")
_Reader = Callable[[Mapping[str, object]], _T]


def _shape_errors(read: _Reader[_T]) -> _Reader[_T]:
    """``read`` with a field of the wrong type or missing (the readers' :class:`FieldError`)
    reported as the :class:`MessageError` the collector refuses a message with."""

    @functools.wraps(read)
    def checked(obj: Mapping[str, object]) -> _T:
        try:
            return read(obj)
        except FieldError as exc:
            raise MessageError(str(exc)) from None

    return checked


def is_token(text: str) -> bool:
    """True when ``text`` may be a site or table id (one topic level, a safe file name)."""
    return _TOKEN.fullmatch(text) is not None


def topic(site: str, table: str, channel: Channel) -> str:
    """``tc/<site>/<table>/<channel>``."""
    for name, value in (("site", site), ("table", table)):
        if not is_token(value):
            raise MessageError(f"{name} {value!r} is not a topic-safe id ({TOPIC_ID_PATTERN})")
    return f"tc/{site}/{table}/{channel}"


def site_filter(site: str) -> str:
    """The subscription that receives every table of ``site``."""
    if not is_token(site):
        raise MessageError(f"site {site!r} is not a topic-safe id ({TOPIC_ID_PATTERN})")
    return f"tc/{site}/#"


@dataclass(frozen=True)
class Topic:
    """A parsed feed topic."""

    site: str
    table: str
    channel: Channel


#: Topics remembered by :func:`parse_topic`: a site's tables times their channels, with room.
TOPICS_KEPT: Final = 16384


@functools.lru_cache(maxsize=TOPICS_KEPT)
def parse_topic(text: str) -> Topic:
    """The site, table and channel of a feed topic; :class:`MessageError` for anything else.
    Every message's topic is one of a few thousand: each is parsed once (an error is not
    remembered, so a bad topic costs its sender a parse each time, not the cache a place)."""
    parts = text.split("/")
    if len(parts) != 4 or parts[0] != "tc":
        raise MessageError(f"topic {text!r} is not tc/<site>/<table>/<channel>")
    _, site, table, channel = parts
    if not (is_token(site) and is_token(table)):
        raise MessageError(f"topic {text!r}: site or table is not a topic-safe id")
    if channel not in CHANNELS and channel not in HOST_CHANNELS:
        raise MessageError(f"topic {text!r}: unknown channel {channel!r}")
    return Topic(site, table, channel)  # type: ignore[arg-type]


# -- encoding (the publisher) ------------------------------------------------------------------


def row_payload(row: Mapping[str, object]) -> bytes:
    """A journal row as its feed message: the seven hashed fields, ``prev`` and ``hash``."""
    body = {k: row[k] for k in (*ROW_FIELDS, "prev", "hash")}
    return canonical({"v": VERSION, **body})


def head_payload(head: Mapping[str, object]) -> bytes:
    """A signed head as its feed message: table, seq, hash, ts, sig, key_id, and the TPM
    counter when the head has one (it is signed with the rest)."""
    body = {k: head[k] for k in ("table", "seq", "hash", "ts", "sig", "key_id")}
    if head.get("counter") is not None:
        body["counter"] = head["counter"]
    return canonical({"v": VERSION, **body})


def status_payload(state: Literal["online", "offline"], ts: int) -> bytes:
    """The table's status message (``offline`` is also its MQTT will)."""
    return canonical({"v": VERSION, "state": state, "ts": ts})


# -- decoding (the collector) ------------------------------------------------------------------


def _object(payload: bytes, version: int = VERSION, limit: int = MAX_PAYLOAD) -> dict[str, object]:
    if len(payload) > limit:
        raise MessageError(f"payload of {len(payload)} bytes exceeds {limit}")
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MessageError(f"not UTF-8: {exc}") from None
    _shallow(text)
    try:
        value: object = _PARSER.decode(text)
    except MessageError:
        raise
    except (json.JSONDecodeError, ValueError, RecursionError) as exc:
        raise MessageError(f"not JSON: {type(exc).__name__}: {str(exc)[:200]}") from None
    if "\\u" in text:
        # a NUL or a lone surrogate can only come from a \u escape (the parser refuses a raw
        # control character, and the text is valid UTF-8: no surrogates); numbers were checked
        # as they were parsed
        _storable(value)
    obj = _json_object(value, "the message")
    if type(obj.get("v")) is not int or obj["v"] != version:  # 2.0 is not 2
        raise MessageError(f"version {obj.get('v')!r:.40}, expected {version}")
    return obj


#: A string (to its closing quote, or to the end: the parser refuses it there) or a bracket.
_BRACKETS: Final = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.DOTALL)


def _shallow(text: str) -> None:
    """Refuse nesting deeper than :data:`MAX_DEPTH` before the parser sees it (a payload of
    100,000 ``[`` would otherwise exhaust the parser's recursion). Brackets inside strings do
    not count; only text with more brackets than the limit is scanned at all."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return
    depth = 0
    for m in _BRACKETS.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise MessageError(f"nested deeper than {MAX_DEPTH} levels")
        elif c in "]}":
            depth -= 1


def _storable(obj: object) -> None:
    """Every value fits the store: strings without NUL or lone surrogates (neither is UTF-8
    text PostgreSQL keeps), integers within signed 64 bits, finite numbers."""
    todo: list[object] = [obj]
    while todo:
        value = todo.pop()
        if isinstance(value, dict):
            todo.extend(value.keys())
            todo.extend(value.values())
        elif isinstance(value, list):
            todo.extend(value)
        elif isinstance(value, str):
            if "\x00" in value:
                raise MessageError("a string holds NUL")
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise MessageError("a string holds a lone surrogate (not UTF-8)") from None
        elif isinstance(value, bool) or value is None:
            pass
        elif isinstance(value, int):
            if not -MAX_INT - 1 <= value <= MAX_INT:
                raise MessageError("an integer exceeds signed 64 bits")
        elif isinstance(value, float) and not math.isfinite(value):
            raise MessageError("a number is out of range")


def _json_object(value: object, what: str) -> dict[str, object]:
    """``value`` if it is a JSON object. Its keys are strings (JSON's grammar; the parser made
    them): it is neither copied nor its keys checked again, as the readers' ``as_map`` would
    (a tenth of a row's decoding)."""
    if not isinstance(value, dict):
        raise MessageError(f"{what} must be a JSON object")
    return value


def _finite_float(digits: str) -> float:
    value = float(digits)
    if not math.isfinite(value):
        raise MessageError("a number is out of range")
    return value


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


def _parsed_int(digits: str) -> int:
    """An integer literal as it is parsed: beyond signed 64 bits (19 digits or more) it is
    refused there, so a message needs no walk for it (every row and head carries a 19-digit
    nanosecond timestamp: checking after the parse walked them all)."""
    value = int(digits)
    if len(digits) > 18 and not -MAX_INT - 1 <= value <= MAX_INT:
        raise MessageError("an integer exceeds signed 64 bits")
    return value


#: The collector's parser, one for every message (``json.loads`` with hooks makes a decoder a
#: call): NaN and Infinity are not JSON, numbers out of range are refused as they are parsed.
_PARSER: Final = json.JSONDecoder(
    parse_constant=_no_constant, parse_float=_finite_float, parse_int=_parsed_int
)


def _exact(obj: Mapping[str, object], fields: tuple[str, ...], what: str) -> None:
    keys = set(obj) - {"v"}
    missing = [f for f in fields if f not in keys]
    extra = sorted(keys - set(fields))
    if missing:
        raise MessageError(f"{what} lacks {', '.join(missing)}")
    if extra:
        raise MessageError(f"{what} has unknown fields {', '.join(extra)}")


def _in_range(value: int, name: str, lo: int = 0) -> int:
    """``value`` if a column of the store holds it (signed 64 bits) and it is at least ``lo``."""
    if not lo <= value <= MAX_INT:
        raise MessageError(f"{name} must be an integer from {lo} to 2**63-1, not {value!r:.40}")
    return value


def _int64(obj: Mapping[str, object], name: str, lo: int = 0) -> int:
    return _in_range(int_of(obj, name), name, lo)


def _opt_int64(obj: Mapping[str, object], name: str) -> int | None:
    value = opt_int_of(obj, name)
    return None if value is None else _in_range(value, name)


def _nonempty(obj: Mapping[str, object], name: str) -> str:
    value = str_of(obj, name)
    if not value:
        raise MessageError(f"{name} must be a non-empty string")
    return value


def _hex64(obj: Mapping[str, object], name: str) -> str:
    value = obj.get(name)
    if not isinstance(value, str) or not _HEX64.fullmatch(value):
        raise MessageError(f"{name} must be 64 lower-case hex digits")
    return value


_ROW_MESSAGE: Final = (*ROW_FIELDS, "prev", "hash")


_ROW_KEYS: Final = frozenset((*_ROW_MESSAGE, "v"))


def decode_row(payload: bytes) -> RowMessage:
    """A row message's fields (``v`` removed), every field of the right type."""
    obj = _object(payload)
    if obj.keys() != _ROW_KEYS:
        _exact(obj, _ROW_MESSAGE, "row")
    return as_row(obj)


def as_row(obj: Mapping[str, object]) -> RowMessage:
    """The row in ``obj`` (a decoded message, or a held row read back from the store), every
    field of the right type; :class:`MessageError` otherwise."""
    # every row of the feed passes here: the checks of :func:`_checked_row` in one expression
    # (field by field they were a tenth of the collector's work a row); that function then
    # names what a row that fails them lacks
    seq, ts, mono, rnd = obj.get("seq"), obj.get("ts"), obj.get("mono"), obj.get("round")
    boot, kind, data = obj.get("boot"), obj.get("kind"), obj.get("data")
    prev, hash_ = obj.get("prev"), obj.get("hash")
    if (
        type(seq) is int
        and 1 <= seq <= MAX_INT
        and type(ts) is int
        and 0 <= ts <= MAX_INT
        and type(mono) is int
        and 0 <= mono <= MAX_INT
        and (rnd is None or (type(rnd) is int and 0 <= rnd <= MAX_INT))
        and type(boot) is str
        and boot
        and type(kind) is str
        and kind
        and isinstance(data, dict)
        and type(prev) is str
        and _HEX64.fullmatch(prev) is not None
        and type(hash_) is str
        and _HEX64.fullmatch(hash_) is not None
    ):
        return {
            "seq": seq,
            "ts": ts,
            "boot": boot,
            "mono": mono,
            "kind": kind,
            "round": rnd,
            "data": data,
            "prev": prev,
            "hash": hash_,
        }
    return _checked_row(obj)


@_shape_errors
def _checked_row(obj: Mapping[str, object]) -> RowMessage:
    """:func:`as_row` field by field: the first field that is wrong is named."""
    return {
        "seq": _int64(obj, "seq", 1),
        "ts": _int64(obj, "ts"),
        "boot": _nonempty(obj, "boot"),
        "mono": _int64(obj, "mono"),
        "kind": _nonempty(obj, "kind"),
        "round": _opt_int64(obj, "round"),
        "data": _json_object(obj.get("data"), "data"),
        "prev": _hex64(obj, "prev"),
        "hash": _hex64(obj, "hash"),
    }


def decode_head(payload: bytes) -> HeadMessage:
    """A head message's fields (``v`` removed), every field of the right type."""
    obj = _object(payload)
    # ``counter``: the table's TPM counter, signed with the head (docs/feed.md); optional
    fields = (
        "table",
        "seq",
        "hash",
        "ts",
        "sig",
        "key_id",
        *(("counter",) if "counter" in obj else ()),
    )
    _exact(obj, fields, "head")
    return as_head(obj)


@_shape_errors
def as_head(obj: Mapping[str, object]) -> HeadMessage:
    """The signed head in ``obj``, every field of the right type (``counter`` when present)."""
    head: HeadMessage = {
        "table": _nonempty(obj, "table"),
        "seq": _int64(obj, "seq", 1),
        "hash": _hex64(obj, "hash"),
        "ts": _int64(obj, "ts"),
        "sig": _sig(obj.get("sig")),
        "key_id": _key_id(obj.get("key_id")),
    }
    if "counter" in obj:
        head["counter"] = _int64(obj, "counter")
    return head


def _sig(value: object) -> str:
    if not isinstance(value, str) or not _HEX.fullmatch(value) or len(value) > 400:
        raise MessageError("sig must be hex (a DER ECDSA signature)")
    return value


def _key_id(value: object) -> str:
    if not isinstance(value, str) or not _KEY_ID.fullmatch(value):
        raise MessageError("key_id must be 16 lower-case hex digits")
    return value


def decode_status(payload: bytes) -> StatusMessage:
    """A status message's fields: ``state`` (online/offline) and ``ts``."""
    obj = _object(payload)
    _exact(obj, ("state", "ts"), "status")
    return _status(obj)


@_shape_errors
def _status(obj: Mapping[str, object]) -> StatusMessage:
    state = obj.get("state")
    if state == "online":
        return {"state": "online", "ts": _int64(obj, "ts")}
    if state == "offline":
        return {"state": "offline", "ts": _int64(obj, "ts")}
    raise MessageError(f"state must be online or offline, not {state!r:.40}")


# -- the table's derived messages (docs/feed.md "Events and meters") ---------------------------

#: The derived messages' own version (controller/floor/feed.py).
DERIVED_VERSION: Final = 1
#: A meters or events message larger than this is refused (a meters message is under 4 KiB).
MAX_DERIVED_PAYLOAD: Final = 64 * 1024
#: At most this many meters in ``lifetime`` or ``shift`` (the catalogue has well under 100).
MAX_METERS: Final = 512
#: A meter's, an event's or a detail's name, the game, the release's fields: at most this long.
MAX_NAME: Final = 120
_METER_NAME: Final = re.compile(r"[A-Za-z0-9_.:-]{1,120}")
_SEVERITIES: Final = ("info", "warning", "alarm", "fault")


def _short_str(value: object, name: str, *, empty: bool = False) -> str:
    if not isinstance(value, str) or len(value) > MAX_NAME or not (empty or value):
        raise MessageError(f"{name} must be a string of at most {MAX_NAME} characters")
    return value


def _meter_map(obj: Mapping[str, object], name: str) -> dict[str, int]:
    value = map_of(obj, name)
    if len(value) > MAX_METERS:
        raise MessageError(f"{name} must be an object of at most {MAX_METERS} meters")
    meters: dict[str, int] = {}
    for key, count in value.items():
        if not _METER_NAME.fullmatch(key):
            raise MessageError(f"{name}: meter name {key!r:.40} is not a meter's name")
        meters[key] = _in_range(as_int(count, f"{name}.{key}"), f"{name}.{key}")
    return meters


def _release(obj: Mapping[str, object]) -> dict[str, str | None] | None:
    release = opt_map_of(obj, "release")
    if release is None:
        return None
    if len(release) > 8:
        raise MessageError("release must be an object of at most 8 fields")
    return {
        _short_str(key, "release field"): (
            None if value is None else _short_str(value, f"release.{key}", empty=True)
        )
        for key, value in release.items()
    }


def decode_meters(payload: bytes) -> MetersMessage:
    """A meters message's fields (``v`` removed): the table, the row it was folded to, the
    game, the running release, the shift's first row and the lifetime and shift counters."""
    obj = _object(payload, DERIVED_VERSION, MAX_DERIVED_PAYLOAD)
    fields = ("table", "seq", "game", "release", "shift_from_seq", "lifetime", "shift")
    _exact(obj, fields, "meters")
    return as_meters(obj)


@_shape_errors
def as_meters(obj: Mapping[str, object]) -> MetersMessage:
    """The meters in ``obj`` (a decoded message, or the stored newest), every field checked."""
    return {
        "table": _short_str(obj.get("table"), "table"),
        "seq": _int64(obj, "seq"),
        "game": _short_str(obj.get("game"), "game", empty=True),
        "release": _release(obj),
        "shift_from_seq": _int64(obj, "shift_from_seq"),
        "lifetime": _meter_map(obj, "lifetime"),
        "shift": _meter_map(obj, "shift"),
    }


def decode_event(payload: bytes) -> EventMessage:
    """An events message's fields (``v`` removed): a coded event of the catalogue
    (controller/floor/events.py) read from row ``seq``."""
    obj = _object(payload, DERIVED_VERSION, MAX_DERIVED_PAYLOAD)
    fields = ("table", "code", "name", "severity", "seq", "ts", "round", "details")
    _exact(obj, fields, "event")
    return _event(obj)


@_shape_errors
def _event(obj: Mapping[str, object]) -> EventMessage:
    table = _short_str(obj.get("table"), "table")
    code = _int64(obj, "code")
    if code > 9999:
        raise MessageError(f"code must be an event code (0 to 9999), not {code}")
    name = _short_str(obj.get("name"), "name")
    severity = obj.get("severity")
    if not isinstance(severity, str) or severity not in _SEVERITIES:
        raise MessageError(f"severity must be one of {', '.join(_SEVERITIES)}")
    return {
        "table": table,
        "code": code,
        "name": name,
        "severity": severity,
        "seq": _int64(obj, "seq", 1),
        "ts": _int64(obj, "ts"),
        "round": _opt_int64(obj, "round"),
        "details": _json_object(obj.get("details"), "details"),
    }


def went_back(now: Mapping[str, int], before: Mapping[str, int]) -> list[str]:
    """The meters lower in ``now`` than in ``before`` (a lifetime meter never goes back: one
    that does means the journal was restored from an older copy)."""
    return [
        f"{k}: {before[k]} -> {now.get(k, 0)}" for k in sorted(before) if now.get(k, 0) < before[k]
    ]
