"""Pai gow tiles rules (9 NYCRR 5324.50; N.J.A.C. 13:69F-10.7, 10.8). Pure: no I/O.

Part 1 -- tiles, hand ranking, comparison, house way, win/push/lose -- is re-exported here::

    from controller.games import paigow
    t = paigow.tile("4-5")                       # str(t) == "4-5"
    paigow.compare(hand_a, hand_b)               # 1, -1, or 0 for identical rank (copy)
    paigow.house_way(four_tiles)                 # (high, low) by the default house way
    paigow.outcome(ph, pl, dh, dl)               # "win" | "push" | "lose"

See docs/paigow-ranking-houseway.md.
"""

from .banking import (
    CENTER,
    DEALER,
    HOUSE,
    BankingError,
    BankRotation,
    BankRoundSettlement,
    BankShortfallError,
    BankWager,
    Transfer,
    bank_hand_set_by,
    bank_ineligibility,
    dealer_wager_against_bank,
    require_bank_eligible,
    settle_bank_round,
)
from .dealing import (
    DEFAULT_DELIVERY_STYLE,
    DELIVERY_STYLES,
    DealingError,
    cut,
    deal_order,
    deliver,
    delivery_plan,
    starting_position,
)
from .errors import HandError, PaigowError, PolicyError, SetError, TileError
from .houseway import (
    CRITERIA,
    PAIR_KINDS,
    POLICY_NAMES,
    REGULATION_POLICY,
    TAKES,
    Hand,
    HouseWayDecision,
    HouseWayPolicy,
    PolicyException,
    PolicyStep,
    house_way,
    load_policy,
    policy_names,
    set_hand,
    splits,
)
from .outcome import (
    DEFAULT_ZERO_LOW_CONFLICT,
    DEFAULT_ZERO_VALUE,
    ZERO_LOW_CONFLICT_SETTINGS,
    ZERO_VALUE_SETTINGS,
    Outcome,
    ZeroLowConflict,
    ZeroValue,
    has_value_zero,
    outcome,
)
from .ranking import (
    PAIR_RANKS,
    TILE_RANKS,
    HandRank,
    PairRank,
    all_hands,
    compare,
    hand_rank,
    hand_value,
    pair_rank,
    rank_key,
    tile_rank,
)
from .settlement import (
    AreaWager,
    PaigowRules,
    SettlementError,
    check_two_areas,
    commission,
    may_surrender,
    setting_order,
    settle_wager,
)
from .tiles import (
    COPIES,
    SET_SIZE,
    TILE_KINDS,
    SetReport,
    Tile,
    check_tiles,
    full_set,
    tile,
    tiles,
    verify_set,
)

__all__ = [
    # errors
    "PaigowError",
    "TileError",
    "HandError",
    "SetError",
    "PolicyError",
    # tiles
    "Tile",
    "tile",
    "tiles",
    "TILE_KINDS",
    "COPIES",
    "SET_SIZE",
    "full_set",
    "check_tiles",
    "SetReport",
    "verify_set",
    # ranking
    "TILE_RANKS",
    "tile_rank",
    "PAIR_RANKS",
    "PairRank",
    "HandRank",
    "hand_rank",
    "hand_value",
    "pair_rank",
    "compare",
    "rank_key",
    "all_hands",
    # house way
    "Hand",
    "splits",
    "house_way",
    "set_hand",
    "load_policy",
    "policy_names",
    "POLICY_NAMES",
    "REGULATION_POLICY",
    "HouseWayPolicy",
    "PolicyStep",
    "PolicyException",
    "HouseWayDecision",
    "TAKES",
    "CRITERIA",
    "PAIR_KINDS",
    # outcome
    "outcome",
    "Outcome",
    "ZeroValue",
    "ZERO_VALUE_SETTINGS",
    "DEFAULT_ZERO_VALUE",
    "has_value_zero",
    "ZeroLowConflict",
    "ZERO_LOW_CONFLICT_SETTINGS",
    "DEFAULT_ZERO_LOW_CONFLICT",
]

__all__ += [
    # settlement
    "PaigowRules",
    "SettlementError",
    "commission",
    "settle_wager",
    "may_surrender",
    "AreaWager",
    "setting_order",
    "check_two_areas",
    # banking
    "BankingError",
    "BankShortfallError",
    "HOUSE",
    "CENTER",
    "DEALER",
    "BankWager",
    "Transfer",
    "BankRoundSettlement",
    "settle_bank_round",
    "dealer_wager_against_bank",
    "bank_hand_set_by",
    "bank_ineligibility",
    "require_bank_eligible",
    "BankRotation",
    # dealing
    "DealingError",
    "DELIVERY_STYLES",
    "DEFAULT_DELIVERY_STYLE",
    "starting_position",
    "deal_order",
    "deliver",
    "delivery_plan",
    "cut",
]
