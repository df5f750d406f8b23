"""Console abuse against the real process (console on stdio pipes, as under systemd with a
serial getty replaced by the controller): random command lines, long lines and binary garbage
never crash it, every line is answered, nothing changes without a login (settings, table state,
PIN: the journal gains only refusals), and PIN guessing hits the lockout, the supervisor's too
when a technician logs in between the guesses."""

from __future__ import annotations

import random
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reliability.harness import PIN, Controller, fast_tmpdir, journal_rows, write_profile

SEED = 8_2026
# words a confused or hostile user might type; every state-changing one needs a login
VOCAB = [
    "config",
    "set",
    "show",
    "recall_depth",
    "paigow.start_mode",
    "dice",
    "rng",
    "test",
    "capture",
    "raw",
    "final",
    "sim",
    "button",
    "draw",
    "shuffled",
    "settled",
    "void",
    "fault",
    "clear",
    "test-mode",
    "on",
    "off",
    "passwd",
    "logout",
    "selftest",
    "bank",
    "seat",
    "style",
    "expose",
    "dealer",
    "journal",
    "head",
    "bet",
    "curator",
    "status",
    "help",
    "recall",
    "houseway",
    "1-2",
    "6-6",
    "12345678",
    "-1",
    "999999999999",
    "%s",
    "'; DROP TABLE events;--",
    "$(reboot)",
    "\t",
    "#",
    "../../etc/passwd",
    "nan",
]
ALLOWED_NEW_KINDS = {
    "console.refused",
    "console.rejected",
    "console.login_failed",
    "console.locked",
    "journal.verified",
    "app.start",
    "paigow.recovered",
    "app.shutdown",
}


