"""The install log (docs/program-verification.md "The install log"): every start journals the
release it runs; a start with another release journals the change (old, new), raises event 200
and counts in ``release_changes``; retention carries the newest release row and every change;
``status`` names the release."""

from __future__ import annotations

from pathlib import Path

import pytest

import controller.program.identity as identity
from controller.app import Application
from controller.config.profile import load_profile
from controller.floor.events import EventReader
from controller.floor.meters import MeterFold
from controller.program.identity import ReleaseIdentity

ROOT = Path(__file__).resolve().parents[3]


def _start(
    tmp_path: Path, release: ReleaseIdentity, monkeypatch: pytest.MonkeyPatch
) -> Application:
    monkeypatch.setattr(identity, "running_identity", lambda: release)
    return Application(
        load_profile(ROOT / "hw_profiles" / "sim-paigow.toml"),
        tmp_path / "state",
        console_port="none",
    )


def test_a_new_release_is_journaled_as_a_change_and_kept_past_retention(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TABLE_CONTROLLER_MANIFEST", raising=False)
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    one = ReleaseIdentity("1.0.0", "a" * 64, "b" * 64, "/opt/table-controller")
    two = ReleaseIdentity("1.1.0", "c" * 64, "d" * 64, "/opt/table-controller")
    for release in (one, one, two):  # the same release twice, then another
        app = _start(tmp_path, release, monkeypatch)
        app.close()
    app = _start(tmp_path, two, monkeypatch)
    try:
        assert app.status()["release"] == "1.1.0 release cccccccccccccccc manifest dddddddddddddddd"
        rows = list(app.journal.events())
        starts = [r for r in rows if r.kind == "program.release"]
        assert [r.data["version"] for r in starts] == ["1.0.0", "1.0.0", "1.1.0", "1.1.0"]
        changes = [r for r in rows if r.kind == "program.release_changed"]
        assert len(changes) == 1
        assert changes[0].data["old"]["release"] == "a" * 64
        assert changes[0].data["new"]["manifest"] == "d" * 64
        reader = EventReader()
        assert [e.code for r in rows for e in reader.events(r) if e.code == 200] == [200]
        assert MeterFold().add_all(rows).lifetime["release_changes"] == 1
        # retention: everything so far archived; the install log is carried forward
        last = app.journal.last_seq
        app.trust.carry_forward(last)
        carried = [r for r in app.journal.events(since_seq=last)]
        kinds = [r.kind for r in carried]
        assert kinds.count("program.release_changed") == 1
        assert kinds.count("program.release") == 1
        newest = next(r for r in carried if r.kind == "program.release")
        assert newest.data["version"] == "1.1.0" and newest.data["carried_from"] == starts[-1].seq
        # a carried copy is neither a new event nor a new count
        fold = MeterFold().add_all(rows + carried)
        assert fold.lifetime["release_changes"] == 1
        assert [e.code for r in carried for e in reader.events(r)] == []
    finally:
        app.close()
