"""Meters: counters folded from the journal's rows (docs/meters.md).

A meter is never stored apart from the journal: :class:`MeterFold` reads rows in sequence order
(the archive segments first, then the live journal) and counts. So a meter survives power loss
exactly as the journal does, and it never goes back unless the journal itself does (a restore of
an older copy): ``went_back`` (controller/feed/messages.py, which the collector shares) compares
a fold with the values last published.

Lifetime and per shift: a shift is the rows since the newest ``shift start`` a supervisor typed on
the console (journaled as ``paigow.shift_start`` or ``baccarat.shift_start``), or since the first
row when there was none. Rows carried forward past retention (``carried_from``) count nothing:
they are copies of rows already counted.
"""

from __future__ import annotations

import gzip
import itertools
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Protocol, TypedDict

from controller.fields.readers import int_of, map_of, opt_int_of, parse_object, str_of, strs_of
from controller.games.baccarat import Coup, cards, hand_total, result_of
from controller.games.paigow.dealing import starting_position
from controller.rng.lab import chi2_sf

#: Pai gow states in which a round is under way (docs/paigow-table.md "Recovery"): a power cut
#: found at start in one of them is "power lost during a round".
PAIGOW_IN_ROUND: Final = frozenset(
    {"betting", "bank_style", "no_more_bets", "dealing", "setting_hands", "dealer_hands"}
)
#: Baccarat states with a coup on the layout (docs/baccarat-table.md "Recovery").
BACCARAT_IN_COUP: Final = frozenset({"dealing", "player_third", "banker_third", "settling"})
#: Starting-position states with a round under way (docs/startpos-table.md): bets closed to
#: the round paid.
STARTPOS_IN_ROUND: Final = frozenset({"closed", "dealing", "playing"})
#: A starting-position table's round rows: each carries the round's whole state.
STARTPOS_STEPS: Final = frozenset(
    {
        "startpos.no_more_bets",
        "startpos.drawn",
        "startpos.dealt",
        "startpos.settled",
        "startpos.voided",
    }
)
#: Rows a counted summary may fold (controller/journal/summary.py): ``count`` of them each.
COUNTED_KINDS: Final = frozenset({"host.refused", "program.hmac"})
SHIFT_KINDS: Final = ("paigow.shift_start", "baccarat.shift_start", "startpos.shift_start")
#: The rows after which the table publishes its meters (a round or a coup closed).
ROUND_CLOSING_KINDS: Final = frozenset(
    {
        "paigow.settled",
        "paigow.voided",
        "baccarat.coup.result",
        "baccarat.coup.voided",
        "startpos.settled",
        "startpos.voided",
    }
)
NUMBERS: Final = range(1, 9)


