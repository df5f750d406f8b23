"""Console.execute against a small application: every command, every error code, the PIN and
its lockout, per-source sessions, and configuration refused mid-round."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import shutil
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import pytest

from controller.console.auth import LOCKOUT_S
from controller.console.errors import CODES
from controller.console.interpreter import RNG_TEST_MAX
from controller.floor.events import EventReader
from controller.floor.meters import MeterFold
from controller.program import manifest as mf
from controller.tables.table import Refused
from tests.unit.console.conftest import FakeTable, Rig

PIN = "24681012"


@pytest.fixture(autouse=True)
def _no_installed_manifest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(mf.MANIFEST_ENV, raising=False)
    monkeypatch.setattr(mf, "configured_manifest", lambda environ=None: None)


# -- reply format -------------------------------------------------------------------------------


def test_every_reply_ends_ok_or_err_with_a_documented_code(rig: Rig) -> None:
    lines = [
        "",
        "help",
        "status",
        "bogus",
        "config",
        "login",
        "recall x",
        "rng test 5",
        "journal head",
        "verify",
        "odds",
        "fault clear",
        "passwd 1",
    ]
    for line in lines:
        last = rig.console.execute(line, "serial")[-1]
        assert last == "OK" or (last.startswith("ERR ") and last.split()[1] in CODES), line


def test_blank_line_and_comment_are_ok_and_journal_nothing(rig: Rig) -> None:
    before = rig.app.journal.last_seq
    assert rig.run("") == ["OK"]
    assert rig.run("   # note") == ["OK"]
    assert rig.app.journal.last_seq == before


def test_help_lists_every_command_and_marks_login(rig: Rig) -> None:
    text = "\n".join(rig.ok("help"))
    for word in (
        "status",
        "config show",
        "config set",
        "recall",
        "journal verify",
        "rng test",
        "rng capture",
        "selftest",
        "fault clear",
        "test-mode",
        "verify",
        "houseway",
        "login",
        "logout",
        "passwd",
    ):
        assert word in text
    assert "* selftest" in text and "  status" in text
    assert "odds" not in text  # baccarat's: a pai gow table has no shoe


def _listed(lines: list[str]) -> list[str]:
    """The first word of every command and action ``help`` lists."""
    return [line[3:].split()[0] for line in lines if line.startswith(("   ", " * "))]


@pytest.mark.parametrize(
    ("game", "own", "other"),
    [
        ("paigow", {"houseway", "rng", "lab"}, {"odds"}),
        ("baccarat", {"odds"}, {"houseway", "rng", "lab"}),
    ],
)
def test_help_and_config_list_only_what_the_table_s_game_offers(
    make_rig: Callable[..., Rig], game: str, own: set[str], other: set[str]
) -> None:
    """help lists each command once, this game's own and none of the other game's; config
    show lists the table's settings and this game's, never the other game's."""
    rig = make_rig(game=game, with_rng=game == "paigow")
    words = _listed(rig.ok("help"))
    assert len(words) == len(set(words)), words
    assert own <= set(words) and not other & set(words), words
    plays = f"this table plays {'pai gow' if game == 'paigow' else game}"
    for word in other:
        assert plays in rig.err(f"help {word}", "UNKNOWN")
    keys = [line.split(" = ")[0] for line in rig.ok("config show")]
    foreign = "baccarat." if game == "paigow" else "paigow."
    assert keys and not [k for k in keys if k.startswith(foreign)], keys
    assert any(k.startswith(f"{game}.") for k in keys)
    assert ("start_mode" in keys) == (game == "paigow")  # the pai gow starting position
    assert {"jurisdiction", "recall_depth"} <= set(keys)
    key = "baccarat.decks" if game == "paigow" else "paigow.dragons_eye"
    assert "setting: this table plays" in rig.err(f"config show {key}", "UNKNOWN")
    rig.login()
    assert "setting: this table plays" in rig.err(f"config set {key} 8", "UNKNOWN")


def test_status_shows_table_and_console_state(rig: Rig) -> None:
    lines = rig.ok("status")
    assert "state: idle" in lines and "round: 7" in lines and "last_rng: 3" in lines
    assert "faults: none" in lines and "test-mode: off" in lines
    assert "console: not logged in (serial)" in lines
    assert rig.err("status now", "SYNTAX").endswith("takes no arguments")


def test_command_words_are_case_insensitive(rig: Rig) -> None:
    assert "state: idle" in rig.ok("STATUS")


