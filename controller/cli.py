"""``table-controller``: run a table, check a profile, inspect the journal.

Exit codes: 0 success, 1 a check failed (bad profile, broken journal), 2 usage error.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from controller.events import Shutdown

if TYPE_CHECKING:
    from controller.app import Application
    from controller.console.transport import ConsoleTransport
    from controller.scoreboard.server import ScoreboardServer


def _at_least_one(text: str) -> int:
    """A count on the command line: a whole number of 1 or more (argparse says what is wrong)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="table-controller", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run the table controller")
    run.add_argument("--profile", required=True, help="hardware profile (TOML)")
    run.add_argument("--state-dir", default="/var/lib/table-controller",
                     help="where the journal and the device key live")
    run.add_argument("--console", default=None,
                     help="'stdio', 'none', or a serial port (default: the profile's)")
    run.add_argument("--log-level", default="WARNING")

    check = sub.add_parser("check-profile", help="validate a profile and print what it resolves to")
    check.add_argument("file")

    journal = sub.add_parser("journal", help="inspect a journal offline")
    journal.add_argument("action", choices=["verify", "head", "export"])
    journal.add_argument("--state-dir", default="/var/lib/table-controller")
    journal.add_argument("--db", default="journal.sqlite")
    journal.add_argument("--key", default="device.key")
    journal.add_argument("--expect-head", default=None, metavar="SEQ:HMAC",
                         help="prove nothing after a head printed earlier was truncated")
    journal.add_argument("--rounds", type=int, default=0,
                         help="export: only the last N rounds (0: every event)")
    # -- simulate: the scripted pai gow dealer (controller/tables/paigow/script.py) --
    simulate = sub.add_parser("simulate", help="deal N scripted pai gow rounds on a profile")
    simulate.add_argument("--profile", required=True, help="hardware profile (TOML), sim-*")
    simulate.add_argument("--rounds", type=_at_least_one, default=10,
                          help="how many rounds to deal (1 or more)")
    simulate.add_argument("--state-dir", default=None,
                          help="journal directory (default: a fresh temporary one)")
    # -- end simulate --

    # -- the host feed's collector (controller/feed/, docs/feed.md): runs off the table --
    collect = sub.add_parser("collect", help="subscribe to a site's feed, verify and store it")
    collect.add_argument("--broker", required=True, metavar="URL",
                         help="mqtts://host:port (mqtt:// for a development broker)")
    collect.add_argument("--site", required=True, help="the site id in the topics")
    collect.add_argument("--store", default="sqlite:///collector.sqlite", metavar="URL",
                         help="sqlite:///PATH (default sqlite:///collector.sqlite) or"
                              " postgresql://user:password@host:port/db")
    collect.add_argument("--keys", required=True, metavar="DIR",
                         help="the tables' public keys, <table id>.pem each")
    collect.add_argument("--ca", default=None, help="the broker's CA (PEM)")
    collect.add_argument("--cert", default=None, help="the collector's client certificate")
    collect.add_argument("--key", default=None, help="the collector's client key")
    collect.add_argument("--client-id", default=None,
                         help="MQTT client id, fixed so the broker keeps the session"
                              " (default tc-collector-SITE)")
    collect.add_argument("--gap-timeout", type=float, default=60.0, metavar="S",
                         help="seconds missing rows may take to arrive before a gap alarm")
    collect.add_argument("--silence", type=float, default=900.0, metavar="S",
                         help="seconds without a message from a table before a silent alarm")
    collect.add_argument("--log-level", default="WARNING")
    floor = sub.add_parser("floor", help="one line per table from a collector's store")
    floor.add_argument("--store", default="sqlite:///collector.sqlite", metavar="URL")
    floor.add_argument("--site", default=None)
    floor.add_argument("--alarms", type=int, default=5, metavar="N",
                       help="also list the newest N alarms (0: none)")
    # -- end collector --

    manifest = sub.add_parser("manifest", add_help=False,
                              help="program manifest: build | check | hmac (see --help)")
    manifest.add_argument("rest", nargs=argparse.REMAINDER)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``table-controller`` command."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["manifest"]:
        from controller.program.manifest import main as _manifest_main
        return int(_manifest_main(argv[1:]) or 0)
    args = _parser().parse_args(argv)
    if args.command == "check-profile":
        return _check_profile(args.file)
    if args.command == "journal":
        return _journal(args)
    if args.command == "collect":
        return _collect(args)
    if args.command == "floor":
        return _floor(args)
    if args.command == "simulate":
        return simulate(args.profile, args.rounds, args.state_dir)
    return _run(args)


def _check_profile(path: str) -> int:
    from controller.config.profile import ProfileError, check_profile_report
    try:
        print(check_profile_report(path))
    except ProfileError as exc:
        print(f"profile error: {exc}", file=sys.stderr)
        return 1
    return 0


