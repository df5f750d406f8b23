"""``rng.background_cycle`` (controller/rng/cycle.py; docs/rng.md "Cycling and seeding"): the
worker discards health-tested bytes of the source at random pauses, between and during draws;
a fault it finds latches before the next draw; and every draw's raw bytes remain one unbroken
run of the source's output that replays into its outcome (N.J.A.C. 13:69E-1.28G(b)6 scaling,
the lab's ``rng/replay.py``)."""

from __future__ import annotations

import io
import os
import threading
from pathlib import Path

import pytest

from controller.config.profile import RngSettings
from controller.lab import replay
from controller.rng.certified import CertifiedRng, RngFault, outcomes_from_raw
from controller.rng.cycle import MAX_DISCARD, BackgroundCycle

from .sources import CyclingSource


class Recording:
    """The kernel's CSPRNG; every read recorded in order with the thread that made it."""

    def __init__(self) -> None:
        self.calls: list[tuple[bool, bytes]] = []
        self._lock = threading.Lock()
        self._main = threading.get_ident()

    def __call__(self, count: int) -> bytes:
        data = os.urandom(count)
        with self._lock:
            self.calls.append((threading.get_ident() == self._main, data))
        return data


def test_off_by_default() -> None:
    assert RngSettings().background_cycle is False


def test_pauses_and_sizes_cover_their_bounds_and_nothing_else() -> None:
    rng = CertifiedRng(CyclingSource(), hwrng_path=None, entropy_ready=lambda: True)
    lows = BackgroundCycle(rng, min_pause_s=0.005, max_pause_s=0.05, below=lambda n: 0)
    highs = BackgroundCycle(rng, min_pause_s=0.005, max_pause_s=0.05, below=lambda n: n - 1)
    assert lows.pause_s() == 0.005 and highs.pause_s() == 0.05
    assert lows.step() == 1 and highs.step() == MAX_DISCARD
    real = BackgroundCycle(rng)
    pauses = {real.pause_s() for _ in range(2000)}
    assert min(pauses) >= 0.005 and max(pauses) <= 0.05 and len(pauses) > 1000


def test_discards_are_health_tested_and_a_fault_latches_before_the_next_draw() -> None:
    source = CyclingSource()
    rng = CertifiedRng(source, hwrng_path=None, entropy_ready=lambda: True)
    cycle = BackgroundCycle(rng)
    assert rng.draw(1, 8) in range(1, 9)
    source.stuck = 0x55  # the source sticks between games (SP 800-90B 4.4.1: RCT)
    for _ in range(200):
        cycle.step()
        if rng.faulted:
            break
    assert rng.faulted and "repetition" in (rng.fault_reason or "").lower()
    assert cycle.step() == 0 and cycle.counters.refused >= 1  # in fault: reads nothing
    with pytest.raises(RngFault):
        rng.draw(1, 8)  # the dealer goes to dice (5324.50(a)(3))


def test_every_draw_and_capture_stays_one_run_of_the_source_while_cycling() -> None:
    source = Recording()
    rng = CertifiedRng(source, hwrng_path=None, entropy_ready=lambda: True)
    rng.self_test()
    cycle = BackgroundCycle(rng, min_pause_s=0.00001, max_pause_s=0.0002)
    cycle.start()
    draws: list[tuple[int, bytes, int, int]] = []  # value, raw, the reads before and after
    captures: list[tuple[bytes, int, int]] = []
    try:
        for i in range(3000):
            before = len(source.calls)
            value, raw = rng.draw_with_raw(1, 6) if i % 2 else rng.draw_with_raw(1, 8)
            draws.append((value, raw, before, len(source.calls)))
            if i % 500 == 0:  # a lab's raw capture (controller/rng/lab.py capture_raw)
                before = len(source.calls)
                data = rng.read_raw(4096)
                captures.append((data, before, len(source.calls)))
    finally:
        cycle.stop()
    assert not cycle.running
    assert cycle.counters.discards > 0, "the worker never ran"
    assert any(not main for main, _ in source.calls)
    for i, (value, raw, before, after) in enumerate(draws):
        low, high = (1, 6) if i % 2 else (1, 8)
        assert outcomes_from_raw(raw, low, high) == [value]
        with io.BytesIO(raw) as f:
            assert list(replay.outcomes(f, low, high)) == [value]  # the lab's own replay
        # the draw's reads: the main thread's between the marks, with no discard among them
        reads = source.calls[before:after]
        mains = [k for k, (main, _) in enumerate(reads) if main]
        assert mains == list(range(mains[0], mains[-1] + 1)), f"draw {i} split by a discard"
        assert b"".join(reads[k][1] for k in mains) == raw
    for data, before, after in captures:
        reads = source.calls[before:after]
        assert [d for main, d in reads if main] == [data]  # one read, whole


def test_the_table_runs_the_worker_only_when_its_profile_asks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from controller.app import Application
    from controller.config.profile import load_profile

    monkeypatch.delenv("TABLE_CONTROLLER_MANIFEST", raising=False)
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    root = Path(__file__).resolve().parents[3]
    for on in (False, True):
        profile = tmp_path / f"cycle-{on}.toml"
        profile.write_text(
            f'include = "{root / "hw_profiles" / "sim-paigow.toml"}"\n'
            f"[rng]\nbackground_cycle = {str(on).lower()}\n",
            encoding="utf-8",
        )
        app = Application(load_profile(profile), tmp_path / f"state-{on}", console_port="none")
        try:
            app.start()
            assert (app.rng_cycle is not None and app.rng_cycle.running) is on
            value, raw = app.rng.draw_with_raw(1, 8)
            assert outcomes_from_raw(raw, 1, 8) == [value]
        finally:
            app.close()
        assert app.rng_cycle is None or not app.rng_cycle.running