# -- PIN, login, lockout -------------------------------------------------------------------------


def test_no_default_secret_login_before_any_pin_is_refused(rig: Rig) -> None:
    assert "no PIN is set yet" in rig.err("login 00000000", "AUTH")
    assert "no PIN is set yet" in rig.err("login 123456", "AUTH")


def test_first_pin_needs_no_login_later_changes_do(rig: Rig) -> None:
    assert rig.ok(f"passwd {PIN}", "stdio") == ["PIN set; logged in"]
    assert rig.err("passwd 13579024", "AUTH", "serial")  # a PIN exists now
    rig.ok(f"login {PIN}", "serial")
    # a console left logged in: changing the PIN needs the current one
    assert "current PIN" in rig.err("passwd 13579024", "AUTH", "serial")
    assert rig.ok(f"passwd {PIN} 13579024", "serial") == ["PIN changed"]
    rig.ok("logout", "serial")
    rig.err(f"login {PIN}", "AUTH")
    rig.ok("login 13579024")


def test_pin_length_and_usage(rig: Rig) -> None:
    assert "8 to 32" in rig.err("passwd 1234567", "RANGE")
    rig.err("passwd", "SYNTAX")
    rig.err("passwd 123456 789012", "SYNTAX")
    assert rig.app.journal.last(["console.pin_set"]) is None


def test_pin_is_stored_only_as_a_salted_scrypt_hash(rig: Rig) -> None:
    rig.ok(f"passwd {PIN}")
    rig.ok("logout")
    rig.err("login 99999999", "AUTH")
    rig.ok(f"login {PIN}")
    for entry in rig.app.journal.events():
        assert PIN not in json.dumps(entry.data), entry.kind
        assert "99999999" not in json.dumps(entry.data), entry.kind
    record = rig.app.journal.last(["console.pin_set"])
    assert record is not None
    data = record.data
    assert data["algorithm"] == "scrypt" and len(bytes.fromhex(data["salt"])) == 16
    expected = hashlib.scrypt(
        PIN.encode(),
        salt=bytes.fromhex(data["salt"]),
        n=data["n"],
        r=data["r"],
        p=data["p"],
        dklen=data["dklen"],
    )
    assert expected.hex() == data["hash"]


def test_same_pin_twice_gets_a_different_salt(rig: Rig) -> None:
    rig.ok(f"passwd {PIN}")
    rig.ok(f"passwd {PIN} {PIN}")
    salts = {e.data["salt"] for e in rig.app.journal.events(kinds=["console.pin_set"])}
    assert len(salts) == 2


def test_five_failures_lock_for_five_minutes_and_everything_is_journaled(rig: Rig) -> None:
    rig.ok(f"passwd {PIN}")
    rig.ok("logout")
    for left in ("4 tries", "3 tries", "2 tries", "1 try"):
        assert f"({left} left)" in rig.err("login 00000000", "AUTH")
    assert "locked" in rig.err("login 00000000", "LOCKED")
    assert any("CONSOLE LOCKED" in a for a in rig.app.alarms)
    rig.err(f"login {PIN}", "LOCKED")  # even the right PIN, from any source
    rig.err(f"login {PIN}", "LOCKED", "stdio")
    assert "locked for" in "\n".join(rig.ok("status"))  # read-only commands still work
    rig.clock.now += LOCKOUT_S - 1
    rig.err(f"login {PIN}", "LOCKED")
    rig.clock.now += 2
    rig.ok(f"login {PIN}")
    kinds = rig.app.kinds()
    assert kinds.count("console.login_failed") == 5
    assert kinds.count("console.locked") == 1
    assert kinds.count("console.login") == 1
    failures = [
        e.data["roles"]["technician"]["failures"]
        for e in rig.app.journal.events(["console.login_failed"])
    ]
    assert failures == [1, 2, 3, 4, 5]


