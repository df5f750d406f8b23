"""The table's rule settings: types, ranges, defaults and whole-object checks (issue 6).

A :class:`RuleSettings` is immutable and checks itself when built, so code holding one may rely
on every value being in range and consistent with the others. The effective settings are the
hardware profile's ``[rules]`` table overlaid with every ``config.changed`` journal event in
sequence order (:class:`ConfigStore`).

Changes are refused while a round is in progress and apply from the next round: the table
snapshots :meth:`ConfigStore.current` at round start and the console asks the table before
calling :meth:`ConfigStore.set` (this module does not know about rounds).

Two kinds of cross-field rule (docs/configuration.md "Cross-field rules"):

* a contradiction (``start_mode = rng`` in NJ, co-banking without a player bank, a vigorish step
  that does not match the percentage) is refused whichever key the change names;
* a *dependent* setting that has no effect under the others (vigorish on an EZ table, the dragon 7
  payout on a non-EZ table) keeps its value but is inactive; changing it while inactive, or
  naming it in a profile where it is inactive, is refused, so nobody believes they configured
  something that does nothing.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Literal, Protocol, TypeAlias, TypedDict, TypeVar

from controller.config.declare import Bool, Int, Kind, Names, OneOf, declared, setting
from controller.fields.readers import as_int
from controller.games.baccarat.irregularities import (
    ERROR_CARD_COUNT,
    FACE_UP_BURN_FROM,
    BurnFrom,
    ErrorCardCount,
)
from controller.games.baccarat.shoe import HANDS_AFTER_COVER
from controller.games.baccarat.shoe_passing import (
    DEAD_HAND_COMPELS_PASS,
    OFFER_BACK_TO_PREVIOUS,
)
from controller.games.baccarat.wagers import PANDA8_PAYS, PAYING_PROCEDURES
from controller.games.paigow.dealing import DEFAULT_DELIVERY_STYLE, DELIVERY_STYLES
from controller.games.paigow.houseway import policy_names
from controller.games.paigow.outcome import (
    DEFAULT_ZERO_LOW_CONFLICT,
    DEFAULT_ZERO_VALUE,
    ZERO_LOW_CONFLICT_SETTINGS,
    ZERO_VALUE_SETTINGS,
    ZeroLowConflict,
    ZeroValue,
)
from controller.games.paigow.settlement import CoBankOddCent, SurrenderAgainstBank, VigCentRounding
from controller.games.paigow.settlement import PaigowRules as _EngineRules

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from controller.games.baccarat.wagers import Rules as BaccaratEngineRules
    from controller.games.paigow.settlement import PaigowRules as PaigowEngineRules

__all__ = [
    "BaccaratSettings",
    "BaccaratShoeOptions",
    "ConfigError",
    "ConfigStore",
    "ErrorCode",
    "JURISDICTIONS",
    "PaigowOutcomeOptions",
    "PaigowSettings",
    "RULE_SETTINGS",
    "ReplayProblem",
    "RuleSettings",
    "RuleSpec",
    "RuleValue",
    "SETTING_KEYS",
    "default_text",
    "START_MODES",
    "WagerLimit",
]

_D = TypeVar("_D", bound="DataclassInstance")
ErrorCode = Literal["UNKNOWN", "SYNTAX", "RANGE"]
#: A rule setting's value: a flag, a whole number, a choice or a list of names.
RuleValue: TypeAlias = bool | int | str | tuple[str, ...]

JURISDICTIONS: Final = ("NY", "NJ")
START_MODES: Final = ("rng", "dice")
#: 5324.20(d)(2), (d)(2)(ii): the vigorish grows in 20-cent steps at 4%, 25-cent steps at 5%.
VIG_STEP_FOR_PERCENT: Final[Mapping[int, int]] = {4: 20, 5: 25}
DRAGON_PAY_TABLE_CHOICES: Final = ("none", "A", "B", "C")
_ENGINE: Final = _EngineRules()  # the settlement engine's defaults are the settings' defaults
#: The engines' own choices (controller/games/paigow/settlement.py, banking.py).
VIG_CENT_ROUNDING_CHOICES: Final[tuple[VigCentRounding, ...]] = ("up", "down")
CO_BANK_ODD_CENT_CHOICES: Final[tuple[CoBankOddCent, ...]] = ("co_bank", "house")
SURRENDER_AGAINST_BANK_CHOICES: Final[tuple[SurrenderAgainstBank, ...]] = (
    "refuse",
    "center",
    "house",
)
#: Baccarat readings (controller/games/baccarat/irregularities.py): the setting's text is the
#: enum member's name in lower case (no spaces, so the console reads it as one word).
ERROR_CARD_COUNT_CHOICES: Final = tuple(m.name.lower() for m in ErrorCardCount)
BURN_FROM_CHOICES: Final = tuple(m.name.lower() for m in BurnFrom)
_EVENT_KIND: Final = "config.changed"
_TRUE: Final = ("true", "yes", "on")
_FALSE: Final = ("false", "no", "off")


class ConfigError(ValueError):
    """A rule setting was refused. ``code`` is the console's error code (``ERR <CODE> ...``):
    ``UNKNOWN`` (no such setting), ``SYNTAX`` (text that is not a value of the setting's type),
    ``RANGE`` (a value the setting or the other settings do not allow)."""

    def __init__(self, code: ErrorCode, key: str, reason: str, source: str = "") -> None:
        where = f"{source}: " if source else ""
        super().__init__(f"{where}{key}: {reason}" if key else f"{where}{reason}")
        self.code: ErrorCode = code
        self.key = key
        self.reason = reason
        self.source = source


def _when_ez(s: RuleSettings) -> str | None:
    return None if s.baccarat.ez else "needs baccarat.ez = true (5324.20(b)(1)(v)-(vi))"


def _when_not_ez(s: RuleSettings) -> str | None:
    return "EZ baccarat collects no vigorish (5324.20(d)(3))" if s.baccarat.ez else None


def _when_panda8(s: RuleSettings) -> str | None:
    return _when_ez(s) or (
        None if s.baccarat.panda8_offered else "needs baccarat.panda8_offered = true"
    )


def _when_dragons_eye(s: RuleSettings) -> str | None:
    return None if s.paigow.dragons_eye else "needs paigow.dragons_eye = true"


def _when_not_quarter(s: RuleSettings) -> str | None:
    return (
        "rounding the vigorish to 25 cents rounds the exact amount (5324.50(f)(10))"
        if s.paigow.round_vig_to_quarter
        else None
    )


def _when_cobank(s: RuleSettings) -> str | None:
    return None if s.paigow.cobank_offered else "needs paigow.cobank_offered = true"


def _when_bank(s: RuleSettings) -> str | None:
    return None if s.paigow.bank_offered else "needs paigow.bank_offered = true"


def _when_bank_surrender(s: RuleSettings) -> str | None:
    p = s.paigow
    if not p.bank_offered:
        return "needs paigow.bank_offered = true"
    return None if p.surrender_offered else "needs paigow.surrender_offered = true"


def _house_way_choices() -> tuple[str, ...]:
    return ("default", *policy_names())


# -- the table's posted limits -----------------------------------------------------------------
# A minimum and a maximum for each wager the table offers, in whole cents, shown on the table's
# monitor (controller/scoreboard) as a limit sign shows them; declared with the other settings
# of the game (the last fields of PaigowSettings and BaccaratSettings). Baccarat stakes go in
# $5 steps (5324.20(d)(2)), so its limits are multiples of 500 cents; a minimum above its
# maximum is refused whichever of the two is changed (_check_limits). A wager the table does not
# offer has its limits inactive (dragon bonus without a pay table, dragon 7 and panda 8 off an
# EZ table).

#: The largest limit a setting takes: $1,000,000.
LIMIT_MAX_CENTS: Final = 100_000_000
_LIMIT_CENTS: Final = Int(100, LIMIT_MAX_CENTS)


def _when_dragon(s: RuleSettings) -> str | None:
    return (
        None
        if s.baccarat.dragon_pay_table != "none"
        else "needs a baccarat.dragon_pay_table (5324.20(d)(5))"
    )


def _limit(
    default: int,
    ref: str,
    what: str,
    inactive: Callable[[RuleSettings], str | None] | None = None,
) -> int:
    """A posted limit's declaration: cents, 100..LIMIT_MAX_CENTS."""
    return setting(
        _LIMIT_CENTS, default, ref=ref, doc=f"the posted {what}, in cents", inactive=inactive
    )


#: (game, wager as the monitor names it, setting prefix): the limits the monitor shows.
_LIMITS: Final = (
    ("paigow", "wager", "paigow.wager"),
    ("baccarat", "banker", "baccarat.banker"),
    ("baccarat", "player", "baccarat.player"),
    ("baccarat", "tie", "baccarat.tie"),
    ("baccarat", "dragon", "baccarat.dragon"),
    ("baccarat", "dragon7", "baccarat.dragon7"),
    ("baccarat", "panda8", "baccarat.panda8"),
)


@dataclass(frozen=True)
class WagerLimit:
    """One wager's posted limits: ``wager`` as the monitor names it (``banker``, ``tie``,
    ``wager`` at pai gow), the minimum and maximum stake in cents."""

    wager: str
    min_cents: int
    max_cents: int


def _check_limits(s: RuleSettings) -> None:
    """Every wager's minimum at most its maximum; baccarat's in $5 steps (5324.20(d)(2))."""
    for game, _wager, prefix in _LIMITS:
        lo, hi = _cents(s, f"{prefix}_min_cents"), _cents(s, f"{prefix}_max_cents")
        if lo > hi:
            raise ConfigError(
                "RANGE",
                f"{prefix}_min_cents",
                f"{lo} is above {prefix}_max_cents {hi}: a minimum cannot exceed its maximum",
            )
        if game == "baccarat":
            for end, value in (("min", lo), ("max", hi)):
                if value % 500:
                    raise ConfigError(
                        "RANGE",
                        f"{prefix}_{end}_cents",
                        f"{value} is not a multiple of 500: baccarat wagers are accepted in"
                        f" $5 increments only ({_spec(f'{prefix}_{end}_cents').cite})",
                    )


@dataclass(frozen=True)
class PaigowSettings:
    """Pai gow tiles settings (9 NYCRR 5324.50; N.J.A.C. 13:69F-10.7, 10.8)."""

    vig_percent: int = setting(
        OneOf((5,)), 5, ref="5324.50(f)(10); 13:69F-10.7(k)", doc="the vigorish on a win"
    )
    round_vig_to_quarter: bool = setting(
        Bool(),
        False,
        ref="5324.50(f)(10); 13:69F-10.7(k)",
        doc="round the vigorish to 25 cents",
    )
    house_way_policy: str = setting(
        OneOf(_house_way_choices()),
        "default",
        ref="5324.50(f)(4); 13:69F-10.7(d)-(e)",
        doc="the dealer's house way: default, or a shipped policy"
        " (controller/games/paigow/houseway.py)",
    )
    zero_value: ZeroValue = setting(
        OneOf(ZERO_VALUE_SETTINGS),
        DEFAULT_ZERO_VALUE,
        ref="5324.50(f)(7)-(8); 13:69F-10.7(h)-(i)",
        doc="which hands are of value zero",
    )
    surrender_offered: bool = setting(
        Bool(), False, ref="5324.50(f)(5); 13:69F-10.7(f)", doc="players may surrender"
    )
    bank_offered: bool = setting(
        Bool(), True, ref="5324.50(g)(1); 13:69F-10.8(a)", doc="players may bank"
    )
    cobank_offered: bool = setting(
        Bool(),
        False,
        ref="5324.50(g)(5); 13:69F-10.8(e)",
        doc="the dealer may co-bank with a player (needs bank_offered)",
    )
    delivery_styles: tuple[str, ...] = setting(
        Names(DELIVERY_STYLES),
        DELIVERY_STYLES,
        ref="5324.50(g)(9), (g)(11); 13:69F-10.8(i), (k)",
        doc="the styles a bank may choose; must include house_way_from_right",
        default_text="all",
    )
    dragons_eye: bool = setting(
        Bool(), False, ref="13:69F-10.7(l)", doc="the dragon's eye variation (NJ, dice)"
    )
    dragons_eye_method: int = setting(
        OneOf((1, 2)),
        1,
        ref="13:69F-10.7(l)1-2",
        doc="how the dragon's eye is decided",
        inactive=_when_dragons_eye,
    )
    zero_low_conflict: ZeroLowConflict = setting(
        OneOf(ZERO_LOW_CONFLICT_SETTINGS),
        DEFAULT_ZERO_LOW_CONFLICT,
        ref="5324.50(f)(7) vs (f)(8)(ii); 13:69F-10.7(h)-(i)",
        doc="a zero low that outranks the dealer's with a high that does not win",
    )
    vig_cent_rounding: VigCentRounding = setting(
        OneOf(VIG_CENT_ROUNDING_CHOICES),
        _ENGINE.vig_cent_rounding,
        ref="5324.50(f)(10) (no direction for a sub-cent)",
        doc="a vigorish of a fraction of a cent",
        inactive=_when_not_quarter,
    )
    co_bank_shortfall_odd_cent: CoBankOddCent = setting(
        OneOf(CO_BANK_ODD_CENT_CHOICES),
        _ENGINE.co_bank_shortfall_odd_cent,
        ref="5324.50(g)(16); 13:69F-10.8(p)",
        doc="who puts in the odd cent of a co-bank shortfall",
        inactive=_when_cobank,
    )
    surrender_against_bank: SurrenderAgainstBank = setting(
        OneOf(SURRENDER_AGAINST_BANK_CHOICES),
        _ENGINE.surrender_against_bank,
        ref="5324.50(f)(5), (g)(15)-(16)",
        doc="where a wager surrendered against a player bank goes",
        inactive=_when_bank_surrender,
    )
    bank_rotation_includes_dealer: bool = setting(
        Bool(),
        _ENGINE.bank_rotation_includes_dealer,
        ref="5324.50(g)(3); 13:69F-10.8(b)",
        doc="the house banks one round when the offer returns to the dealer",
        inactive=_when_bank,
    )
    # the table's posted limits (above)
    wager_min_cents: int = _limit(2_500, "5324.50(c) (posted table limits)", "minimum wager")
    wager_max_cents: int = _limit(500_000, "5324.50(c) (posted table limits)", "maximum wager")


@dataclass(frozen=True)
class BaccaratSettings:
    """Baccarat settings (9 NYCRR 5324.20)."""

    decks: int = setting(Int(6, 8), 8, ref="5324.20(a)(4) (at least six)", doc="decks in a shoe")
    vig_percent: int = setting(
        OneOf((4, 5)),
        5,
        ref="5324.20(d)(2)",
        doc="the vigorish on a banker win",
        inactive=_when_not_ez,
    )
    vig_step_cents: int = setting(
        OneOf((20, 25)),
        25,
        ref="5324.20(d)(2), (d)(2)(ii)",
        doc="the vigorish's step; follows vig_percent",
        inactive=_when_not_ez,
        default_text="20 at 4%, 25 at 5%",
    )
    tie_pays: int = setting(
        Int(8, 9), 8, ref="5324.20(a)(2)(iii) (posted; not fixed)", doc="a tie pays N to 1"
    )
    dragon_pay_table: str = setting(
        OneOf(DRAGON_PAY_TABLE_CHOICES),
        "none",
        ref="5324.20(d)(5)",
        doc="the dragon bonus pay table",
    )
    ez: bool = setting(
        Bool(),
        False,
        ref="5324.20(a)(2)(vii), (b)(1)(v)-(vi), (d)(3)",
        doc="EZ baccarat: no vigorish, the dragon 7 and panda 8",
    )
    dragon7_pays: int = setting(
        Int(1, 100),
        40,
        ref="5324.20(b)(1)(v) (payout not fixed)",
        doc="the dragon 7 pays N to 1",
        inactive=_when_ez,
    )
    panda8_offered: bool = setting(
        Bool(), True, ref="5324.20(a)(2)(vii)(c)", doc="the panda 8 wager", inactive=_when_ez
    )
    panda8_pays: int = setting(
        OneOf((PANDA8_PAYS,)),
        PANDA8_PAYS,
        ref="5324.20(d)(4)",
        doc="the panda 8 pays N to 1",
        inactive=_when_panda8,
    )
    deferred_vig: bool = setting(
        Bool(),
        False,
        ref="5324.20(d)(2)",
        doc="the vigorish collected later (lammers)",
        inactive=_when_not_ez,
    )
    pay_order: str = setting(
        OneOf(tuple(PAYING_PROCEDURES)),
        "i",
        ref="5324.20(g)(2)(i)-(iv), (g)(3)",
        doc="the paying procedure",
    )
    error_card_count: str = setting(
        OneOf(ERROR_CARD_COUNT_CHOICES),
        ERROR_CARD_COUNT.name.lower(),
        ref="5324.20(i)(3) (count of the card in error)",
        doc="how a player's third card dealt in error counts",
    )
    face_up_burn_from: str = setting(
        OneOf(BURN_FROM_CHOICES),
        FACE_UP_BURN_FROM.name.lower(),
        ref="5324.20(i)(1)(i) (card found face up)",
        doc="where the burn starts after a card found face up",
    )
    hands_after_cover: int = setting(
        OneOf((0, 1)),
        HANDS_AFTER_COVER,
        ref='5324.20(f)(9) ("last hand")',
        doc="hands dealt after the cover card",
    )
    offer_back_to_previous: bool = setting(
        Bool(),
        OFFER_BACK_TO_PREVIOUS,
        ref="5324.20(h)(2)",
        doc="the shoe offered back to the previous holder",
    )
    dead_hand_compels_pass: bool = setting(
        Bool(),
        DEAD_HAND_COMPELS_PASS,
        ref="5324.20(h)(1)(i), (i)(1)(ii)",
        doc="a dead hand makes the shoe pass",
    )
    # the table's posted limits (above)
    banker_min_cents: int = _limit(2_500, "5324.20(b)(1)(i), (d)(2) ($5 steps)", "banker minimum")
    banker_max_cents: int = _limit(500_000, "5324.20(b)(1)(i), (d)(2) ($5 steps)", "banker maximum")
    player_min_cents: int = _limit(2_500, "5324.20(b)(1)(ii), (d)(2) ($5 steps)", "player minimum")
    player_max_cents: int = _limit(
        500_000, "5324.20(b)(1)(ii), (d)(2) ($5 steps)", "player maximum"
    )
    tie_min_cents: int = _limit(500, "5324.20(b)(1)(iii), (d)(2) ($5 steps)", "tie minimum")
    tie_max_cents: int = _limit(50_000, "5324.20(b)(1)(iii), (d)(2) ($5 steps)", "tie maximum")
    dragon_min_cents: int = _limit(
        500, "5324.20(b)(1)(iv), (d)(2)", "dragon bonus minimum", _when_dragon
    )
    dragon_max_cents: int = _limit(
        50_000, "5324.20(b)(1)(iv), (d)(2)", "dragon bonus maximum", _when_dragon
    )
    dragon7_min_cents: int = _limit(500, "5324.20(b)(1)(v), (d)(2)", "dragon 7 minimum", _when_ez)
    dragon7_max_cents: int = _limit(
        25_000, "5324.20(b)(1)(v), (d)(2)", "dragon 7 maximum", _when_ez
    )
    panda8_min_cents: int = _limit(
        500, "5324.20(b)(1)(vi), (d)(2)", "panda 8 minimum", _when_panda8
    )
    panda8_max_cents: int = _limit(
        25_000, "5324.20(b)(1)(vi), (d)(2)", "panda 8 maximum", _when_panda8
    )


class PaigowOutcomeOptions(TypedDict):
    """The keyword arguments of ``controller.games.paigow.outcome.outcome``."""

    zero_value: ZeroValue
    zero_low_conflict: ZeroLowConflict


@dataclass(frozen=True)
class BaccaratShoeOptions:
    """The baccarat shoe readings as the engines take them (:meth:`RuleSettings.
    baccarat_shoe_options`): ``irregularities.player_third_in_error(count=)``,
    ``face_up_in_shoe(burn_from=)``, ``shoe.LastHandRule(hands_after_cover)``,
    ``shoe_passing`` ``offer_back=`` and ``dead_hand_compels=``."""

    error_card_count: ErrorCardCount
    face_up_burn_from: BurnFrom
    hands_after_cover: int
    offer_back_to_previous: bool
    dead_hand_compels_pass: bool


@dataclass(frozen=True)
class RuleSpec:
    """One rule setting by its dotted key, as its declaration says: its kind, the regulation
    it comes from, what it does, and when it has no effect."""

    key: str
    kind: Kind[object]
    cite: str
    doc: str = ""
    inactive: Callable[[RuleSettings], str | None] | None = None
    default_text: str | None = None

    @property
    def tag(self) -> str:
        return self.kind.tag

    @property
    def lo(self) -> int | float | None:
        return self.kind.lo

    @property
    def hi(self) -> int | float | None:
        return self.kind.hi

    @property
    def choices(self) -> tuple[object, ...]:
        return self.kind.choices

    def range_text(self) -> str:
        return self.kind.range_text()


def _specs() -> Iterator[RuleSpec]:
    """Every rule setting's declaration, in ``config show`` order: the table's own, then pai
    gow's, then baccarat's."""
    for prefix, cls in (
        ("", RuleSettings),
        ("paigow.", PaigowSettings),
        ("baccarat.", BaccaratSettings),
    ):
        for d in declared(cls):
            s = d.spec
            yield RuleSpec(prefix + d.name, s.kind, s.ref, s.doc, s.inactive, s.default_text)


_NAMESPACES: Final = ("paigow", "baccarat")


@dataclass(frozen=True)
class RuleSettings:
    """Every rule setting of a table. Built only valid: construction (including
    :func:`dataclasses.replace`) checks each value's type and range and the cross-field rules,
    raising :class:`ConfigError`."""

    jurisdiction: str = setting(
        OneOf(JURISDICTIONS),
        "NY",
        ref="NY 9 NYCRR 5324; NJ N.J.A.C. 13:69F",
        doc="whose rules the table plays",
    )
    start_mode: str = setting(
        OneOf(START_MODES),
        "rng",
        ref="5324.50(a)(3)-(4); NJ: 13:69F-10.8(i)",
        doc="pai gow's starting position: the certified RNG or the dice (NJ: dice only)",
        default_text="rng (NY), dice (NJ)",
    )
    recall_depth: int = setting(
        Int(10, 1000),
        20,
        ref="5324.50(f)(11) (at least 10 rounds)",
        doc="rounds game recall shows (and at most)",
    )
    paigow: PaigowSettings = field(default_factory=PaigowSettings)
    baccarat: BaccaratSettings = field(default_factory=BaccaratSettings)

    def __post_init__(self) -> None:
        for spec in RULE_SETTINGS:
            _check_value(spec, self.get(spec.key))
        _check_whole(self)

    # -- reading -------------------------------------------------------------------------------

    def get(self, key: str) -> RuleValue:
        """The value of a setting by its dotted key (``"baccarat.ez"``)."""
        _spec(key)
        head, _, tail = key.partition(".")
        value: RuleValue = getattr(getattr(self, head), tail) if tail else getattr(self, head)
        return value

    def get_text(self, key: str) -> str:
        """The value as the console shows it (and :meth:`with_change` reads it back)."""
        return _to_text(_spec(key), self.get(key))

    def as_dict(self) -> dict[str, RuleValue]:
        """Every setting by dotted key, in ``config show`` order."""
        return {key: self.get(key) for key in SETTING_KEYS}

    def inactive_reason(self, key: str) -> str | None:
        """Why ``key`` has no effect with the other settings as they are, or None."""
        spec = _spec(key)
        return spec.inactive(self) if spec.inactive else None

    def describe(self, game: str | None = None) -> list[str]:
        """One line per setting for ``config show``: value, default, range, regulation; with
        ``game``, only the settings that game's table reads (:func:`game_of`)."""
        default = RuleSettings()
        lines = []
        for spec in RULE_SETTINGS:
            if game is not None and game_of(spec.key) not in (None, game):
                continue
            line = (
                f"{spec.key} = {self.get_text(spec.key)}  (default"
                f" {_default_text(default, spec)}, range {spec.range_text()}; {spec.cite})"
            )
            why = self.inactive_reason(spec.key)
            if why:
                line += f"  [inactive: {why}]"
            lines.append(line)
        return lines

    def describe_key(self, key: str) -> list[str]:
        """``config show KEY``: the value, then its default, range and regulation, a line each
        (and why it has no effect, when it has none)."""
        spec = _spec(key)
        lines = [
            f"{key} = {self.get_text(key)}",
            f"  default: {_default_text(RuleSettings(), spec)}",
            f"  range: {spec.range_text()}",
            f"  reference: {spec.cite}",
        ]
        why = self.inactive_reason(key)
        if why:
            lines.append(f"  inactive: {why}")
        return lines

    # -- changing ------------------------------------------------------------------------------

    def with_change(self, key: str, text: str) -> RuleSettings:
        """A copy with ``key`` set from console ``text``; raises :class:`ConfigError`.

        Changing ``baccarat.vig_percent`` also moves ``baccarat.vig_step_cents`` to the step
        5324.20(d)(2) prescribes for it (the two cannot differ)."""
        spec = _spec(key)
        value = _parse_text(spec, text)
        why = self.inactive_reason(key)
        if why:
            raise ConfigError("RANGE", key, f"has no effect now: {why}")
        changes: dict[str, RuleValue] = {key: value}
        if (
            key == "baccarat.vig_percent"
            and isinstance(value, int)
            and value in VIG_STEP_FOR_PERCENT
        ):
            changes["baccarat.vig_step_cents"] = VIG_STEP_FOR_PERCENT[value]
        return _build(self, changes, blame=key)

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, object], source: str = "") -> RuleSettings:
        """Settings from a profile's ``[rules]`` table (nested ``[rules.paigow]`` tables or
        dotted keys). Unset keys take their defaults; ``start_mode`` defaults to ``dice`` in NJ
        and ``baccarat.vig_step_cents`` to the step of ``baccarat.vig_percent``. An unknown key,
        a value of the wrong type or range, or a key that has no effect is a
        :class:`ConfigError` naming ``source`` and the key (the first of :meth:`read`'s)."""
        result, problems = cls.read(mapping, source)
        if problems:
            raise problems[0]
        return result

    @classmethod
    def read(
        cls, mapping: Mapping[str, object], source: str = ""
    ) -> tuple[RuleSettings, list[ConfigError]]:
        """:meth:`from_mapping` that reports every problem instead of the first: the settings
        read without the keys that are wrong (the defaults stand in), and each problem (an
        unknown key, a wrong type, a value out of range, a contradiction, a key with no
        effect), so one run of ``check-profile`` names them all."""
        problems: list[ConfigError] = []
        given: dict[str, RuleValue] = {}
        for key, raw in _flatten(mapping, source, problems):
            try:
                given[key] = _from_toml(_spec(key, source), raw, source)
            except ConfigError as exc:
                problems.append(exc)
        values: dict[str, RuleValue] = {}
        for spec in RULE_SETTINGS:  # one value at a time, in config show order
            if spec.key in given:
                try:
                    _check_value(spec, given[spec.key])
                except ConfigError as exc:
                    problems.append(ConfigError(exc.code, exc.key, exc.reason, source))
                else:
                    values[spec.key] = given[spec.key]
        if "start_mode" not in values and values.get("jurisdiction") == "NJ":
            values["start_mode"] = "dice"
        if "baccarat.vig_step_cents" not in values:
            pct = values.get("baccarat.vig_percent")
            if isinstance(pct, int) and pct in VIG_STEP_FOR_PERCENT:
                values["baccarat.vig_step_cents"] = VIG_STEP_FOR_PERCENT[pct]
        try:
            result = _build(cls(), values, blame=None)
        except ConfigError as exc:
            problems.append(ConfigError(exc.code, exc.key, exc.reason, source))
            return cls(), problems
        for key in values:
            if key not in given:
                continue  # set here, not by the profile
            why = result.inactive_reason(key)
            if why:
                problems.append(
                    ConfigError("RANGE", key, f"is set but has no effect: {why}", source)
                )
        return result, problems

    def wager_limits(self, game: str) -> tuple[WagerLimit, ...]:
        """The posted limits of each wager ``game``'s table offers now, in layout order."""
        return tuple(
            WagerLimit(
                wager,
                _cents(self, f"{prefix}_min_cents"),
                _cents(self, f"{prefix}_max_cents"),
            )
            for limit_game, wager, prefix in _LIMITS
            if limit_game == game and self.inactive_reason(f"{prefix}_min_cents") is None
        )

    # -- the rules engines' own settings objects -----------------------------------------------

    def paigow_rules(self) -> PaigowEngineRules:
        """The settlement settings of ``controller.games.paigow.settlement``."""
        from controller.games.paigow.settlement import PaigowRules

        p = self.paigow
        return PaigowRules(
            vig_percent=p.vig_percent,
            round_vig_to_quarter=p.round_vig_to_quarter,
            surrender_offered=p.surrender_offered,
            player_bank_offered=p.bank_offered,
            co_bank_offered=p.cobank_offered,
            vig_cent_rounding=p.vig_cent_rounding,
            co_bank_shortfall_odd_cent=p.co_bank_shortfall_odd_cent,
            surrender_against_bank=p.surrender_against_bank,
            bank_rotation_includes_dealer=p.bank_rotation_includes_dealer,
        )

    def paigow_outcome_options(self) -> PaigowOutcomeOptions:
        """Keyword arguments of ``controller.games.paigow.outcome`` (``zero_value``,
        ``zero_low_conflict``)."""
        return {
            "zero_value": self.paigow.zero_value,
            "zero_low_conflict": self.paigow.zero_low_conflict,
        }

    def baccarat_rules(self) -> BaccaratEngineRules:
        """The wager settings of ``controller.games.baccarat.wagers``."""
        from controller.games.baccarat.wagers import Rules

        b = self.baccarat
        table = None if b.dragon_pay_table == "none" else b.dragon_pay_table
        panda = b.panda8_pays if b.panda8_offered else None
        return Rules(
            vig_percent=b.vig_percent,
            tie_pays=b.tie_pays,
            dragon_pay_table=table,
            ez=b.ez,
            panda8_pays=panda,
            dragon7_pays=b.dragon7_pays,
            paying_procedure=b.pay_order,
        )

    def baccarat_shoe_options(self) -> BaccaratShoeOptions:
        """The shoe readings of ``controller.games.baccarat`` (irregularities, shoe,
        shoe_passing) as the engines' own types."""
        b = self.baccarat
        return BaccaratShoeOptions(
            error_card_count=ErrorCardCount[b.error_card_count.upper()],
            face_up_burn_from=BurnFrom[b.face_up_burn_from.upper()],
            hands_after_cover=b.hands_after_cover,
            offer_back_to_previous=b.offer_back_to_previous,
            dead_hand_compels_pass=b.dead_hand_compels_pass,
        )


