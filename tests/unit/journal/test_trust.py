"""The journal's trust machinery on the real Application: counted summary rows, start-up refusals,
the background scrub and its verdict, selftest without a walk, retention into signed archive
segments, and a revision-1 journal set aside (docs/journal.md)."""

from __future__ import annotations

import gzip
import hashlib
import hmac
import json
import sqlite3
import time
from pathlib import Path

import pytest

from controller.app import Application
from controller.cli import main
from controller.config.profile import load_profile
from controller.events import ConsoleRejected
from controller.journal.archive import NS_PER_DAY, verify_archive
from controller.journal.chain import GENESIS
from controller.journal.heads import load_public_key
from controller.journal.scrub import walk_slowly
from controller.journal.store import Journal
from controller.journal.summary import Summaries
from controller.journal.trust import StartRefused
from controller.journal.verify import check_chain, verify_journal

REPO = Path(__file__).resolve().parents[3]
PROFILE = REPO / "hw_profiles" / "sim-paigow.toml"


def _app(state: Path) -> Application:
    return Application(load_profile(PROFILE), state, console_port="none")


def _say(app: Application, text: str) -> list[str]:
    """A console line; a reply that comes later (a login checked on a worker) waited for."""
    lines = app.console_execute(text, "serial")
    deferred = app._console().take_deferred()
    if deferred is None:
        return lines
    deadline = time.monotonic() + 30
    while not deferred.ready():
        assert time.monotonic() < deadline, f"no reply to {text.split()[0]!r}"
        time.sleep(0.01)
    rendered: list[str] = deferred.render()
    return rendered


def _supervisor(app: Application) -> None:
    """Log the console in as the supervisor: a journal finding is hers to acknowledge (a
    technician's `fault clear` is refused while one stands)."""
    assert _say(app, "passwd 24681357")[-1] == "OK"
    refused = _say(app, "fault clear")[-1]
    assert refused.startswith("ERR AUTH ") and "supervisor" in refused, refused
    assert _say(app, "passwd supervisor 97531864")[-1] == "OK"
    assert _say(app, "login 97531864")[-1] == "OK"


def _pub(state: Path) -> bytes:
    j = Journal(state / "journal.sqlite", readonly=True)
    try:
        return str(j.meta("public_key")).encode()
    finally:
        j.close()


# -- counted summary rows ------------------------------------------------------------------------


def test_repeats_are_counted_into_one_row_per_interval(tmp_path: Path) -> None:
    now = [100.0]
    j = Journal(tmp_path / "j.sqlite")
    s = Summaries(j, interval_s=60, clock=lambda: now[0])
    assert s.note("console.refused", "k", {"reason": "login needed"})  # journaled at once
    for _ in range(499):
        assert not s.note("console.refused", "k", {"reason": "login needed"})
    assert j.last_seq == 1 and s.pending() == 499
    now[0] += 30
    assert s.flush() == 0  # the interval has not ended
    now[0] += 31
    assert s.flush() == 1
    rows = list(j.events())
    assert [r.data["count"] for r in rows] == [1, 499] and rows[1].data["folded"]
    assert s.note("console.refused", "k", {"reason": "login needed"})  # a new interval
    assert s.flush(force=True) == 0 and j.last_seq == 3


def test_a_console_flood_is_a_few_counted_rows_not_a_row_per_line(tmp_path: Path) -> None:
    app = _app(tmp_path)
    try:
        before = app.journal.last_seq
        for _ in range(300):
            app.dispatch(ConsoleRejected("line longer than 200 bytes", "serial"))
        for _ in range(100):
            app.console_execute("config set recall_depth 30", "serial")  # no login
        app.summaries.flush(force=True)
        rows = list(app.journal.events(since_seq=before))
        rejected = [r for r in rows if r.kind == "console.rejected"]
        refused = [r for r in rows if r.kind == "console.refused"]
        assert len(rows) <= 4
        assert sum(r.data["count"] for r in rejected) == 300
        assert sum(r.data["count"] for r in refused) == 100
    finally:
        app.close()


