"""The start-up checks on their own (controller/startup/checks.py): each journals what it found
and raises what stops play as a fault, as the application's start needs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.config.profile import JournalSettings, Profile, load_profile
from controller.config.settings import ConfigStore, RuleSettings
from controller.journal.store import Journal
from controller.journal.trust import JournalTrust, open_journal
from controller.program import manifest as mf
from controller.rng.certified import CertifiedRng
from controller.startup.checks import StartupChecks

ROOT = Path(__file__).resolve().parents[3]


class Rig:
    """A journal and its trust in ``state``, the checks over them, the faults they raise."""

    def __init__(self, state: Path, profile: Profile) -> None:
        state.mkdir(parents=True, exist_ok=True)
        settings = JournalSettings()
        opened = open_journal(settings, lambda name: state / name, "startup-test")
        self.journal: Journal = opened.journal
        self.faults: list[str] = []
        # The notary and the scrub are not started: nothing runs on another thread here.
        self.trust = JournalTrust(
            opened,
            settings,
            lambda name: state / name,
            post=lambda fn: fn(),
            raise_fault=self.faults.append,
        )
        self.checks = StartupChecks(self.journal, self.trust, profile, self.faults.append)

    def rows(self, kind: str) -> list[dict[str, object]]:
        return [dict(row.data) for row in self.journal.events(kinds=[kind])]

    def close(self) -> None:
        self.trust.close()
        self.journal.close()


@pytest.fixture
def profile() -> Profile:
    return load_profile(ROOT / "hw_profiles" / "sim-paigow.toml")


@pytest.fixture
def rig(tmp_path: Path, profile: Profile, monkeypatch: pytest.MonkeyPatch) -> Iterator[Rig]:
    monkeypatch.delenv("TABLE_CONTROLLER_MANIFEST", raising=False)
    made = Rig(tmp_path / "state", profile)
    try:
        yield made
    finally:
        made.close()


def test_a_clean_journal_is_journaled_verified_in_the_start_row(rig: Rig) -> None:
    verdict = rig.checks.journal_verdict()
    assert verdict.ok
    [start] = rig.rows("app.start")
    assert start["game"] == "paigow" and start["journal_verified"] is True
    assert start["unacknowledged_findings"] == 0
    rig.checks.findings()
    assert rig.faults == []


def test_another_release_than_the_last_start_is_journaled_as_a_change(rig: Rig) -> None:
    first = rig.checks.install_log()
    assert rig.rows("program.release_changed") == []
    rig.checks.install_log()  # the same release again: no change
    assert rig.rows("program.release_changed") == []
    rig.journal.append("program.release", {**first.as_dict(), "manifest": "0" * 64})
    rig.checks.install_log()
    [changed] = rig.rows("program.release_changed")
    assert changed["old"] == {**first.as_dict(), "manifest": "0" * 64}
    assert changed["new"] == first.as_dict()


def test_a_failing_rng_self_test_is_noted_failed_and_journaled(rig: Rig) -> None:
    stuck = CertifiedRng(lambda n: bytes(n), hwrng_path=None, entropy_ready=lambda: True)
    note = rig.checks.rng(stuck)
    assert note.startswith("RNG start-up test FAILED in ")
    [row] = rig.rows("rng.startup")
    assert row["passed"] is False and row["failure"]
    assert str(row["failure"]) in note
    assert row["hwrng"] == "hardware generator not monitored"


def test_a_passing_rng_self_test_names_its_monitors(rig: Rig) -> None:
    note = rig.checks.rng(CertifiedRng(hwrng_path=None, entropy_ready=lambda: True))
    assert note.startswith("RNG start-up test passed in ")
    assert note.endswith("; hardware generator not monitored)")
    [row] = rig.rows("rng.startup")
    assert row["passed"] is True


def test_an_rng_not_ready_defers_its_test_to_the_first_draw(rig: Rig) -> None:
    note = rig.checks.rng(CertifiedRng(hwrng_path=None, entropy_ready=lambda: False))
    assert note.startswith("RNG start-up test deferred to the first draw: ")
    [row] = rig.rows("rng.startup")
    assert row["passed"] is None


def test_a_journaled_setting_that_no_longer_applies_is_a_fault(rig: Rig) -> None:
    seq = rig.journal.append(
        "config.changed", {"key": "baccarat.shoes", "old": "1", "new": "2", "who": "x"}
    )
    rig.checks.settings(ConfigStore(rig.journal, RuleSettings()))
    [fault] = rig.faults
    assert fault.startswith(f"journaled setting baccarat.shoes=2 (row {seq}) no longer applies: ")
    assert "no such setting" in fault


def test_settings_that_still_apply_raise_nothing(rig: Rig) -> None:
    rig.journal.append(
        "config.changed", {"key": "baccarat.decks", "old": "8", "new": "7", "who": "x"}
    )
    store = ConfigStore(rig.journal, RuleSettings())
    rig.checks.settings(store)
    assert rig.faults == []
    assert store.current().baccarat.decks == 7


def test_a_changed_program_file_is_a_program_fault(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = tmp_path / "prog"
    (program / "controller").mkdir(parents=True)
    (program / "controller" / "rules.py").write_text("DECKS = 8\n")
    profile_file = tmp_path / "profile.toml"
    profile_file.write_text(f'include = "{ROOT / "hw_profiles" / "sim-paigow.toml"}"\n')
    manifest = program / mf.MANIFEST_NAME
    mf.write_manifest(mf.build_manifest(program), manifest)
    profile = load_profile(profile_file)
    mf.seal_profile(list(profile.source_files))
    monkeypatch.setenv("TABLE_CONTROLLER_MANIFEST", str(manifest))
    rig = Rig(tmp_path / "state", profile)
    try:
        rig.checks.program()
        assert rig.faults == []
        (program / "controller" / "rules.py").write_text("DECKS = 6\n")
        rig.checks.program()
        assert rig.faults
        assert all(f.startswith("program: ") for f in rig.faults)
        assert any("controller/rules.py" in f for f in rig.faults)
    finally:
        rig.close()
