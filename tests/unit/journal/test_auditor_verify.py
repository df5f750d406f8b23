"""`table-controller journal verify` as an auditor runs it (docs/journal.md "Verifying"): a copy
of the state directory without the private key, with the public key printed at commissioning;
and with the wrong public key, which is said once, not once per signed head."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from controller.app import Application
from controller.cli import main
from controller.config.profile import load_profile

REPO = Path(__file__).resolve().parents[3]
PROFILE = REPO / "hw_profiles" / "sim-paigow.toml"


def _table(state: Path, rows: int, starts: int = 1) -> None:
    """A table's state directory: ``starts`` runs of the real application, ``rows`` rows each
    (every run signs and anchors heads at its start and at its end)."""
    for run in range(starts):
        app = Application(load_profile(PROFILE), state, console_port="none")
        app.start()
        for i in range(rows):
            app.journal.append("test.row", {"run": run, "i": i})
        app.close()


def _pubkey(state: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """The public key as commissioning prints it (`journal pubkey`)."""
    capsys.readouterr()
    assert main(["journal", "pubkey", "--state-dir", str(state)]) == 0
    out.write_text(capsys.readouterr().out)
    assert out.read_text().startswith("-----BEGIN PUBLIC KEY-----")
    return out


def _auditor_copy(state: Path, copy: Path) -> Path:
    """What an auditor receives: the state directory without the private key."""
    shutil.copytree(state, copy)
    (copy / "journal-key.pem").unlink()
    return copy


def _copy_with_key(
    tmp: Path, capsys: pytest.CaptureFixture[str], rows: int, starts: int = 1
) -> tuple[Path, Path]:
    """A table's journal of ``rows`` rows over ``starts`` starts, its public key exported, and
    the auditor's copy of it without the private key: (copy, public key)."""
    _table(tmp / "table", rows=rows, starts=starts)
    pub = _pubkey(tmp / "table", tmp / "table.pub", capsys)
    return _auditor_copy(tmp / "table", tmp / "copy"), pub


def _change_one_byte(db: Path, seq: int) -> None:
    """One byte of row ``seq``'s data changed in place (the append-only trigger dropped, as an
    editor of the file would)."""
    raw = sqlite3.connect(db, isolation_level=None)
    try:
        raw.execute("DROP TRIGGER rows_no_update")
        (text,) = raw.execute("SELECT data FROM rows WHERE seq = ?", (seq,)).fetchone()
        digit = text.index('"i":') + 4
        changed = text[:digit] + ("1" if text[digit] != "1" else "2") + text[digit + 1 :]
        assert len(changed) == len(text) and changed != text
        raw.execute("UPDATE rows SET data = ? WHERE seq = ?", (changed, seq))
    finally:
        raw.close()


