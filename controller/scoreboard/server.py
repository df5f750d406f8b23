"""The scoreboard's HTTP server: the standard library's ``ThreadingHTTPServer``, read-only.

Why the standard library (docs/scoreboard.md): the pages are two fixed documents, one JSON
document and one server-sent event stream, which is just a GET whose response never ends; no
route table, template engine or async framework is needed, and nothing is added to what the
program manifest verifies or the Pi must install. What a framework would have given is written
here in a few lines each, and tested (tests/unit/scoreboard/test_server.py):

* only GET and HEAD (anything else 405), six paths: the page, the event stream, the state,
  the health check and the two Chinese fonts (anything else 404);
* the request line at most :data:`MAX_REQUEST_LINE` bytes (414) and the whole head at most
  :data:`MAX_HEAD` bytes (431); its first byte within :data:`FIRST_BYTE_S` and all of it
  within :data:`HEAD_TIMEOUT_S` of the accept (a slow client is dropped);
* a ``Host`` that names the bound address or one of the profile's ``names`` (400 without one,
  421 for any other: a page of another site whose name was rebound to this address reads
  nothing);
* at most ``max_clients`` connections at once (more are answered 503 by the accepting thread,
  with no thread started for them), of which :data:`KIOSK_SLOTS` are kept for the profile's
  ``kiosk`` addresses and at most ``per_peer`` go to any one other address (an IPv6 /64
  counts as one); new connections accepted at most :data:`ACCEPT_RATE` a second (a flood
  waits in the kernel's backlog, costing the process nothing);
* an event stream whose client stops reading is dropped after :data:`WRITE_TIMEOUT_S`;
* a ``heartbeat`` event on every stream about every :data:`HEARTBEAT_S`, only while the table's
  loop thread is publishing (controller.app.Publication.beat): a frozen or hung loop stops
  them, and the page then dims itself (controller.scoreboard.pages).

Threads: one accepts, one per connection serves. They read only the publication (the table's
published view and its version: controller.app.Publication) and never the table, so nothing
here can change a round or delay the loop beyond sharing the interpreter.
"""

from __future__ import annotations

import io
import logging
import select
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from ipaddress import IPv6Address, ip_address, ip_network
from typing import Final, Protocol, TypeAlias
from urllib.parse import urlsplit

from controller.config.profile import ScoreboardSettings
from controller.scoreboard import fonts
from controller.scoreboard.content import document, encode
from controller.scoreboard.pages import PageConfig, page

log = logging.getLogger("controller.scoreboard")

MAX_REQUEST_LINE: Final = 1024
MAX_HEAD: Final = 8192
#: The request's first byte must arrive this soon after the accept, all of its head this soon.
FIRST_BYTE_S: Final = 1.0
HEAD_TIMEOUT_S: Final = 3.0
WRITE_TIMEOUT_S: Final = 10.0
#: A comment line on every idle event stream this often, so proxies and the browser keep it.
KEEPALIVE_S: Final = 15.0
#: A heartbeat event this often on every stream, while the loop's last beat is at most
#: :data:`BEAT_FRESH_S` old (the loop publishes every tick: controller.app.TICK_S).
HEARTBEAT_S: Final = 1.0
BEAT_FRESH_S: Final = 1.0
#: Connections kept for the kiosk's addresses (its page and its stream) out of max_clients.
KIOSK_SLOTS: Final = 2
#: The browser reconnects this long after a stream ends (the ``retry:`` field).
RETRY_MS: Final = 1000
#: New connections accepted per second, and the burst allowed above it.
ACCEPT_RATE: Final = 50.0
ACCEPT_BURST: Final = 25
#: A port that cannot be bound is tried again this often (ScoreboardServer.serve).
BIND_RETRY_S: Final = 10.0
#: The Chinese fonts the pages use (controller/scoreboard/fonts.py), by path.
FONTS: Final[Mapping[str, bytes]] = {
    "/fonts/zh-Hant.woff2": fonts.ZH_HANT,
    "/fonts/zh-Hans.woff2": fonts.ZH_HANS,
}
#: How often a waiting event stream looks whether the server is closing.
_WAKE_S: Final = 0.5
#: After an error reply, how long and how much of the client's remaining input is read.
_LINGER_S: Final = 1.0
_LINGER_BYTES: Final = 65536

