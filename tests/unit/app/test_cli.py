"""The command line: a corrupt profile is refused with a clear error and journaled."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.cli import main
from controller.journal.store import Journal
from controller.journal.verify import check_chain


def test_a_corrupt_profile_is_refused_named_and_journaled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    Journal(state / "journal.sqlite").close()  # the table's journal
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\ngame = "roulette"\n')
    assert main(["run", "--profile", str(bad), "--state-dir", str(state), "--console", "none"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("profile error: ") and "bad.toml" in err and "game" in err
    journal = Journal(state / "journal.sqlite")
    rows = list(journal.events(kinds=["app.start_refused"]))
    assert len(rows) == 1 and rows[0].data["profile"] == str(bad)
    assert "roulette" in rows[0].data["error"] or "game" in rows[0].data["error"]
    assert check_chain(journal).ok
    journal.close()


def test_no_journal_is_created_for_a_refused_profile(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("this is = not [toml")
    assert (
        main(
            ["run", "--profile", str(bad), "--state-dir", str(tmp_path / "s"), "--console", "none"]
        )
        == 1
    )
    assert not (tmp_path / "s" / "journal.sqlite").exists()
    assert not (tmp_path / "s" / "journal-key.pem").exists()


@pytest.mark.parametrize("rounds", ["-3", "0", "ten"])
def test_simulate_with_a_bad_round_count_is_a_usage_error(
    rounds: str, capsys: pytest.CaptureFixture[str]
) -> None:
    root = Path(__file__).resolve().parents[3]
    with pytest.raises(SystemExit) as stopped:
        main(
            [
                "simulate",
                "--profile",
                str(root / "hw_profiles" / "sim-paigow.toml"),
                "--rounds",
                rounds,
            ]
        )
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "argument --rounds:" in err and "Traceback" not in err


def test_run_without_the_gpio_library_names_the_extra_to_install(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib

    monkeypatch.delenv("TABLE_CONTROLLER_MANIFEST", raising=False)
    real = importlib.import_module

    def no_rpi(name: str, *args: object, **kwargs: object) -> object:
        if name.startswith("RPi"):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return real(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(importlib, "import_module", no_rpi)
    root = Path(__file__).resolve().parents[3]
    status = main(
        [
            "run",
            "--profile",
            str(root / "hw_profiles" / "rpi4-paigow.toml"),
            "--state-dir",
            str(tmp_path / "state"),
            "--console",
            "none",
        ]
    )
    assert status == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("device error: GPIO backend 'rpi' needs the RPi.GPIO module")
    assert "'pi' extra" in err[0] and "rpi-lgpio" in err[0]
    journal = Journal(tmp_path / "state" / "journal.sqlite")
    try:
        assert list(journal.events(kinds=["app.device_error"]))
    finally:
        journal.close()
