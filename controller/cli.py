"""``table-controller``: run a table, check a profile, inspect the journal.

Exit codes: 0 success, 1 a check failed (bad profile, broken journal), 2 usage error, 141 the
reader of the output went away (``| head``): the command stops quietly, as a program the shell
sees killed by SIGPIPE does (128 + 13), so a pipeline under ``set -o pipefail`` still shows that
the output was cut short.
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
    from controller.config.profile import Profile
    from controller.console.transport import ConsoleTransport
    from controller.journal.store import Journal
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


def _at_least_two(text: str) -> int:
    """A capture's size: a whole number of 2 or more (the tests need pairs)."""
    value = _at_least_one(text)
    if value < 2:
        raise argparse.ArgumentTypeError(f"must be 2 or more, got {value}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="table-controller", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run the table controller")
    run.add_argument("--profile", required=True, help="hardware profile (TOML)")
    run.add_argument(
        "--state-dir",
        default="/var/lib/table-controller",
        help="where the journal, its anchor and its signing key live",
    )
    run.add_argument(
        "--console", default=None, help="'stdio', 'none', or a serial port (default: the profile's)"
    )
    run.add_argument("--log-level", default="WARNING")

    check = sub.add_parser("check-profile", help="validate a profile and print what it resolves to")
    check.add_argument("file")

    journal = sub.add_parser(
        "journal",
        help="inspect and verify a journal offline (no secret is read)",
        description="verify: the chain, every signed head and the anchor, with the public key"
        " alone (or an archive segment with --archive, or a revision-1 journal with"
        " --rev1 and its old key); pubkey: print the table's public key (PEM);"
        " keygen: create the signing key of a new table (commissioning); head: the"
        " chain's head and the newest signed head; export: JSON lines.",
    )
    journal.add_argument("action", choices=["verify", "pubkey", "keygen", "head", "export"])
    journal.add_argument("--state-dir", default="/var/lib/table-controller")
    journal.add_argument("--db", default="journal.sqlite")
    journal.add_argument(
        "--pubkey",
        default=None,
        metavar="FILE",
        help="the table's public key (PEM), as printed at commissioning",
    )
    journal.add_argument(
        "--anchor",
        default=None,
        metavar="FILE",
        help="the anchor file (default: journal.anchor in the state dir)",
    )
    journal.add_argument(
        "--archive",
        default=None,
        metavar="FILE",
        help="verify: an archive segment instead of the live journal",
    )
    journal.add_argument(
        "--rev1",
        default=None,
        metavar="FILE",
        help="verify: a revision-1 journal set aside, with --key",
    )
    journal.add_argument(
        "--key", default=None, metavar="FILE", help="--rev1: the revision-1 HMAC key (device.key)"
    )
    journal.add_argument(
        "--profile",
        default=None,
        help="pubkey/keygen: ask the profile's signer (file or pkcs11 token)",
    )
    journal.add_argument(
        "--expect-head",
        default=None,
        metavar="SEQ:HASH",
        help="verify: also prove the row a head printed earlier is unchanged",
    )
    journal.add_argument(
        "--rounds", type=int, default=0, help="export: only the last N rounds (0: every row)"
    )
    # -- simulate: the scripted pai gow dealer (controller/tables/paigow/script.py) --
    simulate = sub.add_parser("simulate", help="deal N scripted pai gow rounds on a profile")
    simulate.add_argument("--profile", required=True, help="hardware profile (TOML), sim-*")
    simulate.add_argument(
        "--rounds", type=_at_least_one, default=10, help="how many rounds to deal (1 or more)"
    )
    simulate.add_argument(
        "--state-dir", default=None, help="journal directory (default: a fresh temporary one)"
    )
    # -- end simulate --

    # -- the host feed's collector (controller/feed/, docs/feed.md): runs off the table --
    collect = sub.add_parser("collect", help="subscribe to a site's feed, verify and store it")
    collect.add_argument(
        "--broker",
        required=True,
        metavar="URL",
        help="mqtts://host:port (mqtt:// for a development broker)",
    )
    collect.add_argument("--site", required=True, help="the site id in the topics")
    collect.add_argument(
        "--store",
        default="sqlite:///collector.sqlite",
        metavar="URL",
        help="sqlite:///PATH (default sqlite:///collector.sqlite) or"
        " postgresql://user@host:port/db (the password from PGPASSFILE, ~/.pgpass,"
        " a PGSERVICEFILE entry or PGPASSWORD, never on the command line)",
    )
    collect.add_argument(
        "--keys", required=True, metavar="DIR", help="the tables' public keys, <table id>.pem each"
    )
    collect.add_argument("--ca", default=None, help="the broker's CA (PEM)")
    collect.add_argument("--cert", default=None, help="the collector's client certificate")
    collect.add_argument("--key", default=None, help="the collector's client key")
    collect.add_argument(
        "--client-id",
        default=None,
        help="MQTT client id, fixed so the broker keeps the session (default tc-collector-SITE);"
        " several collectors on one PostgreSQL store each need their own",
    )
    collect.add_argument(
        "--gap-timeout",
        type=float,
        default=60.0,
        metavar="S",
        help="seconds missing rows may take to arrive before a gap alarm",
    )
    collect.add_argument(
        "--silence",
        type=float,
        default=900.0,
        metavar="S",
        help="seconds without a verified row, signed head or online status"
        " from a table before a silent alarm",
    )
    collect.add_argument(
        "--syslog",
        default=None,
        metavar="ADDRESS",
        help="also send every alarm as RFC 5424 syslog (facility local0) to udp://HOST:PORT,"
        " HOST:PORT or a local socket such as /dev/log",
    )
    collect.add_argument("--log-level", default="WARNING")
    from controller.floor.host import add_parser as _host_parser

    _host_parser(sub)
    floor = sub.add_parser("floor", help="one line per table from a collector's store")
    floor.add_argument(
        "--store",
        default="sqlite:///collector.sqlite",
        metavar="URL",
        help="as collect's --store (the password from PGPASSFILE, ~/.pgpass, a service file"
        " or PGPASSWORD)",
    )
    floor.add_argument("--site", default=None)
    floor.add_argument(
        "--alarms", type=int, default=5, metavar="N", help="also list the newest N alarms (0: none)"
    )
    floor.add_argument(
        "--ack",
        default=None,
        metavar="TABLE",
        help="acknowledge that the forked TABLE was investigated (with --by and --note)",
    )
    floor.add_argument("--by", default=None, metavar="NAME", help="who investigated (--ack)")
    floor.add_argument("--note", default=None, metavar="TEXT", help="what was found (--ack)")
    floor.add_argument(
        "--serve",
        default=None,
        metavar="ADDRESS",
        help="serve the live floor page on HOST:PORT (plain HTTP: put a reverse proxy's TLS in"
        " front of it) until stopped",
    )
    floor.add_argument(
        "--users",
        default=None,
        metavar="FILE",
        help="the floor page's user list (scrypt hashes): who may sign in and acknowledge;"
        " without it the page is read-only",
    )
    floor.add_argument(
        "--add-user",
        default=None,
        metavar="NAME",
        help="add NAME to --users FILE (or set a new password): asks for the password",
    )
    # -- end collector --
    meters = sub.add_parser(
        "meters",
        help="the table's meters, lifetime and this shift, counted from a state directory's"
        " journal and archive (read-only; docs/meters.md)",
    )
    meters.add_argument("--state-dir", required=True, metavar="DIR")
    meters.add_argument("--db", default="journal.sqlite", help="the journal, relative to DIR")
    meters.add_argument(
        "--archive-dir", default="archive", help="archive segments, relative to DIR"
    )
    meters.add_argument("--json", action="store_true", help="one JSON object (the feed's message)")
    meters.add_argument(
        "--chi",
        action="store_true",
        help="also the numbers' chi-square (the RNG's against uniform, the dice's against"
        " three fair dice)",
    )

    # -- the lab package (controller/lab/, docs/lab.md) --
    from controller.lab import DEFAULT_DRAWS, DEFAULT_RAW_BYTES

    lab = sub.add_parser(
        "lab",
        help="the lab package: make one for a test lab, or check one (docs/lab.md)",
        description="package: write one signed directory (and a .tar.gz) with the RNG's raw and"
        " final captures, the replay script, the statistics, the program's identity, the"
        " settings, the journal (with --state-dir) and the test suite's summary. verify: check"
        " one offline.",
    )
    lab_sub = lab.add_subparsers(dest="lab_action", required=True)
    lab_package = lab_sub.add_parser("package", help="write a lab package to OUT and OUT.tar.gz")
    lab_package.add_argument("out", metavar="OUT", help="the package's directory (must not exist)")
    lab_package.add_argument("--profile", required=True, help="the table's profile (TOML)")
    lab_package.add_argument(
        "--state-dir",
        default=None,
        metavar="DIR",
        help="the table's state directory, read only (stopped or live): recall, the signed"
        " journal export, the public key; and where the journal's file key is",
    )
    lab_package.add_argument(
        "--draws",
        type=_at_least_two,
        default=DEFAULT_DRAWS,
        metavar="N",
        help=f"final outcomes per range (default {DEFAULT_DRAWS:,})",
    )
    lab_package.add_argument(
        "--raw-bytes",
        type=_at_least_two,
        default=DEFAULT_RAW_BYTES,
        metavar="M",
        help=f"raw bytes before scaling (default {DEFAULT_RAW_BYTES:,})",
    )
    lab_package.add_argument(
        "--seed", default=None, metavar="S", help="the lab's seed for the program's HMAC (hex)"
    )
    lab_package.add_argument(
        "--key",
        default=None,
        metavar="KEY",
        help="seal with this lab key (PEM, P-256) instead of the table's journal key",
    )
    lab_verify = lab_sub.add_parser("verify", help="check a lab package offline")
    lab_verify.add_argument("out", metavar="OUT", help="the package's directory or .tar.gz")
    lab_verify.add_argument(
        "--pubkey",
        default=None,
        metavar="FILE",
        help="the key the package must be sealed with (the table's, from commissioning)",
    )
    # -- end lab --

    manifest = sub.add_parser(
        "manifest", add_help=False, help="program manifest: build | check | hmac (see --help)"
    )
    manifest.add_argument("rest", nargs=argparse.REMAINDER)
    return parser