_SECURITY_HEADERS: Final = (
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    (
        "Content-Security-Policy",
        "default-src 'none'; style-src 'unsafe-inline'; "
        "script-src 'unsafe-inline'; connect-src 'self'; img-src data:; font-src 'self'",
    ),
)


class PublishedState(Protocol):
    """What the server reads: the application's publication (controller.app.Publication)."""

    def latest(self) -> tuple[int, Mapping[str, object]]: ...

    def wait_newer(self, version: int, timeout: float) -> tuple[int, Mapping[str, object]]: ...

    def beat(self) -> tuple[int, int]: ...

    def published_ns(self) -> int: ...

    @property
    def closed(self) -> bool: ...


@dataclass
class Stats:
    """Counters of what the server answered and refused (``status`` on the console); the
    serving threads count through :meth:`add`."""

    pages: int = 0
    streams: int = 0  # event streams opened
    streaming: int = 0  # event streams open now
    busy: int = 0  # 503: over max_clients, or over per_peer from one address
    crowded: int = 0  # of busy: over per_peer from one address
    refused: int = 0  # 4xx: bad method, path, request line, head or Host
    misdirected: int = 0  # of refused: no Host, or one that names another site
    slow: int = 0  # dropped: head not read in time, or a stream not read
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, name: str, n: int = 1) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + n)


class _Documents:
    """The encoded document of the latest version, built once and sent to every client."""

    def __init__(self, game: str, table: Mapping[str, object]) -> None:
        self._lock = threading.Lock()
        self._game = game
        self._table = dict(table)
        self._version = -1
        self._body = b""

    def get(self, version: int, view: Mapping[str, object]) -> bytes:
        with self._lock:
            if version != self._version:
                try:
                    body = encode(document(version, view, self._table))
                except Exception as exc:  # noqa: BLE001 - a bad view must not kill a stream
                    log.exception("scoreboard document for version %d", version)
                    body = encode(
                        {
                            "version": version,
                            "game": self._game,
                            **self._table,
                            "error": f"{type(exc).__name__}: {exc}",
                        }
                    )
                self._version, self._body = version, body
            return self._body


