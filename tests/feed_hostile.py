"""Hostile feed messages for the collector's fuzz tests: every one is refused by the collector
with an alarm (docs/feed.md "Malformed messages"), none is a valid row, head or status.

Structured ones are drawn by hypothesis over the feed's row/head/status shapes (docs/journal.md
"Feed message shapes") with one defect each: an integer outside signed 64 bits or below the
schema's minimum (the row's hash computed correctly over it, as an adversary holding a table's
certificate would), a wrong type, deep nesting, a string the store cannot hold, a missing or
extra field, another version, a bad signature. The rest are random bytes.
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Callable, Sequence
from typing import Any, Final

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.feed.messages import MessageError, decode_row
from controller.journal.chain import GENESIS, ROW_FIELDS, ChainError, row_hash

ROW_INTS: Final = ("seq", "ts", "mono", "round")
HEAD_FIELDS: Final = ("table", "seq", "hash", "ts", "sig", "key_id")

#: Integers the store cannot hold or the schema refuses (seq >= 1, ts/mono/round >= 0).
extreme_ints = st.one_of(
    st.just(2**63),
    st.just(2**64),
    st.just(2**63 + 1),
    st.just(-(2**63) - 1),
    st.just(-1),
    st.integers(min_value=2**63, max_value=10**300),
    st.integers(min_value=-(10**300), max_value=-1),
)
#: Values of no feed field's type (a bool is not an integer; null only where allowed).
wrong_types = st.one_of(
    st.booleans(),
    st.floats(allow_nan=False),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.just("1"),
)
#: Strings PostgreSQL's text or UTF-8 cannot carry.
bad_strings = st.one_of(
    st.text(max_size=8).map(lambda s: s + "\x00"),
    st.sampled_from(["\ud800", "a\udfff", "\udbff\udc00x\ud800"]),
)


def _dump(obj: Any) -> bytes:
    # ensure_ascii: a lone surrogate goes out as its \\u escape, as a hostile sender would
    return json.dumps(obj, separators=(",", ":")).encode("ascii")


def _base_row(seq: int, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "seq": seq,
        "ts": 1_800_000_000 * 10**9,
        "boot": "boot-1",
        "mono": 10**9,
        "kind": "paigow.drawn",
        "round": 1,
        "data": data,
    }


def _with_hash(fields: dict[str, Any]) -> dict[str, Any]:
    try:
        h = row_hash(GENESIS, fields)
    except Exception:  # noqa: BLE001 - a row whose hash cannot be computed: any hash
        h = "0" * 64
    return {"v": 2, **fields, "prev": GENESIS, "hash": h}


def _nested(depth: int, open_: str) -> str:
    close = "]" if open_ == "[" else "}"
    if open_ == "[":
        return "[" * depth + "]" * depth
    return '{"a":' * depth + "1" + close * depth


@st.composite
def hostile_row(draw: Callable[..., Any]) -> bytes:
    fields = _base_row(draw(st.integers(1, 10**6)), {"n": draw(st.integers(0, 9))})
    defect = draw(
        st.sampled_from(
            ["int", "int", "int", "type", "nest", "string", "fields", "version", "hash", "float"]
        )
    )
    if defect == "int":
        fields[draw(st.sampled_from(ROW_INTS))] = draw(extreme_ints)
        return _dump(_with_hash(fields))
    if defect == "type":
        name = draw(st.sampled_from((*ROW_FIELDS, "prev", "hash")))
        obj = _with_hash(fields)
        value = draw(wrong_types)
        if name == "data" and isinstance(value, dict):
            value = []
        if name in ("kind", "boot") and value == "1":
            value = ""
        obj[name] = value
        return _dump(obj)
    if defect == "nest":
        depth = draw(st.integers(33, 5000))
        text = _nested(depth, draw(st.sampled_from(["[", "{"])))
        body = _dump(_with_hash(fields)).decode()
        return body.replace('{"n":', '{"deep":' + text + ',"n":', 1).encode()
    if defect == "string":
        where = draw(st.sampled_from(["kind", "boot", "data", "key"]))
        bad = draw(bad_strings)
        if where == "data":
            fields["data"] = {"s": bad}
        elif where == "key":
            fields["data"] = {bad: 1}
        else:
            fields[where] = bad
        return _dump(_with_hash(fields))
    if defect == "fields":
        obj = _with_hash(fields)
        if draw(st.booleans()):
            del obj[draw(st.sampled_from((*ROW_FIELDS, "prev", "hash")))]
        else:
            obj[draw(st.sampled_from(["extra", "sig", "V", ""]))] = 1
        return _dump(obj)
    if defect == "version":
        obj = _with_hash(fields)
        obj["v"] = draw(
            st.one_of(st.integers().filter(lambda v: v != 2), st.just("2"), st.just(2.5), st.none())
        )
        return _dump(obj)
    if defect == "hash":
        obj = _with_hash(fields)
        obj["hash"] = draw(
            st.text("0123456789abcdef", min_size=64, max_size=64).filter(lambda h: h != obj["hash"])
        )
        return _dump(obj)  # a well-formed row whose hash is not its content's: chain
    fields["data"] = {"x": draw(st.sampled_from(["1e400", "-1e999", "NaN", "Infinity"]))}
    return (
        _dump(_with_hash(fields))
        .replace(b'"1e400"', b"1e400")
        .replace(b'"-1e999"', b"-1e999")
        .replace(b'"NaN"', b"NaN")
        .replace(b'"Infinity"', b"Infinity")
    )


@st.composite
def hostile_head(draw: Callable[..., Any], table: str) -> bytes:
    head: dict[str, Any] = {
        "v": 2,
        "table": table,
        "seq": draw(st.integers(1, 10**6)),
        "hash": "ab" * 32,
        "ts": 1_800_000_000 * 10**9,
        "sig": draw(st.binary(min_size=8, max_size=72)).hex(),
        "key_id": "0123456789abcdef",
    }
    defect = draw(st.sampled_from(["int", "type", "sig", "table", "forged", "string"]))
    if defect == "int":
        head[draw(st.sampled_from(["seq", "ts"]))] = draw(extreme_ints)
    elif defect == "type":
        head[draw(st.sampled_from(HEAD_FIELDS))] = draw(wrong_types)
    elif defect == "sig":
        head["sig"] = draw(st.sampled_from(["", "xyz", "AB" * 40, "ab" * 201, "abc"]))
    elif defect == "table":
        head["table"] = draw(st.sampled_from(["table-07", "", "evil-02", "x" * 300]))
    elif defect == "string":
        head["table"] = draw(bad_strings)
    # "forged": well-formed, signed by no key the collector knows (bad-signature)
    return _dump(head)


@st.composite
def hostile_status(draw: Callable[..., Any]) -> bytes:
    obj: dict[str, Any] = {"v": 2, "state": "online", "ts": 1}
    defect = draw(st.sampled_from(["int", "state", "fields", "type"]))
    if defect == "int":
        obj["ts"] = draw(extreme_ints)
    elif defect == "state":
        obj["state"] = draw(
            st.one_of(st.text(max_size=10), bad_strings, wrong_types).filter(
                lambda s: s not in ("online", "offline")
            )
        )
    elif defect == "fields":
        obj["round"] = 1
    else:
        obj["ts"] = draw(wrong_types)
    return _dump(obj)


@functools.cache
def structured(table: str, count: int) -> tuple[tuple[str, bytes], ...]:
    """``count`` hostile (channel, payload) pairs drawn by hypothesis (reproducibly)."""
    out: list[tuple[str, bytes]] = []
    message = st.one_of(
        st.tuples(st.just("rows"), hostile_row()),
        st.tuples(st.just("heads"), hostile_head(table)),
        st.tuples(st.just("status"), hostile_status()),
    )

    @settings(
        max_examples=count,
        database=None,
        derandomize=True,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(message)
    def collect(drawn: tuple[str, bytes]) -> None:
        out.append(drawn)

    collect()
    return tuple(out[:count])


def mutated(
    templates: Sequence[tuple[str, bytes]], count: int, seed: int = 21
) -> list[tuple[str, bytes]]:
    """``count`` byte-level mutations (flipped, inserted, deleted bytes, truncation, splices)
    of the hostile rows and heads in ``templates``; a mutation that happens to rebuild a
    well-formed row with its right hash is not hostile and is left out (no head can come of
    them: its signature needs the table's key)."""
    rnd = random.Random(seed)
    pool = [p for c, p in templates if c in ("rows", "heads") and len(p) < 4096]
    out: list[tuple[str, bytes]] = []
    while len(out) < count:
        b = bytearray(rnd.choice(pool))
        for _ in range(rnd.randrange(1, 5)):
            op = rnd.randrange(5)
            at = rnd.randrange(len(b) + 1)
            if op == 0 and b:
                b[min(at, len(b) - 1)] = rnd.randrange(256)
            elif op == 1:
                b[at:at] = rnd.randbytes(rnd.randrange(1, 4))
            elif op == 2:
                del b[at : at + rnd.randrange(1, 8)]
            elif op == 3:
                del b[at:]
            else:
                other = rnd.choice(pool)
                b[at:] = other[rnd.randrange(len(other) + 1) :]
        channel = rnd.choice(("rows", "heads"))
        if channel == "rows" and _a_valid_row(bytes(b)):
            continue  # a splice can rebuild a well-formed row with its right hash
        out.append((channel, bytes(b)))
    return out


def _a_valid_row(payload: bytes) -> bool:
    try:
        row = decode_row(payload)
        return bool(row_hash(row["prev"], row) == row["hash"])
    except (MessageError, ChainError):
        return False


def random_bytes(count: int, seed: int = 21) -> list[tuple[str, bytes]]:
    """``count`` payloads of random bytes (0-300 long) on the three channels."""
    rnd = random.Random(seed)
    channels = ("rows", "heads", "status")
    return [(channels[i % 3], rnd.randbytes(rnd.randrange(301))) for i in range(count)]


def poisons() -> list[tuple[str, bytes]]:
    """The messages issue reports named: a row at seq 2**63 with its hash computed right, the
    same for ts, mono and round, and 100 kB of ``[``; non-UTF-8; a field of the wrong type."""
    out = []
    for name in ROW_INTS:
        fields = _base_row(1, {"n": 1})
        fields[name] = 2**63
        out.append(("rows", _dump(_with_hash(fields))))
    out.append(("rows", b"[" * 100_000))
    out.append(("rows", b"\xff\xfe\xfa"))
    fields = _base_row(1, {"n": 1})
    fields["seq"] = "1"
    out.append(("rows", _dump(_with_hash(fields))))
    return out


# -- the tables' meters and events (docs/feed.md "Events and meters") --------------------------


def honest_meters(table: str, seq: int = 4) -> dict[str, Any]:
    """A meters message's body as controller/floor/feed.py writes it (docs/meters.md)."""
    return {
        "v": 1,
        "table": table,
        "seq": seq,
        "game": "paigow",
        "release": {"version": "1.0", "release": "ab" * 32, "manifest": None},
        "shift_from_seq": 0,
        "lifetime": {"power_ups": 1, "paigow.games_played": 1},
        "shift": {"power_ups": 1, "paigow.games_played": 1},
    }


def honest_event(table: str, seq: int = 3, code: int = 120) -> dict[str, Any]:
    """An events message's body as controller/floor/feed.py writes it (docs/events.md)."""
    return {
        "v": 1,
        "table": table,
        "code": code,
        "name": "rng fault",
        "severity": "fault",
        "seq": seq,
        "ts": 1_800_000_000 * 10**9,
        "round": 1,
        "details": {"reason": "stuck output"},
    }


DERIVED_DEFECTS: Final = (
    "int",
    "type",
    "nest",
    "string",
    "fields",
    "version",
    "table",
    "size",
    "meter",
    "float",
)


@st.composite
def hostile_derived(draw: Callable[..., Any], table: str) -> tuple[str, bytes]:
    """``(channel, payload)``: a meters or events message with one defect (never valid)."""
    channel = draw(st.sampled_from(["meters", "events"]))
    obj = honest_meters(table) if channel == "meters" else honest_event(table)
    ints = ("seq", "shift_from_seq") if channel == "meters" else ("seq", "ts", "code")
    defect = draw(st.sampled_from(DERIVED_DEFECTS))
    if defect == "int":
        name = draw(st.sampled_from(ints))
        value = draw(extreme_ints)
        if name == "code" and value == -1:
            value = 10_000
        obj[name] = value
    elif defect == "type":
        name = draw(st.sampled_from(sorted(set(obj) - {"v", "round", "release", "game"})))
        value = draw(wrong_types)
        if name in ("details", "lifetime", "shift") and isinstance(value, dict):
            value = [value]
        if name == "name" and value == "1":
            value = 1
        obj[name] = value
    elif defect == "nest":
        deep: Any = 1
        for _ in range(draw(st.integers(33, 900))):
            deep = [deep]
        key = "details" if channel == "events" else "release"
        obj[key] = {"deep": deep}
    elif defect == "string":
        bad = draw(bad_strings)
        if channel == "events":
            obj[draw(st.sampled_from(["name", "table"]))] = bad
        else:
            obj["lifetime"] = {bad: 1}
    elif defect == "fields":
        if draw(st.booleans()):
            del obj[draw(st.sampled_from(sorted(set(obj) - {"v"})))]
        else:
            obj[draw(st.sampled_from(["extra", "sig", "V", ""]))] = 1
    elif defect == "version":
        obj["v"] = draw(
            st.one_of(st.integers().filter(lambda v: v != 1), st.just("1"), st.just(1.0))
        )
    elif defect == "table":
        obj["table"] = draw(st.text("abcdefgh-0123456789", min_size=1, max_size=20)) + "x"
    elif defect == "size":
        if channel == "events":
            obj["details"] = {"s": "x" * draw(st.integers(70_000, 300_000))}
        else:
            obj["lifetime"] = {f"m{i}": 1 for i in range(draw(st.integers(513, 2000)))}
    elif defect == "meter":
        if channel == "events":
            obj["severity"] = draw(
                st.text(max_size=8).filter(lambda s: s not in ("info", "warning", "alarm", "fault"))
            )
        else:
            obj["shift"] = {"paigow.games_played": draw(st.integers(-(10**6), -1))}
    else:
        return channel, _dump(obj).replace(b'"seq":', b'"seq":1e400,"x":', 1)
    return channel, _dump(obj)