def _journal(args: argparse.Namespace) -> int:
    from controller.journal.store import Journal, JournalError
    state = Path(args.state_dir)
    db = Path(args.db) if Path(args.db).is_absolute() else state / args.db
    key = Path(args.key) if Path(args.key).is_absolute() else state / args.key
    if not db.exists() or not key.exists():
        print(f"no journal at {db} (key {key})", file=sys.stderr)
        return 1
    try:
        journal = Journal.open(db, key)
    except JournalError as exc:
        print(f"journal error: {exc}", file=sys.stderr)
        return 1
    try:
        if args.action == "head":
            seq, mac = journal.head()
            print(f"{seq}:{mac}")
            return 0
        if args.action == "verify":
            expected = None
            if args.expect_head:
                seq_text, _, mac = args.expect_head.partition(":")
                expected = (int(seq_text), mac)
            result = journal.verify(expected)
            print(result.describe())
            return 0 if result.ok else 1
        from controller.journal.recall import export_jsonl
        try:
            for line in export_jsonl(journal, rounds=args.rounds):
                print(line)
            sys.stdout.flush()
        except BrokenPipeError:
            # The reader (e.g. `| head`) has gone: not an error of the export. Point stdout at
            # /dev/null so the interpreter's final flush does not complain either.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return 0
    finally:
        journal.close()