#: Every rule setting, in ``config show`` order.
RULE_SETTINGS: Final[tuple[RuleSpec, ...]] = tuple(_specs())
_BY_KEY: Final[Mapping[str, RuleSpec]] = {s.key: s for s in RULE_SETTINGS}
#: Every setting's key, in ``config show`` order.
SETTING_KEYS: Final[tuple[str, ...]] = tuple(_BY_KEY)


#: The table's own settings that only one game reads (the rest of them both read).
_ONE_GAME: Final[Mapping[str, str]] = {"start_mode": "paigow"}


def game_of(key: str) -> str | None:
    """The game whose table reads setting ``key`` (``paigow``, ``baccarat``), or None when
    every table does: ``config show`` and ``config set`` on a table offer only its own."""
    head, dot, _ = key.partition(".")
    if dot and head in _NAMESPACES:
        return head
    return _ONE_GAME.get(key)


def _cents(s: RuleSettings, key: str) -> int:
    """A posted limit (a whole number: the settings check it on build)."""
    return as_int(s.get(key), key)


# -- checking ----------------------------------------------------------------------------------


def _spec(key: str, source: str = "") -> RuleSpec:
    spec = _BY_KEY.get(key) if isinstance(key, str) else None
    if spec is None:
        near = difflib.get_close_matches(str(key), SETTING_KEYS, n=1)
        hint = f" (did you mean {near[0]}?)" if near else ""
        raise ConfigError("UNKNOWN", str(key), f"no such setting{hint}", source)
    return spec


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _check_value(spec: RuleSpec, v: object) -> None:
    """Type (SYNTAX) and range (RANGE) of one value, on its own."""
    if spec.tag == "bool":
        ok_type = isinstance(v, bool)
    elif spec.tag == "names":
        ok_type = isinstance(v, tuple) and all(isinstance(x, str) for x in v)
    elif spec.tag == "int" or _is_int(spec.choices[0]):
        ok_type = _is_int(v)
    else:
        ok_type = isinstance(v, str)
    if not ok_type:
        raise ConfigError("SYNTAX", spec.key, f"expected {_type_name(spec)}, got {v!r}")
    if spec.tag == "names":
        assert isinstance(v, tuple)
        if not v:
            raise ConfigError("RANGE", spec.key, "must name at least one")
        for name in v:
            if name not in spec.choices:
                raise ConfigError(
                    "RANGE", spec.key, f"unknown name {name!r}; expected {spec.range_text()}"
                )
        if len(set(v)) != len(v):
            raise ConfigError("RANGE", spec.key, "names one more than once")
    elif spec.choices:
        if v not in spec.choices:
            raise ConfigError(
                "RANGE",
                spec.key,
                f"{_show(v)} is not allowed; expected {spec.range_text()} ({spec.cite})",
            )
    elif spec.tag == "int":
        assert isinstance(v, int)
        if (spec.lo is not None and v < spec.lo) or (spec.hi is not None and v > spec.hi):
            raise ConfigError(
                "RANGE", spec.key, f"{v} is out of range {spec.range_text()} ({spec.cite})"
            )


