"""Setting four tiles into a high and a low hand, and the dealer's house way.

Sources: 9 NYCRR 5324.50(f)(3)-(4); N.J.A.C. 13:69F-10.7(c)-(e).

Four tiles split into two two-tile hands in exactly three ways (:func:`splits`). The dealer (or a
co-bank whose hand the dealer sets) must choose the split by the house way:

* 5324.50(f)(4) / 13:69F-10.7(d): (i) play the supreme pair as such; (ii) always play a pair,
  wong or gong; (iii) otherwise play two tiles of value 9, 8 or 7 together; (iv) otherwise play
  the highest-ranking tile with the lowest-ranking tile.
* 13:69F-10.7(e): a casino submits its own way (with any exceptions to (d)) in its Rules of the
  Games Submission; New York allows a way "otherwise approved by the commission in writing".

The four rules leave choices (which of several pairs, which of several 9/8/7 combinations, whether
both hands or only one should be the pair). A :class:`HouseWayPolicy` is the data that resolves
them: an ordered list of *steps* plus a table of *exceptions*, loadable from a plain mapping (and so
from TOML or JSON configuration) with :func:`load_policy`. The format:

``name``, ``title``, ``source``, ``description``
    Text; ``source`` says where the way comes from (a regulation, a Rules of the Games submission).
``exceptions``
    List of ``{"tiles": [four tiles], "high": [two], "low": [two], "note": "..."}``: exactly
    these four tiles (by pip pattern) are set this way, before any step is tried.
``steps``
    Ordered list; the first step that at least one split satisfies decides. Each step is
    ``{"take": T, "prefer": [criteria...], ...}`` where ``take`` says which hands qualify:

    - ``"supreme_pair"``: the hand 1-2 + 2-4;
    - ``"pair"``: a (b)(1) combination; optional ``"kinds"``, a subset of ``supreme``, ``matched``,
      ``mixed``, ``wong``, ``gong`` (all by default);
    - ``"value"``: a hand that is no pair and whose (b)(3)/(b)(4) value is in ``"values"``;
    - ``"highest_with_lowest"``: the highest-ranking tile with the lowest-ranking tile, by the
      (b)(6) ranks as printed (no (b)(4) rank change);
    - ``"any"``: every hand.

    A split satisfies the step if one of its hands qualifies. Among the splits that do,
    ``prefer`` picks, each criterion keeping the splits that score highest on it:

    - ``"qualifying_hands"``: how many of the split's two hands qualify (two before one);
    - ``"best_qualifying"``: rank of the split's best qualifying hand;
    - ``"high"`` / ``"low"``: rank of the high / low hand;
    - ``"high_value"`` / ``"low_value"`` / ``"total_value"``: the (b)(3) values.

    After the listed criteria, ``high`` then ``low`` always break what is left; splits still tied
    then hold hands of identical rank, so which of them is taken changes no outcome (the one
    first in :func:`splits` order is). The last step must take ``"highest_with_lowest"`` or
    ``"any"``, so that every four tiles get a way.

Shipped policies (:data:`POLICY_NAMES`): ``"regulation"`` (alias ``"default"``), the four rules
with the choices above resolved as documented in ``REGULATION_POLICY``. No casino's published way
is shipped: none whose complete text could be read was found (see docs/paigow-ranking-houseway.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from .errors import PolicyError, TileError
from .ranking import TILE_RANKS, HandRank, _rank_by_index
from .tiles import TILE_KINDS, Tile, check_tiles

__all__ = [
    "Hand",
    "splits",
    "HouseWayPolicy",
    "PolicyStep",
    "PolicyException",
    "HouseWayDecision",
    "house_way",
    "set_hand",
    "load_policy",
    "policy_names",
    "POLICY_NAMES",
    "REGULATION_POLICY",
    "TAKES",
    "CRITERIA",
    "PAIR_KINDS",
]

Hand = tuple[Tile, Tile]

TAKES: Final[tuple[str, ...]] = ("supreme_pair", "pair", "value", "highest_with_lowest", "any")
CRITERIA: Final[tuple[str, ...]] = (
    "qualifying_hands",
    "best_qualifying",
    "high",
    "low",
    "high_value",
    "low_value",
    "total_value",
)
PAIR_KINDS: Final[tuple[str, ...]] = ("supreme", "matched", "mixed", "wong", "gong")
_CATCH_ALL: Final = ("highest_with_lowest", "any")

# The three ways to split four tiles t0..t3: t0 goes with t1, t2 or t3.
_SPLIT_POSITIONS: Final = (((0, 1), (2, 3)), ((0, 2), (1, 3)), ((0, 3), (1, 2)))


def splits(four_tiles: Iterable[Tile | str]) -> tuple[tuple[Hand, Hand], ...]:
    """The three ways to split four tiles into two hands, each as ``(high, low)``.

    In each split the hand ranking at least as high as the other comes first. Raises
    ``HandError`` for anything but four tiles that one set can hold.
    """
    four = check_tiles(four_tiles, 4, "set of four tiles")
    out = []
    for (a, b), (c, d) in _SPLIT_POSITIONS:
        h1, h2 = (four[a], four[b]), (four[c], four[d])
        if _key(h2) > _key(h1):
            h1, h2 = h2, h1
        out.append((h1, h2))
    return tuple(out)


def _hr(h: Sequence[Tile]) -> HandRank:
    i, j = h[0].index, h[1].index
    return _rank_by_index(i, j) if i <= j else _rank_by_index(j, i)


def _key(h: Sequence[Tile]) -> int:
    return _hr(h).key


@dataclass(frozen=True)
class PolicyStep:
    """One step of a house way; see the module docstring for ``take`` and ``prefer``."""

    take: str
    prefer: tuple[str, ...] = ()
    values: tuple[int, ...] = ()
    kinds: tuple[str, ...] = PAIR_KINDS
    note: str = ""

    def qualifies(self, h: Hand, four: Sequence[Tile]) -> bool:
        """Whether the two-tile hand ``h``, out of ``four``, fits this step's ``take``."""
        return self._qualifies(h, _hr(h), four)

    def _qualifies(self, h: Hand, r: HandRank, four: Sequence[Tile]) -> bool:
        if self.take == "any":
            return True
        if self.take == "supreme_pair":
            return r.pair is not None and r.pair.kind == "supreme"
        if self.take == "pair":
            return r.pair is not None and r.pair.kind in self.kinds
        if self.take == "value":
            return r.pair is None and r.value in self.values
        # highest_with_lowest, by the (b)(6) ranks as printed
        ranks = [TILE_RANKS[t] for t in four]
        hand_ranks = sorted((TILE_RANKS[h[0]], TILE_RANKS[h[1]]))
        return hand_ranks == [min(ranks), max(ranks)]

    def to_mapping(self) -> dict[str, object]:
        m: dict[str, object] = {"take": self.take, "prefer": list(self.prefer)}
        if self.take == "value":
            m["values"] = list(self.values)
        if self.take == "pair" and self.kinds != PAIR_KINDS:
            m["kinds"] = list(self.kinds)
        if self.note:
            m["note"] = self.note
        return m