def _collect(args: argparse.Namespace) -> int:
    """``table-controller collect``: runs until SIGTERM or SIGINT (exit 0); 1 when it cannot
    start (a bad broker URL, a store it cannot open, no keys directory)."""
    import threading

    logging.basicConfig(level=getattr(logging, str(args.log_level).upper(), logging.WARNING),
                        stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from controller.feed.broker import BrokerError, parse_broker_url
    from controller.feed.collect import Collector, CollectorSettings
    from controller.feed.messages import is_token
    from controller.feed.store import StoreError

    if not is_token(args.site):
        print(f"collect: site {args.site!r} is not a topic-safe id", file=sys.stderr)
        return 1
    try:
        broker = parse_broker_url(args.broker, ca=args.ca, cert=args.cert, key=args.key)
        settings = CollectorSettings(
            broker=broker, site=args.site, store_url=args.store, keys_dir=Path(args.keys),
            client_id=args.client_id or f"tc-collector-{args.site}",
            gap_timeout_s=args.gap_timeout, silence_s=args.silence)
        collector = Collector(settings, out=lambda line: print(line, flush=True))
    except (BrokerError, StoreError, OSError) as exc:
        print(f"collect: {exc}", file=sys.stderr)
        return 1
    stop = threading.Event()

    def _on_signal(_signum: int, _frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    return collector.run(stop)


def _floor(args: argparse.Namespace) -> int:
    from controller.feed.floor import floor_lines
    from controller.feed.store import Store, StoreError
    try:
        store = Store.open(args.store)
    except StoreError as exc:
        print(f"floor: {exc}", file=sys.stderr)
        return 1
    try:
        for line in floor_lines(store, site=args.site, last_alarms=args.alarms):
            print(line)
    except StoreError as exc:
        print(f"floor: {exc}", file=sys.stderr)
        return 1
    finally:
        store.close()
    return 0


def _run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=getattr(logging, str(args.log_level).upper(), logging.WARNING),
                        stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from controller.app import Application
    from controller.config.profile import ProfileError, load_profile
    from controller.journal.store import JournalError
    from drivers.errors import DriverError
    try:
        profile = load_profile(args.profile)
    except ProfileError as exc:
        print(f"profile error: {exc}", file=sys.stderr)
        _journal_refused_start(Path(args.state_dir), args.profile, str(exc))
        return 1
    clash = _console_clash(profile, args.console)
    if clash:
        print(f"console error: {clash}", file=sys.stderr)
        return 1
    try:
        app = Application(profile, args.state_dir, console_port=args.console)
    except JournalError as exc:
        print(f"journal error: {exc}", file=sys.stderr)
        return 1
    except (DriverError, OSError) as exc:
        # e.g. "GPIO backend 'rpi' needs the RPi.GPIO module, which is not installed: install
        # the 'pi' extra ..." -- one line, never a traceback
        print(f"device error: {exc}", file=sys.stderr)
        return 1
    try:
        return _serve(app, profile.game, profile.name)
    finally:
        app.close()   # drivers, consoles and the journal, however the start or the loop ended


def _console_clash(profile: object, port: str | None) -> str | None:
    """``--console PORT`` naming a device the profile gives another role (the profile's own
    ports are checked when it loads: one serial device, one role)."""
    if port is None or port in ("stdio", "none"):
        return None
    for role in ("shoe", "display", "dealer_display"):
        other = getattr(getattr(profile, role, None), "port", None)
        if other and other != "sim" and os.path.realpath(other) == os.path.realpath(port):
            return f"--console {port} is the {role.replace('_', ' ')}'s port ({other})"
    return None


def _serve(app: Application, game: str, name: str) -> int:
    try:
        transport = _open_console(app)
    except OSError as exc:
        print(f"console error: {exc}", file=sys.stderr)
        return 1

    def _on_signal(signum: int, _frame: FrameType | None) -> None:
        app.post(Shutdown(f"signal {signal.Signals(signum).name}"))

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    notes = app.start()
    board = _start_scoreboard(app)
    try:
        status = app.status()
        banner = (f"table-controller ready: {game} profile {name},"
                  f" state {status.get('state', '?')}")
        print(banner, file=sys.stderr)
        if board is not None:
            print(f"scoreboard: {board.url}", file=sys.stderr)
        for note in notes:
            print(f"recovery: {note}", file=sys.stderr)
        if transport is not None:
            transport.start()   # after the banner: a terminal's first prompt comes last
        app.notifier.ready(banner)
        app.run()
    finally:
        if board is not None:
            board.close()
    return 0


def _start_scoreboard(app: Application) -> ScoreboardServer | None:
    """The monitor pages (controller/scoreboard) when the profile enables them, reading the
    application's publication. A port that cannot be bound is journaled and alarmed, and the
    table runs on without its monitor: the game never depends on the scoreboard."""
    settings = app.profile.scoreboard
    if not settings.enabled:
        return None
    from controller.config.profile import profile_warnings
    from controller.scoreboard.server import ScoreboardServer
    for warning in profile_warnings(app.profile):
        print(f"WARNING {warning}", file=sys.stderr)
    board = ScoreboardServer(settings, app.publication, app.profile.game)
    try:
        board.start()
    except OSError as exc:
        app.journal.append("scoreboard.error", {"address": settings.address,
                                                "port": settings.port, "error": str(exc)})
        app.alarm(f"WARN scoreboard not served on {settings.address}:{settings.port}: {exc}")
        return None
    host, port = board.address
    app.journal.append("scoreboard.start", {"address": host, "port": port, "url": board.url,
                                            "max_clients": settings.max_clients})
    app.add_status("scoreboard", board.describe)
    return board


def _journal_refused_start(state_dir: Path, profile_path: str, error: str) -> None:
    """A refused profile is journaled when the table already has a journal (the default file
    names: the profile that would name others is the thing that failed), so a technician finds
    why the table did not start in the table's own record. Never creates a journal or a key."""
    from controller.journal.store import Journal, JournalError
    db, key = state_dir / "journal.sqlite", state_dir / "device.key"
    if not (db.exists() and key.exists()):
        return
    try:
        journal = Journal.open(db, key)
        try:
            journal.append("app.start_refused", {"profile": str(profile_path),
                                                 "error": error[:500]})
        finally:
            journal.close()
    except (JournalError, OSError) as exc:
        print(f"(could not journal the refusal: {exc})", file=sys.stderr)


def _open_console(app: Application) -> ConsoleTransport | None:
    from controller.console.transport import SerialTransport, StdioTransport
    port = app.console_port
    editing = bool(app.profile.console.line_editing)
    transport: StdioTransport | SerialTransport
    if port == "none":
        return None
    if port == "stdio":
        transport = StdioTransport(app.post, line_editing=editing,
                                   on_eof=lambda: app.post(Shutdown("console end of input")))
    else:
        transport = SerialTransport(app.post, port, baud=app.profile.console.baud,
                                    line_editing=editing)
    app.attach_console(transport)
    return transport


def simulate(profile_path: str, rounds: int, state_dir: str | None = None,
             out: Callable[[str], None] = print) -> int:
    """``table-controller simulate``: run the real application on ``profile_path`` (its loop in a
    thread, no console) and deal ``rounds`` scripted rounds. Without ``state_dir`` the journal
    goes to a fresh temporary directory, so a simulation never writes a table's own journal.
    Returns the exit code (0, or 1 when the profile is refused or a step is refused)."""
    import tempfile
    import threading

    from controller.app import Application
    from controller.config.profile import ProfileError, load_profile
    from controller.events import Shutdown
    from controller.journal.store import JournalError
    from controller.tables.paigow.script import ScriptError, run_script

    try:
        profile = load_profile(profile_path)
    except ProfileError as exc:
        out(f"profile error: {exc}")
        return 1
    if profile.game != "paigow":
        out(f"profile error: {profile_path} is a {profile.game} table, not pai gow")
        return 1
    with tempfile.TemporaryDirectory(prefix="paigow-sim-") as tmp:
        try:
            app = Application(profile, state_dir or tmp, console_port="none")
        except JournalError as exc:
            out(f"journal error: {exc}")
            return 1
        for note in app.start():
            out(f"recovery: {note}")
        loop = threading.Thread(target=app.run, name="table-loop", daemon=True)
        loop.start()
        code = 0
        try:
            for line in run_script(app, rounds):
                out(line)
        except ScriptError as exc:
            out(f"script stopped: {exc}")
            code = 1
        finally:
            app.post(Shutdown("simulation finished"))
            loop.join(timeout=10.0)
            app.close()
        return code


if __name__ == "__main__":
    raise SystemExit(main())