def test_a_technicians_logins_between_guesses_do_not_reset_the_supervisors_count(rig: Rig) -> None:
    """Four wrong PINs, the technician's own login, again: 42 guesses; the 43rd, the
    supervisor's right PIN, is refused while the supervisor's logins are locked."""
    supervisor = "97531864"
    rig.ok(f"passwd {PIN}")
    rig.ok(f"passwd supervisor {supervisor}")
    rig.ok("logout")
    for guess in range(42):
        if guess and guess % 4 == 0:
            assert rig.ok(f"login {PIN}") == ["logged in"]
            rig.ok("logout")
        assert rig.run(f"login {10_000_000 + guess}")[-1].startswith(("ERR AUTH", "ERR LOCKED"))
    assert "supervisor logins locked" in rig.err(f"login {supervisor}", "LOCKED")
    assert "console: not logged in (serial)" in rig.ok("status")
    assert any(
        line.startswith("console: supervisor logins locked for") for line in rig.ok("status")
    )
    locked = rig.app.journal.events(["console.locked"])
    assert [row.data["role"] for row in locked] == ["supervisor"]
    assert any(a.startswith("CONSOLE LOCKED: supervisor logins") for a in rig.app.alarms)


def test_failures_reset_after_a_good_login(rig: Rig) -> None:
    rig.ok(f"passwd {PIN}")
    for _ in range(4):
        rig.err("login 00000000", "AUTH")
    rig.ok(f"login {PIN}")
    assert "4 tries left" in rig.err("login 00000000", "AUTH")


def test_sessions_are_per_source_and_logout_ends_them(rig: Rig) -> None:
    rig.login("serial")
    assert "console: logged in as technician (serial)" in rig.ok("status", "serial")
    rig.err("config set recall_depth 30", "AUTH", "stdio")
    rig.ok("config set recall_depth 30", "serial")
    rig.ok("logout", "serial")
    rig.err("config set recall_depth 31", "AUTH", "serial")
    assert rig.app.kinds().count("console.logout") == 1


def test_idle_session_is_logged_out(rig: Rig) -> None:
    rig.login()
    rig.clock.now += 901
    rig.err("selftest", "AUTH")
    assert rig.app.journal.last(["console.logout"]).data["reason"] == "idle"  # type: ignore[union-attr]


# -- configuration ------------------------------------------------------------------------------


def test_config_show_all_and_one(rig: Rig) -> None:
    lines = rig.ok("config show")
    assert any(line.startswith("recall_depth = 20") for line in lines)
    assert any(line.startswith("paigow.house_way_policy") for line in lines)
    assert rig.ok("config show recall_depth")[0] == "recall_depth = 20"
    rig.err("config show no.such", "UNKNOWN")
    rig.err("config", "SYNTAX")
    rig.err("config frob", "SYNTAX")


def test_config_set_is_journaled_with_old_new_and_who(rig: Rig) -> None:
    rig.err("config set recall_depth 30", "AUTH")
    rig.login()
    assert rig.ok("config set recall_depth 30") == ["recall_depth: 20 -> 30"]
    event = rig.app.journal.last(["config.changed"])
    assert event is not None
    assert event.data == {
        "key": "recall_depth",
        "old": "20",
        "new": "30",
        "who": "technician@serial",
    }
    assert rig.ok("config show recall_depth")[0] == "recall_depth = 30"


def test_config_set_errors_carry_the_settings_codes(rig: Rig) -> None:
    rig.login()
    rig.err("config set no.such 1", "UNKNOWN")
    rig.err("config set recall_depth many", "SYNTAX")
    rig.err("config set recall_depth 100000", "RANGE")
    rig.err("config set recall_depth", "SYNTAX")
    assert rig.app.journal.last(["config.changed"]) is None


def test_config_set_is_refused_mid_round_and_changes_nothing(rig: Rig) -> None:
    rig.login()
    rig.app.table.in_round = True
    assert "round is in progress" in rig.err("config set recall_depth 30", "STATE")
    assert rig.app.journal.last(["config.changed"]) is None
    assert rig.ok("config show recall_depth")[0] == "recall_depth = 20"
    refused = rig.app.journal.last(["console.refused"])
    assert refused is not None and refused.data["code"] == "STATE"
    rig.app.table.in_round = False
    rig.ok("config set recall_depth 30")


# -- recall and journal --------------------------------------------------------------------------


def test_recall_prints_rounds_with_their_inputs(rig: Rig) -> None:
    assert rig.ok("recall") == ["no rounds in the journal"]
    for rid in (1, 2, 3):
        rig.app.journal.append("paigow.rng_drawn", {"value": rid + 2}, round_id=rid)
        rig.app.journal.append("paigow.settled", {"round": rid}, round_id=rid)
    lines = rig.ok("recall 2")
    assert lines[0].startswith("round 2:") and any(line.startswith("round 3:") for line in lines)
    assert not any(line.startswith("round 1:") for line in lines)
    assert any("paigow.rng_drawn" in line and "value=5" in line for line in lines)
    rig.err("recall 0", "RANGE")
    rig.err("recall 101", "RANGE")
    rig.err("recall two", "SYNTAX")
    rig.err("recall 1 2", "SYNTAX")


