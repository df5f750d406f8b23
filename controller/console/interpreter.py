"""The technician console's command interpreter (docs/design.md "Technician console").

``Console.execute(text, source)`` runs one line on the loop thread and returns the reply lines;
the last is always ``OK`` or ``ERR <CODE> <reason>`` with a code from
:data:`controller.console.errors.CODES`. The transport (controller.console.transport) has
already framed the line (and, on a terminal line, edited it).

Access: read-only commands work without a login; anything that changes state needs one, and a
few things a supervisor's (controller.console.auth: PINs, roles, sessions, the lockout). Every
command has a syntax, an example and a summary (:class:`Command`): ``help`` lists them,
``help CMD`` shows one, a table's actions included.

Nothing slow runs here: ``rng test`` and ``rng capture`` run on a worker thread and report
progress; ``journal verify`` walks the journal on a worker; the reply comes when they are done
(:class:`Deferred`).
"""

from __future__ import annotations

import functools
import json
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Final, NoReturn, TypeVar

from controller.console.auth import PIN_MAX, PIN_MIN, SCRYPT_N, SUPERVISOR, Auth, PinCheck
from controller.console.errors import CODES, ConsoleError
from controller.console.port import ConsoleHost
from controller.events import Call
from controller.journal.store import JournalError
from controller.tables.table import ActionHelp, Refused

if TYPE_CHECKING:
    from controller.journal.verify import VerifyResult
    from controller.rng.certified import CertifiedRng

_T = TypeVar("_T")

#: The most ``rng test`` draws and ``rng capture`` bytes or outcomes a technician may ask for.
RNG_TEST_MAX: Final = 200_000
CAPTURE_RAW_MAX: Final = 1_000_000
CAPTURE_FINAL_MAX: Final = 200_000
#: Commands of one game's table only (the rest every table has): ``help`` lists them on that
#: game's table alone.
GAME_COMMANDS: Final[Mapping[str, str]] = {
    "houseway": "paigow",
    "rng": "paigow",
    "lab": "paigow",
    "odds": "baccarat",
}
GAME_NAMES: Final[Mapping[str, str]] = {"paigow": "pai gow", "baccarat": "baccarat"}
#: Used only when the host has no rule settings (tests' fake apps): the setting's default.
RECALL_DEFAULT: Final = 20
CAPTURE_DIR: Final = "captures"


@dataclass(frozen=True)
class Command:
    """One console command: its handler, whether it needs a login, and what ``help`` says:
    the syntax, what it does, and an example a technician can type as it is."""

    handler: Callable[[list[str], str], list[str]]
    login: bool
    syntax: str
    summary: str
    example: str


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
VERIFY_TIMEOUT_S = 3600.0
#: The share of one core (and of the storage's time) a console ``journal verify`` may take.
VERIFY_SHARE = 0.25
#: How long an ``rng`` job may run (a raw capture of a million bytes through a slow hardware
#: generator's health test: several minutes); how often it says how far it is.
JOB_TIMEOUT_S: Final = 3600.0
PROGRESS_EVERY_S: Final = 2.0
#: How long a login's or passwd's PIN check (scrypt on a worker) may take before it is an error.
PIN_CHECK_TIMEOUT_S: Final = 30.0


