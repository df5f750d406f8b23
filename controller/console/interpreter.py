"""The technician console's command interpreter (DESIGN.md "Technician console").

``Console.execute(text, source)`` runs one line on the loop thread and returns the reply lines;
the last is always ``OK`` or ``ERR <CODE> <reason>`` with a code from :data:`CODES`. The
transport (controller.console.transport) has already refused over-long and non-printable lines.

Access: read-only commands work without a login; anything that changes state needs one. There is
no default secret: while no PIN exists, ``passwd <new>`` sets the first one without a login. The
PIN is kept only as a salted ``hashlib.scrypt`` hash in a ``console.pin_set`` journal event (the
journal is the device's memory). Five failed logins lock logins for five minutes. Logins,
failures, lockouts and refusals are journaled; a PIN never is. Sessions are per source (the
serial port and stdio each log in separately) and end after :data:`IDLE_LOGOUT_S` of silence.

Commands on the loop thread hold the table while they run, so the heavy ones are bounded
(``rng test``, ``rng capture``) and refused mid-round.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Final, NoReturn

from controller.journal.store import JournalError
from controller.tables.table import Refused

CODES: Final = ("SYNTAX", "UNKNOWN", "AUTH", "LOCKED", "RANGE", "STATE", "FAULT", "IO")
MAX_FAILURES: Final = 5
LOCKOUT_S: Final = 300.0
IDLE_LOGOUT_S: Final = 900.0
PIN_MIN: Final = 6
PIN_MAX: Final = 32
#: scrypt cost: 16 MiB and about 0.1 s on a Raspberry Pi 4 per login; stored with each hash.
SCRYPT_N: Final = 1 << 14
SCRYPT_R: Final = 8
SCRYPT_P: Final = 1
SCRYPT_DKLEN: Final = 32
#: A Pi 4 draws roughly 50,000 outcomes a second with health tests on: at most ~4 s held.
RNG_TEST_MAX: Final = 200_000
CAPTURE_RAW_MAX: Final = 1_000_000
CAPTURE_FINAL_MAX: Final = 200_000
#: Used only when the host has no rule settings (tests' fake apps): the setting's default.
RECALL_DEFAULT: Final = 20
CAPTURE_DIR: Final = "captures"
PIN_EVENT: Final = "console.pin_set"


class ConsoleError(Exception):
    """A refused command: becomes ``ERR <code> <reason>``."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(f"{code} {reason}")
        self.code = code
        self.reason = reason


@dataclass
class Session:
    """One source's login state."""

    logged_in: bool = False
    last_seen: float = 0.0


@dataclass(frozen=True)
class Command:
    """One console command: its handler, whether it needs a login, its usage for ``help``."""

    handler: Callable[[list[str], str], list[str]]
    login: bool
    usage: str


@dataclass(frozen=True)
class Deferred:
    """A reply that is ready later: ``render`` gives the whole reply once ``ready`` is true;
    until then ``progress`` lines (if any) are sent as they come."""

    ready: Callable[[], bool]
    render: Callable[[], list[str]]
    timeout_s: float
    #: Lines the running command has to say meanwhile (each call: the new ones since the last).
    progress: Callable[[], list[str]] | None = None


#: How long a background ``journal verify`` may take before the console says so.
VERIFY_TIMEOUT_S = 600.0


