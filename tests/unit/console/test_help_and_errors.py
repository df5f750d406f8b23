"""What the console says to a new technician (issue 15): ``help CMD`` for every command with a
syntax and an example that runs, ``config show KEY`` in full, recall on 80 columns, and clear
errors for malformed arguments."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from controller.program import manifest as mf
from tests.unit.console.conftest import Rig


@pytest.fixture(autouse=True)
def _no_installed_manifest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(mf.MANIFEST_ENV, raising=False)
    monkeypatch.setattr(mf, "configured_manifest", lambda environ=None: None)


def _commands(rig: Rig) -> list[str]:
    listed = rig.ok("help")[1:]
    return [line[3:].split()[0] for line in listed if line.startswith(("   ", " * "))]


def test_help_names_every_command_and_how_to_ask_for_one(rig: Rig) -> None:
    lines = rig.ok("help")
    assert "help COMMAND" in lines[0]
    assert set(_commands(rig)) >= {
        "help",
        "status",
        "login",
        "logout",
        "passwd",
        "config",
        "recall",
        "journal",
        "verify",
        "houseway",
        "rng",
        "selftest",
        "fault",
        "test-mode",
    }


def test_help_command_gives_syntax_summary_and_an_example_for_every_command(rig: Rig) -> None:
    for name in _commands(rig):
        lines = rig.ok(f"help {name}")
        assert lines[0].startswith(name), (name, lines)
        assert lines[-1].startswith(f"  example: {name}"), (name, lines)
        assert len(lines) == 3 and lines[1].strip(), (name, lines)


def test_every_example_parses(rig: Rig) -> None:
    """An example a technician copies never answers SYNTAX or UNKNOWN (it may be refused for
    the state, a missing manifest, a wrong PIN...)."""
    rig.login()
    for name in _commands(rig):
        example = rig.ok(f"help {name}")[-1].split("example: ", 1)[1]
        if name in ("passwd", "login", "logout"):
            continue  # would change this rig's login
        last = rig.run(example)[-1]
        assert not last.startswith(("ERR SYNTAX", "ERR UNKNOWN")), (example, last)


def test_help_for_an_unknown_command_is_unknown(rig: Rig) -> None:
    assert "help lists them" in rig.err("help frobnicate", "UNKNOWN")
    rig.err("help a b", "SYNTAX")


def test_config_show_key_gives_value_default_range_and_reference(
    make_rig: Callable[..., Rig],
) -> None:
    rig = make_rig(game="baccarat", with_rng=False)
    rig.login()
    rig.ok("config set recall_depth 30")
    assert rig.ok("config show recall_depth") == [
        "recall_depth = 30",
        "  default: 20",
        "  range: 10..1000",
        "  reference: 5324.50(f)(11) (at least 10 rounds)",
    ]
    lines = rig.ok("config show baccarat.dragon7_pays")
    assert lines[-1].startswith("  inactive: needs baccarat.ez = true")
    assert "did you mean recall_depth" in rig.err("config show recal_depth", "UNKNOWN")


def test_journal_verify_with_a_malformed_head_is_a_syntax_error_not_a_verdict(rig: Rig) -> None:
    for bad in (
        "17:zz",
        "17:",
        ":" + "0" * 64,
        "x:" + "0" * 64,
        "17:" + "0" * 63,
        "17:" + "g" * 64,
        "17",
    ):
        reply = rig.err(f"journal verify {bad}", "SYNTAX")
        assert "BROKEN" not in reply and "rewritten" not in reply
    assert rig.app.journal.last(["console.refused"]).data["code"] == "SYNTAX"  # type: ignore[union-attr]
    seq, mac = rig.app.journal.head()
    assert any(
        line.startswith("journal verified")
        for line in rig.ok(f"journal verify {seq}:{mac.upper()}")
    )


def test_a_pin_has_at_least_eight_characters(rig: Rig) -> None:
    assert "8 to 32" in rig.err("passwd 1234567", "RANGE")
    assert rig.ok("passwd 12345678") == ["PIN set; logged in"]


def test_one_try_left_is_singular(rig: Rig) -> None:
    rig.login()
    rig.ok("logout")
    replies = [rig.err("login 00000000", "AUTH") for _ in range(4)]
    assert replies[-2].endswith("(2 tries left)") and replies[-1].endswith("(1 try left)")


def test_recall_fits_an_80_column_terminal_and_leaves_the_snapshot_to_the_export(rig: Rig) -> None:
    snapshot = {
        "state": "betting",
        "record": {"wagers": [{"seat": s, "area": s, "cents": 500} for s in range(1, 7)]},
    }
    for rid in (1, 2):
        rig.app.journal.append(
            "paigow.input",
            {"source": "console", "action": "wager", "args": ["3", "2500"], "who": "technician@s"},
            round_id=rid,
        )
        rig.app.journal.append(
            "paigow.state",
            {
                "trigger": "wager",
                "snapshot": snapshot,
                "args": {"seat": 3, "area": 3, "cents": 2500},
                "note": "x" * 150,
            },
            round_id=rid,
        )
        rig.app.journal.append(
            "paigow.settled", {"trigger": "settled", "snapshot": snapshot}, round_id=rid
        )
    lines = rig.ok("recall 2")
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    assert not any("snapshot" in line for line in lines)
    assert lines[0].startswith("round 1: rows ") and "closed by paigow.settled" in lines[0]
    text = "\n".join(lines)
    assert 'args=["3", "2500"]' in text and "who=technician@s" in text
    assert "x" * 70 in text.replace("\n      ", "")  # a long value is wrapped, not cut