# -- refusals at start -------------------------------------------------------------------------


def test_another_key_or_another_table_refuses_the_start(tmp_path: Path) -> None:
    app = _app(tmp_path / "a")
    app.close()
    other = _app(tmp_path / "b")
    other.close()
    (tmp_path / "a" / "journal-key.pem").unlink()
    (tmp_path / "a" / "journal-key.pem").write_bytes(
        (tmp_path / "b" / "journal-key.pem").read_bytes()
    )
    with pytest.raises(StartRefused, match="signed by key"):
        _app(tmp_path / "a")
    profile = tmp_path / "renamed.toml"
    profile.write_text(PROFILE.read_text().replace('name = "sim-paigow"', 'name = "other"'))
    with pytest.raises(StartRefused, match="belongs to table 'sim-paigow'"):
        Application(load_profile(profile), tmp_path / "b", console_port="none")


# -- the scrub -----------------------------------------------------------------------------------


def test_the_scrub_walks_in_slices_and_names_an_edit(tmp_path: Path) -> None:
    import threading

    app = _app(tmp_path)
    for i in range(700):
        app.journal.append("test.row", {"i": i})
    app.close()
    pem = _pub(tmp_path)
    j = Journal(tmp_path / "journal.sqlite", readonly=True)
    progress: list[tuple[int, int]] = []
    good = walk_slowly(
        j,
        pem,
        tmp_path / "journal.anchor",
        share=0.9,
        stop=threading.Event(),
        progress=lambda d, t: progress.append((d, t)),
    )
    j.close()
    assert good.ok, good.problems
    assert len(progress) >= 3 and progress[-1][0] == good.rows  # slices
    raw = sqlite3.connect(tmp_path / "journal.sqlite", isolation_level=None)
    raw.execute("DROP TRIGGER rows_no_update")
    raw.execute("UPDATE rows SET data = '{\"i\":-1}' WHERE seq = 300")
    raw.close()
    j = Journal(tmp_path / "journal.sqlite", readonly=True)
    bad = walk_slowly(j, pem, tmp_path / "journal.anchor", share=0.9, stop=threading.Event())
    j.close()
    assert not bad.ok and bad.first_bad_seq == 300 and "edited" in (bad.problem or "")


def test_a_scrub_finding_is_a_fault_until_acknowledged_then_never_again(tmp_path: Path) -> None:
    app = _app(tmp_path)
    try:
        from controller.journal.verify import VerifyResult

        found = VerifyResult()
        found.fail("row 7 (x) does not match its hash (edited)", 7)
        app.trust._scrubbed(found)
        assert any("journal verification failed" in f for f in app.app_faults)
        row = app.journal.last(["journal.scrubbed"])
        assert row is not None and row.data["ok"] is False
        _supervisor(app)
        lines = app.console_execute("fault clear", "serial")
        assert lines[-1] == "OK" and any("acknowledged" in x for x in lines), lines
        assert not app.app_faults
        app.trust._scrubbed(found)  # the same problem again: acknowledged, no fault
        assert not app.app_faults
    finally:
        app.close()


