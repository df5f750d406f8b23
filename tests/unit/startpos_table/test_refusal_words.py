"""Every refusal of the starting-position table names the commands and buttons a person uses
(docs/console.md "Refusals"), checked as tests/unit/console/test_refusal_words.py checks the
other two: in each state every button and console action is tried and rolled back."""

from __future__ import annotations

from pathlib import Path

from controller.app import Application
from controller.config.profile import STARTPOS_BUTTONS, STARTPOS_OPTIONAL_BUTTONS, load_profile
from controller.tables.startpos.table import ACTION_HELP, StartposTable
from controller.tables.table import Refused
from drivers.buttons import ButtonPressed
from tests.unit.console.test_refusal_words import _console_words, _probe, _problems

ASIA = Path(__file__).parents[3] / "hw_profiles" / "sim-asia-poker.toml"
ACTIONS = (
    ("dice", ["2", "3", "3"]),
    ("dice", ["9"]),
    ("dice", ["x"]),
    ("void", []),
    ("void", ["dropped"]),
    ("sim", []),
    ("sim", ["button", "nope"]),
    ("nope", []),
)


def test_every_refusal_names_buttons_and_commands(tmp_path: Path) -> None:
    app = Application(load_profile(ASIA), str(tmp_path / "state"), console_port="none")
    app.start()
    table = app.table
    assert isinstance(table, StartposTable)
    words = _console_words(tmp_path) | set(ACTION_HELP)
    texts: list[str] = []
    for step in ("", "no_more_bets", "draw", "dealt"):
        if step:
            with app.journal.transaction():
                table.handle(ButtonPressed(step, 0))
        for button in (*STARTPOS_BUTTONS, *STARTPOS_OPTIONAL_BUTTONS):
            before = app.journal.last_seq
            _probe(app.journal, lambda b=button: table.handle(ButtonPressed(b, 0)))
            assert app.journal.last_seq == before
        for who in ("technician@serial", "supervisor@serial"):
            for name, args in ACTIONS:
                refused: Refused | None = _probe(
                    app.journal, lambda n=name, a=args, w=who: table.action(n, a, w)
                )
                if refused is not None:
                    texts.append(refused.reason)
        # what a refused button says (the reason its REFUSED line and journal row carry)
        for button in (*STARTPOS_BUTTONS, *STARTPOS_OPTIONAL_BUTTONS):
            refused = _probe(app.journal, lambda b=button: table.round.press(b))
            if refused is not None:
                texts.append(refused.reason)
    assert texts
    bad = {text: _problems(text, set(), words) for text in texts}
    assert {t: p for t, p in bad.items() if p} == {}
    app.close()
