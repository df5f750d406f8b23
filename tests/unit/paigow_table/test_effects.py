"""Each transition names its effect in the definition; the machine's EFFECTS table holds them: no
name without its effect, no effect no transition names, and none that does nothing."""

from __future__ import annotations

import pytest

from controller.tables.paigow import machine
from controller.tables.paigow.definition import TRANSITIONS
from controller.tables.paigow.machine import EFFECTS, PaigowRound, build_machine

from .test_journal_golden import play

NAMED = {t.effect for t in TRANSITIONS}


def test_every_named_effect_exists_and_every_effect_is_named() -> None:
    assert sorted(NAMED - set(EFFECTS)) == []
    assert sorted(set(EFFECTS) - NAMED) == []


def test_each_effect_is_the_models_method_of_its_name() -> None:
    for name, effect in EFFECTS.items():
        assert effect is getattr(PaigowRound, f"effect_{name}"), name


@pytest.mark.parametrize("dropped", sorted(NAMED))
def test_a_dropped_effect_stops_the_machine_being_built(
    dropped: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A transition whose effect is missing is refused at start-up, never in a round."""
    monkeypatch.setattr(machine, "EFFECTS", {k: v for k, v in EFFECTS.items() if k != dropped})
    model = PaigowRound(lambda *row: None, lambda: pytest.fail("no settings read"), lambda: False)
    with pytest.raises(ValueError, match=dropped):
        build_machine(model)


def test_every_effect_but_state_only_shows_in_its_rows() -> None:
    """Played through every transition (test_journal_golden), each effect other than
    ``state_only`` changes the record or the rotation, closes the round or writes its own kind
    of row at least once, and ``state_only`` never: an effect emptied or swapped for
    ``state_only`` fails here."""
    effect_of = {(t.trigger, t.source, t.dest): t.effect for t in TRANSITIONS}
    shown: dict[str, bool] = {}
    for entry in play():
        assert isinstance(entry, dict)
        for kind, _round, data in entry["rows"]:
            effect = effect_of.get((data.get("trigger"), data.get("from"), data.get("state")))
            if effect is None:  # not a transition's row (a refusal, a settlement, power-up)
                continue
            shows = kind != "paigow.state" or "record" in data or "rotation" in data
            shown[effect] = shown.get(effect, False) or shows
    assert shown == {name: name != "state_only" for name in NAMED}
