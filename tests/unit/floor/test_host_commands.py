"""The host's signed commands at the table (docs/host-commands.md), without a broker: each
message is handed to the loop as the publisher would; the reply is what the publisher would
send. Accepted: disable, enable, recall, meters, replay, verify. Refused, journaled, nothing
changed and the table plays on: a forged signature, a replay (also after a restart), another
table's command, a stale time, malformed JSON, a flood's count."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.app import Application
from controller.config.profile import load_profile
from controller.floor.commands import CommandChecker, encode, parse, sign_command
from controller.floor.control import HostCommandReceived, HostCommandsFlooded
from controller.floor.events import EventReader
from controller.floor.meters import MeterFold
from drivers.buttons import ButtonPressed
from drivers.number_display import FAULT_SEGMENTS, SevenSegmentDisplay

ROOT = Path(__file__).resolve().parents[3]
TABLE = "pg-01"
HOST_KEY = ec.generate_private_key(ec.SECP256R1())
OTHER_KEY = ec.generate_private_key(ec.SECP256R1())


def _pem(key: ec.EllipticCurvePrivateKey) -> str:
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def _profile(tmp: Path) -> Path:
    keyfile = tmp / "host.pem"
    keyfile.write_text(_pem(HOST_KEY))
    path = tmp / "cmd-paigow.toml"
    path.write_text(
        f'include = "{ROOT / "hw_profiles" / "sim-paigow.toml"}"\n'
        "[feed]\n"
        'broker = "mqtt://127.0.0.1:9"\n'  # nothing listens: the publisher retries quietly
        'site = "test"\n'
        f'table = "{TABLE}"\n'
        f'host_key = "{keyfile}"\n'
        "command_max_age_s = 300\n"
    )
    return path


def _app(tmp: Path) -> Application:
    app = Application(load_profile(_profile(tmp)), tmp / "state", console_port="none")
    app.start()
    return app


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Application]:
    monkeypatch.delenv("TABLE_CONTROLLER_MANIFEST", raising=False)
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    application = _app(tmp_path)
    yield application
    application.close()


def _send(app: Application, payload: bytes) -> dict[str, Any]:
    assert app.feed is not None
    app.feed._replies.clear()
    app.dispatch(HostCommandReceived(payload))
    replies = list(app.feed._replies)
    assert len(replies) == 1, replies
    body: dict[str, Any] = json.loads(replies[0])
    return body


def _cmd(seq: int, cmd: str, args: list[str], **kw: Any) -> bytes:
    key = kw.pop("key", HOST_KEY)
    table = kw.pop("table", TABLE)
    return encode(sign_command(key, table, seq, cmd, args, **kw))


def _shuffled_opens(app: Application) -> bool:
    state = app.table.status()["state"]
    app.dispatch(ButtonPressed("shuffled", time.monotonic_ns()))
    opened = app.table.status()["state"] == "betting"
    if opened:
        app.dispatch(ButtonPressed("void", time.monotonic_ns()))
    assert state == "inspection"
    return opened


def test_disable_and_enable_from_the_host(app: Application) -> None:
    body = _send(app, _cmd(1, "disable", ["floor", "audit"]))
    assert body["ok"] and body["seq"] == 1 and body["table"] == TABLE
    assert app.disable_latch.reason == "floor audit"
    assert app._monitor_view()["closed"] == "floor audit"
    reason = app.gate.new_round_hold()
    assert reason is not None and "CLOSED" in reason and "`table enable`" in reason
    body = _send(app, _cmd(2, "enable", []))
    assert body["ok"] and app.disable_latch.reason is None
    rows = [r.data["cmd"] for r in app.journal.events(["host.command"])]
    assert rows == ["disable", "enable"]


def test_the_host_s_disable_shows_on_the_number_display_after_its_commit(
    app: Application,
) -> None:
    """docs/host-commands.md "CLOSED on the display and the monitor": between rounds the one
    digit shows the bar "-" once the ``table.disabled`` row is committed; ``enable`` blanks it."""
    display = app.devices.table.display
    assert isinstance(display, SevenSegmentDisplay)
    seen: list[tuple[bool, bool]] = []
    fault = display.fault

    def spy() -> None:  # when the bar is lit: inside a transaction? the row journaled?
        committed = app.journal.last(["table.disabled"]) is not None
        seen.append((app.journal.in_transaction, committed))
        fault()

    display.fault = spy  # type: ignore[method-assign]
    assert _send(app, _cmd(1, "disable", ["floor", "audit"]))["ok"]
    assert seen == [(False, True)]
    assert display.read_back() == FAULT_SEGMENTS
    assert _send(app, _cmd(2, "enable", []))["ok"]
    assert display.read_back() == frozenset()


def test_the_seq_survives_a_restart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TABLE_CONTROLLER_MANIFEST", raising=False)
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    first = _app(tmp_path)
    disable = _cmd(5, "disable", ["audit"])
    try:
        assert _send(first, disable)["ok"]
    finally:
        first.close()
    again = _app(tmp_path)
    try:
        assert again.disable_latch.reason == "audit"  # the latch survived
        body = _send(again, _cmd(5, "enable", []))
        assert not body["ok"] and body["why"] == "replayed"
        assert again.disable_latch.reason == "audit"
        assert _send(again, _cmd(6, "enable", []))["ok"]
    finally:
        again.close()


@pytest.mark.parametrize(
    ("why", "payload"),
    [
        ("forged", lambda: _cmd(9, "disable", ["x"], key=OTHER_KEY)),
        ("other-table", lambda: _cmd(9, "disable", ["x"], table="pg-02")),
        ("stale", lambda: _cmd(9, "disable", ["x"], ts=time.time_ns() - 3600 * 10**9)),
        ("malformed", lambda: b'{"v":3,"table":"pg-01"'),
        ("malformed", lambda: b"\xff\xfe"),
        ("unknown", lambda: _cmd(9, "reboot", [])),
    ],
)
def test_refused_commands_change_nothing(app: Application, why: str, payload: Any) -> None:
    before = app.journal.last_seq
    body = _send(app, payload())
    assert not body["ok"] and body["why"] == why
    assert app.disable_latch.reason is None
    refused = app.journal.last(["host.refused"])
    assert refused is not None and refused.data["why"] == why and refused.seq > before
    assert app.journal.last(["host.command"]) is None
    assert _shuffled_opens(app)  # the table plays on


def test_a_tampered_field_breaks_the_signature(app: Application) -> None:
    message = sign_command(HOST_KEY, TABLE, 3, "disable", ["audit"])
    message["args"] = ["something", "else"]
    body = _send(app, encode(message))
    assert body["why"] == "forged" and app.disable_latch.reason is None


def test_a_replay_of_an_accepted_command_is_refused(app: Application) -> None:
    disable = _cmd(3, "disable", ["audit"])
    assert _send(app, disable)["ok"]
    assert _send(app, _cmd(4, "enable", []))["ok"]
    body = _send(app, disable)
    assert body["why"] == "replayed" and app.disable_latch.reason is None


def test_a_flood_is_counted_in_one_row(app: Application) -> None:
    app.dispatch(HostCommandsFlooded(5000))
    row = app.journal.last(["host.refused"])
    assert row is not None and (row.data["why"], row.data["count"]) == ("flood", 5000)
    assert _shuffled_opens(app)


def test_recall_meters_replay(app: Application) -> None:
    assert app.feed is not None
    assert _send(app, _cmd(1, "recall", ["3"]))["ok"]
    assert _send(app, _cmd(2, "meters", []))["ok"] and app.feed._meters_asked
    assert _send(app, _cmd(3, "replay", ["1", "4"]))["ok"]
    assert list(app.feed._replays) == [(1, 4)]
    body = _send(app, _cmd(4, "replay", ["5", "2"]))
    assert not body["ok"] and body["why"] == "unknown"


@pytest.mark.parametrize(
    ("cmd", "args"),
    [
        ("recall", ["abc"]),
        ("recall", ["-1"]),
        ("recall", ["0"]),
        ("recall", ["１２"]),  # digits, but not ASCII
        ("replay", ["10", "1"]),
        ("replay", ["0", "99999999"]),
        ("replay", ["x"]),
        ("replay", ["1", "9223372036854775808"]),  # beyond a signed 64-bit seq
        ("verify", ["zz"]),
        ("verify", ["abcd"]),  # 2 bytes: a seed is 16 to 64
    ],
)
def test_a_command_with_bad_arguments_is_refused_not_accepted(
    app: Application, cmd: str, args: list[str]
) -> None:
    """docs/host-commands.md "Checks", 6: a known command with its arguments, else `unknown`:
    refused, not journaled as accepted, not counted among the accepted, its seq not used up."""
    assert app.feed is not None
    body = _send(app, _cmd(1, cmd, args))
    assert (body["ok"], body["why"], body["seq"]) == (False, "unknown", 1)
    assert not list(app.journal.events(["host.command"]))
    assert not app.feed._replays
    refused = app.journal.last(["host.refused"])
    assert refused is not None and refused.data["why"] == "unknown"
    reader = app.journal.reader()
    try:
        fold = MeterFold().add_all(reader.events())
    finally:
        reader.close()
    assert fold.lifetime.get(f"host_commands.{cmd}", 0) == 0
    assert fold.lifetime["host_refusals.unknown"] == 1
    assert _send(app, _cmd(1, "meters", []))["ok"]  # the seq was not used up


def test_verify_seed_answers_the_hmac(app: Application) -> None:
    assert app.feed is not None
    app.feed._replies.clear()
    app.dispatch(HostCommandReceived(_cmd(1, "verify", ["00" * 16])))
    deadline = time.monotonic() + 60
    while not app.feed._replies:
        assert time.monotonic() < deadline, "no verify reply"
        event = app.queue.get(timeout=60)
        app.dispatch(event)
    body = json.loads(app.feed._replies[0])
    assert body["ok"], body
    row = app.journal.last(["program.hmac"])
    assert row is not None and body["lines"][0] == (
        f"hmac-sha256 {row.data['hmac']} over {row.data['files']} files"
    )
    reader = app.journal.reader()
    try:
        rows = list(reader.events())
    finally:
        reader.close()
    events = EventReader()
    raised = [e for r in rows for e in events.events(r) if e.code == 131]
    assert [(e.details["hmac"], e.details["source"]) for e in raised] == [
        (row.data["hmac"], "host")
    ]
    assert MeterFold().add_all(rows).lifetime["program_verifications"] == 1


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=600) | st.text(max_size=300).map(str.encode))
def test_junk_never_passes_the_checks(payload: bytes) -> None:
    checker = CommandChecker(TABLE, HOST_KEY.public_key(), 300)
    with pytest.raises(ValueError):
        checker.check(payload, time.time_ns())


def test_parse_keeps_the_fields() -> None:
    m = parse(_cmd(7, "disable", ["a"]))
    assert (m["seq"], m["cmd"], m["args"]) == (7, "disable", ["a"])