def _check_whole(s: RuleSettings) -> None:
    """Contradictions between settings. Each error names every key involved."""
    p, b = s.paigow, s.baccarat
    if s.jurisdiction == "NJ" and s.start_mode == "rng":
        raise ConfigError(
            "RANGE",
            "start_mode",
            "rng is not allowed with jurisdiction NJ: the"
            " NJ pai gow rules (13:69F-10.8(i)) provide only the shaker; set"
            " start_mode dice first",
        )
    if p.dragons_eye and s.jurisdiction != "NJ":
        raise ConfigError(
            "RANGE",
            "paigow.dragons_eye",
            "the dragon's eye variation is an NJ rule (13:69F-10.7(l)); it needs jurisdiction NJ",
        )
    if p.dragons_eye and s.start_mode != "dice":
        raise ConfigError(
            "RANGE",
            "paigow.dragons_eye",
            "the dragon's eye variation has a dice"
            " phase (13:69F-10.7(l)); it needs start_mode dice",
        )
    if p.cobank_offered and not p.bank_offered:
        raise ConfigError(
            "RANGE",
            "paigow.cobank_offered",
            "co-banking is an option of the"
            " player bank (5324.50(g)(5)); it needs paigow.bank_offered true",
        )
    if DEFAULT_DELIVERY_STYLE not in p.delivery_styles:
        raise ConfigError(
            "RANGE",
            "paigow.delivery_styles",
            f"must include"
            f" {DEFAULT_DELIVERY_STYLE}, the style used when the bank names none"
            " (5324.50(g)(9))",
        )
    _check_limits(s)
    if b.vig_step_cents != VIG_STEP_FOR_PERCENT[b.vig_percent]:
        raise ConfigError(
            "RANGE",
            "baccarat.vig_step_cents",
            f"{b.vig_step_cents} does not"
            f" match baccarat.vig_percent {b.vig_percent}: 5324.20(d)(2) requires"
            f" {VIG_STEP_FOR_PERCENT[b.vig_percent]}-cent steps",
        )


