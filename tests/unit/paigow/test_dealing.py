"""Dealing: starting position (5324.50(e)(3), (g)(10)), the bank's cut ((g)(7)), and the ten
styles of delivery ((g)(11)(i)-(x); N.J.A.C. 13:69F-10.8(k)1-10).

The labelled layout: stack ``S1`` is the first stack on the dealer's LEFT, ``S8`` the first on the
dealer's RIGHT (the stacks are given left to right as the dealer sees them); ``T1`` is the top
tile of a stack, ``T4`` the bottom. So ``"S8T1"`` is the top tile of the first stack on the
dealer's right. Each expected hand below can be checked against the regulation's words quoted in
the test's docstring. Hand 0 goes to the starting position, hand 1 to "the next position"
counter-clockwise, and so on. Within a hand the order of tiles carries no meaning, so hands are
compared as sets (and every tile must be dealt exactly once).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.games.paigow import dealing
from controller.games.paigow.dealing import (
    DEFAULT_DELIVERY_STYLE,
    DELIVERY_STYLES,
    DealingError,
    cut,
    deal_order,
    deliver,
    starting_position,
)
from controller.games.paigow.errors import PaigowError

LAYOUT = [[f"S{s}T{t}" for t in range(1, 5)] for s in range(1, 9)]


def hands(style: str) -> list[set[str]]:
    dealt = deliver(LAYOUT, style)
    assert len(dealt) == 8 and all(len(h) == 4 for h in dealt)
    flat = [t for h in dealt for t in h]
    assert sorted(flat) == sorted(t for s in LAYOUT for t in s), "every tile dealt exactly once"
    return [set(h) for h in dealt]


def H(*tiles: str) -> set[str]:
    return set(tiles)


def stack(s: int) -> set[str]:
    return {f"S{s}T{t}" for t in range(1, 5)}


def layer(stacks: list[int], t: int) -> set[str]:
    return {f"S{s}T{t}" for s in stacks}


# ---------------------------------------------------------------------------------------------
# The style names
# ---------------------------------------------------------------------------------------------


def test_ten_styles_in_regulation_order() -> None:
    assert DELIVERY_STYLES == (
        "house_way_from_right",  # (i)
        "house_way_from_left",  # (ii)
        "cup_say_from_right",  # (iii)
        "cup_say_from_left",  # (iv)
        "jung_quat",  # (v)
        "chee_yee",  # (vi)
        "pin_say_from_right",  # (vii)
        "pin_say_from_left",  # (viii)
        "dragon_head_phoenix_tail_from_right",  # (ix)
        "dragon_head_phoenix_tail_from_left",  # (x)
    )


def test_default_style_is_house_way_from_the_right() -> None:
    """(g)(9): "If the bank does not choose a style of delivery, the dealer shall use the style
    of delivery called house way from the right"."""
    assert DEFAULT_DELIVERY_STYLE == "house_way_from_right"


@pytest.mark.parametrize("style", DELIVERY_STYLES)
def test_every_style_deals_every_tile_once(style: str) -> None:
    places = [p for hand in dealing.delivery_plan(style) for p in hand]
    assert sorted(places) == [(s, d) for s in range(8) for d in range(4)]
    hands(style)


# ---------------------------------------------------------------------------------------------
# The ten styles on the labelled layout
# ---------------------------------------------------------------------------------------------


def test_i_house_way_from_the_right() -> None:
    """(i) "pushing forward the first stack of tiles on the dealer's right. The dealer shall
    deliver the stack pushed forward to the starting position. The remaining stacks of tiles
    shall be delivered from the dealer's right to left."  Also (e)(4): "the first stack of four
    tiles, starting from the right side of the eight stacks"."""
    assert hands("house_way_from_right") == [stack(s) for s in (8, 7, 6, 5, 4, 3, 2, 1)]
    # whole stacks, top tile first
    assert deliver(LAYOUT, "house_way_from_right")[0] == ["S8T1", "S8T2", "S8T3", "S8T4"]


def test_ii_house_way_from_the_left() -> None:
    """(ii) "pushing forward the first stack of tiles on the dealer's left. The dealer shall
    deliver the stack pushed forward to the starting position. The remaining stacks of tiles
    shall be delivered from the dealer's left to right." """
    assert hands("house_way_from_left") == [stack(s) for s in (1, 2, 3, 4, 5, 6, 7, 8)]


