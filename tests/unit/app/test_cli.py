"""The command line: a corrupt profile is refused with a clear error and journaled."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.cli import main
from controller.journal.store import Journal


def test_a_corrupt_profile_is_refused_named_and_journaled(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state"
    state.mkdir()
    Journal.open(state / "journal.sqlite", state / "device.key").close()  # the table's journal
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\ngame = "roulette"\n')
    assert main(["run", "--profile", str(bad), "--state-dir", str(state),
                 "--console", "none"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("profile error: ") and "bad.toml" in err and "game" in err
    journal = Journal.open(state / "journal.sqlite", state / "device.key")
    rows = list(journal.events(kinds=["app.start_refused"]))
    assert len(rows) == 1 and rows[0].data["profile"] == str(bad)
    assert "roulette" in rows[0].data["error"] or "game" in rows[0].data["error"]
    assert journal.verify().ok
    journal.close()


def test_no_journal_is_created_for_a_refused_profile(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("this is = not [toml")
    assert main(["run", "--profile", str(bad), "--state-dir", str(tmp_path / "s"),
                 "--console", "none"]) == 1
    assert not (tmp_path / "s" / "journal.sqlite").exists()
    assert not (tmp_path / "s" / "device.key").exists()