def _build(base: RuleSettings, changes: Mapping[str, RuleValue], blame: str | None) -> RuleSettings:
    """``base`` with ``changes`` (dotted key -> value) applied, validated as a whole. With
    ``blame``, an error about another key is reported against the key being changed."""
    top: dict[str, object] = {}
    nested: dict[str, dict[str, RuleValue]] = {ns: {} for ns in _NAMESPACES}
    for key, value in changes.items():
        head, _, tail = key.partition(".")
        if tail:
            nested[head][tail] = value
        else:
            top[head] = value
    for ns, sub in nested.items():
        if sub:
            top[ns] = _replaced(getattr(base, ns), sub)
    try:
        return _replaced(base, top)
    except ConfigError as exc:
        if blame is None or exc.key == blame:
            raise
        raise ConfigError(exc.code, blame, f"conflicts with {exc.key}: {exc.reason}") from None


def _replaced(obj: _D, changes: Mapping[str, object]) -> _D:
    """``obj`` with the fields ``changes`` names replaced by keyword (its ``__post_init__``
    checks the values: the rule settings are changed by their dotted keys, not by name)."""
    return dataclasses.replace(obj, **changes)


# -- text and TOML -----------------------------------------------------------------------------


def _type_name(spec: RuleSpec) -> str:
    if spec.tag == "names":
        return "a list of names"
    if spec.tag == "choice":
        return "a string"
    return {"bool": "true or false", "int": "a whole number"}[spec.tag]


