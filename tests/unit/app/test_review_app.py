"""The application loop, its faults and its shutdown (found in review). Each test stands on its
own; every wait has a timeout."""

from __future__ import annotations

import contextlib
import io
import os
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller import app as app_module
from controller import cli as cli_module
from controller.app import Application
from controller.config.profile import load_profile
from controller.console.transport import ConsoleTransport, StdioTransport
from controller.devices import BuiltDevices, close_devices
from controller.events import Call, Shutdown
from controller.journal.store import JournalIOError
from controller.sdnotify import Notifier
from controller.tables.table import Devices

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Application]:
    monkeypatch.delenv("TABLE_CONTROLLER_MANIFEST", raising=False)
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    application = Application(
        load_profile(ROOT / "hw_profiles" / "sim-paigow.toml"), tmp_path, console_port="none"
    )
    yield application
    application.close()


def _disk_full(*_args: Any, **_kwargs: Any) -> int:
    raise JournalIOError("journal write failed (journal.sqlite): database or disk is full")


def test_a_signal_handler_may_post_while_the_loop_holds_the_queue(app: Application) -> None:
    # cli's SIGTERM handler runs on the loop thread, between two bytecodes of whatever it was
    # doing -- possibly inside the queue's get() with the queue's lock held. queue.Queue's put()
    # takes that same (non-reentrant) lock, so the handler would wait for itself forever.
    posted = threading.Event()

    def interrupted_loop() -> None:
        held = getattr(app.queue, "mutex", None)  # queue.Queue's lock, as get() holds it
        with held if held is not None else contextlib.nullcontext():
            app.post(Shutdown("signal SIGTERM"))
            posted.set()

    threading.Thread(target=interrupted_loop, daemon=True).start()
    assert posted.wait(5.0), "post() blocked on the lock its own thread holds"


def test_a_journal_error_in_a_loop_call_is_a_fault(app: Application) -> None:
    def write_on_a_full_disk() -> None:
        _disk_full()

    app.dispatch(Call(write_on_a_full_disk))  # as _verify_whole_journal's record() is posted
    assert any(f.startswith("journal: ") and "disk is full" in f for f in app.faults())


def test_a_failing_loop_call_without_a_caller_is_journaled(app: Application) -> None:
    def broken() -> None:
        raise RuntimeError("handler bug")

    app.dispatch(Call(broken))
    row = app.journal.last(["app.error"])
    assert row is not None and "handler bug" in row.data["error"]