@dataclass(frozen=True)
class PolicyException:
    """Exactly these four tiles are set as ``high`` / ``low`` (13:69F-10.7(e) exceptions)."""

    tiles: tuple[Tile, Tile, Tile, Tile]
    high: Hand
    low: Hand
    note: str = ""

    def to_mapping(self) -> dict[str, object]:
        m: dict[str, object] = {
            "tiles": [str(t) for t in self.tiles],
            "high": [str(t) for t in self.high],
            "low": [str(t) for t in self.low],
        }
        if self.note:
            m["note"] = self.note
        return m


@dataclass(frozen=True)
class HouseWayDecision:
    """A house-way result: the hands, and which exception or step decided (for display/audit)."""

    high: Hand
    low: Hand
    reason: str


def _pattern(four: Sequence[Tile]) -> tuple[int, ...]:
    return tuple(sorted(t.index for t in four))


@dataclass(frozen=True)
class HouseWayPolicy:
    """A named, replaceable house way (13:69F-10.7(e)). Build it with :func:`load_policy`."""

    name: str
    steps: tuple[PolicyStep, ...]
    exceptions: tuple[PolicyException, ...] = ()
    title: str = ""
    source: str = ""
    description: str = ""
    _by_pattern: dict[tuple[int, ...], PolicyException] = field(
        default_factory=dict, compare=False, hash=False, repr=False
    )
    _cache: dict[tuple[int, ...], HouseWayDecision] = field(
        default_factory=dict, compare=False, hash=False, repr=False
    )

    def __post_init__(self) -> None:
        for ex in self.exceptions:
            self._by_pattern[_pattern(ex.tiles)] = ex

    def to_mapping(self) -> dict[str, object]:
        """The policy as plain data (what :func:`load_policy` reads back); TOML/JSON-able."""
        return {
            "name": self.name,
            "title": self.title,
            "source": self.source,
            "description": self.description,
            "exceptions": [e.to_mapping() for e in self.exceptions],
            "steps": [s.to_mapping() for s in self.steps],
        }

    def decide(self, four: Sequence[Tile]) -> HouseWayDecision:
        """Set four already-checked tiles. Cached by pip pattern."""
        a, b, c, d = four
        pat = tuple(sorted((a.index, b.index, c.index, d.index)))
        hit = self._cache.get(pat)
        if hit is None:
            hit = self._decide(tuple(TILE_KINDS[i] for i in pat))
            self._cache[pat] = hit
        return hit

    def _decide(self, four: tuple[Tile, ...]) -> HouseWayDecision:
        ex = self._by_pattern.get(_pattern(four))
        if ex is not None:
            high, low = ex.high, ex.low
            if _key(low) > _key(high):
                high, low = low, high
            return HouseWayDecision(_canon(high), _canon(low), f"exception: {ex.note or 'listed'}")
        cands = [
            (i, (four[a], four[b]), (four[c], four[d]))
            for i, ((a, b), (c, d)) in enumerate(_SPLIT_POSITIONS)
        ]
        ranked = []
        for i, h1, h2 in cands:
            r1, r2 = _hr(h1), _hr(h2)
            if r2.key > r1.key:
                h1, h2, r1, r2 = h2, h1, r2, r1
            ranked.append((i, h1, h2, r1, r2))
        for n, step in enumerate(self.steps, 1):
            scored = []
            crit = (*step.prefer, "high", "low")
            for i, h1, h2, r1, r2 in ranked:
                q1, q2 = step._qualifies(h1, r1, four), step._qualifies(h2, r2, four)
                if not (q1 or q2):
                    continue
                scores = tuple(_score(c, r1, r2, q1, q2) for c in crit)
                scored.append((scores, -i, h1, h2))
            if scored:
                _s, _i, high, low = max(scored, key=lambda s: (s[0], s[1]))
                reason = f"step {n}: {step.take}" + (f" ({step.note})" if step.note else "")
                return HouseWayDecision(_canon(high), _canon(low), reason)
        raise PolicyError(  # unreachable for a validated policy (last step is a catch-all)
            f"house way {self.name!r} gives no way to set {' '.join(map(str, four))}"
        )


