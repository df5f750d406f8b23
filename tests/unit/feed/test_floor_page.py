"""The floor page's server (docs/feed.md "The floor page"): read-only for everyone, an
acknowledgement only from a signed-in person (scrypt user list) through the page itself (its
CSRF token, JSON only, its own origin), hostile query strings and bodies answered with a clear
error, and a table's presence ``unknown`` whenever no collector says it holds the broker."""

from __future__ import annotations

import http.client
import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from controller.feed.floor import is_forked
from controller.feed.floorauth import (
    LOGIN_FAILURES,
    UserError,
    add_user,
    hash_password,
    load_users,
    verify,
)
from controller.feed.floorpage import (
    HEALTH_STALE_S,
    MAX_BODY,
    MAX_QUERY,
    FloorPage,
    RequestError,
    Snapshots,
    filter_query,
    parse_address,
)
from controller.feed.messages import status_payload
from controller.feed.store import Store
from tests.feed_journal import TableJournal
from tests.unit.feed.test_verifier import SITE, Rig

PASSWORD = "correct horse battery"


# -- the user list -----------------------------------------------------------------------------


def test_a_user_list_holds_scrypt_hashes_only_its_owner_reads(tmp_path: Path) -> None:
    users = tmp_path / "users"
    assert add_user(users, "J. Doe", PASSWORD) is True
    assert add_user(users, "ann", "another password") is True
    assert stat.S_IMODE(users.stat().st_mode) == 0o600
    text = users.read_text()
    assert PASSWORD not in text and "J. Doe:scrypt$16384$8$1$" in text
    known = load_users(users)
    assert verify(known, "J. Doe", PASSWORD)
    assert not verify(known, "J. Doe", PASSWORD + "x")
    assert not verify(known, "nobody", PASSWORD)
    assert not verify(known, "ann", PASSWORD)
    # a new password replaces the old one
    assert add_user(users, "ann", "a third password") is False
    assert verify(load_users(users), "ann", "a third password")
    assert not verify(load_users(users), "ann", "another password")


def test_a_stored_hash_is_checked_with_its_own_parameters(tmp_path: Path) -> None:
    encoded = hash_password(PASSWORD, salt=b"s" * 16)
    parts = encoded.split("$")
    assert parts[:4] == ["scrypt", "16384", "8", "1"] and parts[4] == (b"s" * 16).hex()
    assert verify({"x": encoded}, "x", PASSWORD)
    for broken in ("scrypt$1$8$1$00$00", "md5$abc", encoded.replace("$8$", "$99$"), "scrypt$"):
        assert not verify({"x": broken}, "x", PASSWORD)


@pytest.mark.parametrize(
    ("name", "password", "said"),
    [
        ("", PASSWORD, "a name"),
        (" padded", PASSWORD, "a name"),
        ("a:b", PASSWORD, "a name"),
        ("x" * 65, PASSWORD, "a name"),
        ("ann", "short", "at least"),
        ("ann", "x" * 2000, "at most"),
    ],
)
def test_a_bad_name_or_password_is_refused_in_words(
    tmp_path: Path, name: str, password: str, said: str
) -> None:
    with pytest.raises(UserError, match=said):
        add_user(tmp_path / "users", name, password)
    assert not (tmp_path / "users").exists()


def test_a_user_list_line_that_is_not_a_hash_is_named(tmp_path: Path) -> None:
    users = tmp_path / "users"
    users.write_text("# comment\nann:plaintext\n")
    with pytest.raises(UserError, match="line 2"):
        load_users(users)


# -- the server --------------------------------------------------------------------------------


class Client:
    """http.client against the page, keeping its session cookie like a browser."""

    def __init__(self, page: FloorPage) -> None:
        host, port = page.httpd.server_address[:2]
        self.host, self.port = str(host), int(port)
        self.cookie: str | None = None
        self.csrf: str | None = None

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, dict[str, Any], http.client.HTTPResponse]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
        try:
            sent = dict(headers or {})
            if self.cookie:
                sent.setdefault("Cookie", self.cookie)
            conn.request(method, path, body=body, headers=sent)
            resp = conn.getresponse()
            raw = resp.read()
        finally:
            conn.close()
        cookie = resp.getheader("Set-Cookie")
        if cookie:
            self.cookie = cookie.split(";")[0]
        ctype = resp.getheader("Content-Type") or ""
        data = json.loads(raw) if ctype.startswith("application/json") else {"html": raw}
        return resp.status, data, resp

    def post(
        self, path: str, obj: object, *, csrf: bool = True, extra: dict[str, str] | None = None
    ) -> tuple[int, dict[str, Any]]:
        headers = {"Content-Type": "application/json"}
        if csrf and self.csrf:
            headers["X-CSRF-Token"] = self.csrf
        headers.update(extra or {})
        status, data, _ = self.request("POST", path, json.dumps(obj).encode(), headers)
        return status, data

    def login(self, name: str = "J. Doe", password: str = PASSWORD) -> tuple[int, dict[str, Any]]:
        status, data = self.post("/api/login", {"name": name, "password": password}, csrf=False)
        if status == 200:
            self.csrf = data["csrf"]
        return status, data