class _Pacer:
    """A token bucket: :meth:`wait` returns when a new connection may be accepted."""

    def __init__(
        self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._rate = rate
        self._burst = float(burst)
        self._tokens = float(burst)
        self._clock = clock
        self._at = clock()
        self.waited = 0

    def wait(self, stop: threading.Event) -> None:
        now = self._clock()
        self._tokens = min(self._burst, self._tokens + (now - self._at) * self._rate)
        self._at = now
        if self._tokens < 1.0:
            self.waited += 1
            stop.wait((1.0 - self._tokens) / self._rate)
            now = self._clock()
            self._tokens = min(self._burst, self._tokens + (now - self._at) * self._rate)
            self._at = now
        self._tokens = max(0.0, self._tokens - 1.0)


def peer_key(address: str) -> str:
    """The address a client is counted under: itself, an IPv4-mapped IPv6 address as IPv4,
    and any other IPv6 address as its /64 (one host picks freely inside its /64)."""
    ip = ip_address(address.partition("%")[0])
    if isinstance(ip, IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ip_network(f"{ip}/64", strict=False))
    return str(ip)


class _Slots:
    """Who may hold a connection: at most ``total``; ``reserved`` of them kept free for the
    ``kiosk`` addresses until the kiosk uses them; at most ``per_peer`` for any other peer
    (:func:`peer_key`). The kiosk's addresses are not capped per peer: its page, stream and
    health check come from one address."""

    def __init__(self, total: int, per_peer: int, kiosk: frozenset[str], reserved: int) -> None:
        self._lock = threading.Lock()
        self._total = total
        self._per_peer = per_peer
        self._kiosk = kiosk
        self._reserved = reserved
        self._held: dict[str, int] = {}
        self._used = 0
        self._kiosk_used = 0

    def acquire(self, peer: str) -> str | None:
        """None when admitted, else why not (``busy`` or ``crowded``)."""
        key = peer_key(peer)
        with self._lock:
            if key in self._kiosk:
                if self._used >= self._total:
                    return "busy"
                self._kiosk_used += 1
            else:
                if self._held.get(key, 0) >= self._per_peer:
                    return "crowded"
                if self._used >= self._total - max(0, self._reserved - self._kiosk_used):
                    return "busy"
            self._held[key] = self._held.get(key, 0) + 1
            self._used += 1
            return None

    def release(self, peer: str) -> None:
        key = peer_key(peer)
        with self._lock:
            self._used -= 1
            if key in self._kiosk:
                self._kiosk_used -= 1
            left = self._held[key] - 1
            if left:
                self._held[key] = left
            else:
                del self._held[key]


#: An IP socket's peer (AF_INET: host, port; AF_INET6: host, port, flow info, scope id).
Peer: TypeAlias = tuple[str, int] | tuple[str, int, int, int]
#: What socketserver hands a stream server's hooks (typeshed's request type).
Request: TypeAlias = socket.socket | tuple[bytes, socket.socket]


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 16

    def __init__(self, board: ScoreboardServer, address: tuple[str, int]) -> None:
        self.board = board
        self.address_family = (
            socket.AF_INET6 if ip_address(address[0]).version == 6 else socket.AF_INET
        )
        super().__init__(address, _Handler)

    def get_request(self) -> tuple[socket.socket, Peer]:
        # Pace before accepting: a flood waits in the kernel's listen backlog (and beyond it
        # is refused by the kernel), so it costs this process no work.
        self.board._pacer.wait(self.board._stopping)
        return super().get_request()

    def process_request(self, request: Request, client_address: Peer) -> None:
        board = self.board
        why = board._slots.acquire(client_address[0])
        if why is not None:
            board.stats.add("busy")
            if why == "crowded":
                board.stats.add("crowded")
            if isinstance(request, socket.socket):  # always, for a stream server
                _refuse_busy(request)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            board._slots.release(client_address[0])
            raise

    def process_request_thread(self, request: Request, client_address: Peer) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.board._slots.release(client_address[0])

    def handle_error(self, request: Request, client_address: Peer) -> None:
        log.debug("scoreboard connection from %s failed", client_address, exc_info=True)


def _refuse_busy(request: socket.socket) -> None:
    """503 from the accepting thread: a fresh socket's send buffer takes these bytes at once;
    a client that cannot take them is not waited for."""
    try:
        request.setblocking(False)
        request.send(
            b"HTTP/1.0 503 Service Unavailable\r\nRetry-After: 5\r\n"
            b"Content-Length: 0\r\nConnection: close\r\n\r\n"
        )
    except OSError:
        pass


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    server_version = "table-scoreboard"
    protocol_version = "HTTP/1.0"  # one request per connection; a stream ends with it
    default_request_version = "HTTP/1.0"  # never an HTTP/0.9 reply without a status line

    def handle_one_request(self) -> None:
        """The head read within bounds (size and time), then GET/HEAD dispatch."""
        self.close_connection = True
        self.requestline, self.request_version, self.command = "", "HTTP/1.0", ""
        board = self.server.board
        head = self._read_head(board)
        if head is None:
            return
        first, rest = head
        self.raw_requestline = first
        socket_file = self.rfile
        self.rfile = io.BytesIO(rest)
        try:
            if not self.parse_request():  # it answered 400/505 through send_error
                return
        finally:
            self.rfile = socket_file
        host = self.headers.get("Host")
        if host is None or len(self.headers.get_all("Host", ())) != 1:
            board.stats.add("misdirected")
            self._error(400, "one Host header is required")
            return
        if not board.host_allowed(host):
            board.stats.add("misdirected")
            self._error(421, "this server answers only to its own address")
            return
        if self.command not in ("GET", "HEAD"):
            self._error(405, "only GET and HEAD", allow=True)
            return
        self.connection.settimeout(WRITE_TIMEOUT_S)
        try:
            self._route(board, urlsplit(self.path).path)
        except (TimeoutError, ConnectionError, BrokenPipeError):
            board.stats.add("slow")

    def _read_head(self, board: ScoreboardServer) -> tuple[bytes, bytes] | None:
        """The request line and the header lines, read straight from the socket against two
        deadlines from the accept: the first byte within :data:`FIRST_BYTE_S`, the blank line
        within :data:`HEAD_TIMEOUT_S` (a client trickling a byte at a time is no better)."""
        accepted = time.monotonic()
        buf = b""
        while True:
            got = _split_head(buf)
            if isinstance(got, tuple):
                return got
            if got == 414:
                self._error(414, f"request line over {MAX_REQUEST_LINE} bytes")
                return None
            if got == 431:
                self._error(431, f"request head over {MAX_HEAD} bytes")
                return None
            left = accepted + (HEAD_TIMEOUT_S if buf else FIRST_BYTE_S) - time.monotonic()
            try:
                if left <= 0:
                    raise TimeoutError
                self.connection.settimeout(left)
                chunk = self.connection.recv(4096)
            except (TimeoutError, OSError):
                board.stats.add("slow")
                return None
            if not chunk:  # the client closed mid-head, or sent nothing
                return None
            buf += chunk

    def _route(self, board: ScoreboardServer, path: str) -> None:
        if path == "/":
            board.stats.add("pages")
            self._send(200, "text/html; charset=utf-8", board.page)
        elif path == "/state":
            version, view = board.publication.latest()
            self._send(200, "application/json", board.documents.get(version, view))
        elif path == "/events":
            self._stream(board)
        elif path == "/healthz":
            self._send(200, "text/plain; charset=utf-8", b"ok\n")
        elif path in FONTS:
            self._send(200, "font/woff2", FONTS[path])
        else:
            self._error(404, "no such page")

    def _headers(self, code: int, ctype: str, length: int | None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        if length is not None:
            self.send_header("Content-Length", str(length))
        self.send_header("Cache-Control", "no-store")
        for name, value in _SECURITY_HEADERS:
            self.send_header(name, value)
        self.send_header("Connection", "close")

    def _send(self, code: int, ctype: str, body: bytes) -> None:
        self._headers(code, ctype, len(body))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The base class's errors (a malformed request line, a bad version) as ours."""
        self._error(code, message or self.responses.get(code, ("error",))[0])

    def _error(self, code: int, text: str, allow: bool = False) -> None:
        self.server.board.stats.add("refused")
        body = f"{code} {text}\n".encode()
        try:
            self.send_response(code)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            if allow:
                self.send_header("Allow", "GET, HEAD")
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
            self.wfile.flush()
            self._linger()
        except OSError:
            pass

    def _linger(self) -> None:
        """Close gently after an error: bytes the client is still sending (an over-long head,
        a body) are read and dropped for a moment, so the kernel does not answer them with a
        reset that destroys the reply before the client reads it."""
        self.connection.shutdown(socket.SHUT_WR)
        deadline = time.monotonic() + _LINGER_S
        drained = 0
        while drained < _LINGER_BYTES:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self.connection.settimeout(left)
            chunk = self.connection.recv(8192)
            if not chunk:
                break
            drained += len(chunk)

    def _stream_headers(self) -> None:
        self._headers(200, "text/event-stream; charset=utf-8", None)
        self.send_header("X-Accel-Buffering", "no")
        self.end_headers()

    def _stream(self, board: ScoreboardServer) -> None:
        """Server-sent events: the current version at once, then each new one; a heartbeat
        while the loop beats (:meth:`_heartbeat`); a comment line when idle for
        :data:`KEEPALIVE_S`. A reconnecting page so catches up in one event."""
        if self.command == "HEAD":
            self._stream_headers()
            return
        # counted before the headers go out: a client that has them is already in the count
        board.stats.add("streams")
        board.stats.add("streaming")
        try:
            self._stream_headers()
            self.wfile.write(f"retry: {RETRY_MS}\n\n".encode())
            version, view = board.publication.latest()
            self._event(board, version, view)
            beats = self._heartbeat(board, -1)
            beat_at = idle_since = time.monotonic()
            while not board._stopping.is_set() and not board.publication.closed:
                if self._client_gone():
                    return
                newer, view = board.publication.wait_newer(version, _WAKE_S)
                if newer != version:
                    version = newer
                    self._event(board, version, view)
                    idle_since = time.monotonic()
                if time.monotonic() - beat_at >= HEARTBEAT_S:
                    sent = self._heartbeat(board, beats)
                    if sent != beats:
                        beats = sent
                        beat_at = idle_since = time.monotonic()
                if time.monotonic() - idle_since >= KEEPALIVE_S:
                    self.wfile.write(b": keep-alive\n\n")
                    self.wfile.flush()
                    idle_since = time.monotonic()
        finally:
            board.stats.add("streaming", -1)

    def _client_gone(self) -> bool:
        """The page went away (its socket reads end-of-file): free the slot now, not at the
        next write. A stream's client sends nothing after its request. (Polled first: a socket
        with a timeout waits for data inside ``recv`` whatever the flags.)"""
        poller = select.poll()
        poller.register(self.connection, select.POLLIN | select.POLLERR | select.POLLHUP)
        if not poller.poll(0):
            return False
        try:
            peeked: bytes = self.connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except BlockingIOError:
            return False
        except OSError:
            return True
        return peeked == b""

    def _heartbeat(self, board: ScoreboardServer, sent: int) -> int:
        """A ``heartbeat`` event when the loop has beaten since ``sent`` (its count at the
        last heartbeat) and its last beat is at most :data:`BEAT_FRESH_S` old; the count now.
        Only the loop thread moves the count (Publication.beat), so this thread, alive while
        the loop is hung, sends nothing; the event carries the count, the beat's age and how
        long the table's view has not changed (``quiet_ms``: the page's idle mode)."""
        beats, at_ns = board.publication.beat()
        now_ns = time.monotonic_ns()
        age_ms = (now_ns - at_ns) // 1_000_000
        if beats == sent or beats == 0 or age_ms > BEAT_FRESH_S * 1000:
            return sent
        quiet_ms = (now_ns - board.publication.published_ns()) // 1_000_000
        self.wfile.write(
            b'event: heartbeat\ndata: {"beat":%d,"age_ms":%d,"quiet_ms":%d}\n\n'
            % (beats, age_ms, quiet_ms)
        )
        self.wfile.flush()
        return beats

    def _event(self, board: ScoreboardServer, version: int, view: Mapping[str, object]) -> None:
        body = board.documents.get(version, view)
        self.wfile.write(b"id: %d\nevent: state\ndata: %s\n\n" % (version, body))
        self.wfile.flush()

    def version_string(self) -> str:
        return self.server_version

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
        log.debug("scoreboard %s: " + format, self.address_string(), *args)


class ScoreboardServer:
    """The pages of ``game``'s table on ``settings.address``:``settings.port`` (0: any free
    port), served from threads of their own. :meth:`start` binds (raising ``OSError`` when it
    cannot) and returns at once; :meth:`serve` does the same but, when the port cannot be
    bound, says so and tries again every :data:`BIND_RETRY_S` until it can; :meth:`close`
    stops accepting and ends the streams. ``table_id`` is the table's id (the journal's): the
    page and every document carry it, so a monitor can tell another table's page."""

    def __init__(
        self,
        settings: ScoreboardSettings,
        publication: PublishedState,
        game: str,
        table_id: str = "",
    ) -> None:
        self.settings = settings
        self.publication = publication
        self.game = game
        self.table_id = table_id
        table = {"table": table_id, "table_name": settings.table_name or table_id}
        self.page = page(game, PageConfig.of(settings, table_id))
        self.documents = _Documents(game, table)
        self.stats = Stats()
        self._slots = _Slots(
            settings.max_clients,
            settings.per_peer,
            frozenset(peer_key(a) for a in settings.kiosk),
            min(KIOSK_SLOTS, settings.max_clients // 2),
        )
        self._hosts: frozenset[str] = frozenset()
        self._pacer = _Pacer(ACCEPT_RATE, ACCEPT_BURST)
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._binder: threading.Thread | None = None
        #: Why the port could not be bound (None: served, or not tried yet).
        self.bind_error: str | None = None

    def start(self) -> None:
        self._httpd = _HTTPServer(self, (self.settings.address, self.settings.port))
        self._hosts = self._host_names()
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.2},
            name="scoreboard",
            daemon=True,
        )
        self._thread.start()

    def serve(
        self,
        on_failed: Callable[[str], None],
        on_served: Callable[[], None],
        retry_s: float = BIND_RETRY_S,
    ) -> bool:
        """Bind now, or (the port in use, the address not there yet) call ``on_failed`` with
        why, once, and try again every ``retry_s`` on a thread of its own until bound (then
        ``on_served``) or closed. True when served at once. ``on_failed`` runs on the caller's
        thread; ``on_served`` on the server's own, so it must only post to the loop."""
        try:
            self.start()
        except OSError as exc:
            self.bind_error = str(exc) or type(exc).__name__
            on_failed(self.bind_error)
        else:
            return True

        def retry() -> None:
            while not self._stopping.wait(retry_s):
                try:
                    self.start()
                except OSError as exc:
                    self.bind_error = str(exc) or type(exc).__name__
                    continue
                self.bind_error = None
                on_served()
                return

        self._binder = threading.Thread(target=retry, name="scoreboard-bind", daemon=True)
        self._binder.start()
        return False

    @property
    def address(self) -> tuple[str, int]:
        """The bound address and port (the port the system chose when the profile says 0)."""
        if self._httpd is None:
            return self.settings.address, self.settings.port
        host, port = self._httpd.server_address[:2]
        return str(host), int(port)

    def _host_names(self) -> frozenset[str]:
        """The ``Host`` values answered (lower case, with the port): the bound address, and on
        loopback also ``localhost``, ``127.0.0.1`` and ``[::1]``; the profile's ``names``."""
        host, port = self.address
        names = {f"[{host}]" if ":" in host else host, *self.settings.names}
        if ip_address(host).is_loopback:
            names |= {"localhost", "127.0.0.1", "[::1]"}
        return frozenset(f"{n}:{port}" for n in names)

    def host_allowed(self, value: str) -> bool:
        """Whether a request's ``Host`` names this server (RFC 9110 7.2: host and port; no port
        means 80). Bound to every address (0.0.0.0, ::), any IP literal with the port is
        this server: a rebound DNS name is never an IP literal."""
        value = value.strip().lower()
        if value.startswith("["):
            inside, bracket, rest = value[1:].partition("]")
            name, given = f"[{inside}]", rest[1:] if rest.startswith(":") else rest or "80"
            if not bracket or not given.isdigit():
                return False
        elif value.count(":") <= 1:
            name, _, given = value.partition(":")
            given = given or "80"
        else:
            return False  # an IPv6 literal needs its brackets
        name = name.rstrip(".")
        if f"{name}:{given}" in self._hosts:
            return True
        if ip_address(self.address[0]).is_unspecified and given == str(self.address[1]):
            try:
                ip_address(name.strip("[]"))
            except ValueError:
                return False
            return True
        return False

    @property
    def url(self) -> str:
        host, port = self.address
        return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"

    def describe(self) -> str:
        """One line for the console's ``status``: the address and counters, or the fault."""
        if self.bind_error is not None:
            return (
                f"FAULT not served on {self.settings.address}:{self.settings.port}:"
                f" {self.bind_error}; trying again every {BIND_RETRY_S:.0f} s (the table plays"
                " on; free the port or change [scoreboard] port)"
            )
        s = self.stats
        return (
            f"{self.url} ({s.streaming} streaming; {s.pages} pages, {s.streams} streams;"
            f" refused {s.refused} (wrong host {s.misdirected}),"
            f" busy {s.busy} (over one address's share {s.crowded}), slow {s.slow},"
            f" paced {self._pacer.waited})"
        )

    def close(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
        if self._binder is not None:
            self._binder.join(timeout=5.0)


def _split_head(buf: bytes) -> tuple[bytes, bytes] | int | None:
    """The request line and the header lines of ``buf`` when it holds the whole head; 414 or
    431 when it is over the limits; None when more is needed. Empty lines before the request
    line are ignored (RFC 9112 2.2)."""
    buf = buf.lstrip(b"\r\n")
    end = buf.find(b"\n")
    if end < 0 or end + 1 > MAX_REQUEST_LINE:
        return 414 if max(end + 1, len(buf)) > MAX_REQUEST_LINE else None
    first = end + 1
    at = first
    while True:
        end = buf.find(b"\n", at)
        if end < 0:
            return 431 if len(buf) > MAX_HEAD else None
        line, at = buf[at : end + 1], end + 1
        if at > MAX_HEAD:
            return 431
        if line in (b"\r\n", b"\n"):
            return buf[:first], buf[first:at]
