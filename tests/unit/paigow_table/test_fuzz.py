"""Stateful fuzzing of the pai gow table: random dealer buttons, console actions (valid and
garbage) and power cycles in any order, as a regulator's lab would press and type them.

After every step: nothing but ``Refused`` (with a console code) escapes; every input is journaled
first and every refusal is journaled with its reason; one draw at most per round, drawn only
right after "no more bets" (or the bank's style); the display shows the round's journaled number
in ``dealing`` and is blank elsewhere (test mode lights every segment); a power cycle keeps the
state, round, number and bank rotation. At the end the journal's chain verifies.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from controller.games.paigow.dealing import DELIVERY_STYLES
from controller.games.paigow.houseway import set_hand
from controller.games.paigow.tiles import full_set
from controller.journal.verify import check_chain
from controller.tables.table import Refused
from drivers.buttons import ButtonPressed

from .helpers import ALL_LIT, BLANK, BUTTON_PINS, Rig, digit, make_rig, reopen, settings

CODES = frozenset({"SYNTAX", "UNKNOWN", "AUTH", "LOCKED", "RANGE", "STATE", "FAULT", "IO", "HOLD"})
START_KINDS = ("paigow.drawn", "paigow.dice")
TRANSITION_KINDS = (
    "paigow.state",
    "paigow.drawn",
    "paigow.dice",
    "paigow.settled",
    "paigow.voided",
)
TILES = [str(t) for t in full_set()]

# -- console words: valid, out of range and garbage ----------------------------------------------

GARBAGE_WORDS = [
    "",
    "-1",
    "+3",
    "1.5",
    "0x1",
    "seat",
    "²",
    "١",
    "٣",
    "Ⅳ",
    "１",
    "999999999999",
    "100000001",
    "nan",
    "HIGH=",
    "HIGH=4-5",
    "4-5",
    "7-7",
    "0-1",
    "dealer",
    "bank",
    "on",
    "off",
    "stacking",
    "player",
    "\t",
    "DROP TABLE",
    "💥",
]
garbage = st.one_of(st.sampled_from(GARBAGE_WORDS), st.text(max_size=6))
small_int = st.integers(-1, 8).map(str)
seat_word = st.one_of(st.integers(1, 6).map(str), small_int, garbage)
cents_word = st.one_of(
    st.sampled_from(["0", "100", "2500", "10000", "100000", "100000000", "100000001"]), garbage
)
tile_word = st.one_of(st.sampled_from(TILES), garbage)


def seat_args(strict: st.SearchStrategy[str]) -> st.SearchStrategy[list[str]]:
    return st.one_of(
        strict.map(lambda s: ["seat", s]), strict.map(lambda s: [s]), st.lists(garbage, max_size=3)
    )


@st.composite
def four_tiles(draw: st.DrawFn) -> list[str]:
    if draw(st.integers(0, 9)) == 0:
        return draw(st.lists(tile_word, min_size=0, max_size=5))
    return draw(st.permutations(TILES))[:4]


@st.composite
def tiles_cmd(draw: st.DrawFn) -> tuple[str, list[str]]:
    who = draw(
        st.one_of(st.sampled_from(["dealer", "bank", "1", "2", "3", "4", "5", "6"]), garbage)
    )
    four = draw(four_tiles())
    if draw(st.booleans()):
        return "hands", [who, ",".join(four[:2]), ",".join(four[2:])]
    mark = draw(st.sampled_from(["none", "high", "bad"]))
    extra = (
        []
        if mark == "none"
        else [f"HIGH={four[0]},{four[1]}"]
        if mark == "high" and len(four) >= 2
        else [f"HIGH={draw(tile_word)}"]
    )
    return "tiles", [who, *four, *extra]


console_cmd = st.one_of(
    st.sampled_from(
        [
            ("open", []),
            ("idle", []),
            ("no-bank", []),
            ("void", []),
            ("test-mode", ["on"]),
            ("test-mode", ["off"]),
            ("expose", ["stacking"]),
            ("expose", ["dealer"]),
            ("expose", ["bank"]),
            ("expose", ["dead"]),
            ("expose", ["unwagered"]),
        ]
    ),
    st.tuples(st.sampled_from(["bank", "cobank", "surrender"]), seat_args(seat_word)),
    seat_args(seat_word).map(lambda a: ("void", a)),
    seat_word.map(lambda s: ("expose", ["player", s])),
    st.lists(garbage, max_size=3).map(lambda a: ("expose", a)),
    st.one_of(st.sampled_from(DELIVERY_STYLES), garbage).map(lambda s: ("style", [s])),
    st.one_of(
        st.integers(1, 20).map(lambda t: [str(t)]),
        st.lists(st.integers(0, 7).map(str), min_size=3, max_size=3),
        st.lists(garbage, max_size=4),
    ).map(lambda a: ("dice", a)),
    st.tuples(st.integers(1, 6).map(str), cents_word).map(lambda a: ("wager", list(a))),
    st.tuples(seat_word, cents_word, seat_word).map(lambda a: ("wager", list(a))),
    cents_word.map(lambda c: ("wager", ["dealer", c])),
    st.lists(garbage, max_size=4).map(lambda a: ("wager", a)),
    tiles_cmd(),
    st.tuples(garbage, st.lists(garbage, max_size=3)),
    st.sampled_from(["open", "idle", "no-bank", "test-mode", "sim"]).flatmap(
        lambda n: st.lists(garbage, min_size=1, max_size=2).map(lambda a: (n, a))
    ),
)
button_name = st.one_of(st.sampled_from(sorted(BUTTON_PINS)), st.sampled_from(["bogus", ""]))


class PaigowFuzz(RuleBasedStateMachine):
    """The table under random inputs; see the module docstring for what is checked."""

    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="paigow-fuzz-"))
        self.rig: Rig | None = None
        self.test_mode = False
        self.seen_seq = 0
        self.drawn_rounds: set[int] = set()
        self.last_transition: dict[int, str] = {}
        self.number_of: dict[int, int] = {}
        self.shown_calls = 0

    @property
    def r(self) -> Rig:
        assert self.rig is not None
        return self.rig

    @initialize(
        table=st.sampled_from(
            [
                ("NY", "rng", False),
                ("NY", "rng", False),
                ("NY", "dice", False),
                ("NJ", "dice", True),
            ]
        ),
        against_bank=st.sampled_from(["refuse", "center", "house"]),
    )
    def power_on(self, table: tuple[str, str, bool], against_bank: str) -> None:
        jurisdiction, mode, dragons = table
        rules = settings(
            jurisdiction=jurisdiction,
            start_mode=mode,
            dragons_eye=dragons,
            surrender_against_bank=against_bank,
        )
        self.rig = make_rig(self.tmp / "table", rules)
        self._scan()

    # -- inputs -------------------------------------------------------------------------------

    def _input(self, do: Any, raises: bool) -> Refused | None:
        before = self.r.journal.last_seq
        alarms = len(self.r.alarms)
        refused: Refused | None = None
        try:
            do()
        except Refused as exc:
            assert raises, "a button press raised Refused to the loop"
            refused = exc
        new = list(self.r.journal.events(since_seq=before))
        # the input rides on the first row it causes (or is a paigow.input row of its own)
        assert new and ("input" in new[0].data or new[0].kind == "paigow.input"), (
            "the input is journaled with its first row"
        )
        assert sum("input" in e.data or e.kind == "paigow.input" for e in new) == 1
        refusals = [e for e in new if e.kind == "paigow.refused"]
        if not raises:  # a button: a refusal is an alarm line, never an exception
            refused_alarms = [a for a in self.r.alarms[alarms:] if a.startswith("REFUSED")]
            assert len(refusals) == len(refused_alarms) <= 1
            if refusals:
                refused = Refused(refusals[0].data["reason"], refusals[0].data["code"])
        if refused is None:
            assert refusals == []
        else:
            assert refused.code in CODES, refused.code
            assert refused.reason
            assert len(refusals) == 1, [e.kind for e in new]
            assert refusals[0].data["reason"] == refused.reason
            assert refusals[0].data["code"] == refused.code
            # a refusal changes nothing but the journal's input/refusal rows
            assert all(
                e.kind in ("paigow.input", "paigow.refused", "paigow.rng_fault") for e in new
            ), [e.kind for e in new]
        return refused

    @rule(name=button_name)
    def press(self, name: str) -> None:
        self._input(lambda: self.r.table.handle(ButtonPressed(name, 0)), raises=False)

    @rule(cmd=console_cmd)
    def console(self, cmd: tuple[str, list[str]]) -> None:
        name, args = cmd
        refused = self._input(lambda: self.r.table.action(name, list(args), "lab"), raises=True)
        if refused is None and name == "test-mode":
            self.test_mode = args == ["on"]

    @rule(
        cmd=st.one_of(
            st.tuples(
                st.sampled_from(["bank", "cobank", "surrender", "void"]),
                st.integers(1, 6).map(lambda n: ["seat", str(n)]),
            ),
            st.just(("no-bank", [])),
            st.integers(1, 6).map(lambda n: ("expose", ["player", str(n)])),
            st.sampled_from(DELIVERY_STYLES).map(lambda s: ("style", [s])),
        )
    )
    def plausible_console(self, cmd: tuple[str, list[str]]) -> None:
        """Well-formed actions, so the fuzzer reaches banked rounds, exposures and surrender."""
        self.console(cmd)

    @precondition(lambda self: self.rig is not None and self.r.state == "betting")
    @rule(
        cmd=st.one_of(
            st.tuples(
                st.integers(1, 6),
                st.sampled_from([0, 500, 2500, 10_000, 1_000_000]),
                st.integers(-1, 1),
            ).map(
                lambda a: (
                    "wager",
                    [str(a[0]), str(a[1])]
                    + ([] if a[2] == 0 else [str(min(6, max(1, a[0] + a[2])))]),
                )
            ),
            st.sampled_from([0, 500, 5000]).map(lambda c: ("wager", ["dealer", str(c)])),
        )
    )
    def plausible_wager(self, cmd: tuple[str, list[str]]) -> None:
        """Well-formed wagers while betting, so rounds with entries reach settlement."""
        self.console(cmd)

    @precondition(lambda self: self.rig is not None and self.r.state == "dealer_hands")
    @rule(
        whose=st.sampled_from(["dealer", "bank", "area", "area", "area"]),
        order=st.permutations(range(32)),
        as_player=st.booleans(),
    )
    def plausible_tiles(self, whose: str, order: list[int], as_player: bool) -> None:
        """Four tiles still in the set, the hands set by the house way (as a player would)."""
        rec = self.r.table.model.record
        used = [t for h in rec.hands.values() for t in h["tiles"]]
        left = list(TILES)
        for t in used:
            if t in left:
                left.remove(t)
        pick = [left[i % len(left)] for i in order[:4]] if len(left) >= 4 else TILES[:4]
        split = set_hand(pick, None)
        high, low = [str(t) for t in split.high], [str(t) for t in split.low]
        if whose == "area":
            areas = [w["area"] for w in rec.wagers] or [1]
            who = str(areas[order[4] % len(areas)])
        else:
            who = whose
        if as_player and whose != "dealer":
            self.console(("hands", [who, ",".join(high), ",".join(low)]))
        else:
            self.console(("tiles", [who, *pick]))

    @rule()
    def round_by_the_book(self) -> None:
        """A push toward the deep states: the next button of a plain round."""
        nxt = {
            "inspection": "shuffled",
            "washing": "shuffled",
            "betting": "no_more_bets",
            "no_more_bets": "draw",
            "bank_style": "draw",
            "dealing": "dealt",
            "setting_hands": "hands_set",
            "dealer_hands": "settled",
        }[self.r.state]
        if nxt == "draw" and self.r.table.model.dice_required():
            self._input(lambda: self.r.table.action("dice", ["3", "4", "5"], "lab"), raises=True)
        else:
            self.press(nxt)

    @rule()
    def tick(self) -> None:
        self.r.table.tick(10**18)

    @rule()
    def power_cycle(self) -> None:
        model = self.r.table.model
        before = (
            model.state,
            model.round_id,
            model.record.number,
            asdict(model.rotation),
            asdict(model.record),
        )
        self.rig = reopen(self.r)
        self.test_mode = False
        self.shown_calls = 0
        model = self.r.table.model
        after = (
            model.state,
            model.round_id,
            model.record.number,
            asdict(model.rotation),
            asdict(model.record),
        )
        assert after == before
        self._scan()

    # -- invariants ---------------------------------------------------------------------------

    def _scan(self) -> None:
        """Fold the journal's new rows: one draw per round, and only after no more bets."""
        for e in self.r.journal.events(since_seq=self.seen_seq):
            self.seen_seq = e.seq
            if e.kind not in TRANSITION_KINDS:
                continue
            rid = int(e.round)
            if e.kind in START_KINDS:
                assert rid not in self.drawn_rounds, f"a second draw in round {rid}"
                self.drawn_rounds.add(rid)
                assert self.last_transition.get(rid) in ("no_more_bets", "style"), (
                    f"round {rid} drawn after {self.last_transition.get(rid)}"
                )
                self.number_of[rid] = int(e.data["record"]["number"])
            self.last_transition[rid] = str(e.data["trigger"])

    @invariant()
    def journal_and_display_agree(self) -> None:
        if self.rig is None:
            return
        self._scan()
        model = self.r.table.model
        lit = self.r.display.lit()
        if model.state == "dealing":
            assert model.round_id in self.number_of, "dealing without a journaled draw"
            assert model.record.number == self.number_of[model.round_id]
            assert lit == digit(self.number_of[model.round_id])
        elif self.test_mode:
            assert lit == ALL_LIT
        else:
            assert lit == BLANK, (model.state, lit)
        # every number shown was journaled first
        for call, n, seq in self.r.display.calls[self.shown_calls :]:
            if call == "show":
                rows = [e for e in self.r.journal.events(START_KINDS) if e.seq <= seq]
                assert rows and rows[-1].data["record"]["number"] == n
        self.shown_calls = len(self.r.display.calls)

    def teardown(self) -> None:
        try:
            if self.rig is not None:
                assert check_chain(self.r.journal).ok
                self.r.journal.close()
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)


PaigowFuzz.TestCase.settings = hsettings(
    max_examples=60,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestPaigowFuzz = PaigowFuzz.TestCase


def test_a_non_ascii_digit_seat_or_die_is_refused_not_a_crash(tmp_path: Path) -> None:
    """Found by the fuzzer: ``void ²`` raised ValueError (``'²'.isdigit()`` is True, ``int``
    refuses it); ``dice ١ ٢ ٣`` was read as 1 2 3. Both are refused as SYNTAX and journaled."""
    rig = make_rig(tmp_path)
    for name, args in (
        ("void", ["²"]),
        ("bank", ["seat", "³"]),
        ("surrender", ["¹"]),
        ("expose", ["player", "²"]),
        ("dice", ["²"]),
        ("dice", ["١", "٢", "٣"]),
    ):
        refused = rig.try_act(" ".join([name, *args]))
        assert refused is not None and refused.code == "SYNTAX", (name, args)
        assert rig.last().kind == "paigow.refused" and rig.last().data["reason"]
    assert rig.state == "inspection"
    assert check_chain(rig.journal).ok
