"""The TPM counter in signed heads (docs/journal.md "The TPM counter"): the signature covers it,
heads without one verify as before, every anchored head takes the next value, and the start
compares the journal's newest head with the counter (here the simulated twin; the real TPM is
tests/integration/test_tpm_rollback.py)."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

import pytest

from controller.app import Application
from controller.config.profile import load_profile
from controller.journal.anchor import read_anchor
from controller.journal.heads import SignedHead, canonical_head, load_public_key, verify_head
from controller.journal.signer import FileSigner
from drivers.buttons import ButtonPressed
from drivers.sim.counter import SimCounter

REPO = Path(__file__).resolve().parents[3]
PROFILE = REPO / "hw_profiles" / "sim-paigow.toml"


def _head(counter: int | None) -> dict[str, object]:
    head: dict[str, object] = {"table": "t1", "seq": 7, "hash": "ab" * 32, "ts": 1}
    if counter is not None:
        head["counter"] = counter
    return head


def test_the_signature_covers_the_counter_and_heads_without_one_still_verify(
    tmp_path: Path,
) -> None:
    signer = FileSigner.create(tmp_path / "k.pem")
    key = load_public_key(signer.public_key_pem())
    with_counter = signer.sign(canonical_head(_head(5)))
    assert verify_head(_head(5), with_counter, key)
    assert not verify_head(_head(6), with_counter, key)  # another value
    assert not verify_head(_head(None), with_counter, key)  # the value stripped
    without = signer.sign(canonical_head(_head(None)))
    assert verify_head(_head(None), without, key)  # a head from before the TPM
    assert not verify_head(_head(0), without, key)  # a value added afterwards


def test_an_anchor_line_carries_the_counter_and_refuses_a_bad_one() -> None:
    head = SignedHead("t1", 7, "ab" * 32, 1, "30", "0" * 16, 12)
    assert SignedHead.from_line(head.line()) == head
    assert '"counter":12' in head.line()
    assert "counter" not in dataclasses.replace(head, counter=None).line()
    for bad in (-1, True, "12", 1.5):
        with pytest.raises(ValueError, match="counter"):
            SignedHead.from_mapping({**head.as_dict(), "counter": bad})


def _app(state: Path, counter: SimCounter, monkeypatch: pytest.MonkeyPatch) -> Application:
    import drivers.counter

    monkeypatch.setattr(drivers.counter, "open_counter", lambda spec, index: counter)
    profile = load_profile(PROFILE)
    profile = dataclasses.replace(
        profile, journal=dataclasses.replace(profile.journal, counter="swtpm:host=127.0.0.1,port=1")
    )
    return Application(profile, state, console_port="none")


def _play_to_the_draw(app: Application) -> None:
    app.start()
    for name in ("shuffled", "no_more_bets", "draw"):
        app.dispatch(ButtonPressed(name, 0))
    assert app.trust.notary.wait_idle(10)


def _played(state: Path, monkeypatch: pytest.MonkeyPatch) -> SimCounter:
    """A table on ``state`` played to the draw with a fresh counter and closed: its counter."""
    counter = SimCounter()
    app = _app(state, counter, monkeypatch)
    try:
        _play_to_the_draw(app)
    finally:
        app.close()
    return counter


def test_every_anchored_head_takes_the_next_value_off_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counter = SimCounter(40)
    calls: list[str] = []
    real = counter.increment

    def increment() -> int:
        calls.append(threading.current_thread().name)
        return real()

    monkeypatch.setattr(counter, "increment", increment)
    app = _app(tmp_path, counter, monkeypatch)
    try:
        _play_to_the_draw(app)
        app.trust.store_heads()
        anchor = read_anchor(tmp_path / "journal.anchor")
        assert anchor is not None
        values = [h.counter for h in anchor.heads]
        assert values == list(range(41, 41 + len(values))) and len(values) >= 2
        assert counter.read() == values[-1]
        assert set(calls) == {"journal-notary"}  # never the loop's thread
        stored = app.journal.newest_heads(50)
        # the draw's head (a decision) is stored too, so the feed sends every value
        assert [h.counter for h in stored] == values
    finally:
        app.close()


def test_a_power_cut_between_the_anchor_and_the_increment_is_brought_level(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counter = _played(tmp_path, monkeypatch)
    anchored = counter.read()
    lost_increment = SimCounter(anchored - 1)  # the anchor was synced, the increment lost
    app = _app(tmp_path, lost_increment, monkeypatch)
    try:
        app.start()
        assert not [f for f in app.app_faults if "journal" in f], app.app_faults
        # brought level to the anchored value at start; the heads signed since (the start
        # journals the release it runs) count on from there, on the notary's thread
        assert app.trust.counter_at_start == anchored
        assert lost_increment.read() >= anchored
    finally:
        app.close()


@pytest.mark.parametrize(
    ("delta", "said"),
    [
        (+3, "behind the TPM counter: its newest signed head carries"),
        (-2, "the TPM counter is behind the journal"),
    ],
)
def test_a_journal_and_a_counter_that_disagree_are_a_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, delta: int, said: str
) -> None:
    counter = _played(tmp_path, monkeypatch)
    app = _app(tmp_path, SimCounter(counter.read() + delta), monkeypatch)
    try:
        app.start()
        assert [f for f in app.app_faults if said in f], app.app_faults
        app.dispatch(ButtonPressed("dealt", 0))
        assert app.table.model.state == "dealing"  # play stops under the finding
    finally:
        app.close()


def _signed(
    signer: FileSigner, table: str, seq: int, hash_: str, counter: int | None
) -> SignedHead:
    head = SignedHead(table, seq, hash_, 1, "", signer.key_id, counter)
    return dataclasses.replace(head, sig=signer.sign(canonical_head(head.head())))


@pytest.mark.parametrize(
    ("counters", "bad"),
    [
        ((5, 6, 7), None),
        ((5, None, 6), None),
        ((5, 5, 6), 2),
        ((5, 7, 6), 3),
    ],
)
def test_journal_verify_refuses_counters_that_do_not_count_up(
    tmp_path: Path, counters: tuple[int | None, ...], bad: int | None
) -> None:
    from controller.journal.store import Journal
    from controller.journal.verify import verify_journal

    signer = FileSigner.create(tmp_path / "k.pem")
    j = Journal(tmp_path / "j.sqlite")
    try:
        j.set_meta("table", "t1")
        for n in range(3):
            j.append("x.row", {"n": n})
        rows = [r for r in (j.row(s) for s in (1, 2, 3)) if r is not None]
        j.add_heads(
            [_signed(signer, "t1", r.seq, r.hash, c) for r, c in zip(rows, counters, strict=True)]
        )
        result = verify_journal(j, signer.public_key_pem(), None, anchor_required=False)
    finally:
        j.close()
    problems = [p for p in result.problems if "TPM counter" in p]
    if bad is None:
        assert problems == [], result.problems
    else:
        assert problems and problems[0].startswith(
            f"signed head at row {rows[bad - 1].seq} carries TPM counter"
        ), result.problems
