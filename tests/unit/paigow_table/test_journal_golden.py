"""Every transition of the machine played once or more, its journal rows and its replies compared
with a stored copy (golden_rounds.json): the rows (kinds, data, order) and the reply texts are
the table's record and its words to the dealer, so a refactor of how they are computed must not
change one byte of them. After a deliberate change of a row or a reply, rewrite the copy with
``python -m tests.unit.paigow_table.test_journal_golden`` and review its diff."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from controller.tables.paigow.definition import TRANSITIONS
from controller.tables.table import Refused

from .helpers import Rig, make_rig, settings

GOLDEN = Path(__file__).with_name("golden_rounds.json")
SUPERVISOR = "supervisor@test"


def _step(rig: Rig, out: list[object], line: str, who: str = "technician@test") -> None:
    """One input (``press NAME`` or a console line); its reply (or refusal) and its rows."""
    since = rig.journal.last_seq
    if line.startswith("press "):
        rig.press(line.removeprefix("press "))
        reply: object = list(rig.alarms)
        rig.alarms.clear()
    else:
        try:
            reply = rig.act(line, who)
        except Refused as exc:
            reply = {"refused": exc.reason, "code": exc.code}
        reply = {"reply": reply, "alarms": list(rig.alarms)}
        rig.alarms.clear()
    rows = [[r.kind, r.round, r.data] for r in rig.journal.events(since_seq=since)]
    out.append({"input": line, "who": who, "state": rig.state, "reply": reply, "rows": rows})


#: (settings, inputs): every trigger from every source state it takes at least once.
SCENARIOS: tuple[tuple[dict[str, object], tuple[str | tuple[str, str], ...]], ...] = (
    (
        {},
        (
            "press shuffled",  # inspection -> betting: a new game
            "press no_more_bets",
            "press draw",
            "expose player 3",
            "void seat 3",
            "press dealt",
            "expose player 2",
            "void seat 2",
            "press hands_set",
            "press settled",  # nothing entered: the dealer's confirmation
            "expose stacking",  # washing -> washing
            "press shuffled",  # washing -> betting after a (d)(5) re-wash
            "bank seat 2",
            "cobank seat 3",
            "no-bank",
            "bank seat 1",
            "wager 1 500 1",
            "wager 3 2500 4",
            "wager dealer 1000",
            "expose stacking",  # betting -> washing
            "press shuffled",
            "bank seat 1",
            "wager 1 5000 1",
            "wager 4 1500",  # refused: area 4 holds seat 3's wager
            "wager dealer 1000",
            "press no_more_bets",  # -> bank_style
            "style jung_quat",
            "press draw",
            "press dealt",
            "press hands_set",
            "hands bank 4-5,6-6 1-3,2-2",
            "tiles dealer 2-6 1-5 3-4 1-6",
            "hands 4 1-1,1-1 3-3,3-3",
            "hands 4 1-1,3-3 1-1,3-3",  # replaces the entered hands
            "press settled",  # with entries: the settlement row, then the closing row
            "press shuffled",
            "wager 2 1000",
            "wager 4 2000",
            "press no_more_bets",
            "press draw",
            "press dealt",
            "press hands_set",
            "surrender seat 4",
            "tiles dealer 2-6 1-5 3-4 1-6",
            "tiles 2 1-6 2-5 1-5 3-5 HIGH=1-6,2-5",
            "press settled",
            "press shuffled",
            "cobank seat 2",
            "press no_more_bets",
            "style jung_quat",
            "expose stacking",  # no_more_bets -> washing
            "press shuffled",
            "press no_more_bets",  # the style back to the default
            "expose stacking",  # bank_style -> washing
            "press shuffled",
            "no-bank",
            "press no_more_bets",
            "expose stacking",  # no_more_bets -> washing
            "press shuffled",
            "press no_more_bets",
            "press void",  # before the draw: the dealer voids at will
            "press shuffled",
            "press no_more_bets",
            "press draw",
            "expose dealer",  # refused: a supervisor's
            ("expose dealer", SUPERVISOR),  # dealing -> washing
            "press shuffled",
            "press no_more_bets",
            "press draw",
            "press dealt",
            ("expose dead", SUPERVISOR),  # setting_hands -> washing
            "press shuffled",
            "press no_more_bets",
            "press draw",
            "press dealt",
            "press hands_set",
            ("expose unwagered 5", SUPERVISOR),  # dealer_hands -> washing
            "press shuffled",
            "press no_more_bets",
            "press draw",
            ("void tiles knocked over", SUPERVISOR),  # dealing
            "press shuffled",
            "press no_more_bets",
            "press draw",
            "press dealt",
            ("void", SUPERVISOR),  # refused: no reason
            ("void a second look", SUPERVISOR),  # setting_hands
            "press shuffled",
            "press no_more_bets",
            "press draw",
            "press dealt",
            "press hands_set",
            ("void a third look", SUPERVISOR),  # dealer_hands
            "idle",  # washing -> inspection
            "open",  # inspection -> washing: a new game
            "press shuffled",
            "press void",  # betting
            "press shuffled",
            "cobank seat 4",
            "press no_more_bets",
            "press void",  # bank_style -> washing
            "press shuffled",
            "bank seat 5",
            "press no_more_bets",
            "press draw",  # bank_style -> dealing
            "press dealt",
            "press hands_set",
            "press settled",
        ),
    ),
    (
        {"start_mode": "dice", "jurisdiction": "NJ", "dragons_eye": True},
        (
            "press shuffled",
            "press no_more_bets",
            "dice 4 5 6",  # no_more_bets -> dealing
            "press dealt",
            "press hands_set",
            "press settled",
            "press shuffled",
            "bank seat 1",
            "press no_more_bets",
            "dice 11",  # refused: dragon's eye needs the three dice
            "dice 2 2 2",  # bank_style -> dealing: triples
            "press dealt",
            "press hands_set",
            "press settled",
        ),
    ),
)


def play() -> list[object]:
    out: list[object] = []
    with tempfile.TemporaryDirectory(prefix="paigow-golden-") as tmp:
        for n, (rules, inputs) in enumerate(SCENARIOS):
            rig = make_rig(Path(tmp) / str(n), settings(**rules))
            rig.alarms.clear()
            for item in inputs:
                line, who = (item, "technician@test") if isinstance(item, str) else item
                _step(rig, out, line, who)
            rig.journal.close()
    return out


def test_every_transition_is_played() -> None:
    """The scenarios take every transition of the definition (so every effect) at least once."""
    taken = set()
    for entry in play():
        assert isinstance(entry, dict)
        for _kind, _round, data in entry["rows"]:
            if "from" in data and data.get("trigger") != "power_up":
                taken.add((data["trigger"], data["from"], data["state"]))
    missing = {(t.trigger, t.source, t.dest) for t in TRANSITIONS} - taken
    assert not missing


def test_rows_and_replies_are_unchanged() -> None:
    assert json.loads(json.dumps(play())) == json.loads(GOLDEN.read_text())


if __name__ == "__main__":
    GOLDEN.write_text(json.dumps(play(), indent=1) + "\n")
