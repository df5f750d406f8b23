"""The RNG on a slow hardware generator, in the application (issue 15): the start-up health test
runs before the table is ready, and ``rng test`` / ``rng capture`` run off the loop thread with
progress lines, never holding the table and never latching a fault on a slow source."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.app import Application
from controller.config.profile import load_profile
from controller.events import ConsoleLine, Shutdown
from tests.unit.rng.sources import SlowGenerator

ROOT = Path(__file__).resolve().parents[3]
PIN = "48151623"


@pytest.fixture
def slow_app(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Application, SlowGenerator]]:
    monkeypatch.delenv("TABLE_CONTROLLER_MANIFEST", raising=False)
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    # about 3.2 kB/s in 64-byte bursts, like a VM's virtio-rng
    generator = SlowGenerator(tmp_path / "hwrng", burst=64, every_s=0.02)
    profile = tmp_path / "slow.toml"
    profile.write_text(
        f'include = "{ROOT / "hw_profiles" / "sim-paigow.toml"}"\n'
        f'[rng]\nhwrng_path = "{tmp_path / "hwrng"}"\n',
        encoding="utf-8",
    )
    app = Application(load_profile(profile), tmp_path / "state", console_port="none")
    try:
        yield app, generator
    finally:
        app.post(Shutdown("test over"))
        app.close()
        generator.close()


class Answer:
    """One console line's reply and progress, as a transport would collect them."""

    def __init__(self) -> None:
        self.progress: list[str] = []
        self.reply: list[str] = []
        self.done = threading.Event()

    def line(self, text: str) -> ConsoleLine:
        def reply(lines: list[str]) -> None:
            self.reply = lines
            self.done.set()

        return ConsoleLine(text, reply, "serial", self.progress.extend)


def ask(app: Application, text: str, timeout: float = 30.0) -> Answer:
    answer = Answer()
    app.post(answer.line(text))
    assert answer.done.wait(timeout), f"no reply to {text!r}"
    return answer


@pytest.fixture
def running(slow_app: tuple[Application, SlowGenerator]) -> Iterator[Application]:
    """The slow-generator application started, its loop running, a technician logged in."""
    app, _gen = slow_app
    app.start()
    loop = threading.Thread(target=app.run, daemon=True)
    loop.start()
    try:
        assert ask(app, f"passwd {PIN}").reply[-1] == "OK"
        yield app
    finally:
        app.post(Shutdown("test over"))
        loop.join(10)


def test_the_start_up_test_runs_before_ready_on_a_slow_generator(
    slow_app: tuple[Application, SlowGenerator],
) -> None:
    app, _gen = slow_app
    notes = app.start()
    row = app.journal.last(["rng.startup"])
    assert row is not None and row.data["passed"] is True, row
    assert "hardware RNG" in row.data["monitors"]
    assert any(n.startswith("RNG start-up test passed") for n in notes)
    assert app.rng is not None and not app.rng.faulted


def test_a_capture_runs_off_the_loop_with_progress_and_latches_no_fault(
    running: Application,
) -> None:
    app = running
    capture = Answer()
    started = time.monotonic()
    app.post(capture.line("rng capture raw 9000 slow.bin"))  # ~3 s of hardware bytes
    # the loop answers other work at once while the capture runs
    waits = []
    while not capture.done.is_set():
        t0 = time.monotonic()
        app.call(lambda: None, timeout=5.0)
        waits.append(time.monotonic() - t0)
        status = ask(app, "status").reply
        assert "faults: none" in status
        time.sleep(0.2)
        assert time.monotonic() - started < 60, "the capture did not finish"
    assert max(waits) < 1.0, waits
    assert len(waits) >= 3, "the capture ended before the loop was asked anything"
    assert capture.reply[-1] == "OK", capture.reply
    assert capture.reply[0].startswith("captured 9,000 raw bytes to ")
    assert capture.progress[0].startswith("rng capture: 9,000 raw bytes: started")
    assert any("of 9,000 bytes" in line for line in capture.progress[1:]), capture.progress
    assert (app.state_dir / "captures" / "slow.bin").stat().st_size == 9000
    assert app.rng is not None and not app.rng.faulted
    row = app.journal.last(["rng.capture"])
    assert row is not None and row.data["count"] == 9000


def test_a_table_draw_is_not_held_by_a_running_test(running: Application) -> None:
    app = running
    test = Answer()
    app.post(test.line("rng test 8000"))
    time.sleep(0.5)
    assert not test.done.is_set()
    for step in ("shuffled", "no_more_bets", "draw"):
        reply = ask(app, f"sim button {step}", timeout=10).reply
        assert reply[-1] == "OK", reply
    assert app.call(lambda: app.table.status()["state"]) == "dealing"
    assert test.done.wait(60), "rng test did not finish"
    assert test.reply[-1] in ("OK", "ERR FAULT the statistical check failed"), test.reply


def test_a_second_job_while_one_runs_is_refused(running: Application) -> None:
    app = running
    first = Answer()
    app.post(first.line("rng capture raw 6000 one.bin"))
    time.sleep(0.3)
    second = ask(app, "rng test 100").reply
    assert second[-1].startswith("ERR STATE rng capture: 6,000 raw bytes is still running")
    assert first.done.wait(60)