@pytest.fixture
def floor(tmp_path: Path) -> Iterator[tuple[FloorPage, Rig, TableJournal]]:
    """A store with two tables: table-07 forked (a signed head that disagrees with its record)
    and table-08 with a bad-signature alarm; the page server on a free port; a user list."""
    from cryptography.hazmat.primitives.asymmetric import ec

    t7, t8 = TableJournal("table-07"), TableJournal("table-08")
    rig = Rig(tmp_path, t7, t8)
    for r in t7.rounds(2):
        rig.row(t7, r)
    rig.head(t7, t7.sign(6))
    rig.head(t7, t7.sign(3, hash_="ab" * 32))  # signed by the table's key, another history
    for r in t8.rounds(1):
        rig.row(t8, r)
    rig.head(t8, t8.sign(3, key=ec.generate_private_key(ec.SECP256R1())))
    rig.store.set_health("tc-collector-site1", SITE, True, rig.clock())
    rig.store.commit()
    users = tmp_path / "users"
    add_user(users, "J. Doe", PASSWORD)
    page = FloorPage(f"sqlite:///{tmp_path / 'floor.sqlite'}", ("127.0.0.1", 0), users, poll_s=0.05)
    page.start()
    try:
        yield page, rig, t7
    finally:
        page.close()
        rig.store.close()


def _kinds(rig: Rig) -> dict[str, int]:
    return {a.kind: a.id for a in rig.store.alarms()}


def _open(url: str) -> set[int]:
    store = Store.open(url)
    try:
        return {a.id for a in store.open_alarms(100)[0]}
    finally:
        store.close()


def test_the_page_is_one_document_with_nothing_from_elsewhere(floor: Any) -> None:
    page, _, _ = floor
    status, data, resp = Client(page).request("GET", "/")
    assert status == 200
    html = data["html"].decode()
    assert "default-src 'none'" in (resp.getheader("Content-Security-Policy") or "")
    assert "http://" not in html and "https://" not in html and "<script src" not in html
    assert "<link" not in html


def test_no_sign_in_no_acknowledgement(floor: Any) -> None:
    page, rig, _ = floor
    alarm = _kinds(rig)["bad-signature"]
    c = Client(page)
    status, data = c.post("/api/ack", {"alarm": alarm, "note": "seen"})
    assert status == 401 and "sign in" in data["error"]
    assert alarm in _open(page.store_url)


def test_a_wrong_password_is_refused_and_many_lock_the_peer_out(floor: Any) -> None:
    page, rig, _ = floor
    c = Client(page)
    status, data = c.login(password="wrong horse battery")
    assert status == 401 and data["error"] == "wrong name or password"
    assert c.cookie is None
    status, data = c.login(name="nobody")
    assert status == 401 and data["error"] == "wrong name or password"
    for _ in range(LOGIN_FAILURES - 2):
        c.login(password="still wrong")
    status, data = c.login()  # even the right password, while locked out
    assert status == 429 and "wait" in data["error"]
    status, data = c.post("/api/ack", {"alarm": _kinds(rig)["bad-signature"], "note": "x"})
    assert status == 401