def two_stack_hands(*pairs: tuple[int, int]) -> list[set[str]]:
    """The hands of a style that pushes two stacks forward at a time: the top two tiles of each
    to one position, the two below them to the next (styles (iii)-(vi))."""
    return [H(*layer([a, b], t), *layer([a, b], t + 1)) for a, b in pairs for t in (1, 3)]


@pytest.mark.parametrize(
    ("style", "pairs"),
    [
        # (iii) "pushing forward the first two stacks of tiles on the dealer's right. The dealer
        # shall deliver the top two tiles from each of the two stacks pushed forward to the
        # starting position. The four remaining tiles pushed forward shall be delivered to the
        # next position. The remaining stacks of tiles shall be delivered from the dealer's right
        # to left in the same manner as the first two stacks."
        pytest.param("cup_say_from_right", [(8, 7), (6, 5), (4, 3), (2, 1)], id="iii"),
        # (iv) the same "pushing forward the first two stacks of tiles on the dealer's left" and
        # "from the dealer's left to right".
        pytest.param("cup_say_from_left", [(1, 2), (3, 4), (5, 6), (7, 8)], id="iv"),
        # (v) "pushing forward the fourth stack of tiles from the dealer's right and the fourth
        # stack of tiles from the dealer's left (the two center stacks of the eight). The dealer
        # shall deliver the top two tiles from each of the two stacks pushed forward to the
        # starting position. The four remaining tiles pushed forward shall be delivered to the
        # next position. The remaining stacks shall be pushed together and the two new center
        # stacks shall be pushed forward and delivered in the same manner as the first two
        # stacks. This procedure shall be repeated until all eight stacks of tiles have been
        # delivered." Fourth from the right = S5, fourth from the left = S4; then S6 and S3 are
        # the new center, then S7 and S2, then S8 and S1.
        pytest.param("jung_quat", [(5, 4), (6, 3), (7, 2), (8, 1)], id="v"),
        # (vi) "pushing forward the first stack of tiles on the dealer's right and the first
        # stack of tiles on the dealer's left. ... The dealer shall deliver the top two tiles
        # from each of the two centered stacks to the starting position. The four remaining
        # tiles from the two centered stacks shall be delivered to the next position. The dealer
        # shall then center and deliver the first stack remaining on the dealer's right and the
        # first stack remaining on the dealer's left in the same manner. This procedure shall be
        # repeated until all eight stacks of tiles have been delivered."
        pytest.param("chee_yee", [(8, 1), (7, 2), (6, 3), (5, 4)], id="vi"),
    ],
)
def test_two_stacks_at_a_time(style: str, pairs: list[tuple[int, int]]) -> None:
    """(iii) cup say from the right, (iv) from the left, (v) jung quat (take the heart),
    (vi) chee yee (chop the ears): each pair of stacks makes two hands."""
    assert hands(style) == two_stack_hands(*pairs)


def test_two_stack_hands_spells_out_the_positions() -> None:
    """The helper above, checked against (iii) written out tile by tile."""
    assert two_stack_hands((8, 7), (6, 5), (4, 3), (2, 1)) == [
        H("S8T1", "S8T2", "S7T1", "S7T2"),
        H("S8T3", "S8T4", "S7T3", "S7T4"),
        H("S6T1", "S6T2", "S5T1", "S5T2"),
        H("S6T3", "S6T4", "S5T3", "S5T4"),
        H("S4T1", "S4T2", "S3T1", "S3T2"),
        H("S4T3", "S4T4", "S3T3", "S3T4"),
        H("S2T1", "S2T2", "S1T1", "S1T2"),
        H("S2T3", "S2T4", "S1T3", "S1T4"),
    ]


RIGHT4 = [8, 7, 6, 5]  # "the first four stacks on the dealer's right"
LEFT4 = [1, 2, 3, 4]  # "the first four stacks on the dealer's left"