def _canon(h: Hand) -> Hand:
    """Higher-ranking tile first within a hand (by (b)(6) table order)."""
    a, b = h
    return (a, b) if a.index <= b.index else (b, a)


def _score(c: str, r1: HandRank, r2: HandRank, q1: bool, q2: bool) -> int:
    if c == "qualifying_hands":
        return int(q1) + int(q2)
    if c == "best_qualifying":
        return max(r.key for r, q in ((r1, q1), (r2, q2)) if q)
    if c == "high":
        return r1.key
    if c == "low":
        return r2.key
    if c == "high_value":
        return r1.value
    if c == "low_value":
        return r2.value
    return r1.value + r2.value  # total_value


def _as_str_list(v: object, what: str) -> list[str]:
    if isinstance(v, str) or not isinstance(v, (list, tuple)):
        raise PolicyError(f"{what} must be a list, got {v!r}")
    return [str(x) for x in v]


def _parse_tiles(v: object, n: int, what: str) -> tuple[Tile, ...]:
    items = _as_str_list(v, what)
    try:
        return check_tiles(items, n, what)
    except (TileError, ValueError) as exc:
        raise PolicyError(f"{what}: {exc}") from exc


def _mapping(m: object, what: str) -> Mapping[str, object]:
    """``m`` as a mapping of string keys, or :class:`PolicyError` saying ``what`` it must be."""
    if not isinstance(m, Mapping) or not all(isinstance(k, str) for k in m):
        raise PolicyError(f"{what}, got {m!r}")
    return {str(k): v for k, v in m.items()}