def test_shutdown_on_a_full_disk_ends_the_loop_with_a_fault(
    app: Application, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(app.journal, "append", _disk_full)
    app.post(Shutdown("signal SIGTERM"))
    errors: list[BaseException] = []

    def loop() -> None:
        try:
            app.run()
        except BaseException as exc:  # noqa: BLE001 - recorded for the assertion
            errors.append(exc)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    thread.join(10.0)
    assert not thread.is_alive()
    assert errors == []
    assert any(f.startswith("journal: ") for f in app.faults())


def test_devices_are_closed_once_though_table_and_application_both_close_them() -> None:
    calls: list[str] = []
    devices = BuiltDevices(
        Devices(), closers=[lambda: calls.append("display"), lambda: calls.append("gpio")]
    )
    assert close_devices(devices) == []
    assert close_devices(devices) == []
    assert calls == ["display", "gpio"]


def test_the_table_registry_is_not_mutable_module_state() -> None:
    with pytest.raises(TypeError):
        app_module.TABLES["other"] = ("x", "y")  # type: ignore[index]


# -- console transports stop at close() --------------------------------------------------------


class _SilentLoop(ConsoleTransport):
    """A transport whose one line is posted to a loop that never answers (it has stopped)."""

    def __init__(self) -> None:
        super().__init__(lambda event: None)
        self._lines = [b"status\n"]
        self.written = io.BytesIO()

    def _read(self) -> bytes | None:
        if self._lines:
            return self._lines.pop()
        self._stop.wait(0.05)
        return None

    def _write(self, data: bytes) -> None:
        self.written.write(data)

    def _eof(self) -> bool:
        return False


def test_close_ends_a_reader_waiting_for_a_reply_that_will_not_come() -> None:
    transport = _SilentLoop()
    transport.start()
    thread = transport._thread  # noqa: SLF001 - the test checks the thread it started ended
    assert thread is not None
    transport.close(timeout=2.0)
    assert not thread.is_alive()


def test_close_ends_the_stdio_reader_blocked_on_an_idle_stdin(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read_fd, write_fd = os.pipe()
    stdin = io.TextIOWrapper(io.FileIO(read_fd, "rb"))
    try:
        monkeypatch.setattr(sys, "stdin", stdin)
        transport = StdioTransport(lambda event: None, stdout=io.BytesIO())
        transport.start()
        thread = transport._thread  # noqa: SLF001 - the test checks the thread it started ended
        assert thread is not None
        transport.close(timeout=2.0)
        assert not thread.is_alive()
    finally:
        os.close(write_fd)
        stdin.close()


# -- systemd notify ----------------------------------------------------------------------------


def test_notify_never_hangs_on_a_socket_nobody_reads(tmp_path: Path) -> None:
    path = str(tmp_path / "notify")
    receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    receiver.bind(path)
    notifier = Notifier({"NOTIFY_SOCKET": path})
    outcomes: list[bool] = []

    def send_until_refused() -> None:
        for _ in range(10_000):  # far more than the socket queues unread
            outcomes.append(notifier.notify("WATCHDOG=1"))
            if not outcomes[-1]:
                return

    thread = threading.Thread(target=send_until_refused, daemon=True)
    try:
        thread.start()
        thread.join(30.0)
        assert not thread.is_alive(), "notify() blocked on a full socket"
        assert outcomes[0] is True and outcomes[-1] is False
    finally:
        notifier.close()
        receiver.close()


# -- the run command -----------------------------------------------------------------------------


def test_run_closes_the_application_when_the_start_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from controller.cli import main

    path = str(tmp_path / "notify")
    receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    receiver.bind(path)
    receiver.settimeout(5.0)
    monkeypatch.setenv("NOTIFY_SOCKET", path)
    monkeypatch.delenv("TABLE_CONTROLLER_MANIFEST", raising=False)

    def no_console(_app: object) -> None:
        raise OSError("the console could not be set up")

    # (A serial console that cannot be opened is no longer a failed start: it is reopened with
    # back-off while the table plays, tests/integration/test_console_terminal.py.)
    monkeypatch.setattr(cli_module, "_open_console", no_console)
    try:
        status = main(
            [
                "run",
                "--profile",
                str(ROOT / "hw_profiles" / "sim-paigow.toml"),
                "--state-dir",
                str(tmp_path / "state"),
                "--console",
                str(tmp_path / "no-such-tty"),
            ]
        )
        assert status == 1
        assert receiver.recv(4096) == b"STOPPING=1"  # closed: drivers, journal, consoles
    finally:
        receiver.close()


def test_start_up_checks_only_the_rows_since_the_newest_signed_head(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """READY=1 must come fast after years of rounds: start-up walks only the rows after the
    newest signed head; a row edited before it (its stored hash left alone) passes that check,
    and the background scrub, which walks everything in slices, finds it."""
    import sqlite3

    monkeypatch.delenv("TABLE_CONTROLLER_MANIFEST", raising=False)
    profile = load_profile(Path("hw_profiles/sim-paigow.toml"))
    first = Application(profile, tmp_path, console_port="none")
    first.start()
    for i in range(50):
        first.journal.append("test.row", {"i": i})
    first.close()  # the last head is signed and anchored at shutdown

    second = Application(profile, tmp_path, console_port="none")
    assert second.last_verify.ok
    assert second.last_verify.rows < 10  # the rows after the newest signed head only
    second.close()

    raw = sqlite3.connect(tmp_path / "journal.sqlite", isolation_level=None)
    raw.execute("DROP TRIGGER rows_no_update")
    last_test_row = raw.execute(
        "SELECT MAX(r.seq) FROM rows r JOIN kinds k ON k.id = r.kind WHERE k.kind = 'test.row'"
    ).fetchone()[0]
    raw.execute("UPDATE rows SET data = '{\"i\":999}' WHERE seq = ?", (last_test_row,))
    raw.close()
    third = Application(profile, tmp_path, console_port="none")
    assert third.last_verify.ok  # before the newest signed head: not walked at start
    third.start()
    third.trust.maintenance.scrub_now()
    for _ in range(200):  # the scrub posts its verdict to the loop: serve it (10 s at most)
        if any("journal verification failed" in f for f in third.app_faults):
            break
        if not third.queue.empty():
            third.run(max_events=1)
        threading.Event().wait(0.05)
    assert any(
        "journal verification failed" in f and f"row {last_test_row}" in f for f in third.app_faults
    )
    third.close()
