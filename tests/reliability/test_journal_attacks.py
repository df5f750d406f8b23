"""The journal against an adversary and against a year of play (issue 13, "Done when"): each way
rows can vanish or be rewritten is caught at start-up (a fault that stops play) and by
``table-controller journal verify`` (non-zero), and none lets a round be drawn twice.

Each test plays a pai gow round up to the draw on the real Application (sim-paigow: the real
journal, signer, notary and anchor), waits until the anchor has the draw's signed head, takes the
state directory as a power cut would leave it (the files copied while the controller runs), does
the damage to the copy, and starts a controller on it.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.app import Application
from controller.cli import main
from controller.config.profile import load_profile
from controller.journal.chain import row_hash
from controller.journal.store import Journal
from controller.journal.trust import StartRefused
from drivers.buttons import ButtonPressed
from tests.reliability.harness import PROFILES, fast_tmpdir

FILES = ("journal.sqlite", "journal.sqlite-wal", "journal-key.pem", "journal.anchor")


@pytest.fixture
def work() -> Iterator[Path]:
    path = fast_tmpdir("journal-attacks-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def press(app: Application, name: str) -> None:
    """A dealer's button, handled as the loop handles it (one event, one transaction)."""
    app.dispatch(ButtonPressed(name, 0))


def drawn_rows(state: Path) -> list[Any]:
    j = Journal(state / "journal.sqlite", readonly=True)
    try:
        return list(j.events(kinds=["paigow.drawn"]))
    finally:
        j.close()


def checkpoint(state: Path) -> None:
    """What the background worker does every two minutes: the WAL's frames into the file."""
    db = sqlite3.connect(state / "journal.sqlite")
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()


def power_cut_after_a_draw(work: Path) -> tuple[Path, int, int]:
    """Play to the draw, wait for the anchor, copy the files as a power cut leaves them.
    Returns (the copy, the drawn round, the drawn row's seq)."""
    profile = load_profile(PROFILES / "sim-paigow.toml")
    state = work / "state"
    app = Application(profile, state, console_port="none")
    try:
        app.start()
        press(app, "shuffled")
        press(app, "no_more_bets")
        checkpoint(state)  # the round's later rows are in the WAL only
        press(app, "draw")
        assert app.table.model.state == "dealing"
        assert app.trust.notary.wait_idle(10)
        (drawn,) = drawn_rows(state)
        anchor = [json.loads(x) for x in (state / "journal.anchor").read_text().splitlines()]
        assert anchor[-1]["seq"] >= drawn.seq, "the anchor learns of the draw after its commit"
        copy = work / "copy"
        copy.mkdir()
        for name in ("journal.sqlite-wal", "journal.sqlite", "journal-key.pem", "journal.anchor"):
            if (state / name).exists():
                shutil.copyfile(state / name, copy / name)
    finally:
        app.close()
    return copy, int(drawn.round), drawn.seq


def public_key(work: Path) -> Path:
    out = work / "table.pub"
    if not out.exists():
        j = Journal(work / "state" / "journal.sqlite", readonly=True)
        try:
            out.write_text(str(j.meta("public_key")))
        finally:
            j.close()
    return out


def verify_exit(work: Path, state: Path) -> int:
    return main(["journal", "verify", "--state-dir", str(state), "--pubkey", str(public_key(work))])


def start_faulted(copy: Path, drawn_round: int) -> Application:
    """The controller on the damaged copy: a journal fault that stops play, the draw refused,
    no second draw of the round. Returns the started application (closed by the caller)."""
    profile = load_profile(PROFILES / "sim-paigow.toml")
    app = Application(profile, copy, console_port="none")
    app.start()
    faults = [f for f in app.app_faults if "journal verification failed" in f]
    assert faults, app.app_faults
    state = app.table.model.state
    if state in ("no_more_bets", "bank_style"):
        press(app, "draw")
        assert app.table.model.state == state, "a draw under the journal fault"
        refused = app.journal.last(["paigow.refused"])
        assert refused is not None and refused.data["code"] == "FAULT"
    rounds = [int(r.round) for r in drawn_rows(copy)]
    assert rounds.count(drawn_round) <= 1, f"round {drawn_round} drawn twice: {rounds}"
    assert all(r.seq <= app.journal.last_seq for r in drawn_rows(copy))
    return app


