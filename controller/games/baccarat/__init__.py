"""Baccarat rules (9 NYCRR 5324.20). Pure: no I/O, no clocks, no randomness.

    from controller.games import baccarat
    coup = baccarat.deal([baccarat.card(c) for c in ("9H", "TD", "AS", "2C", "5S", "3D")])
    baccarat.settle("banker", 500, coup, baccarat.Rules())

See docs/baccarat-rules.md for the readings of the regulation this package makes.
"""

from .cards import (
    DECK,
    RANKS,
    SUITS,
    Card,
    burn_value,
    card,
    card_value,
    cards,
    hand_total,
    point_count,
    shoe_cards,
)
from .coup import WINNERS, Coup, deal, resolve_values
from .errors import (
    BaccaratError,
    CardError,
    RulesError,
    ShoeExhausted,
    TotalError,
    WagerError,
)
from .odds import DRAGON_OUTCOMES, CompositionError, composition_of, exact_odds, house_edges
from .settlement import (
    Settlement,
    banker_commission,
    dragon_result,
    lammers_for,
    settle,
    settle_with_commission,
)
from .third_card import (
    BANKER_DRAWS,
    BANKER_DRAWS_PLAYER_STOOD,
    NATURALS,
    PLAYER_DRAWS,
    banker_draws,
    is_natural,
    player_draws,
)
from .wagers import (
    DRAGON_NATURAL_WIN_PAYS,
    DRAGON_PAY_TABLES,
    PANDA8_PAYS,
    PAYING_PROCEDURES,
    STAKE_STEP_CENTS,
    WAGERS,
    Rules,
    check_wager,
    paying_sequence,
)

__all__ = [
    "BANKER_DRAWS",
    "BANKER_DRAWS_PLAYER_STOOD",
    "DECK",
    "DRAGON_NATURAL_WIN_PAYS",
    "DRAGON_OUTCOMES",
    "DRAGON_PAY_TABLES",
    "NATURALS",
    "PANDA8_PAYS",
    "PAYING_PROCEDURES",
    "PLAYER_DRAWS",
    "RANKS",
    "STAKE_STEP_CENTS",
    "SUITS",
    "WAGERS",
    "WINNERS",
    "BaccaratError",
    "Card",
    "CardError",
    "CompositionError",
    "Coup",
    "Rules",
    "RulesError",
    "Settlement",
    "ShoeExhausted",
    "TotalError",
    "WagerError",
    "banker_commission",
    "banker_draws",
    "burn_value",
    "card",
    "card_value",
    "cards",
    "check_wager",
    "composition_of",
    "deal",
    "dragon_result",
    "exact_odds",
    "hand_total",
    "house_edges",
    "is_natural",
    "lammers_for",
    "paying_sequence",
    "player_draws",
    "point_count",
    "resolve_values",
    "settle",
    "settle_with_commission",
    "shoe_cards",
]

# --- shoe-level exports (shoe.py, irregularities.py): owned by the shoe engineer -------------
# Add the imports and extend __all__ below this line; the rules API above stays as it is.
# --- end of shoe-level exports ---------------------------------------------------------------
