"""Who may change the table from the console: PINs, roles, sessions and the lockout.

Two roles. A **technician** configures and services the table; a **supervisor** may do all of
that and also what needs a second person's authority (a void after the draw, the start of a
shift). There is no default secret: while no technician PIN exists, ``passwd NEW`` sets the first
one without a login. The first supervisor PIN is set by a logged-in technician at commissioning
(``passwd supervisor NEW``); after that only a logged-in supervisor changes it. The two PINs
must differ, so ``login PIN`` tells the roles apart by the PIN alone.

A PIN is kept only as a salted ``hashlib.scrypt`` hash in a journal row (the journal is the
device's memory); a PIN itself is never journaled. Five failed logins lock logins, from every
source, for :data:`LOCKOUT_S`. Logins, failures, lockouts and logouts are journaled. Sessions
are per source (the serial port and stdio each log in) and end after :data:`IDLE_LOGOUT_S`.

The lockout is counted on a clock that no clock change can shorten. It runs on the monotonic
clock while the program runs; across a restart it is read back from the journal: the row that
locked (or the row written at shutdown with the time still left) carries the boot ID and the
monotonic time it was written at, so within the same boot the time since then counts, and after
a reboot it does not (time while powered off, or in a boot that ended without saying, never
shortens a lockout). The wall clock is never used: setting it forward and restarting lifts
nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from controller.console.errors import ConsoleError

MAX_FAILURES: Final = 5
LOCKOUT_S: Final = 300.0
IDLE_LOGOUT_S: Final = 900.0
PIN_MIN: Final = 8
PIN_MAX: Final = 32
#: scrypt cost: 16 MiB and about 0.1 s on a Raspberry Pi 4 per login; stored with each hash.
SCRYPT_N: Final = 1 << 14
SCRYPT_R: Final = 8
SCRYPT_P: Final = 1
SCRYPT_DKLEN: Final = 32
TECHNICIAN: Final = "technician"
SUPERVISOR: Final = "supervisor"
#: role -> the journal row that holds its PIN's hash
PIN_EVENTS: Final[Mapping[str, str]] = {TECHNICIAN: "console.pin_set",
                                        SUPERVISOR: "console.supervisor_pin_set"}
#: The rows the lockout is read back from after a restart (the newest decides).
LOCK_KINDS: Final = ("console.login_failed", "console.login", "console.locked",
                     "console.lock_left", "console.unlocked")


@dataclass
class Session:
    """One source's login: the role logged in (None: nobody) and when it was last heard."""

    role: str | None = None
    last_seen: float = 0.0

    @property
    def logged_in(self) -> bool:
        return self.role is not None


