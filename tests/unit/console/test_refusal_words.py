"""Every refusal both tables and the console can give names the commands and buttons a person
uses, never an internal name (docs/console.md "Refusals").

Each table is driven into each of its states (and the conditions that change what a state
refuses: a player bank, entries, dice mode, test mode, deferred vigorish, a disclosed card, a
new shoe session, a halt), and there every console action of the table (right and malformed)
and every dealer button of the profile is tried, inside a journal transaction that is rolled
back (the table puts itself back as a failed commit would), so each probe sees the same state.
Every refusal text collected is checked against:

* the internal names, taken from the state machine definitions (every trigger and guard that is
  not also a console word or a button): none may appear, so a new trigger or guard that leaks
  into a refusal fails here;
* the console's commands (``help`` of a console on each game) with the tables' actions, and the
  profile's buttons: every command a refusal quotes (in backticks) is one of them, and every
  button it names (``the X button``, ``press X``) is a button;
* no issue numbers, no ``not when GUARD``, and a refused button's reply (``ERR CODE NAME
  refused: reason``) never says ``NAME refused`` twice.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from controller.config.profile import (
    BACCARAT_BUTTONS,
    BACCARAT_OPTIONAL_BUTTONS,
    PAIGOW_BUTTONS,
    PAIGOW_OPTIONAL_BUTTONS,
)
from controller.console.interpreter import Console
from controller.journal.store import Journal
from controller.tables.baccarat import machine as bac_machine
from controller.tables.baccarat.actions import ACTIONS as BACCARAT_ACTIONS
from controller.tables.paigow import definition as pg_def
from controller.tables.table import Refused
from tests.unit.baccarat_table.helpers import Rig as BacRig
from tests.unit.console.conftest import Clock, FakeApp, FakeTable
from tests.unit.console.conftest import Rig as ConsoleRig
from tests.unit.paigow_table.helpers import Rig as PgRig
from tests.unit.paigow_table.helpers import make_rig as make_paigow
from tests.unit.paigow_table.helpers import play_round, settings, stuck_rng

TECH = "technician@serial"
SUPERVISOR = "supervisor@serial"

# -- the names a person uses, and the internal ones ---------------------------------------------

BUTTONS = frozenset(
    (*PAIGOW_BUTTONS, *PAIGOW_OPTIONAL_BUTTONS, *BACCARAT_BUTTONS, *BACCARAT_OPTIONAL_BUTTONS)
)


def _paigow_internal() -> set[str]:
    names = set(pg_def.TRIGGERS)
    for step in pg_def.TRANSITIONS:
        names.update(step.conditions)
        names.update(step.unless)
    return names | {f"why_{n}" for n in names}


def _baccarat_internal() -> set[str]:
    names: set[str] = set()
    for trigger, _source, _dest, conditions in bac_machine.TRANSITIONS:
        names.add(trigger)
        names.update(conditions)
    return names


def _console(tmp: Path, game: str) -> ConsoleRig:
    """A console on a fake application of ``game`` (its own state directory)."""
    path = tmp / f"console-{game}"
    path.mkdir(exist_ok=True)
    clock = Clock()
    app = FakeApp(path, FakeTable(game=game), with_rng=game == "paigow")
    return ConsoleRig(app, Console(app, clock=clock, scrypt_n=16), clock)


def _console_words(tmp: Path) -> set[str]:
    """The console's commands on either game (its ``help``) and both tables' actions."""
    words: set[str] = set()
    for game in ("paigow", "baccarat"):
        rig = _console(tmp, game)
        words.update(
            line[3:].split()[0] for line in rig.ok("help") if line.startswith(("   ", " * "))
        )
        rig.app.journal.close()
    words.update(pg_def.ACTION_NAMES)
    words.update({*BACCARAT_ACTIONS, "sim", "odds"})  # BaccaratTable.action_names
    return words


TOKEN = re.compile(r"[a-z][a-z0-9_]*")
QUOTED = re.compile(r"`([^`]+)`")
BUTTON_NAMED = re.compile(r"\bthe ([a-z_]+) button\b|\bpress ([a-z_]+)")


def _problems(text: str, leaks: set[str], words: set[str]) -> list[str]:
    """What is wrong with one refusal text (empty: nothing)."""
    found = []
    tokens = set(TOKEN.findall(text.lower()))
    if tokens & leaks:
        found.append(f"internal names {sorted(tokens & leaks)}")
    if "not when" in text:
        found.append("'not when' a guard")
    if re.search(r"\bissue \d", text, re.IGNORECASE):
        found.append("an issue number")
    for quoted in QUOTED.findall(text):
        first = quoted.split()[0].lower()
        if first not in words and first not in BUTTONS:
            found.append(f"`{quoted}` is no console command or button")
    for match in BUTTON_NAMED.finditer(text):
        name = match.group(1) or match.group(2)
        if name not in BUTTONS:
            found.append(f"{name!r} is no button")
    return found


# -- probing a table in a state without leaving it -------------------------------------------


class _Undo(Exception):
    """Raised inside the probe's transaction: the journal rolls back and the table with it."""


