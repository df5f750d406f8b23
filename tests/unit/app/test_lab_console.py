"""The console's ``lab package``: made on a worker thread from the running table's own RNG,
journal, key and settings, while the loop keeps answering; journaled; refused mid-round and
without a login; the package it makes verifies."""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.app import Application
from controller.config.profile import load_profile
from controller.events import Shutdown
from controller.lab import suite
from controller.lab import table as lab_table
from controller.lab.check import verify_package
from controller.lab.package import PackageRequest, PackageResult
from tests.unit.app.test_rng_startup_and_jobs import PIN, ROOT, Answer, ask
from tests.unit.rng.sources import SlowGenerator

FAST_SUITE = suite.SuiteSummary(how="a stub for this test", by_area={})


@pytest.fixture
def running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Application, threading.Thread]]:
    """The sim pai gow table with a slow hardware generator (about 3.2 kB/s, so a package of a
    few thousand bytes takes seconds), its loop on a thread of its own."""
    monkeypatch.delenv("TABLE_CONTROLLER_MANIFEST", raising=False)
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    monkeypatch.setattr(suite, "collect", lambda root, python="": FAST_SUITE)
    generator = SlowGenerator(tmp_path / "hwrng", burst=64, every_s=0.02)
    profile = tmp_path / "slow.toml"
    profile.write_text(
        f'include = "{ROOT / "hw_profiles" / "sim-paigow.toml"}"\n'
        f'[rng]\nhwrng_path = "{tmp_path / "hwrng"}"\n',
        encoding="utf-8",
    )
    app = Application(load_profile(profile), tmp_path / "state", console_port="none")
    app.start()
    loop = threading.Thread(target=app.run, name="table-loop", daemon=True)
    loop.start()
    try:
        assert ask(app, f"passwd {PIN}").reply[-1] == "OK"
        yield app, loop
    finally:
        app.post(Shutdown("test over"))
        loop.join(10)
        app.close()
        generator.close()


def test_lab_package_runs_on_a_worker_while_the_loop_answers(
    running: tuple[Application, threading.Thread], monkeypatch: pytest.MonkeyPatch
) -> None:
    app, loop = running
    made_on: list[threading.Thread] = []
    real = lab_table.write_package

    def recording(request: PackageRequest) -> PackageResult:
        made_on.append(threading.current_thread())
        return real(request)

    monkeypatch.setattr(lab_table, "write_package", recording)
    job = Answer()
    started = time.monotonic()
    app.post(job.line("lab package lab1 300 6000"))  # ~7,000 hardware bytes: seconds
    waits = []
    while not job.done.is_set():
        t0 = time.monotonic()
        app.call(lambda: None, timeout=5.0)
        waits.append(time.monotonic() - t0)
        assert "faults: none" in ask(app, "status").reply
        time.sleep(0.2)
        assert time.monotonic() - started < 120, "the package was not made"
    assert len(waits) >= 3, "the package was made before the loop was asked anything"
    assert max(waits) < 1.0, waits
    assert made_on and made_on[0] is not loop and made_on[0].name == "console-job"
    assert job.reply[-1] == "OK", job.reply
    assert job.progress[0] == "lab package lab1: started; the table plays on meanwhile"
    folder = app.state_dir / "captures" / "lab1"
    archive = folder.with_name("lab1.tar.gz")
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    assert job.reply[:3] == [f"lab package {folder}", f"archive {archive}", f"  sha256 {digest}"]
    assert any(line.startswith("signed by the table's journal key") for line in job.reply)
    verdict = verify_package(folder, app.trust.public_pem)  # sealed with the table's own key
    assert verdict.ok, verdict.problems
    row = app.journal.last(["lab.package"])
    assert row is not None and row.data["sha256"] == digest and row.data["source"] == "serial"
    assert app.rng is not None and not app.rng.faulted


def test_lab_package_is_refused_mid_round_and_without_a_login(
    running: tuple[Application, threading.Thread],
) -> None:
    app, _ = running
    assert ask(app, "logout").reply[-1] == "OK"
    assert ask(app, "lab package x 10 100").reply[-1].startswith("ERR AUTH")
    assert ask(app, f"login {PIN}").reply[-1] == "OK"
    for step in ("shuffled", "no_more_bets"):
        assert ask(app, f"sim button {step}").reply[-1] == "OK"
    assert ask(app, "lab package x 10 100").reply[-1] == (
        "ERR STATE lab package is refused while a round is in progress"
    )
    assert ask(app, "lab package").reply[-1] == (
        "ERR SYNTAX usage: lab package NAME [DRAWS [RAW-BYTES]]"
    )
    assert ask(app, "lab package ../x").reply[-1].startswith("ERR SYNTAX FILE is a plain file name")
    assert ask(app, "lab package x 1").reply[-1] == "ERR RANGE DRAWS must be 2 to 200,000, got 1"
    assert not (app.state_dir / "captures" / "x").exists()
