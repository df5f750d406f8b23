"""The technician console over a pseudo-terminal, against the real process on the sim profile:
every command, every error code, the lockout, a refused config change mid-round, over-long and
non-printable lines, and ``verify`` catching a changed program file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.program import manifest as mf
from tests.hil.rig import PIN, PROFILES, REPO, PtyMaster, Rig, override_profile


@pytest.fixture
def console(tmp_path: Path) -> Iterator[Rig]:
    pty = PtyMaster()
    rig = Rig(
        override_profile(tmp_path, PROFILES / "sim-paigow.toml", pty.slave_path),
        tmp_path / "state",
        pty,
    )
    rig.start()
    yield rig
    rig.close()


def test_read_only_commands_without_login(console: Rig) -> None:
    assert any("config set" in line for line in console.ok("help"))
    status = console.status()
    assert status["game"] == "paigow" and status["state"] == "inspection"
    assert status["faults"] == "none"
    assert any(line.startswith("recall_depth = ") for line in console.ok("config show"))
    assert console.ok("recall 1")[0].startswith("round 1:")
    head = console.ok("journal head")[0]
    assert head.startswith("head ")
    seq_mac = head.split()[1]
    assert f"head {seq_mac}" in console.ok(f"journal verify {seq_mac}")
    assert console.ok("houseway 1-2 2-4 6-6 5-5")[0] == "high 2-4 1-2  low 6-6 5-5"
    assert console.ok("verify " + "ab" * 16)[0].startswith("hmac-sha256 ")


def test_every_error_code_over_the_wire(console: Rig) -> None:
    console.err("journal rewind", "SYNTAX")
    console.err("config show no.such.key", "UNKNOWN")
    console.err("frobnicate", "UNKNOWN")
    console.err("selftest", "AUTH")
    console.err("odds", "UNKNOWN")
    console.ok(f"passwd {PIN}")
    console.err("config set recall_depth 100000", "RANGE")
    console.err("verify", "STATE")  # no manifest in a development tree
    console.err(f"journal verify 999999:{'0' * 64}", "FAULT")
    console.err("rng capture raw 10 ../../escape", "SYNTAX")
    (console.state_dir / "captures").mkdir(exist_ok=True)
    (console.state_dir / "captures" / "busy").mkdir()
    console.err("rng capture raw 10 busy", "IO")
    for _ in range(4):
        console.err("login 11111111", "AUTH")
    console.err("login 11111111", "LOCKED")
    console.err(f"login {PIN}", "LOCKED")


def test_passwd_login_logout_and_lockout_alarm(console: Rig) -> None:
    console.err(f"login {PIN}", "AUTH")  # no default secret
    assert console.ok(f"passwd {PIN}") == ["PIN set; logged in"]
    console.ok("logout")
    console.err("passwd 99999999", "AUTH")
    console.ok(f"login {PIN}")
    console.ok("logout")
    for _ in range(4):
        console.err("login 00000000", "AUTH")
    console.err("login 00000000", "LOCKED")
    console.err(f"login {PIN}", "LOCKED")
    assert any(alarm.startswith("!CONSOLE LOCKED") for alarm in console.alarms)
    assert "locked for" in "\n".join(console.ok("status"))


def test_config_set_and_refused_mid_round(console: Rig) -> None:
    console.login()
    assert console.ok("config set recall_depth 30") == ["recall_depth: 20 -> 30"]
    console.ok("sim button shuffled")
    console.wait_status("state", "betting")
    console.ok("sim button no_more_bets")
    console.wait_status("state", ("no_more_bets", "bank_style"))
    reply = console.err("config set recall_depth 40", "STATE")
    assert "round is in progress" in reply.status
    assert console.ok("config show recall_depth")[0] == "recall_depth = 30"


def test_rng_selftest_fault_clear_and_test_mode(console: Rig) -> None:
    console.login()
    # A true 99% test rejects a good generator 1% of the time per statistic, so either verdict
    # may come back; what must always come back is the full report with both statistics.
    reply = console.command("rng test 5000")
    assert reply.status in ("OK", "ERR FAULT the statistical check failed"), reply.status
    assert "5000 draws of 1-8" in reply.text
    assert "df=7" in reply.text.replace(" ", "") or "7 degrees" in reply.text, reply.text
    console.ok("rng capture final 100 final.txt")
    assert len((console.state_dir / "captures" / "final.txt").read_text().split()) == 100
    assert any("RNG self-test" in line for line in console.ok("selftest"))
    console.ok("fault clear")
    assert console.ok("test-mode on")[0].startswith("test mode on")
    assert console.status()["test-mode"] == "ON"
    console.ok("test-mode off")


def test_long_and_binary_lines_are_refused_and_the_console_goes_on(console: Rig) -> None:
    console.port.write(b"x" * 300 + b"\r\n")
    assert console.read_reply().status.startswith("ERR SYNTAX line longer than 200")
    console.port.write(b"status\x01\r\n")
    assert console.read_reply().status == "ERR SYNTAX line holds non-printable bytes"
    console.ok("status")
    # Bad input is journaled too (docs/console.md); read the journal the way an auditor would.
    import sqlite3

    db = sqlite3.connect(f"file:{console.state_dir / 'journal.sqlite'}?mode=ro", uri=True)
    try:
        rows = [
            json.loads(r[0])
            for r in db.execute(
                "SELECT r.data FROM rows r JOIN kinds k ON k.id = r.kind"
                " WHERE k.kind = 'console.rejected' ORDER BY r.seq"
            )
        ]
    finally:
        db.close()
    assert rows and rows[0]["reason"] == "line longer than 200 bytes"
    assert sum(r["count"] for r in rows) <= 2  # the second may still wait for the next tick


def _copy_program(dest: Path) -> None:
    for package in mf.PACKAGES:
        shutil.copytree(
            REPO / package, dest / package, ignore=shutil.ignore_patterns("__pycache__")
        )


def _seal(program: Path, profile: Path) -> dict[str, str]:
    """A manifest of the copy (every file) and the profile's seal, as the program's own tool
    makes them; the environment that runs the copy against them."""
    for args in (["build", "--root", str(program)], ["seal-profile", str(profile)]):
        made = subprocess.run(
            [sys.executable, "-m", "controller.program.manifest", *args],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=str(program),
            # no __pycache__ written into the copy after its manifest
            # (a plain shell does not set PYTHONDONTWRITEBYTECODE)
            env=dict(os.environ, PYTHONPATH=str(program), PYTHONDONTWRITEBYTECODE="1"),
        )
        assert made.returncode == 0, made.stderr
    return dict(
        os.environ,
        PYTHONPATH=str(program),
        PYTHONDONTWRITEBYTECODE="1",
        TABLE_CONTROLLER_MANIFEST=str(program / mf.MANIFEST_NAME),
    )


def test_verify_catches_a_changed_program_file(tmp_path: Path) -> None:
    program = tmp_path / "program"
    _copy_program(program)
    pty = PtyMaster()
    profile = override_profile(tmp_path, PROFILES / "sim-paigow.toml", pty.slave_path)
    env = _seal(program, profile)
    # cwd is the copy: ``python -m`` puts the working directory first on sys.path.
    rig = Rig(profile, tmp_path / "state", pty, env=env, cwd=program)
    rig.start()
    try:
        lines = rig.ok("verify")
        assert lines[0].startswith("all program and profile files match")
        with open(program / "controller" / "journal" / "recall.py", "a") as fh:
            fh.write("# changed after the manifest was built\n")
        reply = rig.command("verify")
        assert reply.code == "FAULT"
        assert any("changed file controller/journal/recall.py" in line for line in reply.lines)
        assert "program: changed file controller/journal/recall.py" in rig.status()["faults"]
        rig.login()
        rig.err("fault clear", "FAULT")  # the file is still changed
    finally:
        rig.close()


def test_a_changed_file_at_start_is_a_fault(tmp_path: Path) -> None:
    program = tmp_path / "program"
    _copy_program(program)
    pty = PtyMaster()
    profile = override_profile(tmp_path, PROFILES / "sim-paigow.toml", pty.slave_path)
    env = _seal(program, profile)
    profile.write_text(profile.read_text() + "# edited after install\n")
    rig = Rig(profile, tmp_path / "state", pty, env=env, cwd=program)
    rig.start()
    try:
        assert f"program: changed profile file {profile.resolve()}" in rig.status()["faults"]
    finally:
        rig.close()
