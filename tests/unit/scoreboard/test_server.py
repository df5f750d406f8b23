"""The scoreboard server over real sockets: read-only (GET and HEAD only, four paths), bounded
(request line, head size and time, client cap, accept pacing, slow readers dropped), and the
event stream (the current version first, then each new one, keep-alives, a reconnect catches
up). The publication is the application's own (controller.app.Publication)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import replace

import pytest

from controller.app import Publication
from controller.config.profile import ScoreboardSettings
from controller.scoreboard import server as server_module
from controller.scoreboard.pages import page
from controller.scoreboard.server import ScoreboardServer

WAIT_S = 5.0
PAGE_LIMIT = 100_000  # issue 17: the whole page under 100 kB


@pytest.fixture
def pub() -> Publication:
    p = Publication()
    p.publish({"game": "paigow", "state": "betting", "round": 3})
    return p


@pytest.fixture
def board(pub: Publication) -> Iterator[ScoreboardServer]:
    b = ScoreboardServer(
        ScoreboardSettings(enabled=True, port=0, max_clients=4, table_name="PAI GOW 3"),
        pub,
        "paigow",
        "PG-3",
    )
    b.start()
    yield b
    b.close()


#: What every document of the fixture's server carries besides the view: the table.
TABLE = {"table": "PG-3", "table_name": "PAI GOW 3"}
#: And what content.document adds to a pai gow view in betting.
PAIGOW_EXTRA = {"called": {"key": "state_betting"}, "start": {}}


def own(board: ScoreboardServer) -> str:
    """The ``Host`` a browser sends for the server's own address."""
    host, port = board.address
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def connect(board: ScoreboardServer) -> socket.socket:
    return socket.create_connection(board.address, timeout=WAIT_S)


