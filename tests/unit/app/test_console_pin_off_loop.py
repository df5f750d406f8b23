"""A login's or passwd's scrypt runs off the loop thread (docs/console.md "Access"): with a slow
key derivation, a dealer's button pressed while a login is being checked is handled before the
login's reply, and a second login meanwhile is refused, not queued behind it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.app import Application
from controller.config.profile import load_profile
from controller.console import auth
from controller.events import ConsoleLine, Shutdown
from drivers.buttons import ButtonPressed

ROOT = Path(__file__).resolve().parents[3]
PIN = "48151623"
WAIT_S = 10.0
SCRYPT = auth.derive


class Gate:
    """A key derivation that, once closed, holds each PIN check until it is opened."""

    def __init__(self) -> None:
        self.closed = False
        self.entered = threading.Event()
        self.opened = threading.Event()
        self.threads: list[str] = []

    def derive(self, pin: str, salt: bytes, n: int, r: int, p: int, dklen: int) -> bytes:
        self.threads.append(threading.current_thread().name)
        if self.closed:
            self.entered.set()
            assert self.opened.wait(WAIT_S), "the test never opened the gate"
        return SCRYPT(pin, salt, n, r, p, dklen)


class Watcher:
    """Another console: what the table says unasked, in order, with the replies."""

    name = "watcher"

    def __init__(self) -> None:
        self.events: list[str] = []
        self.cond = threading.Condition()

    def send_unsolicited(self, lines: list[str]) -> None:
        with self.cond:
            self.events.extend(lines)
            self.cond.notify_all()

    def close(self) -> None:
        """Nothing to close: the test reads what it was sent."""

    def note(self, text: str) -> None:
        with self.cond:
            self.events.append(text)
            self.cond.notify_all()

    def wait_for(self, prefix: str) -> bool:
        with self.cond:
            return self.cond.wait_for(
                lambda: any(e.startswith(prefix) for e in self.events), WAIT_S
            )


def ask(
    app: Application, text: str, source: str = "serial"
) -> tuple[threading.Event, list[list[str]]]:
    done = threading.Event()
    box: list[list[str]] = []

    def reply(lines: list[str]) -> None:
        box.append(lines)
        done.set()

    app.post(ConsoleLine(text, reply, source))
    return done, box


@pytest.fixture
def table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Application, Gate, Watcher]]:
    monkeypatch.delenv("TABLE_CONTROLLER_MANIFEST", raising=False)
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    gate = Gate()
    monkeypatch.setattr(auth, "derive", gate.derive)
    app = Application(
        load_profile(ROOT / "hw_profiles" / "sim-paigow.toml"), tmp_path, console_port="none"
    )
    watcher = Watcher()
    app.attach_console(watcher)
    app.start()
    loop = threading.Thread(target=app.run, daemon=True)
    loop.start()
    try:
        done, box = ask(app, f"passwd {PIN}")
        assert done.wait(WAIT_S) and box[0][-1] == "OK", box
        done, box = ask(app, "logout")
        assert done.wait(WAIT_S) and box[0][-1] == "OK", box
        yield app, gate, watcher
    finally:
        gate.opened.set()
        app.post(Shutdown("test over"))
        loop.join(WAIT_S)
        app.close()


def test_a_button_is_handled_while_a_login_is_being_checked(
    table: tuple[Application, Gate, Watcher],
) -> None:
    app, gate, watcher = table
    assert gate.threads and "MainThread" not in gate.threads  # passwd hashed off the loop
    gate.closed = True
    done, box = ask(app, f"login {PIN}")
    assert gate.entered.wait(WAIT_S), "the login never reached scrypt"
    app.post(ButtonPressed("shuffled", time.monotonic_ns()))
    assert watcher.wait_for("!BUTTON shuffled"), (
        f"the button was not handled while the login was checked: {watcher.events}"
    )
    assert not done.is_set()  # the login is still being checked
    # a second login meanwhile is refused at once (no queue behind a PIN check)
    other_done, other = ask(app, f"login {PIN}", "stdio")
    assert other_done.wait(WAIT_S)
    assert other[0][-1].startswith("ERR STATE another login or passwd is being checked"), other
    gate.opened.set()
    assert done.wait(WAIT_S)
    assert box[0] == ["logged in", "OK"]
    assert app.journal.last(["console.login"]) is not None
    assert not any(name == threading.main_thread().name for name in gate.threads)
    loop_id = app.loop_thread_id
    assert loop_id is not None and threading.get_ident() != loop_id