def _probe(journal: Journal, act: Callable[[], None]) -> Refused | None:
    """``act`` inside a journal transaction that is then rolled back; its refusal, if any."""
    refused: list[Refused] = []
    try:
        with journal.transaction():
            try:
                act()
            except Refused as exc:
                refused.append(exc)
            raise _Undo
    except _Undo:
        pass
    return refused[0] if refused else None


PAIGOW_LINES = (
    "open",
    "idle",
    "no-bank",
    "void",
    "void the tiles were dropped",
    "void seat 3",
    "bank seat 2",
    "cobank seat 2",
    "surrender seat 3",
    "style jung_quat",
    "dice 11",
    "dice 1 2 3",
    "expose stacking",
    "expose player 3",
    "expose dealer",
    "expose bank",
    "expose dead",
    "expose unwagered 4",
    "wager 3 2500",
    "wager 3 2500 4",
    "wager 4 2500 6",
    "wager dealer 1000",
    "wager 3 0",
    "tiles dealer 1-2 2-4 6-6 5-5",
    "tiles dealer 1-2 2-4 6-6 5-5 HIGH=6-6,5-5",
    "tiles bank 1-2 2-4 6-6 5-5",
    "tiles bank 1-2 2-4 6-6 5-5 HIGH=6-6,5-5",
    "tiles 3 4-5 6-6 1-3 2-2",
    "tiles 3 4-5 6-6 1-3 2-2 HIGH=1-3,2-2",
    "tiles 5 4-5 6-6 1-3 2-2 HIGH=4-5,6-6",
    "hands 3 4-5,6-6 1-3,2-2",
    "hands bank 4-5,6-6 1-3,2-2",
    "hands dealer 4-5,6-6 1-3,2-2",
    "shift start",
    "test-mode on",
    # malformed
    "bank",
    "bank seat 9",
    "dice 2",
    "dice 7 7 7",
    "style nope",
    "expose",
    "wager x y",
    "wager 3 999999999999",
    "tiles",
    "tiles 9 1-1 1-1 1-1 1-1",
    "tiles dealer 9-9 1-1 2-2 3-3",
    "frob",
)