def test_vii_pin_say_from_the_right() -> None:
    """(vii) "removing the top tile of the first stack of tiles on the dealer's right and placing
    such tile diagonally across the top of the second, third and fourth stacks of tiles from the
    dealer's right. The dealer shall deliver the top tile from each of the first four stacks on
    the dealer's right to the starting position (the diagonal tile plus the three tiles the
    diagonal tile covers). The top tile from each of the first four stacks on the dealer's left
    shall be delivered to the next position. The top tile remaining on each of the first four
    stacks on the dealer's right shall be delivered to the third position and the top tile
    remaining on each of the first four stacks on the dealer's left shall be delivered to the
    fourth position. This procedure shall be repeated until four tiles have been delivered to
    all eight positions." """
    got = hands("pin_say_from_right")
    assert got[0] == H("S8T1", "S7T1", "S6T1", "S5T1")  # diagonal S8T1 + the three it covers
    assert got[1] == H("S1T1", "S2T1", "S3T1", "S4T1")
    assert got == [
        layer(RIGHT4, 1),
        layer(LEFT4, 1),
        layer(RIGHT4, 2),
        layer(LEFT4, 2),
        layer(RIGHT4, 3),
        layer(LEFT4, 3),
        layer(RIGHT4, 4),
        layer(LEFT4, 4),
    ]


def test_viii_pin_say_from_the_left() -> None:
    """(viii) "removing the top tile of the first stack of tiles on the dealer's left and placing
    such tile diagonally across the top of the second, third and fourth stacks of tiles from the
    dealer's left. The dealer shall deliver the top tile from each of the first four stacks on
    the dealer's left to the starting position ... The top tile from each of the first four
    stacks on the dealer's right shall be delivered to the next position. The top tile remaining
    on each of the first four stacks on the dealer's left shall be delivered to the third
    position and the top tile remaining on each of the first four stacks on the dealer's right
    shall be delivered to the fourth position. This procedure shall be repeated until four tiles
    have been delivered to all eight positions." """
    assert hands("pin_say_from_left") == [
        H("S1T1", "S2T1", "S3T1", "S4T1"),
        H("S8T1", "S7T1", "S6T1", "S5T1"),
        layer(LEFT4, 2),
        layer(RIGHT4, 2),
        layer(LEFT4, 3),
        layer(RIGHT4, 3),
        layer(LEFT4, 4),
        layer(RIGHT4, 4),
    ]


def test_ix_dragon_head_and_phoenix_tail_from_the_right() -> None:
    """(ix) "placing all four tiles in the first and second stacks from the dealer's right
    directly on top of the four tiles in the third and fourth stacks from the dealer's right and
    then pushing forward the top two tiles in each of the eight tile stacks that are created
    (forming the dragon head). The dealer shall deliver the four tiles pushed forward to the
    starting position. The top tile from each of the four stacks of four tiles to the dealer's
    left (the phoenix tail) shall be delivered to the next position. The dealer shall deliver the
    top two tiles from each of the two stacks on the dealer's right to the third position and the
    top tile from each of the four stacks on the dealer's left to the fourth position. This
    procedure shall be repeated until four tiles have been delivered to all eight positions."

    The eight-tile stacks are S8 over S6 and S7 over S5 (top first: S8T1..S8T4, S6T1..S6T4 and
    S7T1..S7T4, S5T1..S5T4). Which of S8/S7 lands on which of S6/S5 does not change any hand:
    each head turn takes two tiles from each tall stack."""
    assert hands("dragon_head_phoenix_tail_from_right") == [
        H("S8T1", "S8T2", "S7T1", "S7T2"),  # dragon head
        layer(LEFT4, 1),  # phoenix tail
        H("S8T3", "S8T4", "S7T3", "S7T4"),
        layer(LEFT4, 2),
        H("S6T1", "S6T2", "S5T1", "S5T2"),
        layer(LEFT4, 3),
        H("S6T3", "S6T4", "S5T3", "S5T4"),
        layer(LEFT4, 4),
    ]