def test_an_acknowledgement_needs_the_pages_token_json_and_its_origin(floor: Any) -> None:
    page, rig, _ = floor
    alarm = _kinds(rig)["bad-signature"]
    c = Client(page)
    assert c.login()[0] == 200
    assert c.cookie is not None and "HttpOnly" not in c.cookie  # the name=value part
    # the cookie alone (what another site's form would carry): refused
    status, data = c.post("/api/ack", {"alarm": alarm, "note": "seen"}, csrf=False)
    assert status == 403 and "floor page itself" in data["error"]
    status, data = c.post(
        "/api/ack", {"alarm": alarm, "note": "seen"}, extra={"X-CSRF-Token": "guess"}
    )
    assert status == 403
    # a form post (no preflight needed by another site): refused whatever it holds
    status, data, _ = c.request(
        "POST",
        "/api/ack",
        f"alarm={alarm}&note=seen".encode(),
        {"Content-Type": "application/x-www-form-urlencoded", "X-CSRF-Token": c.csrf or ""},
    )
    assert status == 415
    # from another origin, even with the token: refused
    status, data = c.post(
        "/api/ack", {"alarm": alarm, "note": "seen"}, extra={"Origin": "https://evil.example"}
    )
    assert status == 403
    assert alarm in _open(page.store_url)
    # from the page: recorded with the signed-in name
    origin = f"http://{c.host}:{c.port}"
    status, data = c.post(
        "/api/ack", {"alarm": alarm, "note": "key rotated by IT"}, extra={"Origin": origin}
    )
    assert status == 200 and data == {"acknowledged": "alarm", "alarm": alarm, "by": "J. Doe"}
    assert alarm not in _open(page.store_url)
    store = Store.open(page.store_url)
    try:
        ack = store.alarm_acks()[alarm]
    finally:
        store.close()
    assert (ack.by, ack.note) == ("J. Doe", "key rotated by IT")
    # signed out: the same token no longer works
    assert c.post("/api/logout", {})[0] == 200
    status, _ = c.post("/api/ack", {"alarm": alarm, "note": "x"})
    assert status == 401


def test_a_forked_table_is_acknowledged_by_name_and_stays_its_record(floor: Any) -> None:
    page, rig, t7 = floor
    c = Client(page)
    c.login()
    status, data = c.post("/api/ack", {"table": f"{SITE}/table-07", "note": ""})
    assert status == 400 and "note" in data["error"]
    status, data = c.post("/api/ack", {"table": f"{SITE}/table-08", "note": "x"})
    assert status == 409 and "not forked" in data["error"]
    rec = next(r for r in rig.store.tables() if r.table == "table-07")
    assert is_forked(rig.store, rec)
    status, data = c.post("/api/ack", {"table": f"{SITE}/table-07", "note": "restored copy"})
    assert status == 200 and data["table"] == f"{SITE}/table-07"
    rig.store.rollback()
    assert not is_forked(rig.store, rec)
    assert [(a.by, a.note) for a in rig.store.acks()] == [("J. Doe", "restored copy")]
    assert [r["hash"] for r in rig.store.rows(SITE, "table-07")] == [r.hash for r in t7.rows]


@pytest.mark.parametrize(
    ("body", "headers", "status", "said"),
    [
        (b"{not json", {}, 400, "not JSON"),
        (b"[1, 2]", {}, 400, "JSON object"),
        (b"\xff\xfe", {}, 400, "not JSON"),
        (b"[" * 100_00, {}, 413, "longer"),
        (b'{"alarm": true, "note": "x"}', {}, 400, "alarm"),
        (b'{"alarm": 99999, "note": "x"}', {}, 404, "no alarm"),
        (b'{"alarm": 1, "table": "a/b", "note": "x"}', {}, 400, "either"),
        (b'{"table": 7, "note": "x"}', {}, 400, "SITE/TABLE"),
        (b'{"table": "site1/none", "note": "x"}', {}, 409, "no table"),
        (b'{"alarm": 1, "note": "' + b"n" * 2100 + b'"}', {}, 400, "longer"),
        (b"{}", {"Content-Length": "-5"}, 413, "longer"),
        (b"{}", {"Content-Length": "x"}, 400, "not a number"),
    ],
)
def test_a_bad_body_gets_a_clear_error(
    floor: Any, body: bytes, headers: dict[str, str], status: int, said: str
) -> None:
    page, _, _ = floor
    c = Client(page)
    c.login()
    sent = {"Content-Type": "application/json", "X-CSRF-Token": c.csrf or "", **headers}
    got, data, _ = c.request("POST", "/api/ack", body, sent)
    assert got == status and said in data["error"], data


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ("table=" + "x" * (MAX_QUERY + 1), "longer"),
        ("table=" + "x" * 65, "characters"),
        ("table=%3Cscript%3E", "characters"),
        ("table=a&table=b", "more than once"),
        ("colour=red", "unknown filter"),
        ("integrity=fine", "integrity is one of"),
        ("table=%00", "characters"),
    ],
)
def test_a_hostile_query_string_gets_a_clear_error(floor: Any, query: str, said: str) -> None:
    page, _, _ = floor
    for path in ("/", "/api/state", "/events"):
        status, data, _ = Client(page).request("GET", f"{path}?{query}")
        assert status == 400 and said in data["error"], (path, data)