def test_journal_head_and_verify(rig: Rig) -> None:
    rig.app.journal.append("x", {})
    seq, mac = rig.app.journal.head()
    head = rig.ok("journal head")
    assert head[0] == f"head {seq}:{mac}"
    assert head[1] == "signed (none yet)"  # the notary is not running in this rig
    assert head[2].startswith(f"key {rig.app.trust.signer.key_id} (file ")
    signed = rig.app.trust.notary.sign(seq, mac)  # as the notary does after a commit
    rig.app.trust.notary.anchor.append(signed)
    rig.app.journal.add_heads([signed])
    assert rig.ok("journal head")[1] == "signed " + signed.line()
    lines = rig.ok(f"journal verify {seq}:{mac}")
    assert f"head {seq}:{mac}" in lines
    assert "rewritten" in rig.err(f"journal verify {seq}:{'0' * 64}", "FAULT")
    assert "truncated" in rig.err(f"journal verify {seq + 50}:{mac}", "FAULT")
    rig.err("journal verify 12", "SYNTAX")
    # a row number no journal has is the line's error, not the journal's (never ERR IO)
    for seq_text in ("99999999999999999999", "9223372036854775808", "0"):
        assert "SEQ must be a row number" in rig.err(f"journal verify {seq_text}:{mac}", "RANGE")
    rig.err("journal", "SYNTAX")
    rig.err("journal rewind", "SYNTAX")


# -- RNG ---------------------------------------------------------------------------------------


def test_rng_test_prints_the_chi_square_figures(rig: Rig) -> None:
    rig.err("rng test 1000", "AUTH")
    rig.login()
    lines = rig.ok("rng test 2000")
    text = "\n".join(lines)
    assert "2000 draws of 1-8" in text and "frequency: chi2" in text and "overall: PASS" in text
    event = rig.app.journal.last(["rng.statistical_check"])
    assert event is not None and sum(event.data["counts"]) == 2000


def test_rng_test_is_bounded_and_refused_mid_round(rig: Rig) -> None:
    rig.login()
    rig.err("rng test 1", "RANGE")
    rig.err(f"rng test {RNG_TEST_MAX + 1}", "RANGE")
    rig.err("rng test lots", "SYNTAX")
    rig.err("rng", "SYNTAX")
    rig.app.table.in_round = True
    rig.err("rng test 100", "STATE")


def test_rng_commands_on_a_table_without_rng(make_rig: Callable[..., Rig]) -> None:
    rig = make_rig(game="baccarat", with_rng=False)
    rig.login()
    # a baccarat table has no RNG: rng and lab are pai gow's commands (help lists neither)
    for line in ("rng test 100", "rng capture raw 10 a.bin", "lab package x"):
        assert "a pai gow command: this table plays baccarat" in rig.err(line, "UNKNOWN")
    assert "RNG self-test" not in "\n".join(rig.ok("selftest"))


def test_rng_capture_raw_and_final_go_to_the_state_directory(rig: Rig) -> None:
    rig.login()
    assert rig.ok("rng capture raw 100 raw.bin")[0].startswith("captured 100 raw bytes")
    assert (rig.app.state_dir / "captures" / "raw.bin").stat().st_size == 100
    rig.ok("rng capture final 50 final.txt")
    values = (rig.app.state_dir / "captures" / "final.txt").read_text().split()
    assert len(values) == 50 and all(1 <= int(v) <= 8 for v in values)
    rig.err("rng capture raw 100 ../escape.bin", "SYNTAX")
    rig.err("rng capture raw 100 /tmp/x.bin", "SYNTAX")
    rig.err("rng capture raw 0 a.bin", "RANGE")
    rig.err("rng capture final 10000000 a.txt", "RANGE")
    rig.err("rng capture cooked 10 a.txt", "SYNTAX")


def test_rng_capture_unwritable_is_io(rig: Rig) -> None:
    rig.login()
    (rig.app.state_dir / "captures").mkdir()
    (rig.app.state_dir / "captures" / "taken").mkdir()
    reply = rig.err("rng capture raw 10 taken", "IO")
    assert "taken" in reply
    assert rig.app.journal.last(["console.refused"]).data["code"] == "IO"  # type: ignore[union-attr]