def restart_unacknowledged(work: Path, copy: Path, drawn_round: int) -> Application:
    """Start on the damaged copy, quit WITHOUT ``fault clear``, start again: the finding is
    not forgotten (the same fault, the draw still refused, ``journal verify`` still fails),
    and the faulted run moved no anchor line past the evidence. Returns the second run."""
    anchor_before = (copy / "journal.anchor").read_bytes()
    first = start_faulted(copy, drawn_round)
    first_faults = [f for f in first.app_faults if "journal verification failed" in f]
    first.close()
    assert (copy / "journal.anchor").read_bytes() == anchor_before, (
        "a faulted run anchored heads past the evidence"
    )
    assert verify_exit(work, copy) == 1, "journal verify passes after an unacknowledged start"
    app = start_faulted(copy, drawn_round)
    for fault in first_faults:
        assert fault in app.app_faults, (fault, app.app_faults)
    return app


TECH_PIN = "24681357"
SUPER_PIN = "97531864"


def say(app: Application, text: str, timeout: float = 30.0) -> list[str]:
    """One console line on the loop's thread (this test's), as the console would send it: a
    reply that comes later (a login checked on a worker) is waited for."""
    lines = app.console_execute(text, "serial")
    deferred = app._console().take_deferred()
    if deferred is None:
        return lines
    deadline = time.monotonic() + timeout
    while not deferred.ready():
        assert time.monotonic() < deadline, f"no reply to {text.split()[0]!r}"
        time.sleep(0.01)
    rendered: list[str] = deferred.render()
    return rendered


def acknowledge_and_play(app: Application, copy: Path, drawn_round: int) -> None:
    """After the technician's acknowledgment (journaled), the round is void and the next draw
    belongs to a round never drawn before."""
    before = len(drawn_rows(copy))
    # a technician alone may not acknowledge; the supervisor does: journaled with what was found
    assert say(app, f"passwd {TECH_PIN}")[-1] == "OK"
    assert say(app, "fault clear")[-1].startswith("ERR AUTH ")
    assert app.journal.last(["journal.acknowledged"]) is None
    assert say(app, f"passwd supervisor {SUPER_PIN}")[-1] == "OK"
    assert say(app, f"login {SUPER_PIN}")[-1] == "OK"
    lines = say(app, "fault clear")
    assert lines[-1] == "OK", lines
    # every attack here took or rewrote the drawn round's number: a void after the draw
    void = app.journal.last(["paigow.void_after_draw"])
    assert void is not None and void.round == drawn_round, void
    assert (void.data["who"], void.data["shift_count"]) == ("supervisor@serial", 1)
    ack = app.journal.last(["journal.acknowledged"])
    assert ack is not None and ack.data["found"][0]["problems"]
    assert not app.app_faults
    # play on: the next draw is in a round never drawn before
    for name in ("shuffled", "no_more_bets", "draw"):
        if name == "shuffled" and app.table.model.state == "inspection":
            press(app, "shuffled")
        press(app, name)
    draws = drawn_rows(copy)
    assert len(draws) == before + 1
    rounds = [int(r.round) for r in draws]
    assert len(rounds) == len(set(rounds)), f"a round drawn twice: {rounds}"
    assert drawn_round not in rounds[before:], "the lost round was drawn again"


def start_and_check(work: Path, copy: Path, drawn_round: int) -> Application:
    """Two starts before the acknowledgment (:func:`restart_unacknowledged`), then the
    acknowledgment and play (:func:`acknowledge_and_play`); after it, the journal verifies
    again. Returns the application (closed by the caller)."""
    app = restart_unacknowledged(work, copy, drawn_round)
    acknowledge_and_play(app, copy, drawn_round)
    return app


def delete_from(db: Path, seq: int) -> None:
    """Delete every row and head from ``seq`` on, as someone holding the disk can (the
    append-only triggers dropped first)."""
    raw = sqlite3.connect(db, isolation_level=None)
    raw.execute("DROP TRIGGER rows_no_delete")
    raw.execute("DROP TRIGGER heads_no_delete")
    raw.execute("DELETE FROM rows WHERE seq >= ?", (seq,))
    raw.execute("DELETE FROM heads WHERE seq >= ?", (seq,))
    raw.close()


def test_a_tail_delete_is_caught_and_the_round_is_not_drawn_again(work: Path) -> None:
    copy, drawn_round, drawn_seq = power_cut_after_a_draw(work)
    delete_from(copy / "journal.sqlite", drawn_seq)  # the draw and after
    assert verify_exit(work, copy) == 1
    app = start_and_check(work, copy, drawn_round)
    app.close()