#: (name, settings, set-up lines: ``press NAME`` or a console action)
PAIGOW_STATES: tuple[tuple[str, dict[str, Any], tuple[str, ...]], ...] = (
    ("inspection", {}, ()),
    ("washing", {}, ("open",)),
    ("betting", {}, ("press shuffled",)),
    ("betting, player bank, chips missing", {}, ("press shuffled", "bank seat 2", "wager 3 2500")),
    ("betting, house, dealer's wager", {}, ("press shuffled", "wager 3 2500")),
    ("bank_style", {}, ("press shuffled", "bank seat 2", "press no_more_bets")),
    ("no_more_bets", {}, ("press shuffled", "press no_more_bets")),
    ("no_more_bets, dice", {"start_mode": "dice"}, ("press shuffled", "press no_more_bets")),
    (
        "no_more_bets, dragon's eye",
        {"start_mode": "dice", "jurisdiction": "NJ", "dragons_eye": True},
        ("press shuffled", "press no_more_bets"),
    ),
    ("dealing", {}, ("press shuffled", "press no_more_bets", "press draw")),
    (
        "setting_hands, a tile exposed",
        {},
        (
            "press shuffled",
            "wager 3 2500",
            "press no_more_bets",
            "press draw",
            "press dealt",
            "expose player 3",
        ),
    ),
    (
        "dealer_hands, house, entries",
        {},
        (
            "press shuffled",
            "wager 3 2500",
            "press no_more_bets",
            "press draw",
            "press dealt",
            "press hands_set",
        ),
    ),
    (
        "dealer_hands, nothing entered",
        {},
        ("press shuffled", "press no_more_bets", "press draw", "press dealt", "press hands_set"),
    ),
    (
        "dealer_hands, player bank, entries",
        {},
        (
            "press shuffled",
            "bank seat 2",
            "wager 2 10000",
            "wager 3 2500",
            "wager dealer 1000",
            "press no_more_bets",
            "press draw",
            "press dealt",
            "press hands_set",
        ),
    ),
    (
        "dealer_hands, co-bank, entries",
        {},
        (
            "press shuffled",
            "cobank seat 2",
            "wager 2 10000",
            "wager 3 2500",
            "press no_more_bets",
            "press draw",
            "press dealt",
            "press hands_set",
        ),
    ),
    (
        "dealer_hands, surrender refused against a bank",
        {"surrender_against_bank": "refuse"},
        (
            "press shuffled",
            "bank seat 2",
            "wager 2 10000",
            "wager 3 2500",
            "press no_more_bets",
            "press draw",
            "press dealt",
            "press hands_set",
        ),
    ),
    (
        "betting, nothing offered",
        {"bank_offered": False, "cobank_offered": False, "surrender_offered": False},
        ("press shuffled",),
    ),
    ("test mode", {}, ("test-mode on",)),
    ("no_more_bets, RNG fault", {}, ("press shuffled", "press no_more_bets")),
)


def _paigow_step(rig: PgRig, line: str) -> None:
    if line.startswith("press "):
        rig.press(line.removeprefix("press "))
        assert rig.table.last_refusal is None, (line, rig.table.last_refusal)
    else:
        rig.act(line, TECH)


def _paigow_refusals(tmp: Path) -> Iterator[tuple[str, str, str]]:
    """(where, what was tried, the reply a person reads) for every refusal of the pai gow
    table in every state of :data:`PAIGOW_STATES`."""
    for n, (name, rules, steps) in enumerate(PAIGOW_STATES):
        rng = stuck_rng() if "RNG fault" in name else "good"
        rig = make_paigow(tmp / f"pg{n}", settings(**rules), rng=rng)
        if any(step.startswith(("bank", "cobank")) for step in steps):
            play_round(rig)  # a player banks from the second round of a game (5324.50(g)(2))
        for step in steps:
            _paigow_step(rig, step)
        for button in (*PAIGOW_BUTTONS, *PAIGOW_OPTIONAL_BUTTONS):

            def press(button: str = button, rig: PgRig = rig) -> None:
                rig.press(button)
                if rig.table.last_refusal is not None:
                    raise rig.table.last_refusal

            exc = _probe(rig.journal, press)
            if exc is not None:
                yield name, f"button {button}", f"ERR {exc.code} {button} refused: {exc.reason}"
        for line in PAIGOW_LINES:
            for who in (TECH, SUPERVISOR):
                exc = _probe(rig.journal, lambda line=line, who=who, rig=rig: rig.act(line, who))
                if exc is not None:
                    yield name, line, f"ERR {exc.code} {exc.reason}"
        rig.journal.close()