def request(board: ScoreboardServer, raw: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``raw``, read the whole response (the server closes after one)."""
    with connect(board) as s:
        s.sendall(raw)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
    return int(lines[0].split()[1]), headers, body


def get(
    board: ScoreboardServer, path: str, method: str = "GET"
) -> tuple[int, dict[str, str], bytes]:
    return request(board, f"{method} {path} HTTP/1.1\r\nHost: {own(board)}\r\n\r\n".encode())


class Stream:
    """An event-stream client on a raw socket: parses events as the browser would."""

    def __init__(self, board: ScoreboardServer, last_id: int | None = None) -> None:
        self.sock = connect(board)
        extra = f"Last-Event-ID: {last_id}\r\n" if last_id is not None else ""
        self.sock.sendall(f"GET /events HTTP/1.1\r\nHost: {own(board)}\r\n{extra}\r\n".encode())
        self.buf = b""
        head = self._until(b"\r\n\r\n")
        self.status = int(head.split()[1])
        self.head = head.decode("latin-1")

    def _until(self, sep: bytes) -> bytes:
        deadline = time.monotonic() + WAIT_S
        while sep not in self.buf:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("stream closed")
            self.buf += chunk
        block, _, self.buf = self.buf.partition(sep)
        return block

    def block(self) -> dict[str, str]:
        """The next block up to a blank line: field -> value (comments under ':')."""
        fields: dict[str, str] = {}
        for line in self._until(b"\n\n").decode().split("\n"):
            name, _, value = line.partition(":")
            fields[name] = value.lstrip(" ")
        return fields

    def event(self) -> tuple[int, dict[str, object]]:
        while True:
            b = self.block()
            if b.get("event") == "state":
                return int(b["id"]), json.loads(b["data"])

    def close(self) -> None:
        self.sock.close()


def test_the_page_is_html_under_100_kb_and_needs_nothing_from_outside(
    board: ScoreboardServer,
) -> None:
    for game in ("paigow", "baccarat"):
        body = page(game)
        assert len(body) < PAGE_LIMIT, f"{game}: {len(body)} bytes"
        text = body.decode()
        # No CDN, no fetch of anything but this server's own event stream.
        assert "http://" not in text.replace('"http://www.w3.org/2000/svg"', "")
        assert "https://" not in text and "src=" not in text and "@import" not in text
    status, headers, body = get(board, "/")
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    assert int(headers["Content-Length"]) == len(body) == len(board.page) < PAGE_LIMIT
    assert "default-src 'none'" in headers["Content-Security-Policy"]
    status, headers, body = get(board, "/", "HEAD")
    assert status == 200 and body == b"" and int(headers["Content-Length"]) > 0


def test_state_is_the_current_document(board: ScoreboardServer, pub: Publication) -> None:
    status, headers, body = get(board, "/state")
    assert status == 200 and headers["Content-Type"] == "application/json"
    assert json.loads(body) == {
        "game": "paigow",
        "state": "betting",
        "round": 3,
        "version": 1,
        **TABLE,
        **PAIGOW_EXTRA,
    }
    pub.publish({"game": "paigow", "state": "dealing", "round": 3})
    assert json.loads(get(board, "/state")[2])["version"] == 2
    # the page carries the table too, before any event
    assert b'data-table="PG-3"' in get(board, "/")[2]


@pytest.mark.parametrize(
    "method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT"]
)
def test_nothing_but_get_and_head(board: ScoreboardServer, method: str) -> None:
    status, headers, _ = request(
        board,
        f"{method} / HTTP/1.1\r\nHost: {own(board)}\r\nContent-Length: 5\r\n\r\nhello".encode(),
    )
    assert status == 405 and headers["Allow"] == "GET, HEAD"


@pytest.mark.parametrize(
    "path", ["/x", "/events/", "/../etc/passwd", "/state.json", "/index.html", "/%2e%2e/"]
)
def test_unknown_paths_are_404(board: ScoreboardServer, path: str) -> None:
    assert get(board, path)[0] == 404


def test_bad_requests_are_answered(board: ScoreboardServer) -> None:
    long_url = "/" + "a" * server_module.MAX_REQUEST_LINE
    assert get(board, long_url)[0] == 414
    many = "".join(f"X-{i}: {'v' * 100}\r\n" for i in range(100))
    assert request(board, f"GET / HTTP/1.1\r\n{many}\r\n".encode())[0] == 431
    assert request(board, b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n")[0] == 400
    assert request(board, b"GET / HTTP/9.9\r\n\r\n")[0] == 505
    assert board.stats.refused == 4
    assert get(board, "/")[0] == 200  # and the server goes on


def test_a_slow_client_is_dropped(board: ScoreboardServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server_module, "HEAD_TIMEOUT_S", 0.3)
    with connect(board) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # and never the blank line
        start = time.monotonic()
        assert s.recv(100) == b""  # closed without an answer
        assert time.monotonic() - start < 2.0
    assert board.stats.slow == 1
    with connect(board) as s:  # one byte at a time is no better
        s.sendall(b"GET")
        for _ in range(10):
            time.sleep(0.05)
            try:
                s.sendall(b" ")
            except OSError:
                break
        assert s.recv(100) == b""
    assert get(board, "/")[0] == 200


def test_the_stream_sends_the_current_version_then_each_new_one(
    board: ScoreboardServer, pub: Publication
) -> None:
    stream = Stream(board)
    try:
        assert stream.status == 200 and "text/event-stream" in stream.head
        assert stream.block() == {"retry": str(server_module.RETRY_MS)}
        assert stream.event() == (
            1,
            {"game": "paigow", "state": "betting", "round": 3, "version": 1, **TABLE}
            | PAIGOW_EXTRA,
        )
        for n in range(2, 6):
            pub.publish({"game": "paigow", "state": "dealing", "round": n})
            version, doc = stream.event()
            assert version == n and doc["round"] == n and doc["version"] == n
    finally:
        stream.close()
    # A page that reconnects (with the last id it saw, or none) gets the current version first.
    again = Stream(board, last_id=2)
    try:
        again.block()
        assert again.event()[0] == 5
    finally:
        again.close()


def test_an_idle_stream_gets_keep_alives(
    board: ScoreboardServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(server_module, "KEEPALIVE_S", 0.2)
    monkeypatch.setattr(server_module, "_WAKE_S", 0.05)
    stream = Stream(board)
    try:
        stream.block()
        stream.event()
        block = stream.block()
        if block.get("event") == "heartbeat":  # the fixture's one publication, fresh
            block = stream.block()
        assert block == {"": "keep-alive"}
    finally:
        stream.close()


def test_the_client_cap_answers_503_without_a_thread(board: ScoreboardServer) -> None:
    streams = [Stream(board) for _ in range(4)]  # max_clients = 4
    try:
        threads = threading.active_count()
        status, headers, _ = get(board, "/")
        assert status == 503 and headers["Retry-After"] == "5"
        assert threading.active_count() == threads
        assert board.stats.busy == 1 and board.stats.streaming == 4
    finally:
        for s in streams:
            s.close()
    deadline = time.monotonic() + WAIT_S
    while get(board, "/")[0] != 200:  # slots come back as streams end
        assert time.monotonic() < deadline
        time.sleep(0.1)


def test_a_flood_is_paced_and_the_server_goes_on(board: ScoreboardServer) -> None:
    start = time.monotonic()
    n = server_module.ACCEPT_BURST + 25
    codes = [get(board, "/healthz")[0] for _ in range(n)]
    took = time.monotonic() - start
    assert codes == [200] * n
    # Past the burst, accepts are paced at ACCEPT_RATE a second.
    assert took >= 20 / server_module.ACCEPT_RATE
    assert board.stats.refused == 0


def test_a_stream_that_is_not_read_is_dropped(
    pub: Publication, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(server_module, "WRITE_TIMEOUT_S", 0.5)
    monkeypatch.setattr(server_module, "_WAKE_S", 0.02)
    b = ScoreboardServer(ScoreboardSettings(enabled=True, port=0, max_clients=2), pub, "paigow")
    b.start()
    try:
        s = connect(b)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.sendall(f"GET /events HTTP/1.1\r\nHost: {own(b)}\r\n\r\n".encode())
        blob = "x" * 200_000
        deadline = time.monotonic() + 20.0
        n = 0
        while b.stats.slow == 0 and time.monotonic() < deadline:
            n += 1
            pub.publish({"game": "paigow", "state": "betting", "round": n, "blob": blob})
            time.sleep(0.02)
        assert b.stats.slow == 1 and b.stats.streaming == 0
        s.close()
    finally:
        b.close()


def test_close_ends_streams_promptly(pub: Publication) -> None:
    b = ScoreboardServer(ScoreboardSettings(enabled=True, port=0), pub, "paigow")
    b.start()
    stream = Stream(b)
    stream.block()
    stream.event()
    start = time.monotonic()
    b.close()
    with pytest.raises((EOFError, OSError)):
        while True:
            stream.block()
    assert time.monotonic() - start < 3.0
    stream.close()


def test_ipv6_loopback(pub: Publication) -> None:
    if not socket.has_ipv6:
        pytest.skip("no IPv6 in this Python")
    try:
        b = ScoreboardServer(ScoreboardSettings(enabled=True, address="::1", port=0), pub, "paigow")
        b.start()
    except OSError as exc:
        pytest.skip(f"no IPv6 loopback here: {exc}")
    try:
        assert b.url.startswith("http://[::1]:")
        assert get(b, "/healthz")[:1] == (200,)
    finally:
        b.close()


def test_a_port_in_use_raises(board: ScoreboardServer, pub: Publication) -> None:
    other = ScoreboardServer(replace(board.settings, port=board.address[1]), pub, "paigow")
    with pytest.raises(OSError):
        other.start()


def test_a_port_in_use_is_a_fault_tried_again_until_it_is_free(pub: Publication) -> None:
    """serve(): says why at once (once), shows it on status, and binds as soon as the port is
    free, then says so; the page is then served on that port."""
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    b = ScoreboardServer(ScoreboardSettings(enabled=True, port=port), pub, "paigow", "PG-3")
    failed: list[str] = []
    served = threading.Event()
    try:
        assert b.serve(failed.append, served.set, retry_s=0.1) is False
        assert len(failed) == 1 and "in use" in failed[0]
        assert b.describe().startswith(f"FAULT not served on 127.0.0.1:{port}: ")
        assert "the table plays on" in b.describe()
        time.sleep(0.35)
        assert len(failed) == 1 and not served.is_set()  # said once, tried again quietly
        holder.close()
        assert served.wait(WAIT_S)
        assert b.bind_error is None and b.describe().startswith(f"http://127.0.0.1:{port}/")
        assert get(b, "/healthz")[0] == 200
    finally:
        holder.close()
        b.close()


def test_the_fonts_are_served_and_the_page_may_load_them(board: ScoreboardServer) -> None:
    from controller.scoreboard import fonts

    for path, data in (
        ("/fonts/zh-Hant.woff2", fonts.ZH_HANT),
        ("/fonts/zh-Hans.woff2", fonts.ZH_HANS),
    ):
        status, headers, body = get(board, path)
        assert status == 200 and headers["Content-Type"] == "font/woff2" and body == data
        assert body[:4] == b"wOF2"  # a WOFF2 file
        assert "font-src 'self'" in headers["Content-Security-Policy"]
    assert get(board, "/fonts/zh.woff2")[0] == 404


def test_a_view_the_roads_cannot_read_is_an_error_document(pub: Publication) -> None:
    b = ScoreboardServer(ScoreboardSettings(enabled=True, port=0), pub, "baccarat")
    b.start()
    try:
        pub.publish({"game": "baccarat", "shoe": 1, "coup": 1, "results": ["banker"]})
        doc = json.loads(get(b, "/state")[2])
        assert doc["version"] == 2 and "RoadError" in doc["error"]
        pub.publish({"game": "baccarat", "shoe": 1, "coup": 1, "results": ["B"]})
        doc = json.loads(get(b, "/state")[2])
        assert "error" not in doc and doc["counts"]["banker"] == 1
    finally:
        b.close()