def _parse_step(raw: object, n: int) -> PolicyStep:
    where = f"step {n}"
    m = _mapping(raw, f"{where} must be a mapping with a 'take'")
    unknown = set(m) - {"take", "prefer", "values", "kinds", "note"}
    if unknown:
        raise PolicyError(f"{where} has unknown keys {sorted(unknown)}")
    take = m.get("take")
    if not isinstance(take, str) or take not in TAKES:
        raise PolicyError(f"{where}: 'take' must be one of {list(TAKES)}, got {take!r}")
    prefer = tuple(_as_str_list(m.get("prefer", []), f"{where} 'prefer'"))
    bad = [c for c in prefer if c not in CRITERIA]
    if bad:
        raise PolicyError(f"{where}: unknown 'prefer' criteria {bad}; known: {list(CRITERIA)}")
    values: tuple[int, ...] = ()
    if take == "value":
        raw_values = m.get("values")
        values = tuple(
            x
            for x in (raw_values if isinstance(raw_values, (list, tuple)) else ())
            if isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= 9
        )
        if (
            not isinstance(raw_values, (list, tuple))
            or not raw_values
            or len(values) != len(raw_values)
        ):
            raise PolicyError(
                f"{where}: take 'value' needs 'values', a list of 0-9, got {raw_values!r}"
            )
    elif "values" in m:
        raise PolicyError(f"{where}: 'values' only goes with take 'value'")
    kinds = PAIR_KINDS
    if "kinds" in m:
        if take != "pair":
            raise PolicyError(f"{where}: 'kinds' only goes with take 'pair'")
        kinds = tuple(_as_str_list(m["kinds"], f"{where} 'kinds'"))
        badk = [k for k in kinds if k not in PAIR_KINDS]
        if badk or not kinds:
            raise PolicyError(f"{where}: 'kinds' must be some of {list(PAIR_KINDS)}, got {kinds}")
    return PolicyStep(take, prefer, values, kinds, str(m.get("note", "")))


def _parse_exception(raw: object, n: int) -> PolicyException:
    where = f"exception {n}"
    m = _mapping(raw, f"{where} must be a mapping with 'tiles', 'high' and 'low'")
    unknown = set(m) - {"tiles", "high", "low", "note"}
    if unknown:
        raise PolicyError(f"{where} has unknown keys {sorted(unknown)}")
    four = _parse_tiles(m.get("tiles"), 4, f"{where} 'tiles'")
    high = _parse_tiles(m.get("high"), 2, f"{where} 'high'")
    low = _parse_tiles(m.get("low"), 2, f"{where} 'low'")
    if sorted(t.index for t in high + low) != sorted(t.index for t in four):
        raise PolicyError(
            f"{where}: 'high' {' '.join(map(str, high))} and 'low' {' '.join(map(str, low))} "
            f"are not a split of 'tiles' {' '.join(map(str, four))}"
        )
    return PolicyException(
        (four[0], four[1], four[2], four[3]),
        (high[0], high[1]),
        (low[0], low[1]),
        str(m.get("note", "")),
    )


def _from_mapping(m: Mapping[str, object]) -> HouseWayPolicy:
    unknown = set(m) - {"name", "title", "source", "description", "steps", "exceptions"}
    if unknown:
        raise PolicyError(f"house-way policy has unknown keys {sorted(unknown)}")
    name = m.get("name")
    if not isinstance(name, str) or not name.strip():
        raise PolicyError(f"house-way policy needs a 'name', got {name!r}")
    raw_steps = m.get("steps")
    if not isinstance(raw_steps, (list, tuple)) or not raw_steps:
        raise PolicyError(f"house-way policy {name!r} needs a non-empty list 'steps'")
    steps = tuple(_parse_step(s, n) for n, s in enumerate(raw_steps, 1))
    if steps[-1].take not in _CATCH_ALL:
        raise PolicyError(
            f"house-way policy {name!r}: the last step must take one of {list(_CATCH_ALL)} "
            f"so that every four tiles get a way, not {steps[-1].take!r}"
        )
    raw_ex = m.get("exceptions", [])
    if not isinstance(raw_ex, (list, tuple)):
        raise PolicyError(f"house-way policy {name!r}: 'exceptions' must be a list")
    exceptions = tuple(_parse_exception(e, n) for n, e in enumerate(raw_ex, 1))
    seen: dict[tuple[int, ...], int] = {}
    for n, e in enumerate(exceptions, 1):
        p = _pattern(e.tiles)
        if p in seen:
            raise PolicyError(
                f"house-way policy {name!r}: exceptions {seen[p]} and {n} are both for "
                f"{' '.join(map(str, e.tiles))}"
            )
        seen[p] = n
    return HouseWayPolicy(
        name=name.strip(),
        steps=steps,
        exceptions=exceptions,
        title=str(m.get("title", "")),
        source=str(m.get("source", "")),
        description=str(m.get("description", "")),
    )


