"""A table whose TPM goes away (a real software TPM stopped): a head that cannot take the
counter is not signed and play stops with a fault; a start that cannot read the counter is a
journal finding (docs/journal.md "The TPM counter")."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from controller.app import Application
from controller.config.profile import Profile, load_profile
from drivers.buttons import ButtonPressed
from tests.reliability.harness import PROFILES
from tests.services.swtpm import SwTpm


def _profile(tcti: str) -> Profile:
    base = load_profile(PROFILES / "sim-paigow.toml")
    return dataclasses.replace(base, journal=dataclasses.replace(base.journal, counter=tcti))


def _wait_fault(app: Application, text: str, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    while True:
        if not app.queue.empty():
            app.run(max_events=1)  # the notary's report, run by the loop as it would be
        found = [f for f in app.faults() if text in f]
        if found:
            return found[0]
        assert time.monotonic() < deadline, app.faults()
        time.sleep(0.05)


def test_a_tpm_gone_while_running_stops_play(tmp_path: Path, swtpm_tpm: SwTpm) -> None:
    app = Application(_profile(swtpm_tpm.tcti), tmp_path, console_port="none")
    try:
        app.start()
        assert app.trust.notary.wait_idle(10)
        swtpm_tpm.stop()
        for name in ("shuffled", "no_more_bets", "draw"):
            app.dispatch(ButtonPressed(name, 0))
        assert app.trust.notary.wait_idle(60)
        fault = _wait_fault(app, "journal signing")
        assert f"TPM {swtpm_tpm.tcti}" in fault
    finally:
        swtpm_tpm.start()
        app.close()


def test_a_counter_that_cannot_be_read_at_start_is_a_finding(
    tmp_path: Path, swtpm_tpm: SwTpm
) -> None:
    profile = _profile(swtpm_tpm.tcti)
    app = Application(profile, tmp_path, console_port="none")
    app.start()
    app.close()
    swtpm_tpm.stop()
    app = Application(profile, tmp_path, console_port="none")
    try:
        app.start()
        assert [f for f in app.app_faults if "the TPM counter cannot be read" in f], app.app_faults
    finally:
        app.close()