#: Exit code when stdout is a pipe whose reader has gone (128 + SIGPIPE, as a shell reports).
EXIT_PIPE_CLOSED = 141


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``table-controller`` command. A closed stdout (``| head -1``) ends any
    command quietly with :data:`EXIT_PIPE_CLOSED`, never a traceback: stdout is pointed at
    /dev/null so the interpreter's last flush has nowhere to fail (the Python documentation's
    note on SIGPIPE)."""
    try:
        code = _main(argv)
        sys.stdout.flush()  # inside the try: a pipe closed before the last buffered line
        return code
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_PIPE_CLOSED


def _main(argv: Sequence[str] | None) -> int:
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
    if args.command == "host":
        from controller.floor.host import run as _host_run

        return _host_run(args)
    if args.command == "meters":
        return _meters(args)
    if args.command == "simulate":
        return simulate(args.profile, args.rounds, args.state_dir)
    if args.command == "lab":
        return _lab(args)
    return _run(args)


def _lab(args: argparse.Namespace) -> int:
    """``table-controller lab package|verify`` (controller/lab/command.py, docs/lab.md)."""
    from controller.lab import command

    if args.lab_action == "verify":
        return command.verify(args.out, args.pubkey)
    return command.package(
        args.out,
        args.profile,
        state_dir=args.state_dir,
        draws=args.draws,
        raw_bytes=args.raw_bytes,
        seed_hex=args.seed,
        key=args.key,
        made_by=" ".join(
            [
                f"table-controller lab package {args.out} --profile {args.profile}",
                *([f"--state-dir {args.state_dir}"] if args.state_dir else []),
                f"--draws {args.draws} --raw-bytes {args.raw_bytes}",
                *([f"--seed {args.seed}"] if args.seed else []),
                *([f"--key {args.key}"] if args.key else []),
            ]
        ),
    )


def _check_profile(path: str) -> int:
    from controller.config.profile import ProfileError, check_profile_report

    try:
        print(check_profile_report(path))
    except ProfileError as exc:
        for error in exc.errors:  # every error of the profile, in one run: a line each
            print(f"profile error: {error}", file=sys.stderr)
        return 1
    # the monitor's texts against its font (controller/scoreboard: not the profile's to know)
    from controller.config.profile import load_profile
    from controller.scoreboard.labels import text_warnings

    for warning in text_warnings(load_profile(path).scoreboard):
        print(f"WARNING {warning}")
    return 0


def _journal(args: argparse.Namespace) -> int:
    """``table-controller journal ...`` (docs/journal.md "Verifying"). ``verify`` and ``head``
    read no secret: the public key comes from ``--pubkey`` (or, said plainly, from the
    journal itself)."""
    state = Path(args.state_dir)
    if args.action == "verify" and args.archive:
        return _verify_archive(Path(args.archive), _public_key(args, None))
    if args.action == "verify" and args.rev1:
        return _verify_rev1(Path(args.rev1), args.key)
    if args.action in ("pubkey", "keygen"):
        return _pubkey(args, state, create=args.action == "keygen")
    from controller.journal.store import Journal, JournalError

    db = Path(args.db) if Path(args.db).is_absolute() else state / args.db
    if not db.exists():
        print(f"no journal at {db}", file=sys.stderr)
        return 1
    try:
        journal = Journal(db, readonly=True)
    except JournalError as exc:
        print(f"journal error: {exc}", file=sys.stderr)
        return 1
    try:
        if args.action == "head":
            seq, digest = journal.head()
            print(f"{seq}:{digest}")
            signed = journal.newest_head()
            if signed is not None:
                print(signed.line())
            return 0
        if args.action == "verify":
            return _verify_live(args, state, journal)
        from controller.journal.recall import export_jsonl

        for line in export_jsonl(journal, rounds=args.rounds):
            print(line)  # a reader gone (`| head`) ends the command in main()
        return 0
    finally:
        journal.close()


def _meters(args: argparse.Namespace) -> int:
    """``table-controller meters --state-dir DIR [--json]``: the journal opened read-only, so
    it runs on a stopped table's directory (or a copy) and changes nothing."""
    import json

    from controller.floor.meters import chi_sources, chi_square, fold_journal
    from controller.journal.store import Journal, JournalError

    state = Path(args.state_dir)
    db = Path(args.db) if Path(args.db).is_absolute() else state / args.db
    if not db.exists():
        print(f"no journal at {db}", file=sys.stderr)
        return 1
    archive = Path(args.archive_dir)
    try:
        journal = Journal(db, readonly=True)
    except JournalError as exc:
        print(f"journal error: {exc}", file=sys.stderr)
        return 1
    try:
        fold = fold_journal(journal.events(), archive if archive.is_absolute() else state / archive)
    except (JournalError, OSError, ValueError) as exc:
        print(f"meters: {exc}", file=sys.stderr)
        return 1
    finally:
        journal.close()
    if args.json:
        print(json.dumps(fold.as_dict(), sort_keys=True))
        return 0
    for line in fold.lines():
        print(line)
    if args.chi:
        for source, what in chi_sources(fold):
            for line in chi_square(fold, source).lines(what):
                print(line)
    return 0