@pytest.fixture
def work() -> Iterator[Path]:
    path = fast_tmpdir("console-abuse-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def table(work: Path) -> Iterator[Controller]:
    profile = write_profile(work, "sim-paigow")
    state = work / "state"
    first = Controller(profile, state)
    first.wait_ready()
    first.ok(f"passwd {PIN}")  # the first PIN (no login needed only while none exists)
    first.ok("config set recall_depth 25")
    assert first.stop() == 0
    c = Controller(profile, state)  # a new process: nobody is logged in
    c.wait_ready()
    yield c
    c.stop()


def _snapshot(c: Controller) -> tuple[list[str], dict[str, str]]:
    status = c.status()
    for key in ("console", "test-mode"):
        status.pop(key, None)
    return c.ok("config show"), status


def _random_line(rng: random.Random) -> bytes:
    roll = rng.random()
    if roll < 0.5:
        words = [rng.choice(VOCAB) for _ in range(rng.randint(1, 5))]
        if words[0] == "login":
            words[0] = "help"
        return " ".join(words).encode()
    if roll < 0.7:  # long lines, up to 20 kB
        return bytes(rng.choice(b"abcdefgh 0123456789") for _ in range(rng.randint(201, 20000)))
    if roll < 0.9:  # binary garbage (no line ends)
        return bytes(b for b in rng.randbytes(rng.randint(1, 400)) if b not in b"\r\n")
    return bytes(rng.choice(b"\x00\x1b[A\x7f\x03\x04 ") for _ in range(rng.randint(1, 40)))


def test_garbage_on_the_console_changes_nothing_without_a_login(
    table: Controller, work: Path
) -> None:
    c = table
    config_before, status_before = _snapshot(c)
    seq_before = journal_rows(work / "state")[-1].seq
    rng = random.Random(SEED)
    replies = 0
    for n in range(400):
        c.send_raw(_random_line(rng) + rng.choice([b"\n", b"\r\n", b"\r"]))
        reply = c.read_reply()
        replies += 1
        assert reply.ok or reply.code in ("SYNTAX", "UNKNOWN", "AUTH", "RANGE", "STATE"), (
            f"line {n}: {reply.status}"
        )
        assert not reply.status.startswith("ERR FAULT internal"), reply.status
    # the console still answers, and says nobody is logged in
    assert "not logged in" in c.status()["console"]
    assert c.ask("journal verify").ok
    config_after, status_after = _snapshot(c)
    assert config_after == config_before
    assert status_after == status_before
    new_kinds = {r.kind for r in journal_rows(work / "state") if r.seq > seq_before}
    assert new_kinds <= ALLOWED_NEW_KINDS, new_kinds - ALLOWED_NEW_KINDS
    assert c.proc.poll() is None
    assert replies == 400


def test_a_flood_without_line_ends_and_a_burst_of_lines(table: Controller) -> None:
    c = table
    rng = random.Random(SEED + 1)
    c.send_raw(rng.randbytes(1_000_000).replace(b"\n", b" ").replace(b"\r", b" ") + b"\n")
    assert c.read_reply(60).code == "SYNTAX"
    c.send_raw(b"status\n" * 500)
    for _ in range(500):
        reply = c.read_reply(60)
        assert reply.ok and any(line.startswith("state: ") for line in reply.lines)
    assert c.proc.poll() is None


def test_pin_guessing_hits_the_lockout_and_changes_nothing(table: Controller, work: Path) -> None:
    c = table
    config_before, _ = _snapshot(c)
    rng = random.Random(SEED + 2)
    codes = []
    for _ in range(4):
        guess = "".join(rng.choice("0123456789") for _ in range(8))
        codes.append(c.ask(f"login {guess}").code)
    assert codes == ["AUTH"] * 4
    assert c.ask("login 00000000").code == "LOCKED"  # the fifth failure locks
    assert c.ask(f"login {PIN}").code == "LOCKED"  # even the right PIN, now
    assert c.ask("config set recall_depth 30").code == "AUTH"
    assert c.ask("passwd 11223344").code == "AUTH"
    assert "locked for" in "\n".join(c.ok("status"))
    assert any(a.startswith("!CONSOLE LOCKED") for a in c.alarms)
    assert _snapshot(c)[0] == config_before
    kinds = [r.kind for r in journal_rows(work / "state")]
    assert kinds.count("console.login_failed") == 5
    assert kinds.count("console.locked") == 1
    assert kinds.count("console.pin_set") == 1  # the PIN was never changed
    assert kinds.count("console.login") == 0


def test_a_technician_cannot_guess_the_supervisors_pin_between_own_logins(
    table: Controller, work: Path
) -> None:
    """The attack as found on the real process: four wrong PINs, the technician's own login,
    again; the supervisor's logins lock at the fifth wrong PIN whatever the technician's logins
    between, and the supervisor's right PIN is refused while they are locked."""
    c = table
    supervisor = "27182818"
    assert c.ask(f"login {PIN}").ok
    assert c.ask(f"passwd supervisor {supervisor}").ok
    assert c.ask("logout").ok
    codes = []
    for guess in range(42):
        if guess and guess % 4 == 0:
            assert c.ask(f"login {PIN}").ok  # the technician's own login
            assert c.ask("logout").ok
        codes.append(c.ask(f"login {40_000_000 + guess}").code)
    assert codes[:4] == ["AUTH"] * 4 and set(codes[4:]) == {"LOCKED"}, codes
    refused = c.ask(f"login {supervisor}")
    assert refused.code == "LOCKED" and "supervisor logins locked" in refused.status
    status = c.ok("status")
    assert "console: not logged in (stdio)" in status
    assert any(line.startswith("console: supervisor logins locked for") for line in status)
    assert any(a.startswith("!CONSOLE LOCKED: supervisor logins") for a in c.alarms)
    locked = journal_rows(work / "state", ["console.locked"])
    assert [r.data["role"] for r in locked] == ["supervisor"]
    # a restart does not lift it
    assert c.stop() == 0
    again = Controller(c.profile, c.state_dir)
    again.wait_ready()
    try:
        assert again.ask(f"login {supervisor}").code == "LOCKED"
        assert again.ask(f"login {PIN}").ok  # the technician was never locked
    finally:
        again.stop()