def test_x_dragon_head_and_phoenix_tail_from_the_left() -> None:
    """(x) "placing all four tiles in the first and second stacks from the dealer's left directly
    on top of the four tiles in the third and fourth stacks from the dealer's left and then
    pushing forward the top two tiles in each of the eight tile stacks that are created (forming
    the dragon head). The dealer shall deliver the four tiles pushed forward to the starting
    position. The top tile from each of the four stacks of four tiles to the dealer's right (the
    phoenix tail) shall be delivered to the next position. The dealer shall deliver the top two
    tiles from each of the two stacks on the dealer's left to the third position and the top
    tile from each of the four stacks on the dealer's right to the fourth position. This
    procedure shall be repeated until four tiles have been delivered to all eight positions." """
    assert hands("dragon_head_phoenix_tail_from_left") == [
        H("S1T1", "S1T2", "S2T1", "S2T2"),
        layer(RIGHT4, 1),
        H("S1T3", "S1T4", "S2T3", "S2T4"),
        layer(RIGHT4, 2),
        H("S3T1", "S3T2", "S4T1", "S4T2"),
        layer(RIGHT4, 3),
        H("S3T3", "S3T4", "S4T3", "S4T4"),
        layer(RIGHT4, 4),
    ]


def test_tiles_are_opaque_objects() -> None:
    class Tile:  # no __eq__, no __str__ that matters
        pass

    layout = [[Tile() for _ in range(4)] for _ in range(8)]
    for style in DELIVERY_STYLES:
        dealt = deliver(layout, style)
        assert {id(t) for h in dealt for t in h} == {id(t) for s in layout for t in s}
    tuples = tuple(tuple(s) for s in LAYOUT)  # any sequences will do
    assert deliver(tuples, "jung_quat")[0] == ["S5T1", "S5T2", "S4T1", "S4T2"]


# ---------------------------------------------------------------------------------------------
# Bad layouts and styles
# ---------------------------------------------------------------------------------------------


def test_unknown_style_names_the_choices() -> None:
    with pytest.raises(DealingError, match=r"unknown style of delivery 'house_way'.*chee_yee"):
        deliver(LAYOUT, "house_way")
    with pytest.raises(ValueError):
        deliver(LAYOUT, 3)  # type: ignore[arg-type]


def test_wrong_number_of_stacks() -> None:
    with pytest.raises(DealingError, match="expected 8 stacks, got 7"):
        deliver(LAYOUT[:7], "chee_yee")


def test_stack_of_wrong_size_is_named() -> None:
    bad = [list(s) for s in LAYOUT]
    bad[2] = bad[2][:3]
    with pytest.raises(DealingError, match=r"stack 2 .* has 3 tiles, expected 4"):
        deliver(bad, "chee_yee")
    bad[2] = "S3T1S3T2"  # type: ignore[assignment]
    with pytest.raises(DealingError, match="stack 2"):
        deliver(bad, "chee_yee")


def test_errors_are_paigow_value_errors() -> None:
    assert issubclass(DealingError, PaigowError) and issubclass(DealingError, ValueError)


# ---------------------------------------------------------------------------------------------
# Starting position, (e)(3), (g)(10)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("count", "position"),
    [
        (1, 1),  # RNG 1: the dealer (or the bank) itself
        (3, 3),
        (8, 8),
        (9, 1),  # back round to the dealer/bank
        (10, 2),
        (16, 8),
        (17, 1),
        (18, 2),
    ],
)
def test_starting_position_counts_every_position(count: int, position: int) -> None:
    """(e)(3): "count counter-clockwise around the table, with the position of the dealer
    considered number one and continuing around the table with each betting position, regardless
    of whether there is a wager at the position, and the dead hand counted in order until the
    count matches the total of the three dice." (g)(10): the same with the bank as number one."""
    assert starting_position(count) == position


def test_rng_one_to_eight_lands_on_its_own_number() -> None:
    """(a)(4): "a number from one through eight, inclusive"."""
    assert [starting_position(n, source="rng") for n in range(1, 9)] == list(range(1, 9))


def test_dice_totals_wrap_modulo_positions() -> None:
    assert [starting_position(n, source="dice") for n in range(3, 19)] == [
        3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2,
    ]  # fmt: skip
    assert starting_position(11, positions=7) == 4


