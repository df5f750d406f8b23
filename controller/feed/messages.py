"""The feed's topics and message shapes (docs/journal.md "Feed message shapes"; docs/feed.md).

One module for both ends: the table's publisher encodes with it and the collector decodes with
it, so a shape cannot drift between them. Decoding is strict: a payload that is not exactly one
of the shapes is a :class:`MessageError` naming what is wrong; it is never half-accepted.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from controller.config.profile import TOPIC_ID_PATTERN
from controller.journal.chain import ROW_FIELDS, canonical

#: The feed's message version (the journal's revision).
VERSION: Final = 2
_TOKEN: Final = re.compile(TOPIC_ID_PATTERN)
_HEX64: Final = re.compile(r"[0-9a-f]{64}")
_HEX: Final = re.compile(r"(?:[0-9a-f]{2})+")
#: The sub-topics of a table: its journal rows, its signed heads and its online/offline status.
CHANNELS: Final = ("rows", "heads", "status", "events", "meters")
#: A message larger than this is refused before parsing (a journal row is well under 4 KiB).
MAX_PAYLOAD: Final = 256 * 1024
#: The largest integer a row, head or status may carry: the store's columns are signed 64-bit.
MAX_INT: Final = 2**63 - 1
#: Objects and arrays nested deeper than this are refused (a journal row's data nests a few).
MAX_DEPTH: Final = 32

Channel = Literal["rows", "heads", "status", "events", "meters", "cmd", "reply"]


class MessageError(ValueError):
    """A topic or payload that is not one of the feed's shapes."""


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


def parse_topic(text: str) -> Topic:
    """The site, table and channel of a feed topic; :class:`MessageError` for anything else."""
    parts = text.split("/")
    if len(parts) != 4 or parts[0] != "tc":
        raise MessageError(f"topic {text!r} is not tc/<site>/<table>/<channel>")
    _, site, table, channel = parts
    if not (is_token(site) and is_token(table)):
        raise MessageError(f"topic {text!r}: site or table is not a topic-safe id")
    if channel not in CHANNELS:
        raise MessageError(f"topic {text!r}: unknown channel {channel!r}")
    return Topic(site, table, channel)  # type: ignore[arg-type]


# -- encoding (the publisher) ------------------------------------------------------------------


def row_payload(row: Mapping[str, Any]) -> bytes:
    """A journal row as its feed message: the seven hashed fields, ``prev`` and ``hash``."""
    body = {k: row[k] for k in (*ROW_FIELDS, "prev", "hash")}
    return canonical({"v": VERSION, **body})


def head_payload(head: Mapping[str, Any]) -> bytes:
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


def _object(payload: bytes, version: int = VERSION, limit: int = MAX_PAYLOAD) -> dict[str, Any]:
    if len(payload) > limit:
        raise MessageError(f"payload of {len(payload)} bytes exceeds {limit}")
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MessageError(f"not UTF-8: {exc}") from None
    _shallow(text)
    try:
        obj = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    except MessageError:
        raise
    except (json.JSONDecodeError, ValueError, RecursionError) as exc:
        raise MessageError(f"not JSON: {type(exc).__name__}: {str(exc)[:200]}") from None
    if "\\u" in text or _LONG_DIGITS.search(text):
        # a NUL or a lone surrogate can only come from a \u escape (the parser refuses a raw
        # control character, and the text is valid UTF-8: no surrogates), an integer beyond 64
        # bits only from 19 digits or more; fractions and exponents were checked as parsed
        _storable(obj)
    if not isinstance(obj, dict):
        raise MessageError("not a JSON object")
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


def _storable(obj: Any) -> None:
    """Every value fits the store: strings without NUL or lone surrogates (neither is UTF-8
    text PostgreSQL keeps), integers within signed 64 bits, finite numbers."""
    todo = [obj]
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


#: 19 digits in a row: the shortest text of an integer that may exceed signed 64 bits.
_LONG_DIGITS: Final = re.compile(r"[0-9]{19}")


def _finite_float(digits: str) -> float:
    value = float(digits)
    if not math.isfinite(value):
        raise MessageError("a number is out of range")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _exact(obj: Mapping[str, Any], fields: tuple[str, ...], what: str) -> None:
    keys = set(obj) - {"v"}
    missing = [f for f in fields if f not in keys]
    extra = sorted(keys - set(fields))
    if missing:
        raise MessageError(f"{what} lacks {', '.join(missing)}")
    if extra:
        raise MessageError(f"{what} has unknown fields {', '.join(extra)}")


def _int(obj: Mapping[str, Any], name: str, lo: int = 0) -> int:
    value = obj[name]
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= MAX_INT:
        raise MessageError(f"{name} must be an integer from {lo} to 2**63-1, not {value!r:.40}")
    return value


def _str(obj: Mapping[str, Any], name: str) -> str:
    value = obj[name]
    if not isinstance(value, str) or not value:
        raise MessageError(f"{name} must be a non-empty string, not {value!r:.40}")
    return value


def _hex64(obj: Mapping[str, Any], name: str) -> str:
    value = obj[name]
    if not isinstance(value, str) or not _HEX64.fullmatch(value):
        raise MessageError(f"{name} must be 64 lower-case hex digits")
    return value