def _show(v: object) -> str:
    return v if isinstance(v, str) else repr(v)


def _to_text(spec: RuleSpec, v: RuleValue) -> str:
    if spec.tag == "bool":
        return "true" if v else "false"
    if isinstance(v, tuple):
        return ",".join(v)
    return str(v)


def default_text(spec: RuleSpec) -> str:
    """A setting's default as ``config show`` says it (one that depends on another setting
    says how)."""
    return _default_text(RuleSettings(), spec)


def _default_text(default: RuleSettings, spec: RuleSpec) -> str:
    if spec.default_text is not None:
        return spec.default_text
    return default.get_text(spec.key)


def _parse_text(spec: RuleSpec, text: str) -> RuleValue:
    """Console text to a value; SYNTAX when it is not a value of the type at all."""
    if not isinstance(text, str) or not text.strip():
        raise ConfigError("SYNTAX", spec.key, "a value is needed")
    t = text.strip()
    if spec.tag == "bool":
        if t.lower() in _TRUE:
            return True
        if t.lower() in _FALSE:
            return False
        raise ConfigError("SYNTAX", spec.key, f"{t!r} is not true or false")
    if spec.tag == "int" or (spec.tag == "choice" and _is_int(spec.choices[0])):
        if not re.fullmatch(r"[+-]?\d+", t):
            raise ConfigError("SYNTAX", spec.key, f"{t!r} is not a whole number")
        return int(t)
    if spec.tag == "names":
        if t == "all":
            return tuple(str(c) for c in spec.choices)
        items = tuple(x.strip() for x in t.split(","))
        if any(not re.fullmatch(r"[A-Za-z0-9_\-]+", x) for x in items):
            raise ConfigError("SYNTAX", spec.key, f"{t!r} is not a comma-separated list of names")
        return items
    return t