def test_a_cut_from_the_draw_on_needs_the_supervisor_and_is_a_void_after_the_draw(
    work: Path,
) -> None:
    """The rows from the draw on cut, the controller restarted: the drawn number is gone from
    the journal, so acknowledging the finding voids a drawn round. A technician's `fault
    clear` is refused (ERR AUTH, nothing acknowledged, voided or counted); the supervisor's
    raises the !ALARM of a void after the draw, journals it and counts it for the shift, as
    the supervisor's `void` after the draw does (docs/paigow-table.md); a restart keeps the
    count."""
    copy, drawn_round, drawn_seq = power_cut_after_a_draw(work)
    delete_from(copy / "journal.sqlite", drawn_seq)
    profile = load_profile(PROFILES / "sim-paigow.toml")
    said: list[str] = []
    app = Application(profile, copy, console_port="none", output=said.append)
    try:
        app.start()
        assert any("journal verification failed" in f for f in app.app_faults)
        assert app.table.model.round_id == drawn_round
        assert app.table.model.record.number is None, "the drawn number is gone"
        assert say(app, f"passwd {TECH_PIN}")[-1] == "OK"
        refused = say(app, "fault clear")[-1]
        assert refused.startswith("ERR AUTH ") and "supervisor" in refused, refused
        assert "login" in refused, refused  # it says how: a supervisor's login
        assert any("journal verification failed" in f for f in app.app_faults)
        assert app.journal.last(["journal.acknowledged"]) is None
        assert app.journal.last(["paigow.void_after_draw"]) is None
        assert app.table.status()["voids_after_draw"] == "0 this shift"
        assert not [line for line in said if line.startswith("!ALARM")]
        assert say(app, f"passwd supervisor {SUPER_PIN}")[-1] == "OK"
        assert say(app, f"login {SUPER_PIN}")[-1] == "OK"
        lines = say(app, "fault clear")
        assert lines[-1] == "OK", lines
        assert not app.app_faults
        alarms = [line for line in said if line.startswith("!ALARM")]
        assert len(alarms) == 1, said
        assert alarms[0].startswith(f"!ALARM void after the draw: round {drawn_round} (")
        assert "voided by supervisor@serial" in alarms[0]
        assert alarms[0].endswith("; 1 void after a draw this shift")
        row = app.journal.last(["paigow.void_after_draw"])
        assert row is not None and row.round == drawn_round
        assert (row.data["who"], row.data["shift_count"], row.data["number"]) == (
            "supervisor@serial",
            1,
            None,
        )
        assert app.table.status()["voids_after_draw"] == "1 this shift (alarmed)"
        assert app.table.model.state == "washing" and app.table.model.round_id > drawn_round
    finally:
        app.close()
    again = Application(profile, copy, console_port="none")
    try:
        again.start()
        assert again.table.status()["voids_after_draw"] == "1 this shift (alarmed)"
    finally:
        again.close()


def test_deleting_the_finding_row_does_not_forget_the_loss(work: Path) -> None:
    """The finding's own row deleted (with every row after it) between two starts: the anchor,
    which the faulted run left alone, still proves the loss."""
    copy, drawn_round, drawn_seq = power_cut_after_a_draw(work)
    delete_from(copy / "journal.sqlite", drawn_seq)
    start_faulted(copy, drawn_round).close()
    raw = sqlite3.connect(copy / "journal.sqlite", isolation_level=None)
    raw.execute("DROP TRIGGER rows_no_delete")  # the journal put them back
    raw.execute("DROP TRIGGER heads_no_delete")
    (finding,) = raw.execute(
        "SELECT r.seq FROM rows r JOIN kinds k ON k.id = r.kind WHERE k.kind = 'journal.finding'"
    ).fetchall()
    raw.execute("DELETE FROM rows WHERE seq >= ?", (finding[0],))
    raw.execute("DELETE FROM heads WHERE seq >= ?", (finding[0],))
    raw.close()
    assert verify_exit(work, copy) == 1
    app = start_faulted(copy, drawn_round)
    acknowledge_and_play(app, copy, drawn_round)
    app.close()


def test_a_deleted_wal_is_caught(work: Path) -> None:
    copy, drawn_round, _ = power_cut_after_a_draw(work)
    (copy / "journal.sqlite-wal").unlink()
    assert verify_exit(work, copy) == 1
    app = start_and_check(work, copy, drawn_round)
    assert (
        "behind its anchor"
        in app.journal.last(["journal.acknowledged"]).data[  # type: ignore[union-attr]
            "found"
        ][0]["problems"][0]
    )
    app.close()


def test_one_bit_flipped_in_a_wal_frame_is_caught(work: Path) -> None:
    copy, drawn_round, _ = power_cut_after_a_draw(work)
    wal = bytearray((copy / "journal.sqlite-wal").read_bytes())
    assert len(wal) > 32 + 24 + 1024
    wal[32 + 24 + 500] ^= 0x10  # one bit in the first frame's page (SD-card corruption)
    (copy / "journal.sqlite-wal").write_bytes(bytes(wal))
    assert verify_exit(work, copy) == 1
    app = start_and_check(work, copy, drawn_round)
    app.close()


