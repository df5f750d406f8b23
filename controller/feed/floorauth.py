"""Who may acknowledge on the floor page: a user list of scrypt hashes (``floor --add-user``),
sessions kept in the page server's memory, and the checks that keep a signed-in browser from
being made to acknowledge by another site (docs/feed.md "The floor page").

The page is read-only for everyone who can reach it; only an acknowledgement (a forked table's
divergence or an alarm) needs a person signed in. The page server speaks plain HTTP: TLS is the
reverse proxy's in front of it, and the session cookie is marked ``Secure`` when the proxy says
the browser came over HTTPS (``X-Forwarded-Proto: https``).

The user list is one line per person, ``NAME:scrypt$N$r$p$SALT$HASH`` (hex), written with mode
0600; hashes are ``hashlib.scrypt`` with N=2**14, r=8, p=1 (RFC 7914's interactive figures) and a
16-byte salt. An unknown name costs the same scrypt as a known one, so the answer's timing does
not tell which names exist; a peer that fails :data:`LOGIN_FAILURES` times within
:data:`LOGIN_WINDOW_S` is refused for that long.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

SCRYPT_N: Final = 2**14
SCRYPT_R: Final = 8
SCRYPT_P: Final = 1
SALT_BYTES: Final = 16
KEY_BYTES: Final = 32
#: A name: what ``--by`` records for an acknowledgement (letters, digits, space and . _ @ -).
NAME_RE: Final = re.compile(r"[A-Za-z0-9._@-][A-Za-z0-9._@ -]{0,62}[A-Za-z0-9._@-]|[A-Za-z0-9]")
MAX_PASSWORD: Final = 1024
MIN_PASSWORD: Final = 10
#: A session lasts this long after sign-in (a surveillance shift), then the person signs in again.
SESSION_S: Final = 12 * 3600.0
LOGIN_FAILURES: Final = 5
LOGIN_WINDOW_S: Final = 60.0
_DUMMY_SALT: Final = b"\0" * SALT_BYTES


class UserError(ValueError):
    """A name, password or user list that cannot be used (said in words for the console)."""


def _derive(password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(
        password.encode("utf-8"), salt=salt, n=n, r=r, p=p, maxmem=64 * 1024 * 1024, dklen=KEY_BYTES
    )


def hash_password(password: str, salt: bytes | None = None) -> str:
    """The user list's form of ``password``: ``scrypt$N$r$p$SALT$HASH``."""
    salt = os.urandom(SALT_BYTES) if salt is None else salt
    key = _derive(password, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P)
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${salt.hex()}${key.hex()}"


def _matches(encoded: str, password: str) -> bool:
    parts = encoded.split("$")
    if len(parts) != 6 or parts[0] != "scrypt":
        return False
    try:
        n, r, p = int(parts[1]), int(parts[2]), int(parts[3])
        salt, key = bytes.fromhex(parts[4]), bytes.fromhex(parts[5])
    except ValueError:
        return False
    if not (2 <= n <= 2**20 and 1 <= r <= 32 and 1 <= p <= 16):
        return False
    try:
        derived = _derive(password, salt, n, r, p)
    except (ValueError, MemoryError):
        return False
    return hmac.compare_digest(derived, key)


def check_name(name: str) -> str:
    if not NAME_RE.fullmatch(name):
        raise UserError(
            "a name is 1 to 64 letters, digits, spaces and . _ @ - (not starting or ending with"
            " a space)"
        )
    return name


def check_new_password(password: str) -> str:
    if len(password) < MIN_PASSWORD:
        raise UserError(f"a password has at least {MIN_PASSWORD} characters")
    if len(password) > MAX_PASSWORD:
        raise UserError(f"a password has at most {MAX_PASSWORD} characters")
    return password


def load_users(path: Path) -> dict[str, str]:
    """The user list: name -> encoded hash. A missing file is an empty list; a line that is not
    ``NAME:scrypt$...`` is an error naming its line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read the user list {path}: {exc}") from None
    users: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        name, sep, encoded = line.rpartition(":")
        if not sep or not NAME_RE.fullmatch(name) or not encoded.startswith("scrypt$"):
            raise UserError(f"{path} line {number}: not NAME:scrypt$... (made by --add-user)")
        users[name] = encoded
    return users


def add_user(path: Path, name: str, password: str) -> bool:
    """Add ``name`` to the user list at ``path`` (or set a new password); True when the name
    was new. The file is replaced whole, mode 0600."""
    check_name(name)
    check_new_password(password)
    users = load_users(path)
    new = name not in users
    users[name] = hash_password(password)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write("# the floor page's users: table-controller floor --add-user NAME\n")
        for who, encoded in sorted(users.items()):
            out.write(f"{who}:{encoded}\n")
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)
    return new


def verify(users: dict[str, str], name: str, password: str) -> bool:
    """True when ``password`` is ``name``'s; as slow for an unknown name as for a known one."""
    if len(password) > MAX_PASSWORD:
        return False
    encoded = users.get(name)
    if encoded is None:
        _derive(password, _DUMMY_SALT, SCRYPT_N, SCRYPT_R, SCRYPT_P)
        return False
    return _matches(encoded, password)


@dataclass(frozen=True)
class Session:
    """A signed-in person: their name, the token every POST of theirs must carry in
    ``X-CSRF-Token`` (the page holds it in memory; another site can neither read it nor send
    that header without the page server's leave), and when it ends."""

    name: str
    csrf: str
    expires: float


class Sessions:
    """The signed-in people, by the random token of their cookie (kept in memory only: a
    restarted page server signs everyone out). Thread-safe."""

    def __init__(self, lifetime_s: float = SESSION_S) -> None:
        self._lifetime = lifetime_s
        self._lock = threading.Lock()
        self._by_token: dict[str, Session] = {}
        self._failures: dict[str, list[float]] = {}

    def create(self, name: str) -> tuple[str, Session]:
        token = secrets.token_urlsafe(32)
        session = Session(name, secrets.token_urlsafe(32), time.monotonic() + self._lifetime)
        with self._lock:
            now = time.monotonic()
            self._by_token = {t: s for t, s in self._by_token.items() if s.expires > now}
            self._by_token[token] = session
        return token, session

    def get(self, token: str | None) -> Session | None:
        if not token:
            return None
        with self._lock:
            session = self._by_token.get(token)
            if session is None:
                return None
            if session.expires <= time.monotonic():
                del self._by_token[token]
                return None
            return session

    def drop(self, token: str | None) -> None:
        with self._lock:
            self._by_token.pop(token or "", None)

    def locked_out(self, peer: str) -> bool:
        """True while ``peer`` has failed :data:`LOGIN_FAILURES` sign-ins within the window."""
        now = time.monotonic()
        with self._lock:
            recent = [t for t in self._failures.get(peer, []) if now - t < LOGIN_WINDOW_S]
            if recent:
                self._failures[peer] = recent
            else:
                self._failures.pop(peer, None)
            return len(recent) >= LOGIN_FAILURES

    def failed(self, peer: str) -> None:
        with self._lock:
            self._failures.setdefault(peer, []).append(time.monotonic())
            if len(self._failures) > 10_000:  # a flood of peers: forget the oldest
                self._failures.pop(next(iter(self._failures)))