def _from_toml(spec: RuleSpec, raw: object, source: str) -> RuleValue:
    """A TOML value to a setting value; wrong types are SYNTAX errors naming the key."""
    if spec.tag == "names":
        if isinstance(raw, str):
            try:
                return _parse_text(spec, raw)
            except ConfigError as exc:
                raise ConfigError(exc.code, exc.key, exc.reason, source) from None
        if isinstance(raw, list) and all(isinstance(x, str) for x in raw):
            return tuple(raw)
        raise ConfigError("SYNTAX", spec.key, f"expected a list of names, got {raw!r}", source)
    expect_int = spec.tag == "int" or (spec.tag == "choice" and _is_int(spec.choices[0]))
    if spec.tag == "bool":
        if isinstance(raw, bool):
            return raw
    elif expect_int:
        if isinstance(raw, int) and not isinstance(raw, bool):
            return raw
    elif isinstance(raw, str):
        return raw
    wanted = "a whole number" if expect_int else _type_name(spec)
    raise ConfigError("SYNTAX", spec.key, f"expected {wanted}, got {raw!r}", source)


def _flatten(
    mapping: Mapping[str, object], source: str, problems: list[ConfigError]
) -> Iterator[tuple[str, object]]:
    """The dotted keys and values of a ``[rules]`` table; what is wrong with a key (unknown,
    set twice, a namespace that is not a table) goes to ``problems`` and the key is left out."""
    seen: set[str] = set()
    for k, v in mapping.items():
        if k in _NAMESPACES:
            if not isinstance(v, Mapping):
                problems.append(
                    ConfigError("SYNTAX", k, f"expected a table of {k} settings, got {v!r}", source)
                )
                continue
            items: Iterable[tuple[str, object]] = ((f"{k}.{sk}", sv) for sk, sv in v.items())
        else:
            items = ((k, v),)
        for key, value in items:
            try:
                _spec(key, source)
            except ConfigError as exc:
                problems.append(exc)
                continue
            if key in seen:
                problems.append(ConfigError("SYNTAX", key, "is set twice", source))
                continue
            seen.add(key)
            yield key, value