class Console:
    """Parses and runs technician commands against an Application (see the module docstring)."""

    def __init__(
        self,
        app: ConsoleHost,
        *,
        clock: Callable[[], float] = time.monotonic,
        scrypt_n: int = SCRYPT_N,
        manifest_path: Path | None = None,
        manifest_root: Path | None = None,
    ) -> None:
        self._app = app
        self._auth = Auth(app.journal, app.alarm, clock=clock, scrypt_n=scrypt_n)
        self._test_mode = False
        self._manifest_path = manifest_path
        self._manifest_root = manifest_root
        #: This table's commands; another game's (``houseway``, ``odds``) are left out of
        #: ``help`` and answered UNKNOWN with the game they belong to.
        self._game: str = app.profile.game
        every = self._command_table()
        self._commands: dict[str, Command] = {
            name: c
            for name, c in every.items()
            if GAME_COMMANDS.get(name, self._game) == self._game
        }
        self._deferred: Deferred | None = None
        self._job: _Job | None = None
        self._replies_later = False

    def tick(self) -> None:
        """From the loop's tick: the end of a lockout is journaled when it runs out."""
        self._auth.tick()

    def close(self) -> None:
        """At shutdown: the lockout time still left is journaled for the next start."""
        self._auth.save()

    # -- the entry point -----------------------------------------------------------------------

    def execute(self, text: str, source: str, *, replies_later: bool = False) -> list[str]:
        """Run one line from ``source`` and return the whole reply, ending ``OK`` or ``ERR``.

        A journal that cannot record the command (disk full, damaged file) is a fault and an
        ``ERR IO`` reply: every change is journaled before it takes effect, so a command whose
        row could not be written changed nothing, and the technician is told so at once.
        ``replies_later``: the loop answers this line and can take a reply that comes later
        (:meth:`take_deferred`), so a PIN is hashed on a worker; otherwise here.
        """
        self._replies_later = replies_later
        try:
            return self._execute(text, source)
        except JournalError as exc:
            self._app.journal_fault(exc)
            return [f"ERR IO the journal could not record this: {exc}"]
        finally:
            self._replies_later = False

    def _execute(self, text: str, source: str) -> list[str]:
        words = text.split()
        if not words or words[0].startswith("#"):
            return ["OK"]
        name, args = words[0].lower(), words[1:]
        self._auth.session(source)
        return self._guard(name, source, lambda: self._dispatch(name, args, source))

    def _guard(
        self, name: str, source: str, run: Callable[[], list[str]], run_outside: bool = False
    ) -> list[str]:
        """``run`` a command's step; its lines and ``OK``, or its refusal as ``ERR``. A journal
        that cannot record it is raised to :meth:`execute`, or (``run_outside``: a reply that
        comes later, from its own event) a fault and ``ERR IO`` here."""
        try:
            lines = run()
        except ConsoleError as exc:
            self._journal_refusal(name, source, exc.code, exc.reason)
            before = exc.lines if isinstance(exc, _ErrWithLines) else []
            return [*before, f"ERR {exc.code} {exc.reason}"]
        except Refused as exc:
            code = exc.code if exc.code in CODES else "STATE"
            return [f"ERR {code} {exc.reason}"]
        except JournalError as exc:
            if not run_outside:
                raise  # JournalIOError is an OSError too: not a device or file of the command's
            self._app.journal_fault(exc)
            return [f"ERR IO the journal could not record this: {exc}"]
        except OSError as exc:
            reason = f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else "")
            self._journal_refusal(name, source, "IO", reason)
            return [f"ERR IO {reason}"]
        except Exception as exc:  # noqa: BLE001 - a bug must not crash the loop; it is journaled
            detail = f"{type(exc).__name__}: {exc}"
            self._app.journal.append(
                "console.error",
                {
                    "source": source,
                    "command": name[:32],
                    "error": detail,
                    "trace": traceback.format_exc()[-2000:],
                },
            )
            return [f"ERR FAULT internal error in {name[:32]}: {detail}"]
        return [*lines, "OK"]

    def _dispatch(self, name: str, args: list[str], source: str) -> list[str]:
        if name == "sim" and args[:1] == ["door"]:
            self._auth.require(source)
            return self._sim_door(args[1:])
        command = self._commands.get(name)
        if command is None:
            self._other_game(name)
            return self._table_action(name, args, source)
        if command.login:
            self._auth.require(source)
        return command.handler(args, source)

    # -- logins (controller/console/auth.py) ---------------------------------------------------

    def _cmd_passwd(self, args: list[str], source: str) -> list[str]:
        return self._pin_check("passwd", source, self._auth.passwd(args, source))

    def _cmd_login(self, args: list[str], source: str) -> list[str]:
        return self._pin_check("login", source, self._auth.login(args, source))

    def _pin_check(self, name: str, source: str, check: PinCheck) -> list[str]:
        """Hash a PIN on a worker thread; its result comes back to the loop as an event (a
        ``Call``) that journals and gives the reply, which the application sends after that
        event's commit. The loop meanwhile handles buttons and the other consoles: scrypt
        never delays them. When the caller takes no later reply (tests' fake apps, a tool's
        direct call) the PIN is hashed here instead."""
        if not (self._replies_later and self._app.defers_replies):
            return check.run_here()
        box: list[list[str]] = []

        def apply(value: object) -> None:  # the loop thread, in the event's transaction
            box.append(self._guard(name, source, lambda: check.complete(value), run_outside=True))
            self._app.journal.on_rollback(
                lambda: box.__setitem__(
                    0, ["ERR IO the journal could not record this (commit failed)"]
                )
            )

        def hash_pin() -> None:
            try:
                value: object = check.work()
            except Exception as exc:  # noqa: BLE001 - handed to the reply on the loop thread
                value = exc
            self._app.post(Call(functools.partial(apply, value)))

        threading.Thread(target=hash_pin, name=f"console-{name}", daemon=True).start()
        self._deferred = Deferred(
            lambda: bool(box),
            lambda: (
                box[0]
                if box
                else [f"ERR FAULT the PIN was not checked within {PIN_CHECK_TIMEOUT_S:.0f} s"]
            ),
            PIN_CHECK_TIMEOUT_S,
        )
        return []

    def _cmd_logout(self, args: list[str], source: str) -> list[str]:
        self._no_args(args, "logout")
        return self._auth.logout(source)

    # -- read-only commands ------------------------------------------------------------------

    def _cmd_help(self, args: list[str], source: str) -> list[str]:
        actions = self._table_help()
        if len(args) > 1:
            raise ConsoleError("SYNTAX", "usage: help [COMMAND]")
        if args:
            word = args[0].lower()
            command = self._commands.get(word)
            if command is not None:
                login = " (needs a login)" if command.login else ""
                return [
                    f"{command.syntax}{login}",
                    f"  {command.summary}",
                    f"  example: {command.example}",
                ]
            if word in actions:
                entry = actions[word]
                return [
                    f"{entry.syntax} (needs a login)",
                    f"  {entry.summary}",
                    f"  example: {entry.example}",
                ]
            self._other_game(word)
            raise ConsoleError("UNKNOWN", f"no such command: {word[:32]} (help lists them)")
        lines = ["commands (* needs a login; help COMMAND for its syntax and an example):"]
        lines.extend(f" {'*' if c.login else ' '} {c.syntax}" for c in self._commands.values())
        if actions:
            lines.append(f"the {self._app.profile.game} table's actions (all need a login):")
            lines.extend(f" * {entry.syntax}" for entry in actions.values())
        return lines

    def _table_help(self) -> Mapping[str, ActionHelp]:
        """The table's console actions: word -> ActionHelp (syntax, summary, example)."""
        return self._app.table.action_help()

    def _cmd_status(self, args: list[str], source: str) -> list[str]:
        self._no_args(args, "status")
        lines = [f"{key}: {value}" for key, value in self._app.status().items()]
        lines.append(f"test-mode: {'ON' if self._test_mode else 'off'}")
        lines.extend(self._auth.describe(source))
        return lines

    def _cmd_config(self, args: list[str], source: str) -> list[str]:
        if not args:
            raise ConsoleError("SYNTAX", "usage: config show [KEY] | config set KEY VALUE")
        settings = self._app.config.current()
        if args[0] == "show":
            if len(args) == 1:
                return list(settings.describe(self._game))
            if len(args) == 2:
                self._this_game(args[1])
                return list(self._config_call(lambda: settings.describe_key(args[1])))
            raise ConsoleError("SYNTAX", "usage: config show [KEY]")
        if args[0] == "set":
            self._auth.require(source)
            if len(args) < 3:
                raise ConsoleError("SYNTAX", "usage: config set KEY VALUE")
            if self._app.table.round_in_progress():
                raise ConsoleError(
                    "STATE", "a round is in progress: change settings between rounds"
                )
            key, value = args[1], " ".join(args[2:])
            self._this_game(key)
            old, new = self._config_call(
                lambda: self._app.config.set(key, value, self._auth.who(source))
            )
            return [f"{key}: {old} -> {new}"]
        raise ConsoleError("SYNTAX", f"config {args[0][:20]}: expected show or set")

    def _other_game(self, name: str) -> None:
        """Refuse a command of another game's table (``help`` does not list it) by its game."""
        if name in GAME_COMMANDS and name not in self._commands:
            raise ConsoleError(
                "UNKNOWN",
                f"{name} is a {GAME_NAMES[GAME_COMMANDS[name]]} command: this table plays"
                f" {GAME_NAMES.get(self._game, self._game)} (help lists its commands)",
            )

    def _this_game(self, key: str) -> None:
        """Refuse a setting only another game's table reads (``config show`` lists none)."""
        from controller.config.settings import game_of

        game = game_of(key)
        if game is not None and game != self._game:
            raise ConsoleError(
                "UNKNOWN",
                f"{key[:60]} is a {GAME_NAMES[game]} setting: this table plays"
                f" {GAME_NAMES.get(self._game, self._game)} (config show lists its settings)",
            )

    def _config_call(self, fn: Callable[[], _T]) -> _T:
        from controller.config.settings import ConfigError

        try:
            return fn()
        except ConfigError as exc:
            code = exc.code if exc.code in CODES else "RANGE"
            raise ConsoleError(code, str(exc)) from None

    def _cmd_recall(self, args: list[str], source: str) -> list[str]:
        from controller.journal.recall import format_recall, format_recall_json, recall

        # The rule setting recall_depth (issue 6: at least 10, configurable) is both the default
        # and the most a console recall shows.
        depth = _recall_depth(self._app)
        count = depth
        machine = bool(args) and args[-1] == "json"
        if machine:
            args = args[:-1]
        if len(args) > 1:
            raise ConsoleError("SYNTAX", "usage: recall [N] [json]")
        if args:
            count = self._int(args[0], 1, depth, "N")
        records = recall(self._app.journal, count)
        if not records:
            return ["no rounds in the journal"]
        return format_recall_json(records) if machine else format_recall(records)

    def _cmd_journal(self, args: list[str], source: str) -> list[str]:
        if args[:1] == ["head"] and len(args) == 1:
            return self._journal_head()
        if args[:1] == ["verify"] and len(args) <= 2:
            expected = None
            if len(args) == 2:
                expected = parse_head(args[1])
            return self._verify_in_background(expected, source)
        raise ConsoleError("SYNTAX", "usage: journal verify [SEQ:HASH] | journal head")

    def _journal_head(self) -> list[str]:
        """The chain's head, and the newest signed head as the anchor holds it (one JSON line
        an auditor can carry off and check with the public key)."""
        seq, digest = self._app.journal.head()
        lines = [f"head {seq}:{digest}"]
        trust = self._app.trust
        if trust is not None:
            signed = trust.newest_signed()
            lines.append("signed " + (signed.line() if signed is not None else "(none yet)"))
            lines.append(f"key {trust.signer.key_id} ({trust.signer.description})")
        return lines

    def _verify_in_background(self, expected: tuple[int, str] | None, source: str) -> list[str]:
        """Check the whole journal (chain, signed heads, anchor) on a read-only connection in a
        worker thread, in slices with pauses (controller/journal/scrub.py): a long journal never
        stalls the loop and its watchdog; the application replies when the walk is done. With a
        host that cannot defer a reply (tests' fake apps) the walk runs here instead."""
        box: list[VerifyResult | Exception] = []
        trust = self._app.trust

        def walk() -> None:
            from controller.journal.scrub import walk_slowly
            from controller.journal.verify import check_expected_head

            try:
                reader = self._app.journal.reader()
                try:
                    result = walk_slowly(
                        reader,
                        trust.public_pem,
                        trust.anchor_path,
                        share=VERIFY_SHARE,
                        stop=threading.Event(),
                    )
                    if expected is not None:
                        row = reader.row(expected[0])
                        stored = None if row is None else row.hash
                        check_expected_head(result, expected[0], stored, expected[1])
                    box.append(result)
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
            return [result.describe(), f"head {result.head_seq}:{result.head_hash}"]

        if not self._app.defers_replies:
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

    def forget_sessions(self) -> None:
        """Log every console out: a transaction that failed to commit may have held a login
        (the application calls this; the journal is the memory, and it does not have it)."""
        self._auth.forget()

    def _quietly_in_background(
        self, name: str, source: str, work: Callable[[], Callable[[], list[str]]]
    ) -> list[str]:
        """Run ``work`` (about a second: no progress lines) on a worker thread; the step it
        returns journals and gives the reply's lines on the loop thread. With a host that
        cannot defer a reply (tests' fake apps) it runs here instead."""
        box: list[Callable[[], list[str]] | Exception] = []

        def run() -> None:
            try:
                box.append(work())
            except Exception as exc:  # noqa: BLE001 - handed to the reply on the loop thread
                box.append(exc)

        def outcome() -> list[str]:
            result = box[0] if box else OSError(f"{name} did not finish")
            if isinstance(result, OSError):
                raise ConsoleError("IO", f"{result.strerror or result}")
            if isinstance(result, ValueError):  # ManifestError: a file changed meanwhile
                raise ConsoleError(getattr(result, "code", "IO"), str(result))
            if isinstance(result, Exception):
                raise result
            lines: list[str] = result()
            return lines

        if not self._app.defers_replies:
            run()
            return outcome()

        def render() -> list[str]:
            try:
                return [*outcome(), "OK"]
            except ConsoleError as exc:
                self._journal_refusal(name, source, exc.code, exc.reason)
                before = exc.lines if isinstance(exc, _ErrWithLines) else []
                return [*before, f"ERR {exc.code} {exc.reason}"]

        threading.Thread(target=run, name=f"console-{name}", daemon=True).start()
        self._deferred = Deferred(lambda: bool(box), render, VERIFY_TIMEOUT_S)
        return []

    def take_deferred(self) -> Deferred | None:
        """For the application: the reply of the last command if it will come later, once."""
        deferred, self._deferred = self._deferred, None
        return deferred

    def _cmd_meters(self, args: list[str], source: str) -> list[str]:
        """``meters [chi]``: the journal (and its archive) folded on a worker thread, on a
        read-only connection of its own (docs/meters.md)."""
        if args not in ([], ["chi"]):
            raise ConsoleError("SYNTAX", "usage: meters [chi]")
        from controller.floor.meters import chi_sources, chi_square, fold_journal

        journal = self._app.journal
        archive = self._app.trust.archive_dir

        def work() -> Callable[[], list[str]]:
            reader = journal.reader()
            try:
                fold = fold_journal(reader.events(), archive)
            finally:
                reader.close()
            lines = fold.lines()
            if args == ["chi"]:
                for src, what in chi_sources(fold):
                    lines.extend(chi_square(fold, src).lines(f"{what}, lifetime"))
                    lines.extend(chi_square(fold, src, shift=True).lines(f"{what}, this shift"))
            return lambda: lines

        return self._quietly_in_background("meters", source, work)

    def _cmd_houseway(self, args: list[str], source: str) -> list[str]:
        try:
            return self._app.table.query("houseway", list(args))  # the pai gow table's
        except Refused as exc:  # journaled as the console's refusal, as every bad line
            raise ConsoleError(exc.code, exc.reason) from None

    def _cmd_odds(self, args: list[str], source: str) -> list[str]:
        self._no_args(args, "odds")
        if self._app.profile.game != "baccarat":
            raise ConsoleError("UNKNOWN", f"the {self._app.profile.game} table has no shoe odds")
        try:
            # the baccarat table's (no row: it reads the shoe as it stands)
            result = self._app.table.query("odds", [])
        except ValueError as exc:  # CompositionError: too few cards left
            raise ConsoleError("STATE", str(exc)) from None
        return format_odds(result)

    def _cmd_verify(self, args: list[str], source: str) -> list[str]:
        """``verify [SEED]``: on a worker thread (a release hashes every file of its install
        root, tens of megabytes); journaled and raised as faults on the loop thread."""
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

            def mac() -> Callable[[], list[str]]:
                digest = mf.hmac_files(seed, items)

                def finish() -> list[str]:
                    self._journal_folded(
                        "program.hmac",
                        f"hmac {source} {args[0].lower()} {digest}",
                        {
                            "seed": args[0].lower(),
                            "hmac": digest,
                            "files": len(items),
                            "source": source,
                        },
                    )
                    return [f"hmac-sha256 {digest} over {len(items)} files"]

                return finish

            return self._quietly_in_background("verify", source, mac)
        path = self._manifest_path or mf.configured_manifest()
        if path is None:
            raise ConsoleError(
                "STATE",
                "no program manifest is installed (set "
                f"{mf.MANIFEST_ENV} or run the install script)",
            )

        def check() -> Callable[[], list[str]]:
            problems = mf.check_manifest(path, profiles, self._manifest_root)
            digest = "" if problems else mf.manifest_digest(path)

            def finish() -> list[str]:
                self._app.journal.append(
                    "program.verified",
                    {
                        "manifest": str(path),
                        "ok": not problems,
                        "problems": problems[:20],
                        "source": source,
                    },
                )
                if problems:
                    for problem in problems:
                        self._raise_fault(f"program: {problem}")
                    self._fail(
                        problems,
                        "FAULT",
                        f"{len(problems)} file(s) do not match the manifest {path}",
                    )
                return [f"all program and profile files match {path}", f"manifest sha256 {digest}"]

            return finish

        return self._quietly_in_background("verify", source, check)

    # -- commands that change state ----------------------------------------------------------

    def _cmd_rng(self, args: list[str], source: str) -> list[str]:
        """``rng test N`` / ``rng capture raw|final N FILE``: on a worker thread with progress
        lines (a slow hardware generator makes a capture take minutes); the table plays on,
        its draws interleaving with the job's (each draw takes the RNG's lock on its own)."""
        from controller.rng import lab as rng_lab

        rng = self._rng()
        if args[:1] == ["test"] and len(args) == 2:
            draws = self._int(args[1], 2, RNG_TEST_MAX, "N")
            self._between_rounds("rng test")

            def test(progress: Callable[[int, int], None]) -> Callable[[], list[str]]:
                check = rng_lab.run_statistical_check(rng, draws, progress=progress)

                def finish() -> list[str]:
                    self._app.journal.append(
                        "rng.statistical_check",
                        {
                            "draws": draws,
                            "counts": list(check.counts),
                            "passed": check.passed,
                            "source": source,
                        },
                    )
                    lines = check.format_report().splitlines()
                    if not check.passed:
                        self._fail(lines, "FAULT", "the statistical check failed")
                    return lines

                return finish

            return self._run_job("rng", source, f"rng test: {draws:,} draws", "draws", test)
        if args[:1] == ["capture"] and len(args) == 4 and args[1] in ("raw", "final"):
            kind = args[1]
            limit = CAPTURE_RAW_MAX if kind == "raw" else CAPTURE_FINAL_MAX
            count = self._int(args[2], 1, limit, "N")
            path = self._capture_path(args[3])
            if path.is_dir():
                raise ConsoleError("IO", f"Is a directory: {path}")
            self._between_rounds("rng capture")
            unit = "bytes" if kind == "raw" else "outcomes"

            def capture(progress: Callable[[int, int], None]) -> Callable[[], list[str]]:
                if kind == "raw":
                    rng_lab.capture_raw(rng, count, path, progress=progress)
                else:
                    rng_lab.capture_final(rng, count, path, progress=progress)

                def finish() -> list[str]:
                    self._app.journal.append(
                        "rng.capture",
                        {"kind": kind, "count": count, "file": str(path), "source": source},
                    )
                    return [f"captured {count:,} {kind} {unit} to {path}"]

                return finish

            return self._run_job(
                "rng", source, f"rng capture: {count:,} {kind} {unit}", unit, capture
            )
        raise ConsoleError("SYNTAX", "usage: rng test N | rng capture raw|final N FILE")

    def _cmd_lab(self, args: list[str], source: str) -> list[str]:
        """``lab package NAME [DRAWS [RAW-BYTES]]``: the lab package (controller/lab/) made on a
        worker thread from the running table's own RNG, journal (a read-only connection), key
        and settings, into the captures folder; the table plays on meanwhile."""
        from controller.lab import DEFAULT_DRAWS, DEFAULT_RAW_BYTES
        from controller.lab.table import RunningTable, package_job

        if not 2 <= len(args) <= 4 or args[0] != "package":
            raise ConsoleError("SYNTAX", "usage: lab package NAME [DRAWS [RAW-BYTES]]")
        rng = self._rng()
        path = self._capture_path(args[1])
        draws = self._int(args[2], 2, RNG_TEST_MAX, "DRAWS") if len(args) > 2 else DEFAULT_DRAWS
        raw = self._int(args[3], 2, CAPTURE_RAW_MAX, "RAW-BYTES") if len(args) > 3 else None
        self._between_rounds("lab package")
        trust = self._app.trust
        table = RunningTable(
            profile=self._app.profile,
            state_dir=Path(self._app.state_dir),
            journal=self._app.journal,
            signer=trust.signer,
            anchor_path=Path(trust.anchor_path),
            public_pem=trust.public_pem,
            settings=self._app.config.current(),
        )
        job = package_job(
            table,
            rng,
            path,
            draws=draws,
            raw_bytes=raw if raw is not None else DEFAULT_RAW_BYTES,
            program_root=self._manifest_root,
            made_by=f"lab package at the console ({source})",
        )

        def work(progress: Callable[[int, int], None]) -> Callable[[], list[str]]:
            result = job(progress)

            def finish() -> list[str]:
                self._app.journal.append(
                    "lab.package",
                    {
                        "file": str(result.archive),
                        "sha256": result.archive_sha256,
                        "seed": result.seed,
                        "hmac": result.hmac,
                        "key_id": result.key_id,
                        "source": source,
                    },
                )
                return result.lines()

            return finish

        return self._run_job("lab", source, f"lab package {args[1]}", "draws and raw bytes", work)

    def _run_job(
        self,
        name: str,
        source: str,
        what: str,
        unit: str,
        work: Callable[[Callable[[int, int], None]], Callable[[], list[str]]],
    ) -> list[str]:
        """Run ``work`` on a worker thread: it returns the step that journals the outcome and
        gives the reply's lines, run on the loop thread. The reply comes when it is done;
        progress lines (at most one every :data:`PROGRESS_EVERY_S`) meanwhile. A job's error
        becomes the reply's ``ERR``: an RNG fault is ``FAULT`` (the table latches it), a file
        ``IO``."""
        if self._job is not None and not self._job.done():
            raise ConsoleError("STATE", f"{self._job.what} is still running")
        job = _Job(what, unit, work)
        self._job = job
        if not self._app.defers_replies:
            job.run()  # a host that cannot defer a reply (tests' fake apps)
            return self._job_reply(job, name, source, final=False)

        def render() -> list[str]:
            return self._job_reply(job, name, source, final=True)

        job.start()
        self._deferred = Deferred(job.done, render, JOB_TIMEOUT_S, job.progress_lines)
        return []

    def _job_reply(self, job: _Job, name: str, source: str, *, final: bool) -> list[str]:
        """The reply of a finished job: its lines (journaled on this, the loop thread)."""
        from controller.rng.certified import RngFault

        try:
            try:
                lines = job.result()()
            except RngFault as exc:
                raise ConsoleError("FAULT", f"RNG fault: {exc.reason}") from None
            except OSError as exc:
                reason = f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else "")
                raise ConsoleError("IO", reason) from None
        except ConsoleError as exc:
            if not final:
                raise
            self._journal_refusal(name, source, exc.code, exc.reason)
            before = exc.lines if isinstance(exc, _ErrWithLines) else []
            return [*before, f"ERR {exc.code} {exc.reason}"]
        return [*lines, "OK"] if final else lines

    def _cmd_selftest(self, args: list[str], source: str) -> list[str]:
        self._no_args(args, "selftest")
        lines: list[str] = []
        failed = False
        if self._app.rng is not None:
            report = self._app.rng.self_test()
            lines.append(report.format())
            failed |= not report.passed
        journal_lines, journal_ok = self._journal_selftest()
        lines.extend(journal_lines)
        failed |= not journal_ok
        from controller.program import manifest as mf

        path = self._manifest_path or mf.configured_manifest()
        if path is None:
            lines.append("program: no manifest installed, not checked")
        else:
            problems = mf.check_manifest(
                path, list(self._app.profile.source_files), self._manifest_root
            )
            lines.append(f"program: {'matches' if not problems else 'MISMATCH'} {path}")
            lines.extend(f"  {p}" for p in problems)
            failed |= bool(problems)
        self._app.journal.append(
            "console.selftest", {"passed": not failed, "lines": lines, "source": source}
        )
        if failed:
            self._fail(lines, "FAULT", "self-test failed")
        return lines

    def _journal_selftest(self) -> tuple[list[str], bool]:
        """The journal's part of ``selftest``, without a walk on the loop: the start-up check,
        the background scrub's last pass (a new one is started), unacknowledged findings."""
        trust = self._app.trust
        lines: list[str] = []
        start = trust.start_verdict
        if start is not None:
            lines.append(f"journal: start-up check {start.describe()}")
        status = trust.maintenance.status
        last = status.last
        if status.running:
            lines.append(
                f"journal: scrub running, {status.rows_done:,} of"
                f" {status.rows_total:,} rows checked"
            )
        if last is None:
            lines.append("journal: no full scrub finished yet in this run (one is starting)")
        else:
            lines.append(f"journal: last scrub {last.describe()} ({status.last_seconds:.0f} s)")
        for finding in trust.findings:
            lines.append(f"journal: NOT ACKNOWLEDGED {finding.describe()}")
        trust.maintenance.scrub_now()
        return lines, not trust.findings

    def _cmd_fault(self, args: list[str], source: str) -> list[str]:
        if args != ["clear"]:
            raise ConsoleError("SYNTAX", "usage: fault clear")
        who = self._auth.who(source)
        lines: list[str] = []
        app_faults = self._app.app_faults
        if app_faults:
            still = self._app_fault_causes()
            if still:
                raise ConsoleError("FAULT", "cannot clear: " + "; ".join(still[:3]))
            self._require_supervisor_for_findings(source)
            lines.extend(self._app.acknowledge_journal(who))
            lines.extend(app_faults.clear(who))
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

    def _cmd_table(self, args: list[str], source: str) -> list[str]:
        """``table enable``: a supervisor lifts the host's ``disable`` (docs/host-commands.md)."""
        if args != ["enable"]:
            raise ConsoleError("SYNTAX", "usage: table enable")
        try:
            self._auth.require(source, SUPERVISOR)
        except ConsoleError as exc:
            raise ConsoleError(
                exc.code, f"enabling a table the host disabled needs a supervisor: {exc.reason}"
            ) from None
        latch = self._app.disable_latch
        was = latch.reason
        if not latch.enable(source, self._auth.who(source)):
            return ["the table is not disabled: nothing to enable"]
        return [f"table enabled (it was disabled: {was}); rounds may start"]

    def _cmd_door(self, args: list[str], source: str) -> list[str]:
        """``door ack``: the enclosure door closed again, acknowledged (docs/console.md)."""
        if args != ["ack"]:
            raise ConsoleError("SYNTAX", "usage: door ack")
        door = self._app.door
        if door is None:
            raise ConsoleError("STATE", "this table's profile has no door switch ([devices.door])")
        try:
            return [door.acknowledge(self._auth.who(source))]
        except ValueError as exc:
            raise ConsoleError("STATE", str(exc)) from None

    def _sim_door(self, args: list[str]) -> list[str]:
        """``sim door open|close``: the simulated door switch (a ``gpio_backend = "sim"``
        profile with a ``[devices.door]``), driven as the switch would drive the pin."""
        if args not in (["open"], ["close"]):
            raise ConsoleError("SYNTAX", "usage: sim door open|close")
        try:
            return [self._app.sim_door(args == ["open"])]
        except ValueError as exc:
            raise ConsoleError("STATE", str(exc)) from None

    def _require_supervisor_for_findings(self, source: str) -> None:
        """A journal finding (rows lost or rewritten) is acknowledged by a supervisor alone: the
        acknowledgment voids the round the journal can no longer vouch for, a void that may
        come after its number was out (docs/console.md "Voids after the draw")."""
        trust = self._app.trust
        if trust is None or not trust.findings:
            return
        try:
            self._auth.require(source, SUPERVISOR)
        except ConsoleError as exc:
            raise ConsoleError(
                exc.code,
                "acknowledging a journal finding (rows lost or"
                f" rewritten) needs a supervisor: {exc.reason}",
            ) from None

    def _app_fault_causes(self) -> list[str]:
        """What still stands behind the application's faults (program files). The journal's
        findings do not go away: clearing them is the technician's acknowledgment, journaled
        with what was found (``acknowledge_journal``); nothing walks the journal here."""
        from controller.program import manifest as mf

        causes: list[str] = []
        path = self._manifest_path or mf.configured_manifest()
        if path is not None:
            causes.extend(
                mf.check_manifest(path, list(self._app.profile.source_files), self._manifest_root)
            )
        return causes

    def _cmd_test_mode(self, args: list[str], source: str) -> list[str]:
        if len(args) != 1 or args[0] not in ("on", "off"):
            raise ConsoleError("SYNTAX", "usage: test-mode on|off")
        on = args[0] == "on"
        if on == self._test_mode:
            return [f"test mode already {args[0]}"]
        if on:
            self._between_rounds("test mode")
        lines = self._app.table.action("test-mode", [args[0]], self._auth.who(source))
        self._test_mode = on
        self._app.journal.append("console.test_mode", {"on": on, "source": source})
        return list(lines) or [f"test mode {args[0]}"]

    def _table_action(self, name: str, args: list[str], source: str) -> list[str]:
        if name not in self._app.table.action_names():
            raise ConsoleError("UNKNOWN", f"no such command: {name[:32]} (help lists them)")
        self._auth.require(source)
        try:
            lines = self._app.table.action(name, args, self._auth.who(source))
        except NotImplementedError:
            raise ConsoleError(
                "UNKNOWN", f"no such command: {name[:32]} (help lists them)"
            ) from None
        return list(lines)

    # -- helpers -------------------------------------------------------------------------------

    @staticmethod
    def _fail(lines: list[str], code: str, reason: str) -> NoReturn:
        """End a reply that already has output lines with an error instead of OK."""
        raise _ErrWithLines(code, reason, lines)

    def _rng(self) -> CertifiedRng:
        if self._app.rng is None:
            raise ConsoleError("STATE", f"the {self._app.profile.game} table has no certified RNG")
        return self._app.rng

    def _between_rounds(self, what: str) -> None:
        if self._app.table.round_in_progress():
            raise ConsoleError("STATE", f"{what} is refused while a round is in progress")

    def _capture_path(self, name: str) -> Path:
        if "/" in name or name in (".", "..") or name.startswith("."):
            raise ConsoleError(
                "SYNTAX",
                "FILE is a plain file name; captures are written to"
                f" {CAPTURE_DIR}/ in the state directory",
            )
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
        self._app.app_faults.raise_fault(text, "console")

    def _journal_refusal(self, name: str, source: str, code: str, reason: str) -> None:
        # Never the arguments: they may hold a PIN.
        if name in ("login", "passwd"):
            reason = reason if code != "SYNTAX" else "malformed"
        self._journal_folded(
            "console.refused",
            f"refused {source} {name[:32]} {code} {reason}",
            {"source": source, "command": name[:32], "code": code, "reason": reason[:200]},
        )

    def _journal_folded(self, kind: str, key: str, data: Mapping[str, object]) -> None:
        """Journal an event that repeats (a flood of refused lines, the same ``verify SEED``):
        the first at once, the repeats as one counted row a minute (the application's
        ``summaries``, controller/journal/summary.py); one row each without them."""
        summaries = self._app.summaries
        if summaries is None:
            self._app.journal.append(kind, data)
        else:
            summaries.note(kind, key, data)

    def _command_table(self) -> dict[str, Command]:
        c = Command
        return {
            "help": c(
                self._cmd_help,
                False,
                "help [COMMAND]",
                "the commands, or one command's syntax and an example",
                "help config",
            ),
            "status": c(
                self._cmd_status,
                False,
                "status",
                "game, state, round, number or coup, faults, this console's login",
                "status",
            ),
            "login": c(
                self._cmd_login,
                False,
                "login PIN",
                "log this console in; the PIN says technician or supervisor",
                "login 48151623",
            ),
            "logout": c(self._cmd_logout, False, "logout", "log this console out", "logout"),
            "table": c(
                self._cmd_table,
                True,
                "table enable",
                "a supervisor lifts the host's disable: rounds may start again",
                "table enable",
            ),
            "door": c(
                self._cmd_door,
                True,
                "door ack",
                "acknowledge the enclosure door, closed again: rounds may start",
                "door ack",
            ),
            "passwd": c(
                self._cmd_passwd,
                False,
                "passwd [supervisor] [CURRENT-PIN] NEW-PIN",
                f"set a PIN ({PIN_MIN}-{PIN_MAX} characters). The first technician PIN:"
                " passwd NEW-PIN, no login; the first supervisor PIN: passwd supervisor"
                " NEW-PIN, by a technician. A change needs the current PIN: the"
                " technician's (or the supervisor's), or the supervisor's, logged in",
                "passwd 48151623",
            ),
            "config": c(
                self._cmd_config,
                False,
                "config show [KEY] | config set KEY VALUE",
                "settings with value, default, range and regulation; set needs a login"
                " and is refused mid-round",
                "config show recall_depth",
            ),
            "recall": c(
                self._cmd_recall,
                False,
                "recall [N] [json]",
                "the last N rounds (1 to recall_depth) with every journaled input; json:"
                " a row a line, for a program",
                "recall 2",
            ),
            "journal": c(
                self._cmd_journal,
                False,
                "journal verify [SEQ:HASH] | journal head",
                "check the chain, the signed heads and the anchor on a worker (with a"
                " head printed earlier: that row unchanged); print the chain head, the"
                " newest signed head and the key",
                "journal head",
            ),
            "verify": c(
                self._cmd_verify,
                False,
                "verify [SEED]",
                "program and profile files against the manifest; with a lab SEED (16-64"
                " bytes hex) their HMAC",
                "verify 00112233445566778899aabbccddeeff",
            ),
            "meters": c(
                self._cmd_meters,
                False,
                "meters [chi]",
                "the meters, lifetime and this shift, counted from the journal; chi: the"
                " numbers' chi-square, the RNG's against uniform, the dice's against three fair"
                " dice (pai gow)",
                "meters chi",
            ),
            "houseway": c(
                self._cmd_houseway,
                False,
                "houseway T1 T2 T3 T4",
                "how the house way sets four tiles (pai gow)",
                "houseway 1-2 2-4 6-6 5-5",
            ),
            "odds": c(
                self._cmd_odds,
                False,
                "odds",
                "exact odds of the next coup from the shoe as it stands (baccarat)",
                "odds",
            ),
            "rng": c(
                self._cmd_rng,
                True,
                "rng test N | rng capture raw|final N FILE",
                f"chi-square checks over N draws (2-{RNG_TEST_MAX:,}); or a capture to"
                f" {CAPTURE_DIR}/FILE in the state directory; between rounds",
                "rng test 10000",
            ),
            "lab": c(
                self._cmd_lab,
                True,
                "lab package NAME [DRAWS [RAW-BYTES]]",
                "the lab package (captures, statistics, program, settings, recall, the signed"
                f" journal export) to {CAPTURE_DIR}/NAME and NAME.tar.gz in the state"
                " directory, sealed with the table's key; between rounds",
                "lab package lab-2026-12",
            ),
            "selftest": c(
                self._cmd_selftest,
                True,
                "selftest",
                "RNG start-up test and program files afresh; the journal's start-up"
                " check and last background scrub (a new one starts)",
                "selftest",
            ),
            "fault": c(
                self._cmd_fault,
                True,
                "fault clear",
                "clear the faults whose cause is gone; a journal finding is"
                " acknowledged by a supervisor (journaled with what was found)",
                "fault clear",
            ),
            "test-mode": c(
                self._cmd_test_mode,
                True,
                "test-mode on|off",
                "the display shows test mode; no round is touched; between rounds",
                "test-mode on",
            ),
        }


