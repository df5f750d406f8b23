"""The console as a technician's terminal sees it, against the real process over a
pseudo-terminal (docs/design.md "Technician console"): echo, the ``> `` prompt, BS/DEL, Ctrl-U,
Ctrl-C, ``!`` lines, and a serial console whose device is unplugged and plugged back; and in
tmux, a real terminal emulator: history and in-line editing as the screen shows them."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.hil.rig import PROFILES, PtyMaster, Rig

TIMEOUT_S = 15.0


class Terminal:
    """The technician's end: raw bytes, and waits for what the console writes."""

    def __init__(self, pty: PtyMaster) -> None:
        self.pty = pty
        self.seen = b""

    def type(self, data: bytes) -> None:
        self.pty.write(data)

    def expect(self, wanted: bytes, timeout: float = TIMEOUT_S) -> bytes:
        """Everything written since the last expect, up to and including ``wanted``."""
        deadline = time.monotonic() + timeout
        while wanted not in self.seen:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {wanted!r} within {timeout} s; got {self.seen!r}")
            self.seen += self.pty.read(min(left, 0.2))
        got, _, self.seen = self.seen.partition(wanted)
        return got + wanted


def terminal_profile(folder: Path, port: str, base: str = "sim-paigow.toml") -> Path:
    path = folder / "terminal-profile.toml"
    path.write_text(
        f'include = "{(PROFILES / base).resolve()}"\nscoreboard.port = 0\n'
        f'[console]\nport = "{port}"\nline_editing = true\n',
        encoding="utf-8",
    )
    return path


def journal_kinds(state_dir: Path, *kinds: str) -> list[dict[str, object]]:
    db = sqlite3.connect(f"file:{state_dir / 'journal.sqlite'}?mode=ro", uri=True)
    try:
        marks = ",".join("?" * len(kinds))
        return [
            json.loads(r[0]) | {"kind": r[1]}
            for r in db.execute(
                f"SELECT r.data, k.kind FROM rows r JOIN kinds k ON k.id = r.kind"
                f" WHERE k.kind IN ({marks}) ORDER BY r.seq",
                kinds,
            )
        ]
    finally:
        db.close()


@pytest.fixture
def term(tmp_path: Path) -> Iterator[tuple[Terminal, Rig]]:
    pty = PtyMaster()
    rig = Rig(terminal_profile(tmp_path, pty.slave_path), tmp_path / "state", pty)
    # Rig.start() asks `status` as a machine peer would; on a terminal line the answer comes
    # with echo and prompt, so start the process and wait for its banner without it.
    original_status = rig.status
    rig.status = lambda: {"game": "paigow"}  # type: ignore[method-assign]
    rig.start()
    rig.status = original_status  # type: ignore[method-assign]
    yield Terminal(pty), rig
    rig.close()


def test_the_console_prompts_echoes_and_edits_like_a_terminal_line(
    term: tuple[Terminal, Rig],
) -> None:
    t, rig = term
    t.expect(b"> ")
    # BS and DEL erase (a backspace used to be "ERR SYNTAX line holds non-printable bytes")
    t.type(b"statq\x08x\x7fus\r")
    echoed = t.expect(b"\r\n")
    assert echoed == b"statq\b \bx\b \bus\r\n"
    reply = t.expect(b"OK\r\n> ")
    assert b"state: inspection\r\n" in reply and b"ERR" not in reply
    # Ctrl-U clears the line: nothing of it runs
    t.type(b"frobnicate\x15help status\r")
    assert (
        t.expect(b"\r\n")
        == b"frobnicate" + b"\b" * 10 + b" " * 10 + b"\b" * 10 + b"help status\r\n"
    )
    assert b"status" in t.expect(b"OK\r\n> ")
    # Ctrl-C cancels the line and prompts again
    t.type(b"passwd 48151623\x03")
    assert t.expect(b"^C\r\n> ") == b"passwd ********^C\r\n> "  # a PIN is never echoed
    # an empty line only prompts again; a function key is skipped
    t.type(b"\r\x1bOPstatus\r")
    assert t.expect(b"status\r\n") == b"\r\n> status\r\n"
    assert b"console: not logged in" in t.expect(b"OK\r\n> ")
    # what was cancelled or cleared never reached the table: no PIN, no refused command
    assert journal_kinds(rig.state_dir, "console.pin_set", "console.refused") == []
    # Up recalls the last line (never the PIN's), Left and a typed character edit it in place
    t.type(b"\x1b[A")
    assert t.expect(b"status") == b"status"
    t.type(b"\x1b[D\x1b[D\x1b[D\x1b[3~\x1b[Ft\x7f\r")  # delete the 't' of "sta|tus"; End
    echoed = t.expect(b"\r\n")
    assert echoed == b"\b\b\bus \b\b\b" + b"us" + b"t\b \b" + b"\r\n"
    assert b"ERR UNKNOWN" in t.expect(b"> ")  # "staus" ran as shown, and was refused
    refused = journal_kinds(rig.state_dir, "console.refused")
    assert [r["command"] for r in refused] == ["staus"]