BACCARAT_LINES = (
    "curator 1",
    "curator 5",
    "nobody",
    "bet 3 banker 2500",
    "bet 3 tie 500",
    "bet 3 nope 500",
    "bet 3 banker 1",
    "bet 3 dragon_player 500",
    "bet",
    "pass",
    "pass ordered",
    "disclose",
    "remedy burn",
    "remedy dead",
    "remedy sideways",
    "collect 3",
    "collect",
    "void",
    "void the shoe jammed",
    "clear",
    "shoe resume",
    "shoe",
    "shift start",
    "shift",
    "odds",
    "sim shoe deal coup",
    "sim shoe deal burn",
    "sim button",
    "sim nothing",
    "frob",
)


def _bac_setup(rig: BacRig, name: str) -> None:
    """Drive a fresh baccarat table into the state called ``name``."""
    if name == "shuffle":
        return
    if name == "shuffle, vigorish owed":
        rig.open_shoe()
        rig.act("bet 2 banker 2000")
        rig.press("no_more_bets")
        rig.cards("2S 9H 3S KD")
        rig.press("settled")
        rig.act("void end of session")
        return
    rig.press("shuffled")
    if name == "burn":
        return
    rig.cards("2S AH AD")
    if name == "offering":
        return
    rig.act("curator 4")
    if name == "betting":
        return
    if name == "betting, new shoe session":
        rig.session()
        return
    if name == "betting, shoe fault":
        rig.frame("FLT", "JAM")
        return
    if name == "halted":
        rig.frame("CARD", "ZZ")
        return
    rig.act("bet 3 banker 1000")
    rig.press("no_more_bets")
    if name == "dealing":
        return
    if name == "player_third":
        rig.cards("2S 2H 3S 3H")  # player 5, banker 5: the player's hand draws (f)(11)
        return
    rig.cards("9S 2H KS 3D")  # player natural 9 wins: the banker's hand lost (h)(1)(i)
    if name == "settling":
        return
    rig.press("settled")
    if name == "passing":
        return
    rig.act("curator 5")
    rig.cards("4C")  # a card in excess while betting (i)(2)
    rig.press("disclose")
    assert name == "betting, a disclosed card", name


BACCARAT_STATES = (
    "shuffle",
    "shuffle, vigorish owed",
    "burn",
    "offering",
    "betting",
    "betting, new shoe session",
    "betting, shoe fault",
    "halted",
    "dealing",
    "player_third",
    "settling",
    "passing",
    "betting, a disclosed card",
)


def _baccarat_refusals(tmp: Path) -> Iterator[tuple[str, str, str]]:
    for n, name in enumerate(BACCARAT_STATES):
        path = tmp / f"bac{n}"
        path.mkdir()
        rig = BacRig(path, deferred_vig="vigorish" in name)
        _bac_setup(rig, name)
        buttons = (*BACCARAT_BUTTONS, *BACCARAT_OPTIONAL_BUTTONS)
        for button in buttons:
            exc = _probe(rig.journal, lambda button=button, rig=rig: rig.press(button))
            if exc is not None:
                yield name, f"button {button}", f"ERR {exc.code} {button} refused: {exc.reason}"
        for line in BACCARAT_LINES:
            for who in (TECH, SUPERVISOR):
                exc = _probe(rig.journal, lambda line=line, who=who, rig=rig: rig.act(line, who))
                if exc is not None:
                    yield name, line, f"ERR {exc.code} {exc.reason}"
        try:
            rig.table.clear_fault(TECH)
        except Refused as exc:
            yield name, "fault clear", f"ERR {exc.code} {exc.reason}"
        rig.table.close()
        rig.journal.close()