def test_an_unacknowledged_finding_is_raised_again_at_every_start_until_acknowledged(
    tmp_path: Path,
) -> None:
    """A finding journaled and never acknowledged stands across restarts (the same fault), and
    while it stands no head is signed or anchored; `fault clear` ends it for good."""
    from controller.journal.verify import VerifyResult

    app = _app(tmp_path)
    try:
        app.start()
        assert app.trust.notary.wait_idle(10)
        found = VerifyResult(rows_lost=3)
        found.fail("row 7 (x) does not match its hash (edited)", 7)
        app.trust._scrubbed(found)
        fault = next(f for f in app.app_faults if "journal verification failed" in f)
        anchor = (tmp_path / "journal.anchor").read_bytes()
        heads = app.trust.newest_signed()  # the start's head, before the finding
        for i in range(5):
            app.journal.append("test.row", {"i": i})
            app.journal.want_head("boundary")
    finally:
        app.close()
    assert (tmp_path / "journal.anchor").read_bytes() == anchor  # nothing anchored
    app = _app(tmp_path)
    try:
        assert fault in app.app_faults, app.app_faults
        assert app.trust.rows_lost() == 3
        assert app.journal.newest_head() == heads  # nothing signed
        _supervisor(app)
        lines = app.console_execute("fault clear", "serial")
        assert lines[-1] == "OK", lines
        ack = app.journal.last(["journal.acknowledged"])
        assert ack is not None and ack.data["found"][0]["problems"] == found.problems
    finally:
        app.close()
    app = _app(tmp_path)
    try:
        assert not app.app_faults, app.app_faults
    finally:
        app.close()


def test_selftest_reports_the_journal_without_walking_it(tmp_path: Path) -> None:
    app = _app(tmp_path)
    try:
        app.console_execute("passwd 24681357", "serial")
        walked: list[int] = []
        import controller.journal.verify as verify_module

        real = verify_module.Walker.step

        def spy(self: object, limit: int = 0) -> bool:
            walked.append(limit)
            return real(self, limit) if limit else real(self)  # type: ignore[arg-type]

        verify_module.Walker.step = spy  # type: ignore[method-assign]
        try:
            lines = app.console_execute("selftest", "serial")
        finally:
            verify_module.Walker.step = real  # type: ignore[method-assign]
        assert lines[-1] == "OK", lines
        text = "\n".join(lines)
        assert "journal: start-up check journal verified" in text and "scrub" in text
        assert walked == []
    finally:
        app.close()


# -- retention -----------------------------------------------------------------------------------


def test_old_rows_move_to_a_signed_segment_and_the_live_journal_stands_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = _app(tmp_path)
    try:
        app.console_execute("passwd 24681357", "serial")
        app.console_execute("login 24681357", "serial")
        assert app.console_execute("config set recall_depth 30", "serial")[-1] == "OK"
        old_rows = app.journal.last_seq
        # the clock moves a hundred days on: every row so far is older than retain_days
        real = app.journal._wall_ns
        app.journal._wall_ns = lambda: real() + 100 * NS_PER_DAY  # type: ignore[method-assign]
        for name in ("shuffled", "no_more_bets"):
            from drivers.buttons import ButtonPressed

            app.dispatch(ButtonPressed(name, 0))
        app.trust.notary.start()
        maint = Journal(tmp_path / "journal.sqlite", autocheckpoint=False)
        import threading

        def loop_runs_what_is_posted() -> None:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and not done.is_set():
                try:
                    event = app.queue.get(timeout=0.05)
                except Exception:  # noqa: BLE001 - queue.Empty
                    continue
                app.dispatch(event)

        done = threading.Event()
        loop = threading.Thread(target=loop_runs_what_is_posted)
        loop.start()
        import controller.journal.trust as trust_module

        real_now = time.time_ns
        trust_module.time.time_ns = lambda: real_now() + 100 * NS_PER_DAY  # type: ignore[attr-defined]
        try:
            app.trust._archive(maint)
        finally:
            trust_module.time.time_ns = real_now  # type: ignore[attr-defined]
            done.set()
            loop.join(10)
            maint.close()
        archived = app.journal.last(["journal.archived"])
        assert archived is not None
        first, last = archived.data["first_seq"], archived.data["last_seq"]
        assert first == 1 and last >= old_rows - 1
        assert app.journal.first_seq() == last + 1
        carried = [r for r in app.journal.events(since_seq=last) if "carried_from" in r.data]
        assert {r.kind for r in carried} >= {"config.changed", "console.pin_set"}
        assert app.config.current().recall_depth == 30
    finally:
        app.close()
    pem = _pub(tmp_path)
    segment = tmp_path / "archive" / archived.data["file"]
    result = verify_archive(segment, pem)
    assert result.ok and result.rows == last - first + 1, result.problems
    assert hashlib.sha256(segment.read_bytes()).hexdigest() == archived.data["sha256"]
    (tmp_path / "table.pub").write_bytes(pem)
    assert (
        main(
            [
                "journal",
                "verify",
                "--archive",
                str(segment),
                "--pubkey",
                str(tmp_path / "table.pub"),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "journal",
                "verify",
                "--state-dir",
                str(tmp_path),
                "--pubkey",
                str(tmp_path / "table.pub"),
            ]
        )
        == 0
    )
    # the live journal alone: restarted, it still has the PIN and the setting
    again = _app(tmp_path)
    try:
        assert again.config.current().recall_depth == 30
        assert again.console_execute("login 24681357", "serial")[-1] == "OK"
        assert again.last_verify.ok
    finally:
        again.close()
    # an edited segment fails
    lines = gzip.decompress(segment.read_bytes()).decode().splitlines()
    lines[2] = lines[2].replace('"seq":2', '"seq":2,"x":1').replace('"kind":"', '"kind":"x')
    forged = tmp_path / "forged.jsonl.gz"
    forged.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    assert not verify_archive(forged, pem).ok
    capsys.readouterr()