def test_a_missing_key_refuses_the_start_and_is_never_replaced(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy, _, _ = power_cut_after_a_draw(work)
    (copy / "journal-key.pem").unlink()
    # with the public key the journal checks out (an auditor's copy has no private key); the
    # missing key is said
    assert verify_exit(work, copy) == 0
    err = capsys.readouterr()
    assert "no signing key" in err.out + err.err
    assert main(["journal", "verify", "--state-dir", str(copy)]) == 1  # the table's own check
    err = capsys.readouterr()
    assert "signing key" in err.out + err.err and "is missing" in err.out + err.err
    profile = load_profile(PROFILES / "sim-paigow.toml")
    with pytest.raises(StartRefused, match="signing key is missing"):
        Application(profile, copy, console_port="none")
    assert not (copy / "journal-key.pem").exists()  # nothing re-keyed silently
    prof = work / "p.toml"
    prof.write_text((PROFILES / "sim-paigow.toml").read_text())
    assert (
        main(
            [
                "run",
                "--profile",
                str(PROFILES / "sim-paigow.toml"),
                "--state-dir",
                str(copy),
                "--console",
                "none",
            ]
        )
        == 1
    )
    assert "refusing to start" in capsys.readouterr().err
    assert len(drawn_rows(copy)) == 1


def _recompute_from(db: sqlite3.Connection, seq: int, data: dict[str, Any]) -> None:
    """Rewrite row ``seq`` and re-chain every row after it: all an attacker without the
    private key can do (the chain needs no secret)."""
    j_rows = db.execute(
        "SELECT r.seq, r.ts, b.boot, r.mono, k.kind, r.round, r.data"
        " FROM rows r JOIN kinds k ON k.id = r.kind JOIN boots b"
        " ON b.id = r.boot WHERE r.seq >= ? ORDER BY r.seq",
        (seq,),
    ).fetchall()
    prev = bytes(db.execute("SELECT hash FROM rows WHERE seq = ?", (seq - 1,)).fetchone()[0])
    for s, ts, boot, mono, kind, rnd, text in j_rows:
        body = data if s == seq else json.loads(text)
        fields = {
            "seq": s,
            "ts": ts,
            "boot": boot,
            "mono": mono,
            "kind": kind,
            "round": rnd,
            "data": body,
        }
        digest = row_hash(prev.hex(), fields)
        db.execute(
            "UPDATE rows SET data = ?, hash = ? WHERE seq = ?",
            (
                json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False),
                bytes.fromhex(digest),
                s,
            ),
        )
        prev = bytes.fromhex(digest)


def test_a_rewritten_draw_with_the_chain_recomputed_is_caught(work: Path) -> None:
    copy, drawn_round, drawn_seq = power_cut_after_a_draw(work)
    raw = sqlite3.connect(copy / "journal.sqlite", isolation_level=None)
    raw.execute("DROP TRIGGER rows_no_update")
    data = json.loads(
        raw.execute("SELECT data FROM rows WHERE seq = ?", (drawn_seq,)).fetchone()[0]
    )
    data["record"]["number"] = data["record"]["number"] % 8 + 1  # another number
    _recompute_from(raw, drawn_seq, data)
    raw.close()
    forged = Journal(copy / "journal.sqlite", readonly=True)
    from controller.journal.verify import check_chain

    assert check_chain(forged).ok  # the chain alone is consistent again
    forged.close()
    assert verify_exit(work, copy) == 1  # the signed heads are not
    app = start_and_check(work, copy, drawn_round)
    app.close()


_OPENED: list[str] = []
_WATCHING: list[bool] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _WATCHING and event == "open" and args and isinstance(args[0], str | Path):
        _OPENED.append(str(args[0]))


def test_verify_needs_the_public_key_alone_and_never_opens_the_private_key(work: Path) -> None:
    """``journal verify`` with the public key alone passes on an untouched copy, and opens
    nothing of the signing key (a Python audit hook sees every open)."""
    import sys

    copy, _, _ = power_cut_after_a_draw(work)
    public_key(work)
    sys.addaudithook(_audit)
    _WATCHING.append(True)
    try:
        code = verify_exit(work, copy)
    finally:
        _WATCHING.clear()
    assert code == 0
    assert any(p.endswith("journal.anchor") for p in _OPENED), _OPENED
    assert not any("journal-key" in p for p in _OPENED), _OPENED