def test_filters_the_page_understands_are_accepted() -> None:
    assert filter_query("table=table-07&integrity=bad%20signature&kind=fork") == {
        "table": "table-07",
        "integrity": "bad signature",
        "kind": "fork",
    }
    with pytest.raises(RequestError):
        filter_query("kind=" + "é")


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    path=st.text(
        st.characters(min_codepoint=33, max_codepoint=126, exclude_characters="#"), max_size=300
    ),
    body=st.binary(max_size=MAX_BODY + 10),
)
def test_fuzzed_requests_never_break_the_server(floor: Any, path: str, body: bytes) -> None:
    page, rig, _ = floor
    assume(not path.startswith("events"))  # a valid stream never ends (tested below)
    c = Client(page)
    status, data, _ = c.request("GET", "/" + path)
    assert status in (200, 400, 404), (path, status)
    if status != 200:
        assert data["error"]
    status, data, _ = c.request(
        "POST", "/api/ack", body, {"Content-Type": "application/json", "X-CSRF-Token": "x"}
    )
    assert status in (400, 401, 403, 413), status
    assert data["error"]
    # still serving, nothing acknowledged
    assert Client(page).request("GET", "/api/state")[0] == 200
    assert len(_open(page.store_url)) == len(rig.store.alarms())


def test_the_event_stream_sends_the_whole_floor_first(floor: Any) -> None:
    page, _, _ = floor
    host, port = page.httpd.server_address[:2]
    conn = http.client.HTTPConnection(str(host), int(port), timeout=10)
    try:
        conn.request("GET", "/events")
        resp = conn.getresponse()
        assert resp.status == 200 and resp.getheader("Content-Type") == "text/event-stream"
        data = None
        while data is None:
            line = resp.fp.readline().decode()
            if line.startswith("data: "):
                data = json.loads(line[6:])
    finally:
        conn.close()
    assert data["full"] is True and data["broker"] == "connected"
    by_id = {t["id"]: t for t in data["tables"]}
    assert by_id[f"{SITE}/table-07"]["integrity"] == "forked"
    assert by_id[f"{SITE}/table-08"]["integrity"] == "bad signature"
    assert {a["kind"] for a in data["alarms"]} >= {"rollback", "bad-signature"}


# -- presence ----------------------------------------------------------------------------------


def test_presence_is_unknown_while_no_collector_holds_the_broker(tmp_path: Path) -> None:
    t = TableJournal("table-07")
    rig = Rig(tmp_path, t)
    rig.raw(
        f"tc/{SITE}/table-07/status",
        status_payload("online", rig.clock()),
    )
    for r in t.rounds(1):
        rig.row(t, r)
    snaps = Snapshots(rig.store, SITE)
    now = rig.clock()

    def presence(at: int) -> tuple[str, str]:
        data = snaps.build(now_ns=at)
        return data["broker"], data["tables"][0]["presence"]

    assert presence(now) == ("no collector", "unknown")  # nothing said it holds the broker
    rig.store.set_health("c1", SITE, True, now)
    assert presence(now) == ("connected", "online")
    stale = now + int((HEALTH_STALE_S + 1) * 1e9)
    assert presence(stale) == ("lost", "unknown")  # the collector stopped saying so
    rig.store.set_health("c1", SITE, False, now + 1)
    assert presence(now + 2) == ("lost", "unknown")  # it said it lost the broker
    rig.store.set_health("c2", SITE, True, now + 3)  # another instance holds it
    assert presence(now + 4) == ("connected", "online")
    health = {h.client_id: h for h in rig.store.health()}
    assert health["c1"].since_ns == now + 1 and not health["c1"].connected
    rig.store.close()


@pytest.mark.parametrize(
    ("text", "address"),
    [("127.0.0.1:8080", ("127.0.0.1", 8080)), (":80", ("0.0.0.0", 80)), ("[::1]:0", ("::1", 0))],
)
def test_serve_addresses(text: str, address: tuple[str, int]) -> None:
    assert parse_address(text) == address


@pytest.mark.parametrize("text", ["8080", "host:port", "host:70000", ""])
def test_a_bad_serve_address_is_refused_in_words(text: str) -> None:
    with pytest.raises(ValueError, match="HOST:PORT|port"):
        parse_address(text)


def _row(seq: int, kind: str, rnd: int | None, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "seq": seq,
        "ts": seq,
        "boot": "b",
        "mono": seq,
        "kind": kind,
        "round": rnd,
        "data": data,
        "prev": "0" * 64,
        "hash": f"{seq:064x}",
    }


