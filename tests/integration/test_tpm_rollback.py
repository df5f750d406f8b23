"""A round played while the feed was down, rolled back by root (docs/journal.md "The TPM
counter"): round 1 reaches the broker; the broker goes away; round 2 draws; root puts back the
state directory copied before round 2 (journal, WAL, anchor, key, feed position); the table
restarts. The journal, its anchor and `journal verify` agree with each other: only the TPM's NV
counter (a real software TPM here) remembers round 2's signed heads, and the start is a journal
finding that stops play. The same sequence without a TPM goes unnoticed (the hole the counter
closes, kept as a test so the docs' "cannot detect" stays true)."""

from __future__ import annotations

import dataclasses
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from controller.app import Application
from controller.cli import main
from controller.config.profile import FeedSettings, Profile, load_profile
from controller.journal.anchor import read_anchor
from controller.journal.store import Journal
from drivers.buttons import ButtonPressed
from drivers.counter import TpmCounter
from tests.reliability.harness import PROFILES, fast_tmpdir
from tests.services.mosquitto import MosquittoBroker
from tests.services.swtpm import SwTpm

STATE_FILES = (
    "journal.sqlite-wal",
    "journal.sqlite",
    "journal-key.pem",
    "journal.anchor",
    "feed.position",
)


@pytest.fixture
def work() -> Iterator[Path]:
    path = fast_tmpdir("tpm-rollback-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _profile(tcti: str | None, broker: MosquittoBroker) -> Profile:
    base = load_profile(PROFILES / "sim-paigow.toml")
    journal = dataclasses.replace(base.journal, counter=tcti or "none")
    assert broker.plain_port is not None
    feed = FeedSettings(f"mqtt://127.0.0.1:{broker.plain_port}", broker.site, "sim-paigow")
    return dataclasses.replace(base, journal=journal, feed=feed)


def _press(app: Application, *names: str) -> None:
    for name in names:
        app.dispatch(ButtonPressed(name, 0))


def _drawn(app: Application) -> list[int]:
    return [int(r.round) for r in app.journal.events(kinds=["paigow.drawn"])]


def _wait_acked(app: Application, timeout: float = 20.0) -> None:
    assert app.feed is not None
    deadline = time.monotonic() + timeout
    while app.feed.state().acked_seq < app.journal.last_seq:
        assert time.monotonic() < deadline, app.feed.state()
        time.sleep(0.05)


def _copy_state(state: Path, to: Path) -> None:
    to.mkdir()
    for name in STATE_FILES:  # the WAL first, as a copy taken while the table runs
        if (state / name).exists():
            shutil.copyfile(state / name, to / name)


def _play_then_roll_back(work: Path, profile: Profile, broker: MosquittoBroker) -> Path:
    """Round 1 published, the broker stopped, round 2 drawn and anchored; then the state
    directory is replaced by the copy from before round 2. Returns the state directory."""
    state = work / "state"
    app = Application(profile, state, console_port="none")
    try:
        app.start()
        _press(app, "shuffled", "no_more_bets", "draw", "dealt", "hands_set", "settled")
        assert len(_drawn(app)) == 1
        _wait_acked(app)  # round 1 reached the broker
        assert app.trust.notary.wait_idle(10)
        _copy_state(state, work / "before-round-2")
        broker.stop()  # the feed is down from here on
        _press(app, "shuffled", "no_more_bets", "draw")
        assert app.table.model.state == "dealing" and len(_drawn(app)) == 2
        assert app.trust.notary.wait_idle(10)  # round 2's draw is signed and anchored
    finally:
        app.close()
    shutil.rmtree(state)
    shutil.copytree(work / "before-round-2", state)  # root restores the copy
    return state


def _pubkey(work: Path, state: Path) -> Path:
    j = Journal(state / "journal.sqlite", readonly=True)
    try:
        (work / "table.pub").write_text(str(j.meta("public_key")))
    finally:
        j.close()
    return work / "table.pub"


def test_a_round_rolled_back_while_the_feed_was_down_is_a_finding_at_start(
    work: Path, swtpm_tpm: SwTpm, make_mosquitto_broker: Callable[..., MosquittoBroker]
) -> None:
    broker = make_mosquitto_broker(plain=True, tls=False)
    profile = _profile(swtpm_tpm.tcti, broker)
    state = _play_then_roll_back(work, profile, broker)
    tpm_value = TpmCounter(swtpm_tpm.tcti).read()
    anchor = read_anchor(state / "journal.anchor")
    assert anchor is not None and anchor.newest is not None
    restored = anchor.newest.counter
    assert restored is not None and restored < tpm_value  # round 2's heads took the rest
    # the restored files agree with each other: only the counter knows
    assert (
        main(
            ["journal", "verify", "--state-dir", str(state), "--pubkey", str(_pubkey(work, state))]
        )
        == 0
    )
    broker.start()
    app = Application(profile, state, console_port="none")
    try:
        app.start()
        faults = [f for f in app.app_faults if "behind the TPM counter" in f]
        assert faults, app.app_faults
        assert f"carries {restored}," in faults[0] and f"is at {tpm_value}" in faults[0]
        assert len(_drawn(app)) == 1  # round 2's draw is gone
        _press(app, "shuffled", "no_more_bets", "draw")  # and play stops
        assert len(_drawn(app)) == 1
        assert app.journal.last(["journal.finding"]) is not None
        assert app.status()["tpm counter"].startswith(f"TPM {swtpm_tpm.tcti}")
    finally:
        app.close()
    # a restart does not forget it, and the counter did not move under the finding
    app = Application(profile, state, console_port="none")
    try:
        app.start()
        assert any("behind the TPM counter" in f for f in app.app_faults), app.app_faults
    finally:
        app.close()
    assert TpmCounter(swtpm_tpm.tcti).read() == tpm_value


def test_without_a_tpm_the_same_rollback_goes_unnoticed(
    work: Path, make_mosquitto_broker: Callable[..., MosquittoBroker]
) -> None:
    broker = make_mosquitto_broker(plain=True, tls=False)
    profile = _profile(None, broker)
    state = _play_then_roll_back(work, profile, broker)
    broker.start()
    app = Application(profile, state, console_port="none")
    try:
        app.start()
        assert not [f for f in app.app_faults if "journal" in f], app.app_faults
        assert app.status()["tpm counter"].startswith("none: no TPM")
        _press(app, "shuffled", "no_more_bets", "draw")  # round 2 is drawn again
        assert len(_drawn(app)) == 2
    finally:
        app.close()


def _say(app: Application, text: str) -> list[str]:
    """A console line; a reply that comes later (a login checked on a worker) waited for."""
    lines = app.console_execute(text, "serial")
    deferred = app._console().take_deferred()
    if deferred is None:
        return lines
    deadline = time.monotonic() + 30
    while not deferred.ready():
        assert time.monotonic() < deadline, f"no reply to {text.split()[0]!r}"
        time.sleep(0.01)
    rendered: list[str] = deferred.render()
    return rendered


def test_the_collector_alarms_the_rolled_back_rounds_counter_values(
    work: Path, swtpm_tpm: SwTpm, make_mosquitto_broker: Callable[..., MosquittoBroker]
) -> None:
    from tests.feed_rig import CollectorThread, wait_for

    broker = make_mosquitto_broker(plain=True, tls=True)
    profile = _profile(swtpm_tpm.tcti, broker)
    keys = work / "keys"
    keys.mkdir()
    # the table's key is made with its journal: register it before the collector hears it
    first = Application(profile, work / "state", console_port="none")
    (keys / "sim-paigow.pem").write_text(str(first.journal.meta("public_key")))
    first.close()
    store = f"sqlite:///{work / 'floor.sqlite'}"
    collector = CollectorThread(broker, store, keys, gap_timeout_s=1.0)
    try:
        state = _play_then_roll_back(work, profile, broker)
        tpm_value = TpmCounter(swtpm_tpm.tcti).read()
        anchor = read_anchor(state / "journal.anchor")
        assert anchor is not None and anchor.newest is not None
        restored = anchor.newest.counter
        assert restored is not None and restored < tpm_value
        lost = f"{tpm_value}" if restored + 1 == tpm_value else f"{restored + 1}-{tpm_value}"
        broker.start()  # a broker without persistence: the collector subscribes again first
        wait_for(
            lambda: sum("subscribed" in line for line in collector.lines) >= 2,
            30,
            "the collector subscribed again",
        )
        app = Application(profile, state, console_port="none")
        try:
            app.start()
            assert any("behind the TPM counter" in f for f in app.app_faults), app.app_faults
            # the supervisor acknowledges the finding (docs/journal.md): play goes on
            assert _say(app, "passwd 24681357")[-1] == "OK"
            assert _say(app, "passwd supervisor 97531864")[-1] == "OK"
            assert _say(app, "login 97531864")[-1] == "OK"
            reply = _say(app, "fault clear")
            assert not app.app_faults, reply
            _press(app, "shuffled", "no_more_bets", "draw")
            assert app.trust.notary.wait_idle(10)
            newest = app.trust.newest_signed()
            assert newest is not None and newest.counter is not None
            assert newest.counter > tpm_value  # the counter went on from where it was
            _wait_acked(app, 30)
        finally:
            app.close()
        try:
            wait_for(
                lambda: any("counter-gap" in line for line in collector.lines),
                30,
                "the collector's counter-gap alarm",
            )
        except TimeoutError as exc:
            raise AssertionError(f"{exc}: {collector.lines}") from None
    finally:
        collector.stop()
    gap = [line for line in collector.lines if "counter-gap" in line]
    # exactly the values of the heads signed in the round that was rolled back
    assert gap and f"TPM counter {lost} never arrived" in gap[0], collector.lines
    assert not [
        line for line in collector.lines if "counter-reused" in line or "counter-back" in line
    ], collector.lines