class Console:
    """Parses and runs technician commands against an Application (see the module docstring)."""

    def __init__(self, app: Any, *, clock: Callable[[], float] = time.monotonic,
                 scrypt_n: int = SCRYPT_N, manifest_path: Path | None = None,
                 manifest_root: Path | None = None) -> None:
        self._app = app
        self._clock = clock
        self._scrypt_n = scrypt_n
        self._sessions: dict[str, Session] = {}
        self._failures = 0
        self._locked_until: float | None = None
        self._test_mode = False
        self._manifest_path = manifest_path
        self._manifest_root = manifest_root
        self._commands: dict[str, Command] = self._command_table()
        self._deferred: Deferred | None = None
        self._restore_lockout()

    def _restore_lockout(self) -> None:
        """A lockout and a failure count survive a restart: a power cycle must not reset a PIN
        guesser's budget. Read back from the journal (wall clock: the only clock that spans
        boots; a clock set backwards can only lengthen the lock)."""
        journal = getattr(self._app, "journal", None)
        if journal is None or not hasattr(journal, "last"):
            return
        last = journal.last(["console.login_failed", "console.login", "console.locked"])
        if last is None:
            return
        if last.kind == "console.login_failed":
            self._failures = int(last.data.get("failures", 0))
        elif last.kind == "console.locked":
            elapsed_s = max(0.0, (time.time_ns() - last.wall_ns) / 1e9)
            if elapsed_s < LOCKOUT_S:
                self._failures = int(last.data.get("failures", MAX_FAILURES))
                self._locked_until = self._clock() + (LOCKOUT_S - elapsed_s)

    # -- the entry point -----------------------------------------------------------------------

    def execute(self, text: str, source: str) -> list[str]:
        """Run one line from ``source`` and return the whole reply, ending ``OK`` or ``ERR``.

        A journal that cannot record the command (disk full, damaged file) is a fault and an
        ``ERR IO`` reply: every change is journaled before it takes effect, so a command whose
        row could not be written changed nothing, and the technician is told so at once.
        """
        try:
            return self._execute(text, source)
        except JournalError as exc:
            self._app.journal_fault(exc)
            return [f"ERR IO the journal could not record this: {exc}"]

    def _execute(self, text: str, source: str) -> list[str]:
        words = text.split()
        if not words or words[0].startswith("#"):
            return ["OK"]
        name, args = words[0].lower(), words[1:]
        session = self._session(source)
        try:
            lines = self._dispatch(name, args, source, session)
        except ConsoleError as exc:
            self._journal_refusal(name, source, exc.code, exc.reason)
            before = exc.lines if isinstance(exc, _ErrWithLines) else []
            return [*before, f"ERR {exc.code} {exc.reason}"]
        except Refused as exc:
            code = exc.code if exc.code in CODES else "STATE"
            return [f"ERR {code} {exc.reason}"]
        except JournalError:
            raise  # JournalIOError is an OSError too: not a device or file of the command's
        except OSError as exc:
            reason = f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else "")
            self._journal_refusal(name, source, "IO", reason)
            return [f"ERR IO {reason}"]
        except Exception as exc:  # noqa: BLE001 - a bug must not crash the loop; it is journaled
            detail = f"{type(exc).__name__}: {exc}"
            self._app.journal.append("console.error", {
                "source": source, "command": name[:32], "error": detail,
                "trace": traceback.format_exc()[-2000:]})
            return [f"ERR FAULT internal error in {name[:32]}: {detail}"]
        return [*lines, "OK"]

    def _dispatch(self, name: str, args: list[str], source: str, session: Session) -> list[str]:
        command = self._commands.get(name)
        who = f"technician@{source}"
        if command is None:
            return self._table_action(name, args, who, session)
        if command.login:
            self._require_login(session)
        return command.handler(args, source)

    # -- sessions and the PIN ------------------------------------------------------------------

    def _session(self, source: str) -> Session:
        session = self._sessions.setdefault(source, Session())
        now = self._clock()
        if session.logged_in and now - session.last_seen > IDLE_LOGOUT_S:
            session.logged_in = False
            self._app.journal.append("console.logout", {"source": source, "reason": "idle"})
        session.last_seen = now
        return session

    def _require_login(self, session: Session) -> None:
        if not session.logged_in:
            raise ConsoleError("AUTH", "login needed (login <pin>)")

    def _locked(self) -> float | None:
        """Seconds of lockout left, or None (a lock that ran out resets the failure count)."""
        if self._locked_until is None:
            return None
        left = self._locked_until - self._clock()
        if left > 0:
            return left
        self._locked_until = None
        self._failures = 0
        return None

    def _pin_record(self) -> Mapping[str, Any] | None:
        entry = self._app.journal.last([PIN_EVENT])
        return None if entry is None else entry.data

    def _hash(self, pin: str, salt: bytes, n: int, r: int, p: int, dklen: int) -> bytes:
        return hashlib.scrypt(pin.encode("utf-8"), salt=salt, n=n, r=r, p=p,
                              maxmem=256 * n * r, dklen=dklen)

    def _cmd_passwd(self, args: list[str], source: str) -> list[str]:
        session = self._sessions[source]
        has_pin = self._pin_record() is not None
        if has_pin:
            self._require_login(session)
        elif (left := self._locked()) is not None:
            raise ConsoleError("LOCKED", f"console locked for {left:.0f} more s")
        if len(args) != 1:
            raise ConsoleError("SYNTAX", "usage: passwd <new pin>")
        pin = args[0]
        if not PIN_MIN <= len(pin) <= PIN_MAX:
            raise ConsoleError("RANGE", f"a PIN has {PIN_MIN} to {PIN_MAX} characters")
        salt = os.urandom(16)
        digest = self._hash(pin, salt, self._scrypt_n, SCRYPT_R, SCRYPT_P, SCRYPT_DKLEN)
        self._app.journal.append(PIN_EVENT, {
            "algorithm": "scrypt", "salt": salt.hex(), "hash": digest.hex(),
            "n": self._scrypt_n, "r": SCRYPT_R, "p": SCRYPT_P, "dklen": SCRYPT_DKLEN,
            "who": f"technician@{source}", "first": not has_pin})
        session.logged_in = True
        return ["PIN changed" if has_pin else "PIN set; logged in"]

    def _cmd_login(self, args: list[str], source: str) -> list[str]:
        session = self._sessions[source]
        if (left := self._locked()) is not None:
            raise ConsoleError("LOCKED", f"console locked for {left:.0f} more s")
        if len(args) != 1:
            raise ConsoleError("SYNTAX", "usage: login <pin>")
        record = self._pin_record()
        if record is None:
            raise ConsoleError("AUTH", "no PIN is set yet: set one with passwd <new pin>")
        try:
            want = bytes.fromhex(str(record["hash"]))
            got = self._hash(args[0], bytes.fromhex(str(record["salt"])), int(record["n"]),
                             int(record["r"]), int(record["p"]), int(record["dklen"]))
        except (KeyError, ValueError) as exc:
            raise ConsoleError("FAULT", f"the stored PIN record is unusable: {exc}") from None
        if hmac.compare_digest(got, want):
            self._app.journal.append("console.login", {"source": source})  # before it counts
            self._failures = 0
            session.logged_in = True
            return ["logged in"]
        self._failures += 1
        self._app.journal.append("console.login_failed",
                                 {"source": source, "failures": self._failures})
        if self._failures >= MAX_FAILURES:
            self._locked_until = self._clock() + LOCKOUT_S
            self._app.journal.append("console.locked", {
                "source": source, "failures": self._failures, "seconds": LOCKOUT_S})
            self._app.alarm(f"CONSOLE LOCKED after {self._failures} failed logins"
                            f" ({source}) for {LOCKOUT_S:.0f} s")
            raise ConsoleError("LOCKED", f"{self._failures} failed logins: console locked for"
                                         f" {LOCKOUT_S:.0f} s")
        raise ConsoleError("AUTH", f"wrong PIN ({MAX_FAILURES - self._failures} tries left)")

    def _cmd_logout(self, args: list[str], source: str) -> list[str]:
        session = self._sessions[source]
        if session.logged_in:
            session.logged_in = False
            self._app.journal.append("console.logout", {"source": source, "reason": "logout"})
        return ["logged out"]

    # -- read-only commands ------------------------------------------------------------------

    def _cmd_help(self, args: list[str], source: str) -> list[str]:
        lines = ["commands (* needs a login):"]
        for command in self._commands.values():
            lines.append(f" {'*' if command.login else ' '} {command.usage}")
        names = getattr(self._app.table, "action_names", None)
        if callable(names):
            lines.append(" * table actions: " + " ".join(sorted(names())))
        else:
            lines.append(" * any other word goes to the table (sim ..., bet ..., curator ...)")
        return lines

    def _cmd_status(self, args: list[str], source: str) -> list[str]:
        self._no_args(args, "status")
        lines = [f"{key}: {value}" for key, value in self._app.status().items()]
        lines.append(f"test-mode: {'ON' if self._test_mode else 'off'}")
        session = self._sessions[source]
        lines.append(f"console: {'logged in' if session.logged_in else 'not logged in'}"
                     f" ({source})")
        if (left := self._locked()) is not None:
            lines.append(f"console: locked for {left:.0f} more s")
        return lines

    def _cmd_config(self, args: list[str], source: str) -> list[str]:
        if not args:
            raise ConsoleError("SYNTAX", "usage: config show [KEY] | config set KEY VALUE")
        settings = self._app.config.current()
        if args[0] == "show":
            if len(args) == 1:
                return list(settings.describe())
            if len(args) == 2:
                return [f"{args[1]} = {self._config_call(lambda: settings.get_text(args[1]))}"]
            raise ConsoleError("SYNTAX", "usage: config show [KEY]")
        if args[0] == "set":
            self._require_login(self._sessions[source])
            if len(args) < 3:
                raise ConsoleError("SYNTAX", "usage: config set KEY VALUE")
            if self._app.table.round_in_progress():
                raise ConsoleError("STATE", "a round is in progress: change settings between"
                                            " rounds")
            key, value = args[1], " ".join(args[2:])
            old, new = self._config_call(
                lambda: self._app.config.set(key, value, f"technician@{source}"))
            return [f"{key}: {old} -> {new}"]
        raise ConsoleError("SYNTAX", f"config {args[0][:20]}: expected show or set")

    def _config_call(self, fn: Callable[[], Any]) -> Any:
        from controller.config.settings import ConfigError
        try:
            return fn()
        except ConfigError as exc:
            code = exc.code if exc.code in CODES else "RANGE"
            raise ConsoleError(code, str(exc)) from None

    def _cmd_recall(self, args: list[str], source: str) -> list[str]:
        from controller.journal.recall import format_recall, recall
        # The rule setting recall_depth (issue 6: at least 10, configurable) is both the default
        # and the most a console recall shows.
        depth = _recall_depth(self._app)
        count = depth
        if len(args) > 1:
            raise ConsoleError("SYNTAX", "usage: recall [N]")
        if args:
            count = self._int(args[0], 1, depth, "N")
        records = recall(self._app.journal, count)
        if not records:
            return ["no rounds in the journal"]
        return format_recall(records)

    def _cmd_journal(self, args: list[str], source: str) -> list[str]:
        if args[:1] == ["head"] and len(args) == 1:
            seq, mac = self._app.journal.head()
            return [f"head {seq}:{mac}"]
        if args[:1] == ["verify"] and len(args) <= 2:
            expected = None
            if len(args) == 2:
                seq_text, sep, mac = args[1].partition(":")
                if not sep or not seq_text.isdigit() or not mac:
                    raise ConsoleError("SYNTAX", "usage: journal verify [SEQ:HMAC]")
                expected = (int(seq_text), mac.lower())
            return self._verify_in_background(expected, source)
        raise ConsoleError("SYNTAX", "usage: journal verify [SEQ:HMAC] | journal head")

    def _verify_in_background(self, expected: tuple[int, str] | None,
                              source: str) -> list[str]:
        """Walk the chain on a read-only connection in a worker thread (a long journal must not
        stall the loop and its watchdog); the application replies when the walk is done. With
        a host that cannot defer a reply (tests' fake apps) the walk runs here instead."""
        box: list[Any] = []

        def walk() -> None:
            try:
                reader = self._app.journal.reader()
                try:
                    box.append(reader.verify(expected))
                finally:
                    reader.close()
            except Exception as exc:  # noqa: BLE001 - handed to the reply on the loop thread
                box.append(exc)

        def outcome() -> list[str]:
            result = box[0] if box else JournalError("the journal walk did not finish")
            if isinstance(result, Exception):
                raise ConsoleError("IO", f"journal unreadable: {result}")
            if not result.ok:
                raise ConsoleError("FAULT", f"journal verification failed: {result.describe()}")
            return [result.describe(), f"head {result.head_seq}:{result.head_mac}"]

        if not getattr(self._app, "defers_replies", False):
            walk()
            return outcome()

        def render() -> list[str]:
            try:
                return [*outcome(), "OK"]
            except ConsoleError as exc:
                self._journal_refusal("journal", source, exc.code, exc.reason)
                return [f"ERR {exc.code} {exc.reason}"]

        threading.Thread(target=walk, name="console-journal-verify", daemon=True).start()
        self._deferred = Deferred(lambda: bool(box), render, VERIFY_TIMEOUT_S)
        return []

    def take_deferred(self) -> Deferred | None:
        """For the application: the reply of the last command if it will come later, once."""
        deferred, self._deferred = self._deferred, None
        return deferred

    def _cmd_houseway(self, args: list[str], source: str) -> list[str]:
        from controller.games.paigow.errors import TileError
        from controller.games.paigow.houseway import set_hand
        if len(args) != 4:
            raise ConsoleError("SYNTAX", "usage: houseway T1 T2 T3 T4 (tiles like 4-5)")
        policy = str(self._app.config.current().get("paigow.house_way_policy"))
        try:
            decision = set_hand(args, None if policy == "default" else policy)
        except TileError as exc:
            raise ConsoleError("SYNTAX", str(exc)) from None
        except ValueError as exc:
            raise ConsoleError("RANGE", str(exc)) from None
        high = " ".join(str(t) for t in decision.high)
        low = " ".join(str(t) for t in decision.low)
        return [f"high {high}  low {low}", f"by {decision.reason} (house way {policy})"]

    def _cmd_odds(self, args: list[str], source: str) -> list[str]:
        self._no_args(args, "odds")
        odds_of = getattr(self._app.table, "odds", None)
        if odds_of is None:
            raise ConsoleError("UNKNOWN", f"the {self._app.profile.game} table has no shoe odds")
        try:
            result = odds_of()
        except ValueError as exc:           # CompositionError: too few cards left
            raise ConsoleError("STATE", str(exc)) from None
        return format_odds(result)

    def _cmd_verify(self, args: list[str], source: str) -> list[str]:
        from controller.program import manifest as mf
        if len(args) > 1:
            raise ConsoleError("SYNTAX", "usage: verify [SEED]")
        root = self._manifest_root or mf.installed_root()
        profiles = list(self._app.profile.source_files)
        if args:
            try:
                seed = mf.parse_seed(args[0])
                items = mf.verification_items(root, profiles)
            except mf.ManifestError as exc:
                raise ConsoleError(exc.code, str(exc)) from None
            digest = mf.hmac_files(seed, items)
            self._app.journal.append("program.hmac", {"seed": args[0].lower(), "hmac": digest,
                                                      "files": len(items), "source": source})
            return [f"hmac-sha256 {digest} over {len(items)} files"]
        path = self._manifest_path or mf.configured_manifest()
        if path is None:
            raise ConsoleError("STATE", "no program manifest is installed (set "
                                        f"{mf.MANIFEST_ENV} or run the install script)")
        problems = mf.check_manifest(path, profiles, root)
        self._app.journal.append("program.verified", {"manifest": str(path), "ok": not problems,
                                                      "problems": problems[:20],
                                                      "source": source})
        if problems:
            for problem in problems:
                self._raise_fault(f"program: {problem}")
            self._fail(problems, "FAULT", f"{len(problems)} file(s) do not match the manifest"
                                          f" {path}")
        return [f"all program and profile files match {path}",
                f"manifest sha256 {mf.manifest_digest(path)}"]

    # -- commands that change state ----------------------------------------------------------

    def _cmd_rng(self, args: list[str], source: str) -> list[str]:
        from controller.rng import lab as rng_lab
        rng = self._rng()
        if args[:1] == ["test"] and len(args) == 2:
            draws = self._int(args[1], 2, RNG_TEST_MAX, "N")
            self._between_rounds("rng test")
            check = rng_lab.run_statistical_check(rng, draws)
            self._app.journal.append("rng.statistical_check", {
                "draws": draws, "counts": list(check.counts), "passed": check.passed,
                "source": source})
            lines = check.format_report().splitlines()
            if not check.passed:
                self._fail(lines, "FAULT", "the statistical check failed")
            return lines
        if args[:1] == ["capture"] and len(args) == 4 and args[1] in ("raw", "final"):
            kind = args[1]
            limit = CAPTURE_RAW_MAX if kind == "raw" else CAPTURE_FINAL_MAX
            count = self._int(args[2], 1, limit, "N")
            path = self._capture_path(args[3])
            self._between_rounds("rng capture")
            if kind == "raw":
                rng_lab.capture_raw(rng, count, path)
            else:
                rng_lab.capture_final(rng, count, path)
            self._app.journal.append("rng.capture", {"kind": kind, "count": count,
                                                     "file": str(path), "source": source})
            unit = "bytes" if kind == "raw" else "outcomes"
            return [f"captured {count} {kind} {unit} to {path}"]
        raise ConsoleError("SYNTAX", "usage: rng test N | rng capture raw|final N FILE")

    def _cmd_selftest(self, args: list[str], source: str) -> list[str]:
        self._no_args(args, "selftest")
        lines: list[str] = []
        failed = False
        if self._app.rng is not None:
            report = self._app.rng.self_test()
            lines.append(report.format())
            failed |= not report.passed
        verdict = self._app.journal.verify()
        lines.append(f"journal: {verdict.describe()}")
        failed |= not verdict.ok
        from controller.program import manifest as mf
        path = self._manifest_path or mf.configured_manifest()
        if path is None:
            lines.append("program: no manifest installed, not checked")
        else:
            problems = mf.check_manifest(path, list(self._app.profile.source_files),
                                         self._manifest_root)
            lines.append(f"program: {'matches' if not problems else 'MISMATCH'} {path}")
            lines.extend(f"  {p}" for p in problems)
            failed |= bool(problems)
        self._app.journal.append("console.selftest", {"passed": not failed, "lines": lines,
                                                      "source": source})
        if failed:
            self._fail(lines, "FAULT", "self-test failed")
        return lines

    def _cmd_fault(self, args: list[str], source: str) -> list[str]:
        if args != ["clear"]:
            raise ConsoleError("SYNTAX", "usage: fault clear")
        who = f"technician@{source}"
        lines: list[str] = []
        app_faults: list[str] = self._app.app_faults
        if app_faults:
            still = self._app_fault_causes()
            if still:
                raise ConsoleError("FAULT", "cannot clear: " + "; ".join(still[:3]))
            for fault in list(app_faults):
                self._app.journal.append("fault.cleared", {"fault": fault, "who": who})
                lines.append(f"cleared: {fault}")
            app_faults.clear()
        if self._app.table.faults():
            try:
                lines.extend(self._app.table.clear_fault(who))
            except Refused as exc:
                if not lines:
                    raise
                lines.append(f"table: {exc.reason}")  # the application's faults are cleared
        remaining = self._app.faults()
        if remaining:
            self._fail(lines, "FAULT", "still faulted: " + "; ".join(remaining))
        return lines or ["no faults"]

    def _app_fault_causes(self) -> list[str]:
        """What still stands behind the application's faults (journal chain, program files)."""
        from controller.program import manifest as mf
        causes: list[str] = []
        verdict = self._app.journal.verify()
        if not verdict.ok:
            causes.append(f"journal: {verdict.describe()}")
        path = self._manifest_path or mf.configured_manifest()
        if path is not None:
            causes.extend(mf.check_manifest(path, list(self._app.profile.source_files),
                                            self._manifest_root))
        return causes

    def _cmd_test_mode(self, args: list[str], source: str) -> list[str]:
        if len(args) != 1 or args[0] not in ("on", "off"):
            raise ConsoleError("SYNTAX", "usage: test-mode on|off")
        on = args[0] == "on"
        if on == self._test_mode:
            return [f"test mode already {args[0]}"]
        if on:
            self._between_rounds("test mode")
        lines = self._app.table.action("test-mode", [args[0]], f"technician@{source}")
        self._test_mode = on
        self._app.journal.append("console.test_mode", {"on": on, "source": source})
        return list(lines) or [f"test mode {args[0]}"]

    def _table_action(self, name: str, args: list[str], who: str, session: Session) -> list[str]:
        known = getattr(self._app.table, "action_names", None)
        if callable(known) and name not in known():
            raise ConsoleError("UNKNOWN", f"no such command: {name[:32]} (try help)")
        self._require_login(session)
        try:
            lines = self._app.table.action(name, args, who)
        except NotImplementedError:
            raise ConsoleError("UNKNOWN", f"no such command: {name[:32]} (try help)") from None
        return list(lines)

    # -- helpers -------------------------------------------------------------------------------

    @staticmethod
    def _fail(lines: list[str], code: str, reason: str) -> NoReturn:
        """End a reply that already has output lines with an error instead of OK."""
        raise _ErrWithLines(code, reason, lines)

    def _rng(self) -> Any:
        if self._app.rng is None:
            raise ConsoleError("STATE", f"the {self._app.profile.game} table has no certified"
                                        " RNG")
        return self._app.rng

    def _between_rounds(self, what: str) -> None:
        if self._app.table.round_in_progress():
            raise ConsoleError("STATE", f"{what} is refused while a round is in progress")

    def _capture_path(self, name: str) -> Path:
        if "/" in name or name in (".", "..") or name.startswith("."):
            raise ConsoleError("SYNTAX", "FILE is a plain file name; captures are written to"
                                         f" {CAPTURE_DIR}/ in the state directory")
        folder = Path(self._app.state_dir) / CAPTURE_DIR
        folder.mkdir(parents=True, exist_ok=True)
        return folder / name

    @staticmethod
    def _int(text: str, low: int, high: int, what: str) -> int:
        if not text.isdigit():
            raise ConsoleError("SYNTAX", f"{what} must be a whole number, got {text[:20]!r}")
        value = int(text)
        if not low <= value <= high:
            raise ConsoleError("RANGE", f"{what} must be {low} to {high:,}, got {value:,}")
        return value

    @staticmethod
    def _no_args(args: Sequence[str], name: str) -> None:
        if args:
            raise ConsoleError("SYNTAX", f"{name} takes no arguments")

    def _raise_fault(self, text: str) -> None:
        faults: list[str] = self._app.app_faults
        if text not in faults:
            faults.append(text)
            self._app.journal.append("fault.raised", {"fault": text, "source": "console"})
            self._app.alarm(f"FAULT {text}")

    def _journal_refusal(self, name: str, source: str, code: str, reason: str) -> None:
        # Never the arguments: they may hold a PIN.
        if name in ("login", "passwd"):
            reason = reason if code != "SYNTAX" else "malformed"
        self._app.journal.append("console.refused", {"source": source, "command": name[:32],
                                                     "code": code, "reason": reason[:200]})

    def _command_table(self) -> dict[str, Command]:
        return {
            "help": Command(self._cmd_help, False, "help"),
            "status": Command(self._cmd_status, False, "status"),
            "login": Command(self._cmd_login, False, "login <pin>"),
            "logout": Command(self._cmd_logout, False, "logout"),
            "passwd": Command(self._cmd_passwd, False,
                              "passwd <new pin>   (no login needed only to set the first PIN)"),
            "config": Command(self._cmd_config, False,
                              "config show [KEY]   |  * config set KEY VALUE (between rounds)"),
            "recall": Command(self._cmd_recall, False,
                              "recall [N]   (1 to recall_depth; default recall_depth)"),
            "journal": Command(self._cmd_journal, False, "journal verify [SEQ:HMAC] | head"),
            "verify": Command(self._cmd_verify, False, "verify [SEED]   (SEED: 16-64 bytes hex)"),
            "houseway": Command(self._cmd_houseway, False, "houseway T1 T2 T3 T4"),
            "odds": Command(self._cmd_odds, False, "odds   (baccarat)"),
            "rng": Command(self._cmd_rng, True,
                           f"rng test N (2-{RNG_TEST_MAX:,}) | rng capture raw|final N FILE"),
            "selftest": Command(self._cmd_selftest, True, "selftest"),
            "fault": Command(self._cmd_fault, True, "fault clear"),
            "test-mode": Command(self._cmd_test_mode, True, "test-mode on|off"),
        }


class _ErrWithLines(ConsoleError):
    """Raised by :meth:`Console._fail`: output already produced, then an error line."""

    def __init__(self, code: str, reason: str, lines: list[str]) -> None:
        super().__init__(code, reason)
        self.lines = lines


def format_odds(result: object) -> list[str]:
    """Console lines for whatever the baccarat table's ``odds()`` returns: lines as they are,
    or a mapping of outcome to probability shown as a decimal and the exact fraction."""
    if isinstance(result, str):
        return result.splitlines()
    if isinstance(result, Mapping):
        lines = []
        for key, value in result.items():
            if isinstance(value, Fraction):
                lines.append(f"{key}: {float(value):.6f} ({value.numerator}/{value.denominator})")
            else:
                lines.append(f"{key}: {value}")
        return lines
    if isinstance(result, Sequence):
        return [str(line) for line in result]
    return [json.dumps(result, default=str)]


def _recall_depth(app: Any) -> int:
    """The table's ``recall_depth`` rule setting (RECALL_DEFAULT without settings)."""
    config = getattr(app, "config", None)
    try:
        return int(config.current().recall_depth) if config is not None else RECALL_DEFAULT
    except (AttributeError, TypeError, ValueError):
        return RECALL_DEFAULT