def parse_head(text: str) -> tuple[int, str]:
    """``SEQ:HASH`` as ``journal head`` prints it (:func:`controller.journal.verify.parse_head`);
    anything else is the line's error (SYNTAX, or RANGE for a row number no journal has), never
    a verdict on the journal."""
    from controller.journal.verify import HeadSyntaxError
    from controller.journal.verify import parse_head as parse

    try:
        return parse(text)
    except HeadSyntaxError as exc:
        raise ConsoleError(exc.code, str(exc)) from None


class _Job:
    """One long console command on a worker thread, with its progress and its outcome."""

    def __init__(
        self,
        what: str,
        unit: str,
        work: Callable[[Callable[[int, int], None]], Callable[[], list[str]]],
    ) -> None:
        self.what = what
        self._unit = unit
        self._work = work
        self._outcome: list[Callable[[], list[str]] | BaseException] = []
        self._lock = threading.Lock()
        self._latest: tuple[int, int] | None = None
        self._reported_at = time.monotonic()
        self._started_said = False

    def start(self) -> None:
        threading.Thread(target=self.run, name="console-job", daemon=True).start()

    def run(self) -> None:
        try:
            value: Callable[[], list[str]] | BaseException = self._work(self._progress)
        except BaseException as exc:  # noqa: BLE001 - handed to the reply on the loop thread
            value = exc
        with self._lock:
            self._outcome.append(value)

    def _progress(self, done: int, total: int) -> None:
        with self._lock:
            self._latest = (done, total)

    def done(self) -> bool:
        with self._lock:
            return bool(self._outcome)

    def result(self) -> Callable[[], list[str]]:
        """The finishing step the work returned (raises what the work raised)."""
        with self._lock:
            value = self._outcome[0]
        if isinstance(value, BaseException):
            raise value
        return value

    def progress_lines(self) -> list[str]:
        """A line saying how far the job is, at most every :data:`PROGRESS_EVERY_S`."""
        now = time.monotonic()
        if not self._started_said:
            self._started_said = True
            return [f"{self.what}: started; the table plays on meanwhile"]
        with self._lock:
            latest = self._latest
            if latest is None or now - self._reported_at < PROGRESS_EVERY_S or self._outcome:
                return []
            self._reported_at = now
        done, total = latest
        return [f"{self.what}: {done:,} of {total:,} {self._unit} ({100 * done // total}%)"]


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


def _recall_depth(app: ConsoleHost) -> int:
    """The table's ``recall_depth`` rule setting (RECALL_DEFAULT without settings)."""
    config = app.config
    try:
        return int(config.current().recall_depth) if config is not None else RECALL_DEFAULT
    except (AttributeError, TypeError, ValueError):
        return RECALL_DEFAULT