# -- storage in the journal --------------------------------------------------------------------


class _Event(Protocol):
    @property
    def seq(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def data(self) -> Mapping[str, object]: ...


class _Journal(Protocol):
    def append(self, kind: str, data: Mapping[str, object], round_id: int | None = None) -> int: ...
    def events(
        self, kinds: Iterable[str] | None = None, since_seq: int = 0
    ) -> Iterable[_Event]: ...


@dataclass(frozen=True)
class ReplayProblem:
    """A journaled change that no longer applies (an unknown key after a firmware change, or a
    value the profile's new defaults refuse). It is skipped; the caller should raise a fault."""

    seq: int
    key: str
    text: str
    reason: str


class ConfigStore:
    """The effective settings: the profile's defaults overlaid with every ``config.changed``
    journal event in sequence order. Every change is journaled before it takes effect."""

    def __init__(self, journal: _Journal, defaults: RuleSettings) -> None:
        self._journal = journal
        self._defaults = defaults
        self._current: RuleSettings | None = None
        self.problems: tuple[ReplayProblem, ...] = ()

    def replay(self) -> tuple[ReplayProblem, ...]:
        """Rebuild the settings from the defaults and the journal (at start-up). Returns (and
        keeps in :attr:`problems`) the events that could not be applied; they are skipped."""
        settings = self._defaults
        problems: list[ReplayProblem] = []
        for e in self._journal.events(kinds=[_EVENT_KIND]):
            key, text = str(e.data.get("key", "")), str(e.data.get("new", ""))
            try:
                settings = settings.with_change(key, text)
            except ConfigError as exc:
                problems.append(ReplayProblem(e.seq, key, text, str(exc)))
        self._current = settings
        self.problems = tuple(problems)
        return self.problems

    def current(self) -> RuleSettings:
        """The effective settings (replaying the journal first if that has not been done)."""
        if self._current is None:
            self.replay()
        assert self._current is not None
        return self._current

    def as_of(self, seq: int) -> RuleSettings:
        """The settings in effect just before journal row ``seq``: the defaults overlaid with the
        ``config.changed`` rows before it (rows that no longer apply skipped, as in
        :meth:`replay`). A table replaying its inputs at start-up reads the settings each input
        saw, not the ones in effect now."""
        settings = self._defaults
        for e in self._journal.events(kinds=[_EVENT_KIND]):
            if e.seq >= seq:
                break
            try:
                settings = settings.with_change(
                    str(e.data.get("key", "")), str(e.data.get("new", ""))
                )
            except ConfigError:
                continue
        return settings

    def set(self, key: str, text: str, who: str) -> tuple[str, str]:
        """Change one setting from console text; return its (old, new) text. Journals
        ``config.changed`` with key, old, new and who before the change takes effect, and one
        more event (with ``cause``) for every other setting the change moved. Setting a value
        equal to the current one journals nothing. Raises :class:`ConfigError`."""
        if not who:
            raise ValueError("who made a configuration change must be named")
        old = self.current()
        new = old.with_change(key, text)
        for k in [key] + [k for k in SETTING_KEYS if k != key]:
            before, after = old.get_text(k), new.get_text(k)
            if before == after:
                continue
            data = {"key": k, "old": before, "new": after, "who": who}
            if k != key:
                data["cause"] = key
            self._journal.append(_EVENT_KIND, data)
            # Replaying the first row alone already yields ``new`` (with_change moves the
            # settings tied to ``key``), so the change is in effect from that row on; the
            # ``cause`` rows only record what it moved. A failed later write cannot leave the
            # running table on the old settings while the journal says otherwise.
            self._current = new
        return old.get_text(key), new.get_text(key)
