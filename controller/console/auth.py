"""Who may change the table from the console: PINs, roles, sessions and the lockout.

Two roles. A **technician** configures and services the table; a **supervisor** may do all of
that and also what needs a second person's authority (a void after the draw, the start of a
shift). There is no default secret: while no technician PIN exists, ``passwd NEW`` sets the first
one without a login. The first supervisor PIN is set by a logged-in technician at commissioning
(``passwd supervisor NEW``). After that a PIN changes only with its current PIN: ``passwd CURRENT
NEW`` (the technician's current PIN, or the supervisor's) and ``passwd supervisor CURRENT NEW``
(the supervisor's, logged in as supervisor). The two PINs must differ, so ``login PIN`` tells
the roles apart by the PIN alone.

A PIN is kept only as a salted ``hashlib.scrypt`` hash in a journal row (the journal is the
device's memory); a PIN itself is never journaled. Failures are counted **per role**: a PIN that
matches no role is a failed try at every role it was checked against, a login clears only its
own role's count, and :data:`MAX_FAILURES` failures lock that role's logins, from every source,
for :data:`LOCKOUT_S` (a technician's own logins between guesses never reset the supervisor's
count). While a role is locked its PIN is not even checked, so a locked role's PIN cannot be
found by the replies. Comparing a new PIN with the other role's (they must differ) is a try at
that role too, counted the same way. Logins, failures, lockouts and logouts are journaled, each
row with every role's count and lockout; a lockout raises a ``!CONSOLE LOCKED`` alarm. Sessions
are per source (the serial port and stdio each log in) and end after :data:`IDLE_LOGOUT_S`.

scrypt never runs on the loop thread: :meth:`Auth.login` and :meth:`Auth.passwd` return a
:class:`PinCheck` whose ``work`` (the hashing: no journal, no state) runs on a worker and whose
``complete`` applies its result on the loop thread (controller/console/interpreter.py). One
check runs at a time; a ``login`` or ``passwd`` meanwhile is refused (``ERR STATE``).

The lockout is counted on a clock that no clock change can shorten. It runs on the monotonic
clock while the program runs; across a restart it is read back from the journal: the newest
login, failure, lock or unlock row (or the row written at shutdown with the time still left)
carries every role's lockout left, the boot ID and the monotonic time it was written at, so
within the same boot the time since then counts, and after a reboot it does not (time while
powered off, or in a boot that ended without saying, never shortens a lockout). The wall clock
is never used: setting it forward and restarting lifts nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

from controller.console.errors import ConsoleError
from controller.fields.readers import as_float, int_of, str_of
from controller.journal.store import Journal

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
ROLES: Final = (TECHNICIAN, SUPERVISOR)
#: role -> the journal row that holds its PIN's hash
PIN_EVENTS: Final[Mapping[str, str]] = {
    TECHNICIAN: "console.pin_set",
    SUPERVISOR: "console.supervisor_pin_set",
}
#: The rows the lockout is read back from after a restart (the newest decides).
LOCK_KINDS: Final = (
    "console.login_failed",
    "console.login",
    "console.locked",
    "console.lock_left",
    "console.unlocked",
)

#: The key derivation (tests may replace it with a slow one before a console is made).
Derive = Callable[[str, bytes, int, int, int, int], bytes]


def derive(pin: str, salt: bytes, n: int, r: int, p: int, dklen: int) -> bytes:
    """scrypt of ``pin`` (RFC 7914) with the stored parameters."""
    return hashlib.scrypt(
        pin.encode("utf-8"), salt=salt, n=n, r=r, p=p, maxmem=256 * n * r, dklen=dklen
    )


@dataclass
class Session:
    """One source's login: the role logged in (None: nobody) and when it was last heard."""

    role: str | None = None
    last_seen: float = 0.0

    @property
    def logged_in(self) -> bool:
        return self.role is not None


@dataclass
class RoleLock:
    """One role's failed tries since its last login, and until when its logins are locked."""

    failures: int = 0
    locked_until: float | None = None


@dataclass
class PinCheck:
    """A ``login`` or ``passwd`` split at its hashing: ``work`` runs scrypt (on a worker; it
    touches neither the journal nor the console's state), ``complete`` takes what it returned
    (or raised) on the loop thread, journals, and gives the reply lines or raises
    :class:`ConsoleError`."""

    work: Callable[[], object]
    finish: Callable[[object], list[str]]
    _release: Callable[[], None] = field(repr=False, default=lambda: None)

    def complete(self, value: object) -> list[str]:
        try:
            if isinstance(value, BaseException):
                raise value
            return self.finish(value)
        finally:
            self._release()

    def run_here(self) -> list[str]:
        """Hash on the calling thread (a host that cannot defer a reply)."""
        try:
            value: object = self.work()
        except Exception as exc:  # noqa: BLE001 - handed to complete like the worker's
            value = exc
        return self.complete(value)