def test_selftest_reports_rng_and_journal(rig: Rig) -> None:
    rig.login()
    text = "\n".join(rig.ok("selftest"))
    assert "RNG self-test" in text and "PASS" in text and "journal: " in text
    assert "program: no manifest installed" in text
    assert rig.app.journal.last(["console.selftest"]).data["passed"] is True  # type: ignore[union-attr]
    rig.err("selftest now", "SYNTAX")


# -- faults, test mode, table actions -------------------------------------------------------------


def test_fault_clear(rig: Rig) -> None:
    rig.err("fault clear", "AUTH")
    rig.login()
    assert rig.ok("fault clear") == ["no faults"]
    rig.app.table.table_faults.append("shoe door open")
    rig.app.app_faults.latch("journal: write failed")
    lines = rig.ok("fault clear")
    assert "cleared: journal: write failed" in lines and "cleared: shoe door open" in lines
    assert rig.app.faults() == []
    assert rig.app.journal.last(["fault.cleared"]) is not None
    rig.app.table.table_faults.append("stuck reader")
    assert "cannot be cleared" in rig.err("fault clear", "FAULT")
    rig.err("fault", "SYNTAX")


def test_test_mode_goes_through_the_table_and_shows_in_status(rig: Rig) -> None:
    rig.err("test-mode on", "AUTH")
    rig.login()
    assert rig.ok("test-mode on") == ["display: TEST MODE ON"]
    assert "test-mode: ON" in rig.ok("status")
    assert rig.ok("test-mode on") == ["test mode already on"]
    rig.ok("test-mode off")
    assert "test-mode: off" in rig.ok("status")
    assert [a[:2] for a in rig.app.table.actions] == [("test-mode", ["on"]), ("test-mode", ["off"])]
    rig.err("test-mode maybe", "SYNTAX")
    rig.app.table.in_round = True
    rig.err("test-mode on", "STATE")


def test_other_words_go_to_the_table_with_who(rig: Rig) -> None:
    rig.err("sim button shuffled", "AUTH")
    rig.login()
    assert rig.ok("sim button shuffled") == ["sim button shuffled done"]
    assert rig.app.table.actions[-1] == ("sim", ["button", "shuffled"], "technician@serial")
    assert rig.err("refuse", "STATE") == "ERR STATE not now"
    rig.err("frobnicate", "UNKNOWN")


def test_table_with_action_names_answers_unknown_without_login(rig: Rig) -> None:
    rig.app.table.action_names = lambda: {"sim"}  # type: ignore[attr-defined]
    assert "no such command" in rig.err("frobnicate", "UNKNOWN")
    rig.err("sim button x", "AUTH")