def test_an_unplugged_serial_console_is_reopened_and_the_loss_journaled(tmp_path: Path) -> None:
    link = tmp_path / "ttyUSB-console"
    first = PtyMaster()
    link.symlink_to(first.slave_path)
    rig = Rig(terminal_profile(tmp_path, str(link)), tmp_path / "state", first)
    rig.status = lambda: {"game": "paigow"}  # type: ignore[method-assign]
    rig.start()
    try:
        t = Terminal(first)
        t.expect(b"> ")
        first.close()  # the adapter is unplugged: its device goes away
        link.unlink()
        deadline = time.monotonic() + TIMEOUT_S
        while not journal_kinds(rig.state_dir, "console.port_lost"):
            assert time.monotonic() < deadline, "the loss of the console was not journaled"
            time.sleep(0.1)
        time.sleep(1.5)  # a few reopen attempts fail while it is gone
        second = PtyMaster()  # plugged back (a new device node, the same name)
        link.symlink_to(second.slave_path)
        rig.port = second
        t = Terminal(second)
        t.expect(b"!console port " + str(link).encode() + b" is back")
        t.type(b"status\r")
        assert b"state: inspection" in t.expect(b"OK\r\n> ")
        rows = journal_kinds(rig.state_dir, "console.port_lost", "console.port_back")
        assert [r["kind"] for r in rows] == ["console.port_lost", "console.port_back"]
        assert rows[0]["port"] == str(link)
    finally:
        rig.close()
        if link.is_symlink():
            link.unlink()


def test_run_sim_prompts_echoes_and_says_what_the_display_shows(tmp_path: Path) -> None:
    """README's quick start on a terminal: ``./run-sim`` shows a prompt, echoes, and prints
    ``!DISPLAY`` lines as the simulated table changes."""
    import pty
    import select
    import signal

    repo = Path(__file__).resolve().parents[2]
    pid, fd = pty.fork()
    if pid == 0:  # the child: ./run-sim on a terminal
        os.environ["TC_STATE_DIR"] = str(tmp_path / "sim-state")
        os.execv(str(repo / "run-sim"), [str(repo / "run-sim")])

    class Term(Terminal):
        def __init__(self) -> None:
            self.seen = b""

        def type(self, data: bytes) -> None:
            os.write(fd, data)

        def expect(self, wanted: bytes, timeout: float = 60.0) -> bytes:
            deadline = time.monotonic() + timeout
            while wanted not in self.seen:
                left = deadline - time.monotonic()
                assert left > 0, f"no {wanted!r}; got {self.seen!r}"
                ready, _, _ = select.select([fd], [], [], min(left, 0.2))
                if ready:
                    try:
                        self.seen += os.read(fd, 4096)
                    except OSError:
                        break
            got, _, self.seen = self.seen.partition(wanted)
            return got + wanted

    t = Term()
    try:
        t.expect(b"table-controller ready")
        t.expect(b"> ")
        t.type(b"passwd 48151623\r")
        assert b"passwd ********\r" in t.expect(b"PIN set; logged in")
        t.expect(b"OK\r")
        said = b""
        for button in (b"shuffled", b"no_more_bets", b"draw"):
            t.type(b"sim button " + button + b"\r")
            said += t.expect(b"OK\r")
        assert b"round 1 betting" in said and b"round 1 dealing" in said
        drawn = said.split(b"!DISPLAY ")[-1].split(b"\r")[0]
        assert drawn.isdigit() and 1 <= int(drawn) <= 8, said
        t.expect(b"> ")
        t.type(b"sim button dealt\r")
        assert b"!DISPLAY blank" in t.expect(b"OK\r")
        t.type(b"\x04")  # Ctrl-D on an empty line quits
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                assert os.waitstatus_to_exitcode(status) == 0
                return
            time.sleep(0.1)
        raise AssertionError("run-sim did not end on Ctrl-D")
    finally:
        try:
            os.kill(pid, signal.SIGTERM)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(fd)


