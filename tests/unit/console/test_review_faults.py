"""Console behaviour when the journal cannot record a command, and ``fault clear`` on a table
that refuses a clear it has nothing for (found in review)."""

from __future__ import annotations

from typing import Any

import pytest

from controller.journal.store import JournalIOError
from tests.unit.console.conftest import Rig


def _disk_full(rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    """Test-side stimulus: every journal append fails as a full disk does."""

    def full(*_args: Any, **_kwargs: Any) -> int:
        raise JournalIOError("journal write failed (journal.sqlite): database or disk is full")

    monkeypatch.setattr(rig.app.journal, "append", full)


def test_config_set_on_a_full_disk_replies_err_io_and_changes_nothing(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    rig.login()
    before = rig.ok("config show recall_depth")
    with monkeypatch.context() as m:
        _disk_full(rig, m)
        assert "disk is full" in rig.err("config set recall_depth 30", "IO")
    assert rig.ok("config show recall_depth") == before
    assert any(f.startswith("journal: ") for f in rig.app.app_faults)


def test_login_on_a_full_disk_is_refused_and_does_not_log_in(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    rig.ok("passwd 2468101212")
    rig.ok("logout")
    with monkeypatch.context() as m:
        _disk_full(rig, m)
        rig.err("login 2468101212", "IO")
    # the login was never journaled, so it must not count
    assert "console: not logged in (serial)" in rig.ok("status")
    rig.err("config set recall_depth 30", "AUTH")


def test_fault_clear_clears_application_faults_on_a_table_without_faults(rig: Rig) -> None:
    rig.app.table.refuse_clear_when_clean = True  # as the baccarat table does
    rig.login()
    rig.app.app_faults.latch("program: changed controller/app.py")  # the file is back now
    lines = rig.ok("fault clear")
    assert "cleared: program: changed controller/app.py" in lines
    assert rig.app.faults() == []


def test_tab_and_control_bytes_are_not_printable_and_long_lines_are_refused() -> None:
    """docs/console.md: lines over 200 bytes and non-printable bytes are refused (TAB included)."""
    from controller.console.transport import LineFramer, decode_line

    assert decode_line(b"status\tx") is None
    assert decode_line(b"status") == "status"
    framer = LineFramer(max_line=200)
    items = framer.feed(b"x" * 300 + b"\r\n" + b"ok\n")
    assert items == ["line longer than 200 bytes", b"ok"]
