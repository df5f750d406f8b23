"""A profile with several mistakes is refused with every one of them in one run, each naming the
file and the key (the command-line ``check-profile`` prints them all), and nothing a profile
holds makes the reader fail in any other way than a :class:`ProfileError`."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.config.profile import ProfileError, check_profile_report, load_profile
from tests.unit.config.test_profile import BACCARAT, PAIGOW, write

ROOT = Path(__file__).resolve().parents[3]


def errors_of(path: Path) -> tuple[ProfileError, ...]:
    with pytest.raises(ProfileError) as info:
        load_profile(path)
    return info.value.errors


def test_five_mistakes_are_five_errors_in_one_run(tmp_path: Path) -> None:
    base = write(
        tmp_path,
        "boards/base.toml",
        PAIGOW.replace("[devices.buttons]\n", "[devices.buttons]\nbounce_msec = 20\n"),
    )
    top = write(
        tmp_path,
        "t.toml",
        'include = "boards/base.toml"\n'
        '[console]\nbaud = "fast"\n'
        "[journal]\nretain_days = 30\n"
        "[rules.baccarat]\ndecks = 4\n"
        "[printer]\nport = 1\n",
    )
    found = errors_of(top)
    assert [(e.file, e.key) for e in found] == [
        (str(top), "journal.retain_days"),
        (str(top), "console.baud"),
        (str(top), "rules.baccarat.decks"),
        (str(base), "devices.buttons.bounce_msec"),
        (str(top), "printer"),
    ]
    assert [str(e) for e in found] == [
        f"{top}: journal.retain_days: 30 is out of range 90..3650",
        f'{top}: console.baud: wrong type: expected a whole number, got "fast" (str)',
        f"{top}: rules.baccarat.decks: not allowed: 4 is out of range 6..8"
        " (5324.20(a)(4) (at least six))",
        f"{base}: devices.buttons.bounce_msec: unknown key (did you mean 'bounce_ms'?)",
        f"{top}: printer: unknown key; known here: board, console, devices, feed, game,"
        " gpio_backend, gpio_sim_debounce, journal, name, rng, rules, scoreboard",
    ]
    with pytest.raises(ProfileError) as info:
        check_profile_report(top)
    assert str(info.value) == str(found[0]) and len(info.value.errors) == 5


def test_check_profile_prints_every_error(tmp_path: Path) -> None:
    f = write(
        tmp_path,
        "t.toml",
        PAIGOW.replace("a = 5", 'a = "5"').replace("draw = 17", "draw = 13")
        + "[console]\nline_editing = 1\n[rules]\nrecall_depth = 5\njurisdictoin = 'NY'\n"
        "[scoreboard]\naddress = 'localhost'\n",
    )
    run = subprocess.run(
        [sys.executable, "-m", "controller", "check-profile", str(f)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert run.returncode == 1, run
    lines = run.stderr.splitlines()
    assert lines == [
        f"profile error: {f}: console.line_editing: wrong type: expected true or false,"
        " got 1 (int)",
        f"profile error: {f}: rules.jurisdictoin: unknown key: no such setting"
        " (did you mean jurisdiction?)",
        f"profile error: {f}: rules.recall_depth: not allowed: 20 is out of range"
        " 10..1000 (5324.50(f)(11) (at least 10 rounds))".replace("20 is", "5 is"),
        f"profile error: {f}: scoreboard.address: 'localhost' is not an IP address (use 127.0.0.1)",
        f"profile error: {f}: devices.display.pins.a: wrong type: expected a whole number,"
        ' got "5" (str)',
        f"profile error: {f}: devices.buttons.pins.draw: GPIO 13 is also used by"
        f" devices.display.pins.c ({f})",
    ]
    assert run.stdout == ""


def test_a_wrong_game_is_one_error_not_one_per_device(tmp_path: Path) -> None:
    f = write(tmp_path, "t.toml", PAIGOW.replace('game = "paigow"', 'game = "poker"'))
    assert [str(e) for e in errors_of(f)] == [
        f"{f}: game: 'poker' is not one of paigow, baccarat, startpos"
    ]


def test_a_missing_device_and_a_bad_setting_elsewhere_are_both_said(tmp_path: Path) -> None:
    f = write(
        tmp_path,
        "t.toml",
        BACCARAT.replace('[devices.shoe]\nport = "sim"\n', "") + "[rng]\nx = 1\n",
    )
    assert [str(e) for e in errors_of(f)] == [
        f"{f}: devices.shoe: missing: game baccarat needs this device",
        f"{f}: rng.x: unknown key; known here: background_cycle, hwrng_path",
    ]


def test_a_good_profile_has_no_error(tmp_path: Path) -> None:
    assert load_profile(write(tmp_path, "t.toml", PAIGOW)).game == "paigow"


# -- anything a profile may hold ---------------------------------------------------------------

KEYS = [
    "name",
    "game",
    "gpio_backend",
    "journal.path",
    "journal.signer",
    "journal.second_medium",
    "journal.anchor_path",
    "journal.retain_days",
    "journal.clock_floor",
    "journal.counter",
    "journal.table_id",
    "console.port",
    "console.baud",
    "rng.hwrng_path",
    "rules.jurisdiction",
    "rules.start_mode",
    "rules.paigow.dragons_eye",
    "rules.baccarat.ez",
    "rules.baccarat.vig_percent",
    "rules.paigow.delivery_styles",
    "scoreboard.address",
    "scoreboard.kiosk",
    "feed.broker",
    "feed.table",
    "feed.site",
    "devices.display.driver",
    "devices.display.pins.a",
    "devices.display.common",
    "devices.buttons.pins.draw",
    "devices.buttons.bounce_ms",
    "devices.seat_lamps.pins.3",
    "devices.shoe.port",
    "devices.shoe.sim_decks",
    "devices.dealer_display.driver",
    "devices.nothing",
    "extra.key",
]
VALUES = st.one_of(
    st.integers(-(2**64), 2**64),
    st.booleans(),
    st.floats(allow_nan=False),
    st.text(max_size=12),
    st.sampled_from(
        ["sim", "rpi", "pkcs11", "NJ", "dice", "/dev/ttyUSB0", "/abs", "../up", "mqtt://x", ""]
    ),
    st.lists(st.text(max_size=6), max_size=3),
    st.dictionaries(st.text(min_size=1, max_size=4), st.integers(0, 30), max_size=2),
)


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_toml(k)} = {_toml(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _dump(table: dict[str, object], prefix: str = "") -> str:
    """A TOML document of nested tables (values first, then each sub-table)."""
    out = [f"[{prefix}]\n"] if prefix else []
    out += [f"{_toml(k)} = {_toml(v)}\n" for k, v in table.items() if not isinstance(v, dict)]
    for k, v in table.items():
        if isinstance(v, dict):
            out.append(_dump(v, f"{prefix}.{_toml(k)}" if prefix else _toml(k)))
    return "".join(out)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    base=st.sampled_from([PAIGOW, BACCARAT]),
    changes=st.dictionaries(st.sampled_from(KEYS), VALUES, min_size=1, max_size=6),
)
def test_any_profile_is_read_or_refused_with_named_errors(
    tmp_path: Path, base: str, changes: dict[str, object]
) -> None:
    data: dict[str, object] = tomllib.loads(base)
    for key, value in changes.items():
        *tables, name = key.split(".")
        here = data
        for t in tables:
            nxt = here.setdefault(t, {})
            if not isinstance(nxt, dict):
                break
            here = nxt
        else:
            here[name] = value
    path = tmp_path / "fuzz.toml"
    path.write_text(_dump(data))
    assert tomllib.loads(path.read_text()) == data  # the profile holds what was drawn
    try:
        profile = load_profile(path)
    except ProfileError as exc:
        assert exc.errors and str(exc.errors[0]) == str(exc)
        for error in exc.errors:
            assert error.file == str(path), error
            assert error.key and str(error).startswith(f"{path}: {error.key}: "), error
            assert error.problem, error
        keys = [(e.key, e.problem) for e in exc.errors]
        assert len(keys) == len(set(keys)), keys  # each error said once
    else:
        assert profile.game in ("paigow", "baccarat")


@pytest.mark.parametrize("port", ["\x00", "/dev/tty\x00USB0"])
def test_a_port_with_a_nul_byte_is_refused_not_a_crash(tmp_path: Path, port: str) -> None:
    """Found by the test above: a NUL byte reached os.path.realpath (ValueError)."""
    f = tmp_path / "t.toml"
    f.write_text(PAIGOW + f"[console]\nport = {json.dumps(port)}\n")
    (error,) = errors_of(f)
    assert error.key == "console.port"
    assert error.problem == "a path cannot contain a NUL byte"