def _collect(args: argparse.Namespace) -> int:
    """``table-controller collect``: runs until SIGTERM or SIGINT (exit 0); 1 when it cannot
    start (a bad broker URL, a store it cannot open, no keys directory)."""
    import threading

    logging.basicConfig(
        level=getattr(logging, str(args.log_level).upper(), logging.WARNING),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    from controller.feed.alarms import SyslogError
    from controller.feed.broker import BrokerError, parse_broker_url
    from controller.feed.collect import Collector, CollectorSettings
    from controller.feed.messages import is_token
    from controller.feed.store import StoreError, password_warning

    warning = password_warning(args.store)
    if warning:
        print(f"collect: warning: {warning}", file=sys.stderr)
    if not is_token(args.site):
        print(f"collect: site {args.site!r} is not a topic-safe id", file=sys.stderr)
        return 1
    try:
        broker = parse_broker_url(args.broker, ca=args.ca, cert=args.cert, key=args.key)
        settings = CollectorSettings(
            broker=broker,
            site=args.site,
            store_url=args.store,
            keys_dir=Path(args.keys),
            client_id=args.client_id or f"tc-collector-{args.site}",
            gap_timeout_s=args.gap_timeout,
            silence_s=args.silence,
            syslog=args.syslog,
        )
        collector = Collector(settings, out=lambda line: print(line, flush=True))
    except (BrokerError, StoreError, SyslogError, OSError) as exc:
        print(f"collect: {exc}", file=sys.stderr)
        return 1
    stop = threading.Event()

    def _on_signal(_signum: int, _frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    return collector.run(stop)


def _floor(args: argparse.Namespace) -> int:
    from controller.feed.floor import AckError, acknowledge, floor_lines
    from controller.feed.store import Store, StoreError, password_warning

    warning = password_warning(args.store)
    if warning:
        print(f"floor: warning: {warning}", file=sys.stderr)
    if args.add_user is not None:
        return _floor_add_user(args)
    if args.serve is not None:
        return _floor_serve(args)
    try:
        store = Store.open(args.store)
    except StoreError as exc:
        print(f"floor: {exc}", file=sys.stderr)
        return 1
    try:
        if args.ack is not None:
            try:
                ack = acknowledge(store, args.ack, args.by or "", args.note or "", site=args.site)
            except AckError as exc:
                print(f"floor: {exc}", file=sys.stderr)
                return 1
            print(f"{ack.site}/{ack.table}: divergence acknowledged by {ack.by}: {ack.note}")
            return 0
        for line in floor_lines(store, site=args.site, last_alarms=args.alarms):
            print(line)
    except StoreError as exc:
        print(f"floor: {exc}", file=sys.stderr)
        return 1
    finally:
        store.close()
    return 0


def _floor_add_user(args: argparse.Namespace) -> int:
    """``floor --add-user NAME --users FILE``: the password asked twice on the terminal (read
    from standard input, one line, when that is not a terminal)."""
    import getpass

    from controller.feed.floorauth import UserError, add_user, check_name, check_new_password

    if args.users is None:
        print("floor: --add-user needs --users FILE (the page's user list)", file=sys.stderr)
        return 2
    try:
        check_name(args.add_user)
        if sys.stdin.isatty():
            password = getpass.getpass(f"password for {args.add_user}: ")
            check_new_password(password)
            if getpass.getpass("the same again: ") != password:
                print("floor: the two passwords differ: nothing changed", file=sys.stderr)
                return 1
        else:
            password = sys.stdin.readline().rstrip("\n")
        new = add_user(Path(args.users), args.add_user, password)
    except UserError as exc:
        print(f"floor: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"floor: cannot write {args.users}: {exc}", file=sys.stderr)
        return 1
    print(f"{args.add_user}: {'added to' if new else 'new password in'} {args.users}")
    return 0


def _floor_serve(args: argparse.Namespace) -> int:
    """``floor --serve ADDRESS``: the live floor page until SIGTERM or SIGINT."""
    import threading

    from controller.feed.floorauth import UserError, load_users
    from controller.feed.floorpage import FloorPage, parse_address

    try:
        address = parse_address(args.serve)
    except ValueError as exc:
        print(f"floor: --serve {exc}", file=sys.stderr)
        return 2
    users = Path(args.users) if args.users else None
    if users is not None:
        try:
            known = len(load_users(users))
        except UserError as exc:
            print(f"floor: {exc}", file=sys.stderr)
            return 1
        if not known:
            print(f"floor: warning: {users} lists nobody: add one with --add-user", file=sys.stderr)
    try:
        page = FloorPage(args.store, address, users, site=args.site)
    except OSError as exc:
        print(f"floor: cannot listen on {args.serve}: {exc}", file=sys.stderr)
        return 1
    stop = threading.Event()

    def _on_signal(_signum: int, _frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    page.start()
    who = f"sign-in from {users}" if users else "read-only (no --users)"
    print(f"floor page on {page.url} ({who}); TLS is the reverse proxy's", flush=True)
    try:
        while not stop.wait(1.0):
            pass
    finally:
        page.close()
    return 0


def _public_key(args: argparse.Namespace, journal: Journal | None) -> bytes | None:
    """The public key of ``--pubkey``; without it, the one the journal stores (with a warning:
    whoever rewrote the journal could have replaced that too)."""
    if args.pubkey:
        from controller.journal.heads import load_public_key

        try:
            pem = Path(args.pubkey).read_bytes()
            load_public_key(pem)
        except OSError as exc:
            print(f"cannot read the public key: {exc}", file=sys.stderr)
            return None
        except ValueError as exc:
            print(
                f"{args.pubkey} is not the table's public key ({exc}): give the public key"
                " `journal pubkey` printed at commissioning, not the private key or another"
                " file",
                file=sys.stderr,
            )
            return None
        return pem
    stored = journal.meta("public_key") if journal is not None else None
    if stored is None:
        print("give the table's public key: --pubkey FILE", file=sys.stderr)
        return None
    print(
        "warning: no --pubkey: checking with the key stored in the journal itself, which"
        " proves nothing against whoever could rewrite the journal",
        file=sys.stderr,
    )
    return str(stored).encode("ascii")


def _verify_live(args: argparse.Namespace, state: Path, journal: object) -> int:
    from controller.journal.anchor import read_anchor
    from controller.journal.store import Journal
    from controller.journal.verify import (
        HeadSyntaxError,
        check_expected_head,
        parse_head,
        verify_journal,
    )

    assert isinstance(journal, Journal)
    pem = _public_key(args, journal)
    if pem is None:
        return 1
    anchor_path = Path(args.anchor) if args.anchor else state / "journal.anchor"
    result = verify_journal(journal, pem, read_anchor(anchor_path))
    signer = str(journal.meta("signer") or "")
    key_note = None
    if signer.startswith("file:"):  # looked for, never opened: it is the one secret
        key = Path(signer[5:]) if Path(signer[5:]).is_absolute() else state / signer[5:]
        if not key.exists() and args.pubkey:
            # an auditor's copy holds no secret: the public key given is all the check needs
            key_note = (
                f"note: no signing key at {key} (none is needed to verify with"
                " --pubkey; the table itself refuses to start without it,"
                ' docs/journal.md "A lost key")'
            )
        elif not key.exists():
            result.fail(
                f"the signing key {key} is missing: the table refuses to start and"
                ' will not make a new one (docs/journal.md "A lost key")'
            )
    if args.expect_head:
        try:
            seq, digest = parse_head(args.expect_head)
        except HeadSyntaxError as exc:
            print(f"--expect-head: {exc}", file=sys.stderr)
            return 2
        row = journal.row(seq)
        check_expected_head(result, seq, None if row is None else row.hash, digest)
    print(result.describe())
    if result.anchor_seq is not None:
        print(f"anchor {anchor_path}: newest signed head at row {result.anchor_seq}")
    if key_note is not None:
        print(key_note)
    return 0 if result.ok else 1


def _verify_archive(path: Path, pem: bytes | None) -> int:
    from controller.journal.archive import verify_archive

    if pem is None:
        return 1
    result = verify_archive(path, pem)
    print(f"archive {path}: {result.describe()}")
    return 0 if result.ok else 1


def _verify_rev1(path: Path, key: str | None) -> int:
    from controller.journal import legacy

    if key is None:
        print("--rev1 needs the revision-1 key: --key device.key", file=sys.stderr)
        return 2
    try:
        verdict = legacy.verify_revision1(path, legacy.read_key(key))
    except (OSError, ValueError) as exc:
        print(f"revision-1 key: {exc}", file=sys.stderr)
        return 1
    print(verdict.describe())
    return 0 if verdict.ok else 1


def _pubkey(args: argparse.Namespace, state: Path, *, create: bool) -> int:
    """Print the table's public key (PEM): from the profile's signer (a file key or a token),
    else from the default key file or the journal. ``keygen`` creates the key first when
    there is none (commissioning; an existing key is never replaced)."""
    from controller.journal.signer import SignerError
    from controller.journal.trust import open_signer

    settings = None
    if args.profile:
        from controller.config.profile import ProfileError, load_profile

        try:
            settings = load_profile(args.profile).journal
        except ProfileError as exc:
            print(f"profile error: {exc}", file=sys.stderr)
            return 1
    if settings is None and (create or (state / "journal-key.pem").exists()):
        from controller.config.profile import JournalSettings

        settings = JournalSettings()
    if settings is not None:

        def state_path(name: str) -> Path:
            return Path(name) if Path(name).is_absolute() else state / name

        try:
            signer = open_signer(settings, state_path, create=create)
        except SignerError as exc:
            print(f"signer: {exc}", file=sys.stderr)
            return 1
        try:
            sys.stdout.write(signer.public_key_pem().decode("ascii"))
            print(f"key id {signer.key_id} ({signer.description})", file=sys.stderr)
        finally:
            signer.close()
        return 0
    from controller.journal.store import Journal, JournalError

    db = Path(args.db) if Path(args.db).is_absolute() else state / args.db
    try:
        journal = Journal(db, readonly=True)
    except JournalError as exc:
        print(f"no signing key or journal in {state}: {exc}", file=sys.stderr)
        return 1
    try:
        stored = journal.meta("public_key")
    finally:
        journal.close()
    if stored is None:
        print(f"no public key in {db}", file=sys.stderr)
        return 1
    sys.stdout.write(stored)
    print("(the public key stored in the journal)", file=sys.stderr)
    return 0


def _run(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=getattr(logging, str(args.log_level).upper(), logging.WARNING),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    from controller.app import Application
    from controller.config.profile import ProfileError, load_profile
    from controller.journal.store import JournalError
    from controller.journal.trust import StartRefused
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
    except StartRefused as exc:
        print(f"refusing to start: {exc}", file=sys.stderr)
        return 1
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
        app.close()  # drivers, consoles and the journal, however the start or the loop ended


def _console_clash(profile: Profile, port: str | None) -> str | None:
    """``--console PORT`` naming a device the profile gives another role (the profile's own
    ports are checked when it loads: one serial device, one role)."""
    if port is None or port in ("stdio", "none"):
        return None
    roles = {
        "shoe": profile.shoe.port if profile.shoe is not None else None,
        "display": profile.display.port if profile.display is not None else None,
        "dealer_display": (
            profile.dealer_display.port if profile.dealer_display is not None else None
        ),
    }
    for role, other in roles.items():
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
    from controller.config.profile import profile_warnings

    for warning in profile_warnings(app.profile):  # what check-profile warns about, at start too
        print(f"WARNING {warning}", file=sys.stderr)
    notes = app.start()
    board = _start_scoreboard(app)
    try:
        status = app.status()
        banner = f"table-controller ready: {game} profile {name}, state {status.get('state', '?')}"
        print(banner, file=sys.stderr)
        from controller.program.origin import boot_check

        check = boot_check()
        if check is not None and check.checked:
            print(
                f"program verified at start: {check.files} files, {check.bytes} bytes in"
                f" {check.seconds * 1000:.0f} ms, {len(check.problems)} mismatches",
                file=sys.stderr,
            )
        if board is not None:
            shown = board.url if board.bind_error is None else board.describe()
            print(f"scoreboard: {shown}", file=sys.stderr)
        print(f"tpm counter: {app.trust.counter_line()}", file=sys.stderr)
        for note in notes:
            print(f"recovery: {note}", file=sys.stderr)
        if transport is not None:
            transport.start()  # after the banner: a terminal's first prompt comes last
        app.notifier.ready(banner)
        app.run()
    finally:
        if board is not None:
            board.close()
    return 0


def _start_scoreboard(app: Application) -> ScoreboardServer | None:
    """The monitor pages (controller/scoreboard) when the profile enables them, reading the
    application's publication. A port that cannot be bound is a fault of the monitor: journaled
    (``scoreboard.error``), alarmed (``!ALARM``) and shown on ``status``, and tried again every
    few seconds until the monitor is served (journaled ``scoreboard.start``, said on every
    console); the table plays on meanwhile: the game never depends on the scoreboard."""
    settings = app.profile.scoreboard
    if not settings.enabled:
        return None
    from controller.events import Call
    from controller.scoreboard.labels import text_warnings
    from controller.scoreboard.server import BIND_RETRY_S, ScoreboardServer

    for warning in text_warnings(settings):
        print(f"WARNING {warning}", file=sys.stderr)
    table_id = app.profile.journal.table_id or app.profile.name
    board = ScoreboardServer(settings, app.publication, app.profile.game, table_id)
    where = f"{settings.address}:{settings.port}"

    def started() -> None:
        host, port = board.address
        app.journal.append(
            "scoreboard.start",
            {
                "address": host,
                "port": port,
                "url": board.url,
                "max_clients": settings.max_clients,
                "table": table_id,
            },
        )

    def failed(why: str) -> None:  # at start, before the loop and the consoles run
        app.journal.append(
            "scoreboard.error", {"address": settings.address, "port": settings.port, "error": why}
        )
        alarm = (
            f"ALARM scoreboard not served on {where}: {why}; the monitor shows nothing until"
            f" the port is free (tried again every {BIND_RETRY_S:.0f} s; the table plays on)"
        )
        app.post(Call(lambda: app.alarm(alarm)))  # said once the consoles are up

    def served_later() -> None:  # on the server's thread: the loop journals and says it
        def on_loop() -> None:
            started()
            app.alarm(f"scoreboard served on {board.url}: the monitor is back")

        app.post(Call(on_loop))

    if board.serve(failed, served_later):
        started()
    app.add_status("scoreboard", board.describe)
    return board


def _journal_refused_start(state_dir: Path, profile_path: str, error: str) -> None:
    """A refused profile is journaled when the table already has a journal (the default file
    name: the profile that would name another is the thing that failed), so a technician finds
    why the table did not start in the table's own record. Never creates a journal."""
    from controller.journal.store import Journal, JournalError

    db = state_dir / "journal.sqlite"
    if not db.exists():
        return
    try:
        journal = Journal(db)
        try:
            journal.append(
                "app.start_refused", {"profile": str(profile_path), "error": error[:500]}
            )
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
        transport = StdioTransport(
            app.post,
            line_editing=editing,
            on_eof=lambda: app.post(Shutdown("console end of input")),
        )
    else:
        transport = SerialTransport(
            app.post, port, baud=app.profile.console.baud, line_editing=editing
        )
    app.attach_console(transport)
    return transport


def simulate(
    profile_path: str, rounds: int, state_dir: str | None = None, out: Callable[[str], None] = print
) -> int:
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
    from controller.journal.trust import StartRefused
    from controller.tables.paigow.script import ScriptError, run_script

    try:
        profile = load_profile(profile_path)
    except ProfileError as exc:
        out(f"profile error: {exc}")
        return 1
    if profile.game not in ("paigow", "startpos"):
        out(f"profile error: {profile_path} is a {profile.game} table, not pai gow")
        return 1
    with tempfile.TemporaryDirectory(prefix="paigow-sim-") as tmp:
        try:
            app = Application(profile, state_dir or tmp, console_port="none")
        except (JournalError, StartRefused) as exc:
            out(f"journal error: {exc}")
            return 1
        for note in app.start():
            out(f"recovery: {note}")
        loop = threading.Thread(target=app.run, name="table-loop", daemon=True)
        loop.start()
        code = 0
        try:
            if profile.game == "startpos":
                from controller.tables.startpos.script import run_script as run_startpos

                lines = run_startpos(app, rounds)
            else:
                lines = run_script(app, rounds)
            for line in lines:
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