@pytest.mark.parametrize(
    ("count", "kwargs", "message"),
    [
        (0, {}, "count must be a dice total 3-18 or an RNG number 1-8, got 0"),
        (19, {}, "got 19"),
        (2, {"source": "dice"}, "three dice, 3-18, got 2"),
        (9, {"source": "rng"}, "RNG number 1-8, got 9"),
        (5, {"source": "coin"}, "source must be"),
        (5, {"positions": 0}, "positions must be at least 1"),
        (True, {}, "count must be an int"),
        ("7", {}, "count must be an int"),
        (7.0, {}, "count must be an int"),
    ],
)
def test_bad_count_is_a_clear_value_error(
    count: object, kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(DealingError, match=message):
        starting_position(count, **kwargs)  # type: ignore[arg-type]


def test_deal_order_goes_counter_clockwise_from_the_start() -> None:
    """(e)(4) / (g)(11): the first hand to the starting position "and, moving counter-clockwise
    around the table, deal all other positions including the dead hand and the dealer"."""
    assert deal_order(1) == [1, 2, 3, 4, 5, 6, 7, 8]
    assert deal_order(starting_position(12)) == [4, 5, 6, 7, 8, 1, 2, 3]
    with pytest.raises(DealingError, match="start must be a position 1-8, got 9"):
        deal_order(9)


@given(count=st.integers(1, 18), positions=st.integers(1, 12))
def test_starting_position_is_the_count_th_position(count: int, positions: int) -> None:
    """Walking ``count`` positions from position 1 (which counts as one) ends on the result."""
    p = 1
    for _ in range(count - 1):
        p = p % positions + 1
    assert starting_position(count, positions) == p


# ---------------------------------------------------------------------------------------------
# The bank's cut, (g)(7)
# ---------------------------------------------------------------------------------------------

STACK_NAMES = ["S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8"]


def test_cut_i_adjacent_stacks_to_the_left_end() -> None:
    """(g)(7)(i): "one or more adjacent stacks of four tiles to the right or left end of the
    original eight stacks of tiles"."""
    assert cut(STACK_NAMES, to_left=[5, 6]) == ["S6", "S7", "S1", "S2", "S3", "S4", "S5", "S8"]
    assert cut(STACK_NAMES, to_left=[7]) == ["S8", "S1", "S2", "S3", "S4", "S5", "S6", "S7"]


def test_cut_i_adjacent_stacks_to_the_right_end() -> None:
    assert cut(STACK_NAMES, to_right=[0, 1, 2]) == ["S4", "S5", "S6", "S7", "S8", "S1", "S2", "S3"]


def test_cut_ii_split_to_both_ends() -> None:
    """(g)(7)(ii): "two or more adjacent stacks of four tiles, of which at least one stack is
    moved to one end and the other stacks are moved to the opposite end"."""
    assert cut(STACK_NAMES, to_left=[3], to_right=[4, 5]) == [
        "S4", "S1", "S2", "S3", "S7", "S8", "S5", "S6",
    ]  # fmt: skip
    assert cut(STACK_NAMES, to_left=[4], to_right=[3]) == [
        "S5", "S1", "S2", "S3", "S6", "S7", "S8", "S4",
    ]  # fmt: skip


def test_cut_keeps_the_tiles_of_each_stack() -> None:
    cut_layout = cut(LAYOUT, to_left=[6, 7])
    assert cut_layout[0] == LAYOUT[6] and cut_layout[1] == LAYOUT[7]
    # house way from the right now starts with what was the third stack from the right
    assert deliver(cut_layout, "house_way_from_right")[0] == ["S6T1", "S6T2", "S6T3", "S6T4"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "must move at least one stack"),
        ({"to_left": [2, 4]}, r"must be adjacent .* got \[2, 4\]"),
        ({"to_left": [2], "to_right": [4]}, "must be adjacent"),
        ({"to_left": [3], "to_right": [3]}, "cannot go to both ends"),
        ({"to_left": [0, 1]}, "leaves the stacks where they were"),
        ({"to_right": [6, 7]}, "leaves the stacks where they were"),
        ({"to_left": list(range(8))}, "leaves the stacks where they were"),
        ({"to_left": [8]}, "index 8 is not a stack 0-7"),
        ({"to_left": [1, 1]}, "names a stack twice"),
    ],
)
def test_bad_cut(kwargs: dict[str, list[int]], message: str) -> None:
    with pytest.raises(DealingError, match=message):
        cut(STACK_NAMES, **kwargs)


def test_cut_needs_eight_stacks() -> None:
    with pytest.raises(DealingError, match="expected 8 stacks to cut, got 3"):
        cut(["a", "b", "c"], to_left=[2])


