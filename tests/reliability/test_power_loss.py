"""Power loss is not SIGKILL (issue 8): every RNG draw and every card is on stable storage before
it is shown or acknowledged.

1. The storage moment: at the instant the table drives the display with a drawn number, and at
   the instant it acknowledges a shoe frame, the journal's files (``journal.sqlite`` and its
   ``-wal``) are copied as they are. A power cut at that instant leaves at most that (the
   system-call trace below shows nothing unsynced is pending then). Each copy must verify, must
   hold the draw / the card, and a controller restarted from the copy must show the same number
   (pai gow) or resume the coup with that card (baccarat).
2. The system-call trace (when ``strace`` is installed; CI's .ci/run installs it): the real
   process under strace, one pai gow round on the serial LED display and one baccarat coup on a
   pty shoe: every journal write is followed by a returned ``fdatasync``/``fsync`` before the
   display write / the ``$ACK`` write, and the drawn number waited for exactly ONE sync after
   the draw button's input (one transaction per input, issue 13;
   bench/power_loss_trace.py, the longer version).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.app import Application
from controller.config.profile import load_profile
from controller.events import Shutdown
from controller.journal.store import Journal
from controller.journal.verify import check_chain
from tests.reliability.harness import PROFILES, REPO

sys.path.insert(0, str(REPO / "bench"))

WAIT_S = 10.0


@pytest.fixture
def workdir() -> Iterator[Path]:
    base = "/dev/shm" if Path("/dev/shm").is_dir() else None
    path = Path(tempfile.mkdtemp(prefix="power-loss-", dir=base))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def snapshot_files(state: Path, dest: Path) -> Path:
    """Copy the journal's files as they are on disk now (WAL first: it is what is appended to),
    with the signing key and the anchor, and the simulated shoe's state (the shoe has its own
    power: it is not cut with the controller's)."""
    dest.mkdir(parents=True)
    for name in (
        "journal.sqlite-wal",
        "journal.sqlite",
        "journal-key.pem",
        "journal.anchor",
        "sim-shoe.json",
    ):
        src = state / name
        if src.exists():
            shutil.copyfile(src, dest / name)
    return dest


def open_copy(copy: Path) -> Journal:
    return Journal(copy / "journal.sqlite")


class Running:
    def __init__(self, profile: Any, state: Path) -> None:
        self.app = Application(profile, state, console_port="none")
        self.notes = self.app.start()
        self.thread = threading.Thread(target=self.app.run, daemon=True)
        self.thread.start()

    def call(self, fn: Callable[[], Any]) -> Any:
        return self.app.call(fn, timeout=WAIT_S)

    def stop(self) -> None:
        self.app.post(Shutdown("test"))
        self.thread.join(WAIT_S)
        assert not self.thread.is_alive()
        self.app.close()


def test_every_draw_is_in_the_journal_on_disk_when_it_is_shown(workdir: Path) -> None:
    profile = load_profile(PROFILES / "sim-paigow.toml")
    state = workdir / "state"
    run = Running(profile, state)
    display = run.app.devices.table.display
    copies: list[tuple[int, Path]] = []
    real_show = display.show

    def show(n: int) -> None:  # runs on the loop thread: no write is in progress
        copies.append((n, snapshot_files(state, workdir / f"copy{len(copies)}")))
        real_show(n)

    display.show = show
    table = run.app.table
    try:
        for _ in range(5):
            for name in ("shuffled", "no_more_bets", "draw", "dealt", "hands_set", "settled"):
                run.call(lambda name=name: table.action("sim", ["button", name], "test"))
    finally:
        run.stop()
    assert len(copies) == 5
    for n, copy in copies:
        journal = open_copy(copy)
        try:
            assert check_chain(journal).ok
            drawn = journal.last(["paigow.drawn"])
            assert drawn is not None
            assert drawn.data["record"]["number"] == n
        finally:
            journal.close()
    # a restart from what the power cut left shows the same number, in the same round
    n, copy = copies[-1]
    again = Application(profile, copy, console_port="none")
    try:
        again.start()
        status = again.status()
        assert status["state"] == "dealing"
        assert status["number"] == str(n)
    finally:
        again.close()


def test_every_card_is_in_the_journal_on_disk_when_it_is_acknowledged(workdir: Path) -> None:
    profile = load_profile(PROFILES / "sim-baccarat.toml")
    state = workdir / "state"
    run = Running(profile, state)
    table: Any = run.app.table
    sim = run.app.devices.table.sim.shoe
    shoe = table.link.reader
    copies: list[tuple[int, Path]] = []
    real_ack = shoe.acknowledge

    def acknowledge(sid: str, seq: int) -> None:  # by the table on the loop thread after append
        copies.append((seq, snapshot_files(state, workdir / f"copy{len(copies)}")))
        real_ack(sid, seq)

    shoe.acknowledge = acknowledge

    def state_now() -> str:
        return str(run.call(lambda: table.state))

    def wait_acked() -> None:
        deadline = time.monotonic() + WAIT_S
        while not sim.wait_delivered(0.05):
            assert time.monotonic() < deadline, "not acknowledged"

    try:
        wait_acked()
        run.call(lambda: table.action("sim", ["button", "shuffled"], "test"))
        while state_now() in ("shuffle", "burn"):
            run.call(lambda: sim.deal(1))
            wait_acked()
        run.call(lambda: table.action("curator", ["1"], "test"))
        run.call(lambda: table.action("sim", ["button", "no_more_bets"], "test"))
        for _ in range(3):  # three cards of the coup, then the power cut
            run.call(lambda: sim.deal(1))
            wait_acked()
        coup = list(run.call(lambda: table.data.coup))
    finally:
        run.stop()
    frames = [c for c in copies]
    assert len(frames) >= 5
    for seq, copy in frames:
        journal = open_copy(copy)
        try:
            assert check_chain(journal).ok
            seqs = {
                int(e.data["seq"]) for e in journal.events(kinds=["shoe.frame", "shoe.session"])
            }
            assert seq in seqs, f"$ACK {seq} would go out before frame {seq} is on disk"
        finally:
            journal.close()
    _, copy = copies[-1]
    again = Application(profile, copy, console_port="none")
    try:
        again.start()
        assert again.table.state == "dealing"
        assert list(again.table.data.coup) == coup
    finally:
        again.close()


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
def test_the_system_call_trace_shows_sync_before_display_and_ack(workdir: Path) -> None:
    import power_loss_trace as plt

    guarded, writes, syncs, numbers = plt.run_paigow(workdir, rounds=1)
    shown = [g for g in guarded if g.what != "D"]
    assert [g.what for g in shown] == [f"D{numbers[0]}"]
    assert writes and syncs
    assert all(g.ok for g in shown), shown
    # one transaction per input: the number waited for exactly one sync after the button
    assert [g.waited_syncs for g in shown] == [1], shown
    guarded, writes, syncs, acked = plt.run_baccarat(workdir, coups=1)
    assert len(guarded) >= 5
    assert all(g.ok for g in guarded), [g for g in guarded if not g.ok]
    assert {int(g.what.split(",")[1]) for g in guarded} <= set(acked)