# -- a revision-1 journal ------------------------------------------------------------------------


def _revision1(state: Path, rows: int) -> str:
    """A revision-1 journal as revision 1 wrote it (HMAC chain under device.key)."""
    state.mkdir(parents=True, exist_ok=True)
    key = bytes(range(32))
    (state / "device.key").write_bytes(key)
    db = sqlite3.connect(state / "journal.sqlite")
    db.executescript("""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE events (seq INTEGER PRIMARY KEY, wall_ns INTEGER NOT NULL,
            mono_ns INTEGER NOT NULL, boot_id TEXT NOT NULL, round_id INTEGER,
            kind TEXT NOT NULL, data TEXT NOT NULL, mac TEXT NOT NULL);""")
    prev = b"\x00" * 32
    mac = ""
    for seq in range(1, rows + 1):
        text = json.dumps({"i": seq}, sort_keys=True, separators=(",", ":"))
        body = "\x1f".join([str(seq), "1", "2", "boot", "", "old.row", text]).encode()
        mac = hmac.new(key, prev + body, hashlib.sha256).hexdigest()
        db.execute(
            "INSERT INTO events VALUES (?, 1, 2, 'boot', NULL, 'old.row', ?, ?)", (seq, text, mac)
        )
        prev = bytes.fromhex(mac)
    db.commit()
    db.close()
    return mac


def test_a_revision1_journal_is_set_aside_and_the_new_one_names_its_head(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    head = _revision1(tmp_path, 5)
    app = _app(tmp_path)
    try:
        first = app.journal.row(1)
        assert first is not None and first.kind == "journal.migrated"
        assert first.data["previous_head"] == head and first.data["previous_verified"]
        assert first.prev == head != GENESIS  # the new chain follows the old head
        assert check_chain(app.journal).ok
    finally:
        app.close()
    aside = [p for p in tmp_path.glob("journal-rev1-*.sqlite")]
    assert len(aside) == 1
    assert (
        main(["journal", "verify", "--rev1", str(aside[0]), "--key", str(tmp_path / "device.key")])
        == 0
    )
    assert "revision-1 journal verified: 5 rows" in capsys.readouterr().out
    j = Journal(tmp_path / "journal.sqlite", readonly=True)
    try:
        pem = str(j.meta("public_key")).encode()
        from controller.journal.anchor import read_anchor

        assert verify_journal(j, pem, read_anchor(tmp_path / "journal.anchor")).ok
        assert load_public_key(pem)
    finally:
        j.close()