@given(
    st.integers(0, 7).flatmap(
        lambda lo: st.tuples(st.just(lo), st.integers(lo, 7), st.integers(lo, 8))
    )
)
def test_any_legal_cut_is_a_permutation(bounds: tuple[int, int, int]) -> None:
    lo, hi, split = bounds
    block = list(range(lo, hi + 1))
    left = [i for i in block if i < split]
    right = [i for i in block if i >= split]
    try:
        result = cut(STACK_NAMES, to_left=left, to_right=right)
    except DealingError as e:
        assert "where they were" in str(e)
        return
    assert sorted(result) == STACK_NAMES
    assert result[: len(left)] == [STACK_NAMES[i] for i in left]
    assert result[len(result) - len(right) :] == [STACK_NAMES[i] for i in right]


# ---------------------------------------------------------------------------------------------
# Review: an independent simulation of the dealer's hands, move by move, for every style
# ---------------------------------------------------------------------------------------------
#
# The table is simulated as the dealer handles it: a row of physical stacks (lists, top tile
# first) from the dealer's left to right; each step of (g)(11)(i)-(x) takes tiles off the tops
# of named stacks (pushing forward, placing diagonally, stacking on top) and hands them to the
# next position. Nothing is shared with dealing.py's plan tables.


def _simulate(style: str, layout: list[list[str]]) -> list[set[str]]:
    row = [list(s) for s in layout]  # row[0]: first stack on the dealer's left
    out: list[set[str]] = []

    def take(stack: list[str], n: int) -> list[str]:
        got = stack[:n]
        del stack[:n]
        return got

    def right(k: int) -> list[str]:  # the k-th stack from the dealer's right, k from 1
        return row[len(row) - k]

    def left(k: int) -> list[str]:
        return row[k - 1]

    side_of = {"from_right": (right, left), "from_left": (left, right)}
    if style.startswith("house_way"):
        first, _ = side_of[style[len("house_way_") :]]
        # "pushing forward the first stack ... The remaining stacks ... delivered from the
        # dealer's right to left" (or left to right)
        while row:
            s = first(1)
            out.append(set(take(s, 4)))
            row.remove(s)
    elif style.startswith("cup_say"):
        first, _ = side_of[style[len("cup_say_") :]]
        while row:
            a, b = first(1), first(2)  # "the first two stacks"
            out.append(set(take(a, 2) + take(b, 2)))  # "the top two tiles from each"
            out.append(set(take(a, 2) + take(b, 2)))  # "the four remaining tiles"
            row.remove(a)
            row.remove(b)
    elif style in ("jung_quat", "chee_yee"):
        while row:
            if style == "jung_quat":  # the two center stacks of what is left, pushed together
                a, b = row[len(row) // 2 - 1], row[len(row) // 2]
            else:  # "the first stack remaining on the dealer's right and ... left"
                a, b = right(1), left(1)
            out.append(set(take(a, 2) + take(b, 2)))
            out.append(set(take(a, 2) + take(b, 2)))
            row.remove(a)
            row.remove(b)
    elif style.startswith("pin_say"):
        first, other = side_of[style[len("pin_say_") :]]
        mine = [first(k) for k in range(1, 5)]
        theirs = [other(k) for k in range(1, 5)]
        while any(mine):
            diagonal = take(mine[0], 1)  # "removing the top tile of the first stack ..."
            covered = [t for s in mine[1:] for t in take(s, 1)]  # "... the three tiles it covers"
            out.append(set(diagonal + covered))
            out.append({t for s in theirs for t in take(s, 1)})
    else:  # dragon head and phoenix tail
        first, other = side_of[style[len("dragon_head_phoenix_tail_") :]]
        s1, s2, s3, s4 = (first(k) for k in range(1, 5))
        tall = [s1 + s3, s2 + s4]  # first and second placed "directly on top of" third and fourth
        tail = [other(k) for k in range(1, 5)]
        while any(tall):
            out.append({t for s in tall for t in take(s, 2)})  # "the top two tiles in each"
            out.append({t for s in tail for t in take(s, 1)})  # "the top tile from each"
    return out


@pytest.mark.parametrize("style", DELIVERY_STYLES)
def test_deliver_matches_a_move_by_move_simulation(style: str) -> None:
    assert [set(h) for h in deliver(LAYOUT, style)] == _simulate(style, LAYOUT)