def _verify(copy: Path, pub: Path | None, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    args = ["journal", "verify", "--state-dir", str(copy)]
    if pub is not None:
        args += ["--pubkey", str(pub)]
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _row_seq(db: Path, i: int) -> int:
    raw = sqlite3.connect(db)
    try:
        (seq,) = raw.execute(
            "SELECT seq FROM rows WHERE data LIKE ? OR data LIKE ? ORDER BY seq LIMIT 1",
            (f'%"i":{i},%', f'%"i":{i}}}%'),
        ).fetchone()
    finally:
        raw.close()
    return int(seq)


# -- the private key is not the auditor's ------------------------------------------------------


def test_a_copy_without_the_private_key_verifies_with_the_public_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy, pub = _copy_with_key(tmp_path, capsys, rows=30)
    code, text = _verify(copy, pub, capsys)
    assert code == 0, text
    assert "journal verified" in text and "BROKEN" not in text
    assert "no signing key" in text  # said, as information
    assert not (copy / "journal-key.pem").exists()  # and nothing made one


def test_the_same_copy_with_one_byte_of_a_row_changed_still_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy, pub = _copy_with_key(tmp_path, capsys, rows=30)
    seq = _row_seq(copy / "journal.sqlite", 7)
    _change_one_byte(copy / "journal.sqlite", seq)
    code, text = _verify(copy, pub, capsys)
    assert code == 1, text
    assert f"journal BROKEN at seq {seq}" in text and "edited" in text


def test_without_pubkey_the_missing_private_key_is_still_a_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On the table's own state (no key given) a missing key means the table will not start."""
    _table(tmp_path / "table", rows=5)
    copy = _auditor_copy(tmp_path / "table", tmp_path / "copy")
    code, text = _verify(copy, None, capsys)
    assert code == 1 and "signing key" in text and "is missing" in text


# -- the wrong public key -----------------------------------------------------------------------


def test_the_wrong_public_key_is_said_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _table(tmp_path / "table", rows=10, starts=8)  # many signed heads and anchor lines
    _table(tmp_path / "other", rows=1)
    wrong = _pubkey(tmp_path / "other", tmp_path / "other.pub", capsys)
    copy = _auditor_copy(tmp_path / "table", tmp_path / "copy")
    code, text = _verify(copy, wrong, capsys)
    assert code == 1, text
    verdict = next(line for line in text.splitlines() if line.startswith("journal BROKEN"))
    assert "does not match this journal's" in verdict
    assert verdict.count(";") == 1  # one problem (its own "; use the key...")
    assert "bad signature" not in text and "anchor holds no signed head" not in text
    raw = sqlite3.connect(copy / "journal.sqlite")
    (heads,) = raw.execute("SELECT count(*) FROM heads").fetchone()
    raw.close()
    assert heads >= 8 and f"none of its {heads} signed heads" in verdict


def test_the_wrong_key_does_not_hide_an_edited_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _table(tmp_path / "table", rows=10, starts=2)
    _table(tmp_path / "other", rows=1)
    wrong = _pubkey(tmp_path / "other", tmp_path / "other.pub", capsys)
    copy = _auditor_copy(tmp_path / "table", tmp_path / "copy")
    _change_one_byte(copy / "journal.sqlite", _row_seq(copy / "journal.sqlite", 3))
    code, text = _verify(copy, wrong, capsys)
    assert code == 1 and "does not match this journal's" in text and "(edited)" in text


def test_one_forged_head_under_the_right_key_is_still_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The key is told wrong only when no head verifies: a single forged head is a forgery."""
    copy, pub = _copy_with_key(tmp_path, capsys, rows=10, starts=3)
    raw = sqlite3.connect(copy / "journal.sqlite", isolation_level=None)
    raw.execute("DROP TRIGGER heads_no_update")
    (seq,) = raw.execute("SELECT min(seq) FROM heads").fetchone()
    raw.execute("UPDATE heads SET ts = ts + 1 WHERE seq = ?", (seq,))
    raw.close()
    code, text = _verify(copy, pub, capsys)
    assert code == 1, text
    assert f"signed head at row {seq} has a bad signature" in text
    assert "does not match this journal's" not in text


def test_expect_head_proves_a_recorded_head_or_says_what_a_mismatch_may_be(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`journal verify --expect-head SEQ:HASH` (docs/journal.md "Verifying"): the head recorded
    earlier is unchanged (exit 0); another hash is a rewritten journal or a mistyped head, and
    the reply says both (exit 1); a malformed one is the command line's error (exit 2)."""
    copy, pub = _copy_with_key(tmp_path, capsys, rows=5)
    capsys.readouterr()
    assert main(["journal", "head", "--state-dir", str(copy)]) == 0
    seq_text, _, digest = capsys.readouterr().out.split()[0].partition(":")
    base = ["journal", "verify", "--state-dir", str(copy), "--pubkey", str(pub)]
    assert main([*base, "--expect-head", f"{seq_text}:{digest.upper()}"]) == 0
    capsys.readouterr()
    assert main([*base, "--expect-head", f"{seq_text}:{'0' * 64}"]) == 1
    out = capsys.readouterr().out
    assert "rewritten since that head was recorded, or the SEQ:HASH was mistyped" in out
    assert main([*base, "--expect-head", f"{int(seq_text) + 1000}:{digest}"]) == 1
    assert "is not in the journal" in capsys.readouterr().out
    for bad in ("12", f"x:{digest}", f"0:{digest}", f"{'9' * 25}:{digest}", f"{seq_text}:zz"):
        assert main([*base, "--expect-head", bad]) == 2, bad
        assert "--expect-head: " in capsys.readouterr().err


def test_a_tail_cut_below_a_stored_signed_head_is_rows_lost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/journal.md, the attack table: the newest rows deleted is caught by the signed heads
    in the database, by `journal verify` as at start-up (it ignored a head past the end)."""
    copy, pub = _copy_with_key(tmp_path, capsys, rows=6, starts=2)
    raw = sqlite3.connect(copy / "journal.sqlite", isolation_level=None)
    try:
        (newest,) = raw.execute("SELECT MAX(seq) FROM heads").fetchone()
        raw.execute("DROP TRIGGER IF EXISTS rows_no_delete")
        raw.execute("DELETE FROM rows WHERE seq > ?", (newest - 3,))
    finally:
        raw.close()
    # the anchor's lines past the cut removed too: only the database's head is left to tell
    lines = (copy / "journal.anchor").read_text().splitlines()
    kept = [line for line in lines if f'"seq":{newest}' not in line]
    (copy / "journal.anchor").write_text("".join(f"{line}\n" for line in kept))
    code, out = _verify(copy, pub, capsys)
    assert code == 1 and f"a signed head names row {newest}" in out and "rows lost" in out


@pytest.mark.parametrize("wrong", ["journal-key.pem", "empty.pem"])
def test_a_wrong_kind_of_key_file_is_said_plainly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], wrong: str
) -> None:
    _table(tmp_path / "table", rows=3)
    key = tmp_path / "table" / wrong
    if wrong == "empty.pem":
        key.write_bytes(b"")
    code, out = _verify(tmp_path / "table", key, capsys)
    assert code == 1 and "Traceback" not in out
    assert "is not the table's public key" in out and "`journal pubkey`" in out


DEEP = "[" * 100_000 + "]" * 100_000


def _anchor_line(copy: Path, **over: object) -> str:
    line = json.loads((copy / "journal.anchor").read_text().splitlines()[0])
    return json.dumps({**line, **over})


HOSTILE: dict[str, tuple[str, ...]] = {
    # (what is done to the copy: ("anchor", TEXT) appended, or SQL statements)
    "an anchor line naming a row beyond 64 bits": ("anchor", "seq"),
    "an anchor line nested 100,000 deep": ("anchor", DEEP),
    "a base that is not SEQ:HASH": ("sql", "INSERT OR REPLACE INTO meta VALUES ('base','abc')"),
    "a row's data nested 100,000 deep": (
        "sql",
        "DROP TRIGGER rows_no_update",
        f"UPDATE rows SET data='{DEEP}' WHERE seq=3",
    ),
    "a signed head's hash stored as text": (
        "sql",
        "DROP TRIGGER heads_no_update",
        "UPDATE heads SET hash='x'",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_file_is_a_problem_found_never_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    """docs/journal.md "Verifying": `journal verify` names the problem and exits 1, and the
    table starts with a journal fault (a finding a supervisor acknowledges), whatever was
    written into its files: never a traceback, never a table that does not start."""
    copy, pub = _copy_with_key(tmp_path, capsys, rows=4)
    how, *what = HOSTILE[case]
    if how == "anchor":
        text = _anchor_line(copy, seq=2**70) if what == ["seq"] else what[0]
        with (copy / "journal.anchor").open("a") as f:
            f.write(text + "\n")
    else:
        raw = sqlite3.connect(copy / "journal.sqlite", isolation_level=None)
        try:
            for statement in what:
                raw.execute(statement)
        finally:
            raw.close()
    code, out = _verify(copy, pub, capsys)
    assert code == 1 and "Traceback" not in out and "journal BROKEN" in out
    shutil.copy(tmp_path / "table" / "journal-key.pem", copy / "journal-key.pem")
    app = Application(load_profile(PROFILE), copy, console_port="none")
    try:
        app.start()
        assert any("journal" in fault for fault in app.app_faults), app.app_faults
    finally:
        app.close()
