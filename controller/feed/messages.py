"""The feed's topics and message shapes (docs/journal.md "Feed message shapes"; docs/feed.md).

One module for both ends: the table's publisher encodes with it and the collector decodes with
it, so a shape cannot drift between them. Decoding is strict: a payload that is not exactly one
of the shapes is a :class:`MessageError` naming what is wrong; it is never half-accepted.
"""

from __future__ import annotations

import json
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
CHANNELS: Final = ("rows", "heads", "status")
#: A message larger than this is refused before parsing (a journal row is well under 4 KiB).
MAX_PAYLOAD: Final = 256 * 1024

Channel = Literal["rows", "heads", "status"]


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
    """A signed head as its feed message: table, seq, hash, ts, sig, key_id."""
    body = {k: head[k] for k in ("table", "seq", "hash", "ts", "sig", "key_id")}
    return canonical({"v": VERSION, **body})


def status_payload(state: Literal["online", "offline"], ts: int) -> bytes:
    """The table's status message (``offline`` is also its MQTT will)."""
    return canonical({"v": VERSION, "state": state, "ts": ts})


# -- decoding (the collector) ------------------------------------------------------------------


def _object(payload: bytes) -> dict[str, Any]:
    if len(payload) > MAX_PAYLOAD:
        raise MessageError(f"payload of {len(payload)} bytes exceeds {MAX_PAYLOAD}")
    try:
        obj = json.loads(payload.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, json.JSONDecodeError, ValueError) as exc:
        raise MessageError(f"not JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise MessageError("not a JSON object")
    if obj.get("v") != VERSION:
        raise MessageError(f"version {obj.get('v')!r}, expected {VERSION}")
    return obj


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
    if not isinstance(value, int) or isinstance(value, bool) or value < lo:
        raise MessageError(f"{name} must be an integer >= {lo}, not {value!r}")
    return value


def _str(obj: Mapping[str, Any], name: str) -> str:
    value = obj[name]
    if not isinstance(value, str) or not value:
        raise MessageError(f"{name} must be a non-empty string, not {value!r}")
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
    rnd = obj["round"]
    if rnd is not None and (not isinstance(rnd, int) or isinstance(rnd, bool)):
        raise MessageError(f"round must be an integer or null, not {rnd!r}")
    if not isinstance(obj["data"], dict):
        raise MessageError("data must be a JSON object")
    _hex64(obj, "prev")
    _hex64(obj, "hash")
    return {k: obj[k] for k in fields}


def decode_head(payload: bytes) -> dict[str, Any]:
    """A head message's fields (``v`` removed), every field of the right type."""
    obj = _object(payload)
    fields = ("table", "seq", "hash", "ts", "sig", "key_id")
    _exact(obj, fields, "head")
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
        raise MessageError(f"state must be online or offline, not {obj['state']!r}")
    _int(obj, "ts")
    return {"state": obj["state"], "ts": obj["ts"]}