class Tmux:
    """A tmux server of its own (its socket in the test's directory) with one 100x30 window
    running ``command``: keys go in as tmux sends a terminal's keys, the screen comes back as
    tmux's terminal emulator draws it (``capture-pane``)."""

    def __init__(self, tmux: str, folder: Path, command: list[str], env: dict[str, str]) -> None:
        import shlex
        import subprocess

        self._run_cmd = subprocess.run
        self.tmux = tmux
        self.socket = folder / "tmux.sock"
        line = " ".join(shlex.quote(c) for c in command)
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        self.run("new-session", "-d", "-x", "100", "-y", "30", f"env {exports} {line}")

    def run(self, *args: str) -> str:
        out = self._run_cmd(
            [self.tmux, "-S", str(self.socket), "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            check=True,
        )
        return out.stdout

    def keys(self, *keys: str) -> None:
        self.run("send-keys", *keys)

    def screen(self) -> list[str]:
        return [line.rstrip() for line in self.run("capture-pane", "-p").splitlines()]

    def cursor(self) -> tuple[int, int]:
        x, y = self.run("display-message", "-p", "#{cursor_x} #{cursor_y}").split()
        return int(x), int(y)

    def wait(self, ready: Any, what: str) -> list[str]:
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            lines = self.screen()
            if ready(lines):
                return lines
            if time.monotonic() > deadline:
                raise AssertionError(f"tmux never showed {what}; screen:\n" + "\n".join(lines))
            time.sleep(0.1)

    def prompt_line(self) -> str:
        """The line the cursor is on (the one being typed)."""
        return self.screen()[self.cursor()[1]]

    def close(self) -> None:
        self._run_cmd(
            [self.tmux, "-S", str(self.socket), "kill-server"], capture_output=True, timeout=10
        )


def test_history_and_in_line_editing_in_a_real_terminal(tmp_path: Path) -> None:
    """The controller on sim-paigow with its console on tmux's terminal (raw mode, as
    ``./run-sim`` runs it): Up/Down recall earlier lines, Left/Right/Home/End move in the line,
    BS erases before the cursor and Delete under it, typing inserts; what the screen shows is
    what runs. tmux sends each key as its terminal does (``send-keys Up`` etc.)."""
    from tests.services._common import missing, which

    tmux = which("tmux")
    if tmux is None:
        missing("tmux", "tmux", "tmux")
    repo = Path(__file__).resolve().parents[2]
    profile = terminal_profile(tmp_path, "stdio")
    command = [
        sys.executable,
        "-m",
        "controller",
        "run",
        "--profile",
        str(profile),
        "--state-dir",
        str(tmp_path / "state"),
        "--console",
        "stdio",
        "--log-level",
        "error",
    ]
    env = {"PYTHONPATH": str(repo), "TERM": "screen"}
    term = Tmux(tmux, tmp_path, command, env)
    try:
        term.wait(lambda s: any(line == ">" for line in s), "the first prompt")
        term.keys("-l", "help status")
        term.keys("Enter")
        term.wait(lambda s: term.prompt_line() == ">", "help's reply and a new prompt")
        term.keys("-l", "statsu")
        term.wait(lambda s: term.prompt_line() == "> statsu", "the typing")
        term.keys("Left", "BSpace", "Right")  # "stats|u" -> "stat|u" -> "statu|"
        term.keys("-l", "s")
        term.wait(lambda s: term.prompt_line() == "> status", "the line edited")
        assert term.cursor()[0] == len("> status")
        term.keys("Home")
        term.keys("-l", "x")
        term.wait(lambda s: term.prompt_line() == "> xstatus", "x inserted at the start")
        assert term.cursor()[0] == 3
        term.keys("Left", "DC", "End")  # Delete under the cursor: the x goes
        term.wait(lambda s: term.prompt_line() == "> status", "the x deleted")
        term.wait(lambda s: term.cursor()[0] == len("> status"), "the cursor at the end")
        term.keys("Enter")
        term.wait(lambda s: any(line.startswith("state: inspection") for line in s), "status")
        term.wait(lambda s: term.prompt_line() == ">", "a new prompt")
        # the PIN is set (so a login line is typed) and never comes back with Up
        term.keys("-l", "passwd 48151623")
        term.keys("Enter")
        term.wait(lambda s: any("PIN set; logged in" in line for line in s), "the PIN set")
        term.wait(lambda s: term.prompt_line() == ">", "a new prompt")
        term.keys("Up")
        term.wait(lambda s: term.prompt_line() == "> status", "the last line but the PIN's")
        term.keys("Up")
        term.wait(lambda s: term.prompt_line() == "> help status", "the line before")
        term.keys("Up")  # nothing older: the line stays
        time.sleep(0.3)
        assert term.prompt_line() == "> help status"
        term.keys("Down", "Down")
        term.wait(lambda s: term.prompt_line() == ">", "the empty draft back")
        term.keys("-l", "confi")
        term.keys("Up", "Down")
        term.wait(lambda s: term.prompt_line() == "> confi", "the draft kept across Up/Down")
        term.keys("-l", "g show recall_depth")
        term.keys("Enter")
        term.wait(lambda s: any(line == "recall_depth = 20" for line in s), "the setting")
        screen = "\n".join(term.screen())
        assert "48151623" not in screen  # the PIN was never on screen
        assert "ERR" not in screen
    finally:
        term.close()
    kinds = journal_kinds(tmp_path / "state", "console.refused")
    assert kinds == []  # every line that ran was the one shown