def test_table_errors_map_to_codes_and_a_bug_is_journaled(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    rig.login()

    def broken(name: str, args: list[str], who: str) -> list[str]:
        if name == "io":
            raise OSError(5, "Input/output error", "/dev/ttyUSB0")
        if name == "odd":
            raise Refused("odd code", "WEIRD")
        raise RuntimeError("boom")

    monkeypatch.setattr(rig.app.table, "action", broken)
    assert rig.err("io", "IO") == "ERR IO Input/output error: /dev/ttyUSB0"
    rig.err("odd", "STATE")
    assert "internal error" in rig.err("crash", "FAULT")
    assert "boom" in rig.app.journal.last(["console.error"]).data["error"]  # type: ignore[union-attr]


# -- houseway and odds ----------------------------------------------------------------------


def test_houseway_sets_the_dealers_hand(rig: Rig) -> None:
    lines = rig.ok("houseway 1-2 4-5 2-4 6-6")
    high = lines[0].split("low")[0]
    assert "1-2" in high and "2-4" in high  # the supreme pair is played as such
    assert "house way default" in lines[1]
    rig.err("houseway 7-8 1-1 2-2 3-3", "SYNTAX")
    rig.err("houseway 1-2 1-2 3-3 4-4", "RANGE")  # a set holds one 1-2
    rig.err("houseway 1-1 2-2 3-3", "SYNTAX")


def test_odds_on_a_baccarat_table(make_rig: Callable[..., Rig]) -> None:
    rig = make_rig(game="baccarat", with_rng=False)

    class OddsTable(FakeTable):
        def odds(self) -> dict[str, Fraction]:
            return {"banker": Fraction(1, 2), "player": Fraction(1, 3)}

        def query(self, name: str, args: list[str]) -> object:
            return self.odds() if name == "odds" else super().query(name, args)

    rig.app.table = OddsTable(game="baccarat")
    assert rig.ok("odds") == ["banker: 0.500000 (1/2)", "player: 0.333333 (1/3)"]


def test_odds_on_a_pai_gow_table_is_baccarat_s(rig: Rig) -> None:
    assert rig.err("odds", "UNKNOWN") == (
        "ERR UNKNOWN odds is a baccarat command: this table plays pai gow (help lists its commands)"
    )


# -- program verification ------------------------------------------------------------------


def _copy_program(dest: Path) -> Path:
    src = mf.installed_root()
    for package in mf.PACKAGES:
        shutil.copytree(src / package, dest / package, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def test_verify_catches_a_changed_program_file(
    make_rig: Callable[..., Rig], tmp_path: Path
) -> None:
    root = _copy_program(tmp_path / "prog")
    profile = tmp_path / "profile.toml"
    profile.write_text('name = "x"\n')
    manifest = root / mf.MANIFEST_NAME
    mf.write_manifest(mf.build_manifest(root), manifest)
    mf.seal_profile([profile])
    rig = make_rig(manifest_path=manifest)
    rig.app.profile.source_files = (str(profile),)
    lines = rig.ok("verify")
    assert lines[0].startswith("all program and profile files match")
    assert lines[1] == f"manifest sha256 {mf.sha256_file(manifest)}"
    with open(root / "drivers" / "gpio.py", "a") as fh:
        fh.write("# tampered\n")
    reply = rig.run("verify")
    assert any("changed file drivers/gpio.py" in line for line in reply)
    assert reply[-1].startswith("ERR FAULT 1 file(s) do not match")
    assert any("changed file drivers/gpio.py" in f for f in rig.app.app_faults)
    assert any(a.startswith("FAULT program:") for a in rig.app.alarms)
    profile.write_text('name = "y"\n')
    assert any(
        f"changed profile file {tmp_path}/profile.toml" in line for line in rig.run("verify")
    )


def test_verify_seed_is_the_documented_hmac(make_rig: Callable[..., Rig], tmp_path: Path) -> None:
    root = _copy_program(tmp_path / "prog")
    profile = tmp_path / "table.toml"
    profile.write_text('name = "x"\n')
    rig = make_rig(manifest_root=root)
    rig.app.profile.source_files = (str(profile),)
    seed = "00112233445566778899aabbccddeeff"
    reply = rig.ok(f"verify {seed}")
    # The lab's computation, written out from docs/program-verification.md.
    files = sorted(
        p.relative_to(root).as_posix()
        for pkg in ("controller", "drivers")
        for p in (root / pkg).rglob("*.py")
        if "__pycache__" not in p.parts
    )
    mac = hmac.new(bytes.fromhex(seed), digestmod=hashlib.sha256)
    for name, path in [(f, root / f) for f in files] + [("profile/table.toml", profile)]:
        data = path.read_bytes()
        mac.update(name.encode() + b"\0" + len(data).to_bytes(8, "big") + data)
    assert reply == [f"hmac-sha256 {mac.hexdigest()} over {len(files) + 1} files"]
    assert rig.app.journal.last(["program.hmac"]).data["hmac"] == mac.hexdigest()  # type: ignore[union-attr]
    # a field authentication: event 131 and a program verification on the meters
    # (docs/events.md, docs/meters.md), as the feed and `meters` read the rows
    reader = rig.app.journal.reader()
    try:
        rows = list(reader.events())
    finally:
        reader.close()
    events = EventReader()
    assert [e.details["hmac"] for r in rows for e in events.events(r) if e.code == 131] == [
        mac.hexdigest()
    ]
    assert MeterFold().add_all(rows).lifetime["program_verifications"] == 1
    rig.err("verify nothex", "SYNTAX")
    rig.err("verify abcd", "RANGE")
    rig.err("verify a b", "SYNTAX")


def test_verify_without_a_manifest_says_so(rig: Rig) -> None:
    assert "no program manifest" in rig.err("verify", "STATE")


def test_lockout_and_failure_count_survive_a_restart(rig: Rig) -> None:
    """A power cycle must not reset a PIN guesser's budget: both are read back from the journal."""
    from controller.console.interpreter import Console

    rig.login()
    rig.ok("logout")
    for _ in range(3):
        rig.err("login 00000000", "AUTH")
    restarted = Console(rig.app, clock=rig.clock, scrypt_n=16)
    reply = restarted.execute("login 00000000", "serial")
    assert reply[-1].startswith("ERR AUTH") and "1 try left" in reply[-1]
    reply = restarted.execute("login 00000000", "serial")
    assert reply[-1].startswith("ERR LOCKED")
    again = Console(rig.app, clock=rig.clock, scrypt_n=16)
    assert again.execute("login 2468101212", "serial")[-1].startswith("ERR LOCKED")


def _sealed_program(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A copy of the program with its manifest, and a sealed profile: (root, profile,
    manifest)."""
    root = _copy_program(tmp_path / "prog")
    profile = tmp_path / "profile.toml"
    profile.write_text('name = "x"\n')
    manifest = root / mf.MANIFEST_NAME
    mf.write_manifest(mf.build_manifest(root, {"version": "test"}), manifest)
    mf.seal_profile([profile])
    return root, profile, manifest


def test_manifest_flags_any_extra_missing_changed_or_linked_file(tmp_path: Path) -> None:
    """Python imports a matching .pyc without reading its source, runs .pth files and
    sitecustomize: a manifest covers every file under its root, so anything planted, removed,
    changed or replaced by a link is a mismatch."""
    root, profile, manifest = _sealed_program(tmp_path)
    assert mf.check_manifest(manifest, [profile]) == []
    cache = root / "controller" / "__pycache__"
    cache.mkdir()
    (cache / "rng.cpython-311.pyc").write_bytes(b"\x00planted")
    (root / "zz.pth").write_text("import os\n")
    (root / "drivers" / "gpio.py").unlink()
    (root / "drivers" / "buttons.py").write_text("# changed\n")
    (root / "controller" / "link.py").symlink_to(root / "controller" / "cli.py")
    problems = mf.check_manifest(manifest, [profile])
    assert problems[0] == "unexpected symbolic link controller/link.py"
    assert problems[1:] == [
        "unexpected file controller/__pycache__/rng.cpython-311.pyc: not in the manifest",
        problems[2],
        "missing file drivers/gpio.py",
        "unexpected file zz.pth: not in the manifest",
    ]
    assert problems[2].startswith("changed file drivers/buttons.py: sha256 ")
    other = tmp_path / "other.toml"
    other.write_text('name = "z"\n')
    assert mf.check_profile([other]) == [
        f"the profile is not sealed: no {other}.manifest.json (install it with systemd/install.sh)"
    ]


def test_recall_depth_setting_is_the_default_and_the_limit(rig: Rig) -> None:
    """Issue 6: recall shows the last rounds, at least 10, configurable (recall_depth)."""
    for round_id in range(1, 16):
        rig.app.journal.append("test.settled", {"round": round_id}, round_id=round_id)
    rig.login()
    rig.ok("config set recall_depth 12")
    summaries = [line for line in rig.ok("recall") if line.startswith("round ")]
    assert [line.split(":")[0] for line in summaries] == [f"round {n}" for n in range(4, 16)]
    assert "13" in rig.err("recall 13", "RANGE")
    assert len([line for line in rig.ok("recall 3") if line.startswith("round ")]) == 3
    rig.ok("config set recall_depth 40")
    assert len([line for line in rig.ok("recall 15") if line.startswith("round ")]) == 15


def test_a_file_whose_name_is_not_utf8_is_a_mismatch_not_a_crash(tmp_path: Path) -> None:
    """A planted file with a name of bytes that are not UTF-8 is one more extra file: the check
    names it and still finds the other changes (it stopped on an encoding error before)."""
    root, profile, manifest = _sealed_program(tmp_path)
    odd = os.fsdecode(b"planted-\xff.py")
    (root / "controller" / odd).write_text("import os\n")
    (root / "drivers" / "buttons.py").write_text("# changed\n")
    problems = mf.check_manifest(manifest, [profile])
    assert any("not UTF-8" in p and "planted-" in p for p in problems), problems
    assert any("drivers/buttons.py" in p for p in problems), problems
    # `verify SEED` covers no such tree: it names the file instead of stopping on it
    with pytest.raises(mf.ManifestError, match="not UTF-8"):
        mf.verification_items(root, [profile])