class Auth:
    """PINs, sessions and the lockout of one console (see the module docstring). Runs on the
    loop thread, like the interpreter that owns it."""

    def __init__(self, journal: Any, alarm: Callable[[str], None], *,
                 clock: Callable[[], float] = time.monotonic, scrypt_n: int = SCRYPT_N) -> None:
        self._journal = journal
        self._alarm = alarm
        self._clock = clock
        self._scrypt_n = scrypt_n
        self._sessions: dict[str, Session] = {}
        self._failures = 0
        self._locked_until: float | None = None
        self._restore_lockout()

    # -- the lockout across restarts -------------------------------------------------------------

    def _restore_lockout(self) -> None:
        """A lockout and a failure count survive a restart (a power cycle must not reset a PIN
        guesser's budget), measured as the module docstring says."""
        journal = self._journal
        if journal is None or not hasattr(journal, "last"):
            return
        last = journal.last(LOCK_KINDS)
        if last is None:
            return
        if last.kind == "console.login_failed":
            self._failures = int(last.data.get("failures", 0))
            return
        if last.kind not in ("console.locked", "console.lock_left"):
            return
        seconds = float(last.data.get("seconds", LOCKOUT_S))
        elapsed = 0.0
        if last.boot == getattr(journal, "boot_id", None):
            elapsed = max(0.0, self._clock() - last.mono / 1e9)
        if seconds - elapsed > 0:
            self._failures = int(last.data.get("failures", MAX_FAILURES))
            self._locked_until = self._clock() + (seconds - elapsed)

    def locked_for(self) -> float | None:
        """Seconds of lockout left, or None (a lock that ran out resets the failure count)."""
        if self._locked_until is None:
            return None
        left = self._locked_until - self._clock()
        if left > 0:
            return left
        self._unlock()
        return None

    def _unlock(self) -> None:
        self._locked_until = None
        self._failures = 0
        self._journal.append("console.unlocked", {"reason": "the lockout ran out"})

    def tick(self) -> None:
        """Journal the end of a lockout when it runs out, so a later boot does not lock again."""
        if self._locked_until is not None and self._clock() >= self._locked_until:
            self._unlock()

    def save(self) -> None:
        """At shutdown: journal the lockout time still left (the next boot starts from it)."""
        left = self.locked_for()
        if left is not None:
            self._journal.append("console.lock_left", {"seconds": round(left, 3),
                                                       "failures": self._failures})

    # -- sessions ----------------------------------------------------------------------------

    def forget(self) -> None:
        """Log every source out (a journal transaction that held a login failed to commit)."""
        for session in self._sessions.values():
            session.role = None

    def session(self, source: str) -> Session:
        """The source's session, logged out first if it was idle too long."""
        session = self._sessions.setdefault(source, Session())
        now = self._clock()
        if session.logged_in and now - session.last_seen > IDLE_LOGOUT_S:
            session.role = None
            self._journal.append("console.logout", {"source": source, "reason": "idle"})
        session.last_seen = now
        return session

    def require(self, source: str, role: str = TECHNICIAN) -> None:
        """Refuse (``AUTH``) unless ``source`` is logged in with ``role`` (a supervisor may do
        everything a technician may)."""
        session = self._sessions.setdefault(source, Session())
        if not session.logged_in:
            raise ConsoleError("AUTH", "login needed (login PIN)")
        if role == SUPERVISOR and session.role != SUPERVISOR:
            raise ConsoleError("AUTH", "a supervisor's login is needed (login SUPERVISOR-PIN)")

    def who(self, source: str) -> str:
        """``role@source`` for the journal and the table (``technician@serial``)."""
        role = self._sessions.setdefault(source, Session()).role or TECHNICIAN
        return f"{role}@{source}"

    def describe(self, source: str) -> list[str]:
        """``status`` lines about this console's login and the lockout."""
        role = self._sessions.setdefault(source, Session()).role
        lines = [f"console: {'logged in as ' + role if role else 'not logged in'} ({source})"]
        if (left := self.locked_for()) is not None:
            lines.append(f"console: locked for {left:.0f} more s")
        return lines

    # -- commands ------------------------------------------------------------------------------

    def _record(self, role: str) -> Mapping[str, Any] | None:
        entry = self._journal.last([PIN_EVENTS[role]])
        return None if entry is None else entry.data

    def _hash(self, pin: str, salt: bytes, n: int, r: int, p: int, dklen: int) -> bytes:
        return hashlib.scrypt(pin.encode("utf-8"), salt=salt, n=n, r=r, p=p,
                              maxmem=256 * n * r, dklen=dklen)

    def _matches(self, pin: str, record: Mapping[str, Any]) -> bool:
        try:
            want = bytes.fromhex(str(record["hash"]))
            got = self._hash(pin, bytes.fromhex(str(record["salt"])), int(record["n"]),
                             int(record["r"]), int(record["p"]), int(record["dklen"]))
        except (KeyError, ValueError) as exc:
            raise ConsoleError("FAULT", f"the stored PIN record is unusable: {exc}") from None
        return hmac.compare_digest(got, want)

    def passwd(self, args: list[str], source: str) -> list[str]:
        """``passwd NEW`` (the technician's PIN) or ``passwd supervisor NEW``."""
        role = TECHNICIAN
        if args[:1] == [SUPERVISOR]:
            role, args = SUPERVISOR, args[1:]
        session = self.session(source)
        has_pin = self._record(role) is not None
        if role == TECHNICIAN and not has_pin:
            if (left := self.locked_for()) is not None:
                raise ConsoleError("LOCKED", f"console locked for {left:.0f} more s")
        elif role == SUPERVISOR and has_pin:
            self.require(source, SUPERVISOR)
        else:
            # a technician's PIN change; the first supervisor PIN, set at commissioning
            self.require(source, TECHNICIAN)
        if len(args) != 1:
            raise ConsoleError("SYNTAX", "usage: passwd NEW-PIN | passwd supervisor NEW-PIN")
        pin = args[0]
        if not PIN_MIN <= len(pin) <= PIN_MAX:
            raise ConsoleError("RANGE", f"a PIN has {PIN_MIN} to {PIN_MAX} characters")
        other = self._record(SUPERVISOR if role == TECHNICIAN else TECHNICIAN)
        if other is not None and self._matches(pin, other):
            raise ConsoleError("RANGE", "the technician's and the supervisor's PINs must differ")
        salt = os.urandom(16)
        digest = self._hash(pin, salt, self._scrypt_n, SCRYPT_R, SCRYPT_P, SCRYPT_DKLEN)
        self._journal.append(PIN_EVENTS[role], {
            "algorithm": "scrypt", "salt": salt.hex(), "hash": digest.hex(),
            "n": self._scrypt_n, "r": SCRYPT_R, "p": SCRYPT_P, "dklen": SCRYPT_DKLEN,
            "who": self.who(source), "first": not has_pin})
        if role == TECHNICIAN and not has_pin:
            session.role = TECHNICIAN
            return ["PIN set; logged in"]
        name = "supervisor's PIN" if role == SUPERVISOR else "PIN"
        return [f"{name} {'changed' if has_pin else 'set'}"]

    def login(self, args: list[str], source: str) -> list[str]:
        """``login PIN``: the role is the one whose PIN it is."""
        session = self.session(source)
        if (left := self.locked_for()) is not None:
            raise ConsoleError("LOCKED", f"console locked for {left:.0f} more s")
        if len(args) != 1:
            raise ConsoleError("SYNTAX", "usage: login PIN")
        records = {role: self._record(role) for role in (TECHNICIAN, SUPERVISOR)}
        if records[TECHNICIAN] is None:
            raise ConsoleError("AUTH", "no PIN is set yet: set one with passwd NEW-PIN")
        for role, record in records.items():
            if record is not None and self._matches(args[0], record):
                self._journal.append("console.login", {"source": source, "role": role})
                self._failures = 0
                session.role = role
                return ["logged in" if role == TECHNICIAN else "logged in as supervisor"]
        self._failures += 1
        self._journal.append("console.login_failed",
                             {"source": source, "failures": self._failures})
        if self._failures >= MAX_FAILURES:
            self._locked_until = self._clock() + LOCKOUT_S
            self._journal.append("console.locked", {
                "source": source, "failures": self._failures, "seconds": LOCKOUT_S})
            self._alarm(f"CONSOLE LOCKED after {self._failures} failed logins"
                        f" ({source}) for {LOCKOUT_S:.0f} s")
            raise ConsoleError("LOCKED", f"{self._failures} failed logins: console locked for"
                                         f" {LOCKOUT_S:.0f} s")
        left = MAX_FAILURES - self._failures
        raise ConsoleError("AUTH", f"wrong PIN ({left} {'try' if left == 1 else 'tries'} left)")

    def logout(self, source: str) -> list[str]:
        session = self.session(source)
        if session.logged_in:
            session.role = None
            self._journal.append("console.logout", {"source": source, "reason": "logout"})
        return ["logged out"]