CONSOLE_LINES = (
    "help a b",
    "help frob",
    "status now",
    "config",
    "config show nope",
    "config frob",
    "config set recall_depth 5",
    "config set recall_depth",
    "recall 0",
    "recall x y",
    "journal",
    "journal verify 1:xyz",
    "verify a b",
    "rng",
    "rng test 1",
    "lab",
    "fault",
    "test-mode",
    "selftest now",
    "houseway 1-1",
    "odds now",
    "logout now",
    "frob",
)


def _console_refusals(tmp: Path) -> Iterator[tuple[str, str, str]]:
    for game in ("paigow", "baccarat"):
        rig = _console(tmp, game)
        for logged_in in (False, True):
            if logged_in:
                rig.login()
            for line in CONSOLE_LINES:
                reply = rig.run(line)
                if reply[-1].startswith("ERR "):
                    yield f"console ({game})", line, reply[-1]
        rig.app.table.in_round = True
        for line in ("config set recall_depth 30", "rng test 100", "test-mode on"):
            reply = rig.run(line)
            if reply[-1].startswith("ERR "):
                yield f"console ({game}) mid-round", line, reply[-1]
        rig.app.journal.close()


def test_every_refusal_names_commands_and_buttons_never_internal_names(tmp_path: Path) -> None:
    words = _console_words(tmp_path)
    leaks = (_paigow_internal() | _baccarat_internal()) - words - BUTTONS
    # the test can fail: the names it looks for are the machines' own
    assert {"expose_stacking", "player_banks", "accept_shoe", "nobody_accepts"} <= leaks
    assert _problems("accept_shoe is not allowed", leaks, words)
    assert _problems("x; not when player_banks", leaks, words)
    assert _problems("see issue 6", leaks, words)
    assert _problems("use `frobnicate 3`", leaks, words)
    seen: list[tuple[str, str, str]] = [
        *_paigow_refusals(tmp_path),
        *_baccarat_refusals(tmp_path),
        *_console_refusals(tmp_path),
    ]
    assert len(seen) > 300  # every state refuses most inputs: the probes ran
    bad = []
    for where, tried, reply in seen:
        problems = _problems(reply, leaks, words)
        if tried.startswith("button "):
            button = tried.removeprefix("button ")
            if reply.count(f"{button} refused") > 1:
                problems.append("the button's refusal said twice")
        if problems:
            bad.append(f"{where}: {tried}: {reply}: {'; '.join(problems)}")
    assert not bad, "\n".join(bad)


def test_a_settled_refusal_on_a_player_bank_round_suggests_what_the_state_takes(
    tmp_path: Path,
) -> None:
    """The bank's tiles on a player-bank round are entered as the banking player set them
    (5324.50(f)(3)): the refusal suggests `hands bank`, which is taken; never `tiles bank T1 T2
    T3 T4`, which is refused without HIGH= on such a round."""
    rig = make_paigow(tmp_path, settings())
    play_round(rig)
    for step in (
        "press shuffled",
        "bank seat 2",
        "wager 2 10000",
        "wager 3 2500",
        "press no_more_bets",
        "press draw",
        "press dealt",
        "press hands_set",
    ):
        _paigow_step(rig, step)
    rig.press("settled")
    refused = rig.table.last_refusal
    assert refused is not None
    assert "`hands bank Ta-Tb Tc-Td`" in refused.reason
    assert "tiles bank T1 T2 T3 T4`" not in refused.reason
    assert rig.try_act("tiles bank 1-2 2-4 6-6 5-5") is not None  # what is no longer said
    assert rig.try_act("hands bank 1-2,2-4 6-6,5-5") is None  # what is said instead


def test_every_input_has_the_words_a_refusal_names_it_by() -> None:
    """A trigger added to either machine needs the button, command or shoe card that sends it
    (a refusal lists what a state takes in those words); only baccarat's halt is nobody's."""
    assert set(pg_def.SAID) == set(pg_def.TRIGGERS)
    triggers = {t for t, _, _, _ in bac_machine.TRANSITIONS}
    assert set(bac_machine.SAID) - {"bet"} == triggers - {"halt"}