class MeterRow(Protocol):
    """What the fold reads of a row (controller/journal/chain.py Row, or an export line)."""

    @property
    def seq(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def round(self) -> int | None: ...
    @property
    def data(self) -> Mapping[str, object]: ...


@dataclass(frozen=True, slots=True)
class PlainRow:
    """A row read from an archive segment or ``journal export`` output."""

    seq: int
    kind: str
    round: int | None
    data: Mapping[str, object]


#: Every meter, in the order the console and docs/meters.md list them: (name, what it counts).
#: Names with ``<...>`` are families (one meter per role, kind or number).
CATALOGUE: Final[tuple[tuple[str, str], ...]] = (
    ("power_ups", "starts of the controller (`app.start` rows)"),
    (
        "power_lost_mid_round",
        "starts after a stop that was not a clean shutdown, found with a round or coup under way",
    ),
    ("faults.<kind>", "faults raised: app, device, rng, table (baccarat halts), program"),
    ("logins.<role>", "console logins by role"),
    ("failed_logins.<role>", "console PINs refused, per role checked"),
    ("lockouts.<role>", "console lockouts after repeated refused PINs"),
    ("setting_changes", "settings changed with `config set` (`config.changed`)"),
    (
        "program_verifications",
        "`verify` and `verify SEED` runs, on the console or from the host (`program.verified`,"
        " `program.hmac`)",
    ),
    ("program_start_checks", "a release's start-up check of every file (`program.checked`)"),
    ("journal_findings", "journal findings raised (`journal.finding`)"),
    ("release_changes", "starts with a release other than the previous start's"),
    ("board.undervoltage", "undervoltage began (`power.undervoltage`, docs/power-and-storage.md)"),
    ("board.throttling", "throttling (heat) began (`power.throttled`)"),
    ("board.power_fail", "the UPS's power-fail signal asserted (`power.fail`)"),
    ("door_openings", "the enclosure door opened (`door.opened`)"),
    ("table_disables", "the table disabled by the host (`table.disabled`)"),
    ("host_commands.<command>", "signed commands from the host accepted (`host.command`)"),
    (
        "host_refusals.<why>",
        "commands from the host refused, by why: forged, replayed, stale, other-table,"
        " malformed, flood, unknown (`host.refused`, counted rows add their count)",
    ),
    ("paigow.games_played", "pai gow rounds settled"),
    ("paigow.voided_before_draw", "pai gow rounds voided before a number was drawn or entered"),
    ("paigow.voided_after_draw", "pai gow rounds voided after their number was out"),
    ("paigow.rng.<1-8>", "numbers the RNG drew, each 1 to 8"),
    ("paigow.dice.<1-8>", "starting numbers from the dice (dice mode), each 1 to 8"),
    ("paigow.dice_rounds", "rounds whose number came from the dice"),
    ("paigow.player_bank_rounds", "rounds closed with a player or co-bank"),
    ("baccarat.coups", "coups dealt to a result"),
    ("baccarat.voided_before_cards", "coups voided before the first card"),
    ("baccarat.voided_after_cards", "coups voided with cards out"),
    ("baccarat.banker_wins", "coups the banker's hand won"),
    ("baccarat.player_wins", "coups the player's hand won"),
    ("baccarat.ties", "tied coups"),
    ("baccarat.naturals", "coups with a natural in either hand"),
    ("baccarat.banker_pairs", "coups whose banker's first two cards are of one rank"),
    ("baccarat.player_pairs", "coups whose player's first two cards are of one rank"),
    ("baccarat.dragon7", "banker wins with a three-card 7 (EZ baccarat's dragon 7)"),
    ("baccarat.panda8", "player wins with a three-card 8 (EZ baccarat's panda 8)"),
    ("baccarat.shoes", "shoes put in play"),
    ("baccarat.cards_read", "cards the shoe reported (`shoe.frame` CARD)"),
    ("baccarat.irregularities.<kind>", "irregularities (5324.20(i)) by kind"),
    ("baccarat.integrity_alarms", "integrity alarms (inventory, unshuffled sequence, unread card)"),
    ("startpos.games_played", "starting-position rounds settled"),
    (
        "startpos.voided_before_draw",
        "starting-position rounds voided before a number was drawn or entered",
    ),
    ("startpos.voided_after_draw", "starting-position rounds voided after their number was out"),
    ("startpos.rng.<n>", "numbers the RNG drew, each 1 to the layout's range"),
    (
        "startpos.dice_rounds",
        "rounds whose count came from the dice (the RNG in fault, or the number display not"
        " connected)",
    ),
)


class MetersView(TypedDict):
    """The meters as the feed, the CLI's ``--json`` and the collector read them."""

    seq: int
    game: str
    release: dict[str, object] | None
    shift_from_seq: int
    lifetime: dict[str, int]
    shift: dict[str, int]


@dataclass
class MeterFold:
    """Lifetime and shift counters over rows fed in sequence order (:meth:`add`)."""

    lifetime: dict[str, int] = field(default_factory=dict)
    shift: dict[str, int] = field(default_factory=dict)
    last_seq: int = 0
    shift_from_seq: int = 0
    game: str = ""
    release: dict[str, object] | None = None
    #: a starting-position table's range (the newest draw's), for its chi-square
    startpos_range: int = 0
    _unclean: bool = False
    _running: bool = False
    _pending_power_check: bool = False
    _startpos_state: str = ""

    def add(self, row: MeterRow) -> list[str]:
        """Count one row (rows at or before :attr:`last_seq` are ignored: a row fed twice counts
        once); the meters it moved."""
        if row.seq <= self.last_seq:
            return []
        self.last_seq = row.seq
        data = row.data if isinstance(row.data, dict) else {}
        if "carried_from" in data:
            return []
        if row.kind in SHIFT_KINDS:
            self.shift = {}
            self.shift_from_seq = row.seq
            return []
        names = list(self._names(row.kind, data))
        # a counted summary row (controller/journal/summary.py) stands for ``count`` refusals
        # or ``count`` identical `verify SEED` runs
        count = data.get("count", 1) if row.kind in COUNTED_KINDS else 1
        n = count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 1
        for name in names:
            self.lifetime[name] = self.lifetime.get(name, 0) + n
            self.shift[name] = self.shift.get(name, 0) + n
        return names

    def add_all(self, rows: Iterable[MeterRow]) -> MeterFold:
        for row in rows:
            self.add(row)
        return self

    def _names(self, kind: str, data: Mapping[str, object]) -> Iterator[str]:
        # every table ------------------------------------------------------------------------
        if kind == "app.start":
            self.game = str(data.get("game", self.game))
            self._pending_power_check = self._running  # no app.shutdown since the last start
            if self._running and self._startpos_state in STARTPOS_IN_ROUND:
                # a starting-position table writes no recovery row: its newest round row is
                # the round the power cut found
                yield "power_lost_mid_round"
            self._running = True
            yield "power_ups"
        elif kind == "app.shutdown":
            self._running = False
        elif kind == "paigow.recovered" and self._pending_power_check:
            self._pending_power_check = False
            if str(data.get("state")) in PAIGOW_IN_ROUND:
                yield "power_lost_mid_round"
        elif kind == "baccarat.recovery" and self._pending_power_check:
            self._pending_power_check = False
            if str(data.get("state")) in BACCARAT_IN_COUP or data.get("coup"):
                yield "power_lost_mid_round"
        elif kind == "fault.raised":
            yield f"faults.{data.get('source', 'app')}"
        elif kind in ("paigow.rng_fault", "startpos.rng_fault"):
            yield "faults.rng"
        elif kind == "baccarat.fault":
            yield "faults.table"
        elif kind == "program.checked":
            yield "program_start_checks"
            if not data.get("ok", True):
                yield "faults.program"
        elif kind in ("program.verified", "program.hmac") and "error" not in data:
            yield "program_verifications"
        elif kind == "console.login":
            yield f"logins.{data.get('role', 'unknown')}"
        elif kind == "console.login_failed":
            checked = data.get("checked")
            for role in checked if isinstance(checked, list) and checked else ["unknown"]:
                yield f"failed_logins.{role}"
        elif kind == "console.locked":
            yield f"lockouts.{data.get('role', 'unknown')}"
        elif kind == "config.changed":
            yield "setting_changes"
        elif kind == "journal.finding":
            yield "journal_findings"
        elif kind == "program.release":
            self.release = {k: data.get(k) for k in ("version", "release", "manifest")}
        elif kind == "program.release_changed":
            yield "release_changes"
        elif kind == "power.undervoltage" and data.get("active"):
            yield "board.undervoltage"
        elif kind == "power.throttled" and data.get("active"):
            yield "board.throttling"
        elif kind == "power.fail" and data.get("asserted"):
            yield "board.power_fail"
        elif kind == "door.opened":
            yield "door_openings"
        elif kind == "table.disabled":
            yield "table_disables"
        elif kind == "host.command":
            yield f"host_commands.{data.get('cmd', 'unknown')}"
        elif kind == "host.refused":
            yield f"host_refusals.{data.get('why', 'unknown')}"
        # pai gow ------------------------------------------------------------------------------
        elif kind == "paigow.drawn":
            number = _number(data)
            if number is not None:
                yield f"paigow.rng.{number}"
        elif kind == "paigow.dice":
            yield "paigow.dice_rounds"
            number = _number(data)
            if number is not None:
                yield f"paigow.dice.{number}"
        elif kind in ("paigow.settled", "paigow.voided"):
            raw = data.get("record")
            record: Mapping[str, object] = raw if isinstance(raw, dict) else {}
            if kind == "paigow.settled":
                yield "paigow.games_played"
            elif record.get("number") is not None:
                yield "paigow.voided_after_draw"
            else:
                yield "paigow.voided_before_draw"
            if record.get("bank", "house") in ("player", "cobank"):
                yield "paigow.player_bank_rounds"
        # baccarat -----------------------------------------------------------------------------
        elif kind == "baccarat.coup.result":
            yield from _coup_meters(data)
        elif kind == "baccarat.coup.voided":
            yield (
                "baccarat.voided_after_cards"
                if data.get("cards")
                else ("baccarat.voided_before_cards")
            )
        elif kind == "baccarat.shoe.start":
            yield "baccarat.shoes"
        elif kind == "shoe.frame":
            if data.get("type") == "CARD" and data.get("known", True):
                yield "baccarat.cards_read"
        elif kind == "baccarat.irregularity":
            yield f"baccarat.irregularities.{irregularity_kind(data)}"
        elif kind == "baccarat.integrity":
            yield "baccarat.integrity_alarms"
        # the starting-position table ------------------------------------------------------
        elif kind in STARTPOS_STEPS:
            yield from self._startpos(kind, data)

    def _startpos(self, kind: str, data: Mapping[str, object]) -> Iterator[str]:
        self._startpos_state = str(data.get("state", ""))
        if kind == "startpos.drawn":
            number, source = data.get("number"), data.get("source")
            span = data.get("range")
            if isinstance(span, int) and not isinstance(span, bool) and span > 0:
                self.startpos_range = span
            if source == "dice":
                yield "startpos.dice_rounds"
            elif isinstance(number, int) and not isinstance(number, bool) and number > 0:
                yield f"startpos.rng.{number}"
        elif kind == "startpos.settled":
            yield "startpos.games_played"
        elif kind == "startpos.voided":
            out = data.get("number_out") is not None
            yield "startpos.voided_after_draw" if out else "startpos.voided_before_draw"

    # -- reading ---------------------------------------------------------------------------

    def as_dict(self) -> MetersView:
        """The meters as published (:class:`MetersView`)."""
        return {
            "seq": self.last_seq,
            "game": self.game,
            "release": self.release,
            "shift_from_seq": self.shift_from_seq,
            "lifetime": dict(sorted(self.lifetime.items())),
            "shift": dict(sorted(self.shift.items())),
        }

    def lines(self) -> list[str]:
        """``name: lifetime (shift N)`` lines, every meter of this game even when 0."""
        out = [f"meters at row {self.last_seq} (shift from row {self.shift_from_seq})"]
        if self.release:
            out.append(
                f"release: {self.release.get('version')} release {_short(self.release, 'release')}"
                f" manifest {_short(self.release, 'manifest')}"
            )
        for name in self.names():
            out.append(f"{name}: {self.lifetime.get(name, 0)} (shift {self.shift.get(name, 0)})")
        return out

    def startpos_top(self) -> int:
        """A starting-position table's highest number: its range (the newest draw's), or the
        highest number counted when no draw row says it."""
        seen = [int(k.rsplit(".", 1)[1]) for k in self.lifetime if k.startswith("startpos.rng.")]
        return max([self.startpos_range, *seen, 1])

    def names(self) -> list[str]:
        """Every meter this table shows: the catalogue's, families expanded by what was seen."""
        shown: list[str] = []
        for name, _ in CATALOGUE:
            if name.startswith("paigow.") and self.game != "paigow":
                continue
            if name.startswith("baccarat.") and self.game != "baccarat":
                continue
            if name.startswith("startpos.") and self.game != "startpos":
                continue
            if name == "startpos.rng.<n>":
                shown.extend(f"startpos.rng.{n}" for n in range(1, self.startpos_top() + 1))
            elif name.endswith(".<1-8>"):
                shown.extend(f"{name[:-6]}.{n}" for n in NUMBERS)
            elif name.endswith(">"):
                prefix = name[: name.index("<")]
                shown.extend(sorted(k for k in self.lifetime if k.startswith(prefix)))
            else:
                shown.append(name)
        return shown


def _short(release: Mapping[str, object], key: str) -> str:
    value = release.get(key)
    return str(value)[:16] if value else "-"


def _number(data: Mapping[str, object]) -> int | None:
    record = data.get("record")
    number = record.get("number") if isinstance(record, dict) else None
    return number if isinstance(number, int) and number in NUMBERS else None


def irregularity_kind(data: Mapping[str, object]) -> str:
    """An irregularity row's kind: its ``kind`` field, else its section, else ``other``."""
    value = data.get("kind") or data.get("section") or "other"
    return str(value).replace(" ", "_")


def _coup_meters(data: Mapping[str, object]) -> Iterator[str]:
    yield "baccarat.coups"
    winner = data.get("winner")
    yield {"banker": "baccarat.banker_wins", "player": "baccarat.player_wins"}.get(
        str(winner), "baccarat.ties"
    )
    if data.get("natural"):
        yield "baccarat.naturals"
    try:
        player, banker = cards(strs_of(data, "player")), cards(strs_of(data, "banker"))
        coup = Coup(player, banker, hand_total(player), hand_total(banker))
    except (KeyError, TypeError, ValueError):
        return
    if not (2 <= len(player) <= 3 and 2 <= len(banker) <= 3):  # 5324.20(f): two or three cards
        return
    result = result_of(coup)
    if result.banker_pair:
        yield "baccarat.banker_pairs"
    if result.player_pair:
        yield "baccarat.player_pairs"
    if coup.dragon7:
        yield "baccarat.dragon7"
    if coup.panda8:
        yield "baccarat.panda8"


# -- the journal, live and archived --------------------------------------------------------------


def plain_row(row: Mapping[str, object]) -> PlainRow:
    """A row as ``Row.as_dict`` wrote it (FieldError, a ValueError, when a field is not)."""
    return PlainRow(
        int_of(row, "seq"), str_of(row, "kind"), opt_int_of(row, "round"), map_of(row, "data")
    )


def archived_rows(folder: Path) -> Iterator[PlainRow]:
    """The rows of every archive segment in ``folder`` (docs/journal.md "Retention"), in order."""
    if not folder.is_dir():
        return
    for path in sorted(folder.glob("journal-*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                row = parse_object(line)
                if "seq" in row and "kind" in row:
                    yield plain_row(row)


def export_rows(lines: Iterable[str]) -> Iterator[PlainRow]:
    """The rows of ``table-controller journal export`` output."""
    for line in lines:
        if line.strip():
            yield plain_row(parse_object(line))


# -- checks on the meters ------------------------------------------------------------------------


#: Each number's chance from the RNG: one in eight (5324.50(a)(4)).
RNG_CHANCES: Final = (1 / 8,) * 8


def _dice_chances() -> tuple[float, ...]:
    """Each starting number's chance from three fair dice, their total counted around the
    eight positions (5324.50(a)(3), (e)(3)): 28, 28, 28, 28, 27, 25, 25, 27 in 216, not one in
    eight; a uniform test would fail honest dice."""
    ways = [0] * len(NUMBERS)
    for a, b, c in itertools.product(range(1, 7), repeat=3):
        ways[starting_position(a + b + c, len(NUMBERS), source="dice") - 1] += 1
    return tuple(w / 216 for w in ways)


DICE_CHANCES: Final = _dice_chances()


@dataclass(frozen=True)
class ChiSquare:
    """The numbers' chi-square against their chances over 1-k (k - 1 degrees of freedom)."""

    counts: tuple[int, ...]
    statistic: float
    p_value: float
    chances: tuple[float, ...] = RNG_CHANCES

    def lines(self, what: str) -> list[str]:
        n, k = sum(self.counts), len(self.counts)
        if n == 0:
            return [f"{what}: no numbers yet"]
        if len(set(self.chances)) == 1:
            expected = f"expected {n / k:.2f} each"
        else:
            expected = f"expected 1-{k}: " + " ".join(f"{n * p:.2f}" for p in self.chances)
            expected += " (three fair dice counted to a position, 5324.50(a)(3))"
        return [
            f"{what}: {n} numbers, {expected}",
            f"counts 1-{k}: " + " ".join(str(c) for c in self.counts),
            f"chi-square {self.statistic:.3f} ({k - 1} degrees of freedom),"
            f" p-value {self.p_value:.4f}",
        ]


def chi_sources(fold: MeterFold) -> tuple[tuple[str, str], ...]:
    """The sources ``meters chi`` tests at this table: (source, what). A starting-position
    table's dice are counted by its layout, so only its RNG's numbers are tested."""
    if fold.game == "startpos":
        return (("rng", "RNG numbers"),)
    return (("rng", "RNG numbers"), ("dice", "dice numbers"))


def chi_square(fold: MeterFold, source: str = "rng", shift: bool = False) -> ChiSquare:
    """The chi-square of ``<game>.<source>.1-k`` (lifetime or shift) against the source's
    chances: uniform for an RNG (pai gow's 1-8, a starting-position table's 1 to its range),
    :data:`DICE_CHANCES` for pai gow's dice."""
    meters = fold.shift if shift else fold.lifetime
    if fold.game == "startpos":
        k = fold.startpos_top()
        counts = tuple(meters.get(f"startpos.rng.{n}", 0) for n in range(1, k + 1))
        chances: tuple[float, ...] = (1 / k,) * k
    else:
        counts = tuple(meters.get(f"paigow.{source}.{n}", 0) for n in NUMBERS)
        chances = DICE_CHANCES if source == "dice" else RNG_CHANCES
    n = sum(counts)
    if n == 0 or len(counts) < 2:
        return ChiSquare(counts, 0.0, 1.0, chances)
    stat = sum((c - n * p) ** 2 / (n * p) for c, p in zip(counts, chances, strict=True))
    return ChiSquare(counts, stat, chi2_sf(stat, len(counts) - 1), chances)


def fold_journal(live: Iterable[MeterRow], archive: Path | None = None) -> MeterFold:
    """The meters of a journal: its archive segments (the rows retention moved out), then the
    live rows (a row in both counts once: the fold ignores a seq already seen)."""
    fold = MeterFold()
    if archive is not None:
        fold.add_all(archived_rows(archive))
    return fold.add_all(live)