@dataclass(frozen=True)
class _Passwd:
    """What the worker found for a ``passwd``: the role whose current PIN was given (None: it
    matched none), whether the new PIN is the other role's, and the new salt and hash."""

    by: str | None
    clash: bool
    salt: bytes = b""
    digest: bytes = b""


class Auth:
    """PINs, sessions and the per-role lockout of one console (see the module docstring). Runs
    on the loop thread, like the interpreter that owns it; only a :class:`PinCheck`'s ``work``
    runs elsewhere."""

    def __init__(
        self,
        journal: Journal,
        alarm: Callable[[str], None],
        *,
        clock: Callable[[], float] = time.monotonic,
        scrypt_n: int = SCRYPT_N,
        scrypt: Derive | None = None,
    ) -> None:
        self._journal = journal
        self._alarm = alarm
        self._clock = clock
        self._scrypt_n = scrypt_n
        self._derive: Derive = scrypt or derive
        self._sessions: dict[str, Session] = {}
        self._locks: dict[str, RoleLock] = {role: RoleLock() for role in ROLES}
        self._checking = threading.Event()
        self._restore_lockout()

    # -- the lockout across restarts -------------------------------------------------------------

    def _restore_lockout(self) -> None:
        """Every role's lockout and failure count survive a restart (a power cycle must not
        reset a PIN guesser's budget), measured as the module docstring says."""
        last = self._journal.last(LOCK_KINDS)
        if last is None:
            return
        elapsed = 0.0
        if last.boot == self._journal.boot_id:
            elapsed = max(0.0, self._clock() - last.mono / 1e9)
        stored = last.data.get("roles")
        roles: Mapping[str, object] = (
            stored
            if isinstance(stored, Mapping) and stored
            else _rows_before_roles(last.kind, last.data)
        )
        for role, lock in self._locks.items():
            state = roles.get(role)
            if not isinstance(state, Mapping):
                continue
            lock.failures = int(as_float(state.get("failures", 0), "failures"))
            locked_s = as_float(state.get("locked_s", 0), "locked_s")
            left = locked_s - elapsed
            if locked_s > 0:
                if left > 0:
                    lock.locked_until = self._clock() + left
                else:
                    lock.failures = 0

    def _roles(self) -> dict[str, dict[str, float | int]]:
        """Every role's count and lockout left, as each lock row carries them."""
        now = self._clock()
        return {
            role: {
                "failures": lock.failures,
                "locked_s": round(max(0.0, (lock.locked_until or now) - now), 3),
            }
            for role, lock in self._locks.items()
        }

    def locked_for(self, role: str) -> float | None:
        """Seconds of ``role``'s lockout left, or None (a lock that ran out resets its count)."""
        lock = self._locks[role]
        if lock.locked_until is None:
            return None
        left = lock.locked_until - self._clock()
        if left > 0:
            return left
        self._unlock(role)
        return None

    def locks(self) -> dict[str, float]:
        """role -> seconds left, for the roles locked now."""
        return {role: left for role in ROLES if (left := self.locked_for(role)) is not None}

    def _unlock(self, role: str) -> None:
        lock = self._locks[role]
        lock.locked_until = None
        lock.failures = 0
        self._journal.append(
            "console.unlocked",
            {"role": role, "reason": "the lockout ran out", "roles": self._roles()},
        )

    def tick(self) -> None:
        """Journal the end of a lockout when it runs out, so a later boot does not lock again."""
        self.locks()

    def save(self) -> None:
        """At shutdown: journal the lockout time still left (the next boot starts from it)."""
        if self.locks():
            self._journal.append("console.lock_left", {"roles": self._roles()})

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
        """``status`` lines about this console's login and the lockouts."""
        role = self._sessions.setdefault(source, Session()).role
        lines = [f"console: {'logged in as ' + role if role else 'not logged in'} ({source})"]
        lines.extend(
            f"console: {locked} logins locked for {left:.0f} more s"
            for locked, left in self.locks().items()
        )
        return lines

    # -- commands ------------------------------------------------------------------------------

    def _record(self, role: str) -> Mapping[str, object] | None:
        entry = self._journal.last([PIN_EVENTS[role]])
        return None if entry is None else entry.data

    def _matches(self, pin: str, record: Mapping[str, object]) -> bool:
        """On the worker: does ``pin`` hash to ``record``'s hash?"""
        try:
            want = bytes.fromhex(str_of(record, "hash"))
            got = self._derive(
                pin,
                bytes.fromhex(str_of(record, "salt")),
                int_of(record, "n"),
                int_of(record, "r"),
                int_of(record, "p"),
                int_of(record, "dklen"),
            )
        except (KeyError, ValueError) as exc:
            raise ConsoleError("FAULT", f"the stored PIN record is unusable: {exc}") from None
        return hmac.compare_digest(got, want)

    def _first_match(self, pin: str, records: Mapping[str, Mapping[str, object]]) -> str | None:
        return next((role for role, record in records.items() if self._matches(pin, record)), None)

    def _check(self, work: Callable[[], object], finish: Callable[[object], list[str]]) -> PinCheck:
        """One PIN check at a time, from every source: the next waits for this one's reply."""
        if self._checking.is_set():
            raise ConsoleError(
                "STATE", "another login or passwd is being checked: try again in a moment"
            )
        self._checking.set()
        return PinCheck(work, finish, self._checking.clear)

    def _open(
        self, records: Mapping[str, Mapping[str, object] | None]
    ) -> dict[str, Mapping[str, object]]:
        """The roles a PIN is checked against: those with a PIN and not locked (a locked role's
        PIN is never compared, so no reply can tell it was right); LOCKED when none is left."""
        locks = self.locks()
        open_ = {
            role: record
            for role, record in records.items()
            if record is not None and role not in locks
        }
        if not open_:
            raise ConsoleError("LOCKED", _locked_text(locks))
        return open_

    def _fail(self, source: str, roles: list[str], command: str) -> tuple[list[str], int]:
        """Count one failed try at each of ``roles``: journaled; a role reaching
        :data:`MAX_FAILURES` is locked, journaled and alarmed. Returns the roles locked now and
        the fewest tries left among the others."""
        now = self._clock()
        locked: list[str] = []
        for role in roles:
            lock = self._locks[role]
            lock.failures += 1
            if lock.failures >= MAX_FAILURES:
                lock.locked_until = now + LOCKOUT_S
                locked.append(role)
        self._journal.append(
            "console.login_failed",
            {"source": source, "command": command, "checked": roles, "roles": self._roles()},
        )
        for role in locked:
            failures = self._locks[role].failures
            self._journal.append(
                "console.locked",
                {
                    "source": source,
                    "role": role,
                    "failures": failures,
                    "seconds": LOCKOUT_S,
                    "roles": self._roles(),
                },
            )
            self._alarm(
                f"CONSOLE LOCKED: {role} logins after {failures} failed PINs"
                f" ({source}) for {LOCKOUT_S:.0f} s"
            )
        left = min(
            (MAX_FAILURES - self._locks[r].failures for r in roles if r not in locked), default=0
        )
        return locked, left

    def _refuse(self, source: str, roles: list[str], command: str, what: str) -> ConsoleError:
        """The refusal of a PIN that matched none of ``roles`` (counted by :meth:`_fail`)."""
        locked, left = self._fail(source, roles, command)
        tries = f"{left} {'try' if left == 1 else 'tries'} left"
        if locked:
            text = (
                f"{MAX_FAILURES} failed PINs: {' and '.join(locked)} logins locked for"
                f" {LOCKOUT_S:.0f} s"
            )
            return ConsoleError("LOCKED", text + (f"; {what} ({tries})" if left else ""))
        locks = self.locks()
        if locks:
            return ConsoleError("LOCKED", f"{_locked_text(locks)}; {what} ({tries})")
        return ConsoleError("AUTH", f"{what} ({tries})")

    def login(self, args: list[str], source: str) -> PinCheck:
        """``login PIN``: the role is the one whose PIN it is (among the roles not locked)."""
        self.session(source)
        if len(args) != 1:
            raise ConsoleError("SYNTAX", "usage: login PIN")
        records = {role: self._record(role) for role in ROLES}
        if records[TECHNICIAN] is None:
            raise ConsoleError("AUTH", "no PIN is set yet: set one with passwd NEW-PIN")
        tried = self._open(records)
        pin = args[0]

        def work() -> object:
            return self._first_match(pin, tried)

        def finish(value: object) -> list[str]:
            if not isinstance(value, str):
                what = (
                    "wrong PIN"
                    if len(tried) == sum(r is not None for r in records.values())
                    else f"not the {' or '.join(tried)}'s PIN"
                )
                raise self._refuse(source, list(tried), "login", what)
            self._locks[value].failures = 0
            self._journal.append(
                "console.login", {"source": source, "role": value, "roles": self._roles()}
            )
            self._sessions.setdefault(source, Session()).role = value
            return ["logged in" if value == TECHNICIAN else "logged in as supervisor"]

        return self._check(work, finish)

    def passwd(self, args: list[str], source: str) -> PinCheck:
        """``passwd NEW`` (the first technician PIN), ``passwd CURRENT NEW`` (the technician's
        current PIN or the supervisor's), ``passwd supervisor NEW`` (the first supervisor PIN,
        by a logged-in technician), ``passwd supervisor CURRENT NEW`` (logged in as
        supervisor)."""
        role = TECHNICIAN
        if args[:1] == [SUPERVISOR]:
            role, args = SUPERVISOR, args[1:]
        other = SUPERVISOR if role == TECHNICIAN else TECHNICIAN
        self.session(source)
        records = {r: self._record(r) for r in ROLES}
        has_pin = records[role] is not None
        usage = (
            "usage: passwd CURRENT-PIN NEW-PIN | passwd supervisor CURRENT-PIN NEW-PIN"
            " (passwd NEW-PIN | passwd supervisor NEW-PIN while none is set)"
        )
        if role == TECHNICIAN and not has_pin:
            if (left := self.locked_for(TECHNICIAN)) is not None:
                raise ConsoleError("LOCKED", _locked_text({TECHNICIAN: left}))
        else:
            # a change, or the first supervisor PIN (set at commissioning by a technician)
            self.require(source, SUPERVISOR if role == SUPERVISOR and has_pin else TECHNICIAN)
        if has_pin and len(args) == 1:
            raise ConsoleError("AUTH", f"changing a PIN needs its current PIN: {usage}")
        if len(args) != (2 if has_pin else 1):
            raise ConsoleError("SYNTAX", usage)
        current, new = (args[0], args[1]) if has_pin else (None, args[0])
        if not PIN_MIN <= len(new) <= PIN_MAX:
            raise ConsoleError("RANGE", f"a PIN has {PIN_MIN} to {PIN_MAX} characters")
        # whose current PIN may authorise the change: the role's own, or the supervisor's
        allowed = {r: records[r] for r in ((role,) if role == SUPERVISOR else ROLES)}
        by_records = self._open(allowed) if current is not None else {}
        compare = records[other]
        if compare is not None and other == SUPERVISOR and SUPERVISOR in self.locks():
            # the new PIN would be compared with a locked role's PIN: refused, never compared
            raise ConsoleError("LOCKED", _locked_text(self.locks()))

        def work() -> object:
            by = None
            if current is not None:
                by = self._first_match(current, by_records)
                if by is None:
                    return _Passwd(None, False)
            if compare is not None and self._matches(new, compare):
                return _Passwd(by, True)
            salt = os.urandom(16)
            return _Passwd(
                by,
                False,
                salt,
                self._derive(new, salt, self._scrypt_n, SCRYPT_R, SCRYPT_P, SCRYPT_DKLEN),
            )

        def finish(value: object) -> list[str]:
            assert isinstance(value, _Passwd)
            if current is not None and value.by is None:
                what = f"not the {' or '.join(by_records)}'s current PIN"
                raise self._refuse(source, list(by_records), "passwd", what)
            if compare is not None and other == SUPERVISOR and value.by != SUPERVISOR:
                # comparing the new PIN with the supervisor's was a try at it (counted: a
                # technician cannot find the supervisor's PIN through passwd either)
                self._fail(source, [SUPERVISOR], "passwd")
            if value.clash:
                raise ConsoleError(
                    "RANGE", "the technician's and the supervisor's PINs must differ"
                )
            self._journal.append(
                PIN_EVENTS[role],
                {
                    "algorithm": "scrypt",
                    "salt": value.salt.hex(),
                    "hash": value.digest.hex(),
                    "n": self._scrypt_n,
                    "r": SCRYPT_R,
                    "p": SCRYPT_P,
                    "dklen": SCRYPT_DKLEN,
                    "who": self.who(source),
                    "first": not has_pin,
                    **({"by": value.by} if value.by is not None else {}),
                },
            )
            if role == TECHNICIAN and not has_pin:
                self._sessions.setdefault(source, Session()).role = TECHNICIAN
                return ["PIN set; logged in"]
            name = "supervisor's PIN" if role == SUPERVISOR else "PIN"
            return [f"{name} {'changed' if has_pin else 'set'}"]

        return self._check(work, finish)

    def logout(self, source: str) -> list[str]:
        session = self.session(source)
        if session.logged_in:
            session.role = None
            self._journal.append("console.logout", {"source": source, "reason": "logout"})
        return ["logged out"]


def _locked_text(locks: Mapping[str, float]) -> str:
    return "; ".join(f"{role} logins locked for {left:.0f} more s" for role, left in locks.items())


def _rows_before_roles(kind: str, data: Mapping[str, object]) -> dict[str, dict[str, float]]:
    """A lock row written before failures were counted per role (one count for the console):
    it applies to every role, as it did then."""
    state = {"failures": 0.0, "locked_s": 0.0}
    if kind == "console.login_failed":
        state["failures"] = as_float(data.get("failures", 0), "failures")
    elif kind in ("console.locked", "console.lock_left"):
        state = {
            "failures": as_float(data.get("failures", MAX_FAILURES), "failures"),
            "locked_s": as_float(data.get("seconds", LOCKOUT_S), "seconds"),
        }
    return {role: dict(state) for role in ROLES}