def decode_row(payload: bytes) -> dict[str, Any]:
    """A row message's fields (``v`` removed), every field of the right type."""
    obj = _object(payload)
    fields = (*ROW_FIELDS, "prev", "hash")
    _exact(obj, fields, "row")
    _int(obj, "seq", 1)
    _int(obj, "ts")
    _int(obj, "mono")
    _str(obj, "boot")
    _str(obj, "kind")
    if obj["round"] is not None:
        _int(obj, "round")
    if not isinstance(obj["data"], dict):
        raise MessageError("data must be a JSON object")
    _hex64(obj, "prev")
    _hex64(obj, "hash")
    return {k: obj[k] for k in fields}


def decode_head(payload: bytes) -> dict[str, Any]:
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
    if "counter" in obj and _int(obj, "counter") >= 2**64:
        raise MessageError("counter must be below 2**64 (a TPM NV counter's 8 bytes)")
    _str(obj, "table")
    _int(obj, "seq", 1)
    _int(obj, "ts")
    _hex64(obj, "hash")
    sig = obj["sig"]
    if not isinstance(sig, str) or not _HEX.fullmatch(sig) or len(sig) > 400:
        raise MessageError("sig must be hex (a DER ECDSA signature)")
    key = obj["key_id"]
    if not isinstance(key, str) or not re.fullmatch(r"[0-9a-f]{16}", key):
        raise MessageError("key_id must be 16 lower-case hex digits")
    return {k: obj[k] for k in fields}


def decode_status(payload: bytes) -> dict[str, Any]:
    """A status message's fields: ``state`` (online/offline) and ``ts``."""
    obj = _object(payload)
    _exact(obj, ("state", "ts"), "status")
    if obj["state"] not in ("online", "offline"):
        raise MessageError(f"state must be online or offline, not {obj['state']!r:.40}")
    _int(obj, "ts")
    return {"state": obj["state"], "ts": obj["ts"]}


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


def _short_str(value: Any, name: str, *, empty: bool = False) -> str:
    if not isinstance(value, str) or len(value) > MAX_NAME or not (empty or value):
        raise MessageError(f"{name} must be a string of at most {MAX_NAME} characters")
    return value


def _meter_map(obj: Mapping[str, Any], name: str) -> dict[str, int]:
    value = obj[name]
    if not isinstance(value, dict) or len(value) > MAX_METERS:
        raise MessageError(f"{name} must be an object of at most {MAX_METERS} meters")
    for key, count in value.items():
        if not _METER_NAME.fullmatch(key):
            raise MessageError(f"{name}: meter name {key!r:.40} is not a meter's name")
        if not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= MAX_INT:
            raise MessageError(f"{name}.{key} must be an integer from 0 to 2**63-1")
    return dict(value)


def decode_meters(payload: bytes) -> dict[str, Any]:
    """A meters message's fields (``v`` removed): the table, the row it was folded to, the
    game, the running release, the shift's first row and the lifetime and shift counters."""
    obj = _object(payload, DERIVED_VERSION, MAX_DERIVED_PAYLOAD)
    fields = ("table", "seq", "game", "release", "shift_from_seq", "lifetime", "shift")
    _exact(obj, fields, "meters")
    _short_str(obj["table"], "table")
    _int(obj, "seq")
    _int(obj, "shift_from_seq")
    _short_str(obj["game"], "game", empty=True)
    release = obj["release"]
    if release is not None:
        if not isinstance(release, dict) or len(release) > 8:
            raise MessageError("release must be an object of at most 8 fields")
        for key, value in release.items():
            _short_str(key, "release field")
            if value is not None:
                _short_str(value, f"release.{key}", empty=True)
    _meter_map(obj, "lifetime")
    _meter_map(obj, "shift")
    return {k: obj[k] for k in fields}


def decode_event(payload: bytes) -> dict[str, Any]:
    """An events message's fields (``v`` removed): a coded event of the catalogue
    (controller/floor/events.py) read from row ``seq``."""
    obj = _object(payload, DERIVED_VERSION, MAX_DERIVED_PAYLOAD)
    fields = ("table", "code", "name", "severity", "seq", "ts", "round", "details")
    _exact(obj, fields, "event")
    _short_str(obj["table"], "table")
    code = _int(obj, "code")
    if code > 9999:
        raise MessageError(f"code must be an event code (0 to 9999), not {code}")
    _short_str(obj["name"], "name")
    if obj["severity"] not in _SEVERITIES:
        raise MessageError(f"severity must be one of {', '.join(_SEVERITIES)}")
    _int(obj, "seq", 1)
    _int(obj, "ts")
    if obj["round"] is not None:
        _int(obj, "round")
    if not isinstance(obj["details"], dict):
        raise MessageError("details must be a JSON object")
    return {k: obj[k] for k in fields}


def went_back(now: Mapping[str, int], before: Mapping[str, int]) -> list[str]:
    """The meters lower in ``now`` than in ``before`` (a lifetime meter never goes back: one
    that does means the journal was restored from an older copy)."""
    return [
        f"{k}: {before[k]} -> {now.get(k, 0)}" for k in sorted(before) if now.get(k, 0) < before[k]
    ]