REGULATION_POLICY: Final[Mapping[str, object]] = {
    "name": "regulation",
    "title": "Dealer's house way of 9 NYCRR 5324.50(f)(4) and N.J.A.C. 13:69F-10.7(d)",
    "source": "9 NYCRR 5324.50(f)(4)(i)-(iv); N.J.A.C. 13:69F-10.7(d)1-4",
    "description": (
        "The four rules in order, the first that applies deciding. Where a rule fits more than "
        "one split, this policy prefers the split in which both hands fit the rule (two pairs, "
        "wongs or gongs; two hands of 9, 8 or 7), then the best hand that fits it, then the "
        "better other hand. The highest- and lowest-ranking tiles of rule (iv) are by the "
        "(b)(6) table as printed."
    ),
    "exceptions": [],
    "steps": [
        {
            "take": "supreme_pair",
            "prefer": [],
            "note": "5324.50(f)(4)(i), 13:69F-10.7(d)1: supreme pair played as such",
        },
        {
            "take": "pair",
            "prefer": ["qualifying_hands", "best_qualifying", "low"],
            "note": "5324.50(f)(4)(ii), 13:69F-10.7(d)2: always play a pair, wong or gong",
        },
        {
            "take": "value",
            "values": [9, 8, 7],
            "prefer": ["qualifying_hands", "best_qualifying", "low"],
            "note": "5324.50(f)(4)(iii), 13:69F-10.7(d)3: two tiles of value 9, 8 or 7 together",
        },
        {
            "take": "highest_with_lowest",
            "prefer": ["high", "low"],
            "note": "5324.50(f)(4)(iv), 13:69F-10.7(d)4: highest-ranking tile with lowest-ranking",
        },
    ],
}

_SHIPPED: Final[dict[str, Mapping[str, object]]] = {"regulation": REGULATION_POLICY}
_ALIASES: Final[dict[str, str]] = {"default": "regulation"}
POLICY_NAMES: Final[tuple[str, ...]] = tuple(_SHIPPED)
_LOADED: dict[str, HouseWayPolicy] = {}


def policy_names() -> tuple[str, ...]:
    """Names of the shipped policies (``"default"`` is an alias of ``"regulation"``)."""
    return POLICY_NAMES


def load_policy(name_or_mapping: str | Mapping[str, object] | HouseWayPolicy) -> HouseWayPolicy:
    """A house-way policy by shipped name, or built and validated from a mapping.

    The mapping is the format of the module docstring (e.g. ``tomllib.loads(text)`` of a
    casino's configuration file). Raises :class:`PolicyError` (a ``ValueError``) naming what is
    wrong: an unknown name, an unknown key, step or criterion, a tile that does not exist, an
    exception whose hands are not a split of its tiles, a last step that is not a catch-all.
    """
    if isinstance(name_or_mapping, HouseWayPolicy):
        return name_or_mapping
    if isinstance(name_or_mapping, str):
        key = _ALIASES.get(name_or_mapping, name_or_mapping)
        if key not in _SHIPPED:
            raise PolicyError(
                f"no house-way policy named {name_or_mapping!r}; shipped: "
                f"{', '.join(POLICY_NAMES)} (and 'default'); load a casino's own from a mapping"
            )
        pol = _LOADED.get(key)
        if pol is None:
            pol = _LOADED[key] = _from_mapping(_SHIPPED[key])
        return pol
    if isinstance(name_or_mapping, Mapping):
        return _from_mapping(name_or_mapping)
    raise PolicyError(
        f"a house-way policy is a name or a mapping, got {type(name_or_mapping).__name__}"
    )


def set_hand(
    four_tiles: Iterable[Tile | str],
    policy: str | Mapping[str, object] | HouseWayPolicy | None = None,
) -> HouseWayDecision:
    """Like :func:`house_way`, also telling which exception or step decided."""
    four = check_tiles(four_tiles, 4, "set of four tiles")
    return load_policy("regulation" if policy is None else policy).decide(four)


def house_way(
    four_tiles: Iterable[Tile | str],
    policy: str | Mapping[str, object] | HouseWayPolicy | None = None,
) -> tuple[Hand, Hand]:
    """Set four tiles by the house way: ``(high, low)``, high ranking at least as high as low.

    ``policy`` is a shipped name, a policy mapping or a loaded policy; ``None`` is the
    regulation's way (5324.50(f)(4); 13:69F-10.7(d)). Within each hand the higher-ranking tile
    comes first. Raises ``HandError`` (a ``ValueError``) for anything but four tiles one set can
    hold, ``PolicyError`` for a bad policy.
    """
    d = set_hand(four_tiles, policy)
    return d.high, d.low