def test_game_state_and_last_result_come_from_the_newest_rows(tmp_path: Path) -> None:
    """Pai gow rows record ``state``, baccarat's ``moved`` (its last move's target); the last
    row that closes a round or a coup is the last result (controller/feed/floor.py)."""
    from controller.feed.store import TableRecord

    store = Store.open(f"sqlite:///{tmp_path / 's.sqlite'}")
    store.add_row(SITE, "pg", _row(1, "paigow.settled", 4, {"state": "settled"}), 1)
    store.add_row(SITE, "pg", _row(2, "paigow.shuffled", 5, {"state": "betting"}), 2)
    store.save_table(TableRecord(SITE, "pg", frontier_seq=2, last_round=5))
    store.add_row(SITE, "bac", _row(1, "baccarat.coup.settled", None, {"shoe": 1, "coup": 7}), 1)
    store.add_row(SITE, "bac", _row(2, "baccarat.moved", None, {"moved": ["x>betting"]}), 2)
    store.add_row(SITE, "bac", _row(3, "baccarat.moved", None, {"moved": ["a>b", "b>dealing"]}), 3)
    store.save_table(TableRecord(SITE, "bac", frontier_seq=3))
    store.commit()
    snaps = Snapshots(store, SITE)
    by = {t["table"]: t for t in snaps.build()["tables"]}
    assert (by["pg"]["game"], by["pg"]["state"], by["pg"]["result"]) == (
        "paigow",
        "betting",
        "round 4 settled",
    )
    assert (by["bac"]["game"], by["bac"]["state"], by["bac"]["result"]) == (
        "baccarat",
        "dealing",
        "coup 7 settled",
    )
    # a new row moves the frontier: read again; the result stays until another closes a round
    store.add_row(SITE, "pg", _row(3, "paigow.voided", 5, {"state": "voided"}), 3)
    store.save_table(TableRecord(SITE, "pg", frontier_seq=3, last_round=5))
    store.commit()
    by = {t["table"]: t for t in snaps.build()["tables"]}
    assert by["pg"]["result"] == "round 5 voided"
    # the table stops (app.shutdown) and its journal is scrubbed: still pai gow, the game the
    # table plays, not the first word of its newest row's kind
    store.add_row(SITE, "pg", _row(4, "app.shutdown", None, {}), 4)
    store.add_row(SITE, "pg", _row(5, "journal.scrubbed", None, {}), 5)
    store.save_table(TableRecord(SITE, "pg", frontier_seq=5, last_round=5))
    store.commit()
    by = {t["table"]: t for t in snaps.build()["tables"]}
    assert by["pg"]["game"] == "paigow"
    # a table whose every newest row is the application's shows no game rather than "app"
    store.add_row(SITE, "idle", _row(1, "app.start", None, {}), 1)
    store.save_table(TableRecord(SITE, "idle", frontier_seq=1))
    store.commit()
    assert {t["table"]: t for t in snaps.build()["tables"]}["idle"]["game"] == ""
    # until its meters arrive: they name the game it is set up for
    from tests.feed_hostile import honest_meters

    store.save_meters(SITE, "idle", {**honest_meters("idle", seq=1), "game": "baccarat"}, 3)
    store.commit()
    assert {t["table"]: t for t in snaps.build()["tables"]}["idle"]["game"] == "baccarat"
    store.close()


def test_the_floor_command_says_when_no_collector_holds_the_broker(tmp_path: Path) -> None:
    from controller.feed.floor import floor_lines
    from controller.feed.store import TableRecord

    store = Store.open(f"sqlite:///{tmp_path / 's.sqlite'}")
    store.save_table(TableRecord(SITE, "table-07", status="online"))
    store.set_health("c1", SITE, True, 1_000)
    store.commit()
    assert not any("holds the broker" in x for x in floor_lines(store, site=SITE, now_ns=2_000))
    store.set_health("c1", SITE, False, 3_000, "broker unreachable")
    store.commit()
    lines = floor_lines(store, site=SITE, now_ns=4_000)
    assert lines[1].split()[:2] == ["table-07", "online"]  # the last status heard, as before
    assert lines[2].startswith("no collector holds the broker now (c1 broker unreachable since")
    later = floor_lines(store, site=SITE, now_ns=3_000 + int(HEALTH_STALE_S * 1e9) + 1)
    assert "(c1 silent since" in later[2]
    store.close()
