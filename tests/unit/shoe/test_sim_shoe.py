"""SimShoe on its own: composition, cover card, stimulus, resend rules and the command line."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from drivers.errors import DriverError
from drivers.shoe_protocol import Frame, FrameDecoder, encode, is_sid
from drivers.sim.shoe import COVER, FAULTS, SimShoe, SimShoeError, build_shoe, new_sid
from tests.unit.shoe.helpers import WAIT_S, wait_until


def test_build_shoe_has_every_card_n_times_and_the_cover_where_asked() -> None:
    cards = build_shoe(8, random.Random(1), (15,))
    assert len(cards) == 8 * 52 + 1
    assert cards[-16] == COVER and cards.count(COVER) == 1  # 15 cards follow the cover card
    counts = Counter(c for c in cards if c != COVER)
    assert len(counts) == 52 and set(counts.values()) == {8}


def test_same_seed_same_shoe_and_default_cover_14_to_16_from_the_end() -> None:
    a, b = SimShoe(seed=5), SimShoe(seed=5)
    assert a.status().covers_left == 1
    # deal without a port: frames are kept unacknowledged, so use a large buffer
    big_a, big_b = SimShoe(seed=5, keep=1000), SimShoe(seed=5, keep=1000)
    assert big_a.deal(390) == big_b.deal(390)
    while big_a.status().covers_left:
        big_a.deal()
    # 14-16 cards follow the cover card; the deal that passed it took the first of them
    assert 13 <= big_a.status().cards_left <= 15
    assert a.status().cards_left == b.status().cards_left == 416


@pytest.mark.parametrize(
    "kwargs",
    [{"decks": 0}, {"keep": 10}, {"start_seq": 10000}, {"cover_from_end": (0,)}, {"model": "A,B"}],
)
def test_bad_configuration_is_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(DriverError):
        SimShoe(**kwargs)  # type: ignore[arg-type]


def test_stimulus_keeps_the_inventory_true() -> None:
    shoe = SimShoe(seed=2, decks=1, cover_from_end=(5,))
    with pytest.raises(SimShoeError, match="every face still has a copy"):
        shoe.deal_foreign()  # no card can be foreign yet: each would pass for a real one
    shoe.deal_card("QH")
    with pytest.raises(SimShoeError):
        shoe.deal_card("QH")  # the only QH has left the shoe
    with pytest.raises(SimShoeError):
        shoe.deal_card("QX")
    with pytest.raises(SimShoeError):
        shoe.deal_foreign("KH")  # the KH is still in the shoe: not beyond its composition
    assert shoe.deal_foreign() == "QH"  # beyond the composition: its only copy is out
    assert shoe.status().cards_left == 51 and shoe.status().cards_dealt == 1
    with pytest.raises(SimShoeError):
        shoe.deal(52)


def test_a_foreign_card_is_one_the_tables_inventory_refuses() -> None:
    """`fault foreign` deals a card beyond the composition: the table's ShoeComposition
    (5324.20(a)(4)) refuses it, whatever the shoe dealt before."""
    from controller.games.baccarat.shoe import CardBeyondShoe, ShoeComposition

    for seed in range(5):
        shoe = SimShoe(seed=seed, decks=6, keep=1000)
        composition = ShoeComposition(6)
        for card in shoe.deal(200):
            composition.remove(card)
        face = next(c for c in shoe.peek(300) if c)  # deal out every copy of one face
        while face in shoe.peek(400):
            shoe.deal_card(face)
            composition.remove(face)
        foreign = shoe.deal_foreign()
        with pytest.raises(CardBeyondShoe):
            composition.remove(foreign)


def test_a_full_buffer_locks_the_gate_with_full_and_drops_nothing() -> None:
    """docs/design.md: the shoe holds at least 64 frames and, when full, locks its card gate and
    shows FULL until frames are acknowledged; it never drops one."""
    shoe = SimShoe(seed=2, keep=64, heartbeat_s=None)
    dealt = shoe.deal(63)  # no controller: nothing is acknowledged
    status = shoe.status()
    assert status.full and status.unacked == 64  # the last slot carries $FLT,FULL
    with pytest.raises(SimShoeError, match="FULL"):
        shoe.deal()
    with pytest.raises(SimShoeError, match="FULL"):
        shoe.fault("JAM")
    assert shoe.status().cards_dealt == 63 and len(dealt) == 63
    shoe2 = SimShoe(seed=2, keep=64, heartbeat_s=None)
    shoe2.deal(60)
    with pytest.raises(SimShoeError, match="frames free"):
        shoe2.deal(5)  # would not fit: refused as a whole, nothing dealt
    assert shoe2.status().cards_dealt == 60 and not shoe2.status().full


def open_raw(path: str) -> int:
    # the sim already made the slave raw; tty.setraw here would flush (TCSAFLUSH) its HELO
    return os.open(path, os.O_RDWR | os.O_NOCTTY)


def read_frames(fd: int, want: int) -> list[Frame]:
    decoder, frames = FrameDecoder(), []

    def more() -> bool:
        try:
            data = os.read(fd, 4096)
        except BlockingIOError:
            data = b""
        frames.extend(f for f in decoder.feed(data) if isinstance(f, Frame))
        return len(frames) >= want

    assert wait_until(more)
    return frames


def test_resends_from_the_nakked_seq_with_original_seqs() -> None:
    shoe = SimShoe(seed=4, heartbeat_s=None, resend_after_s=30.0)
    fd = open_raw(shoe.create_pty())
    os.set_blocking(fd, False)
    try:
        shoe.start()
        sid = shoe.sid
        cards = shoe.deal(3)
        first = read_frames(fd, 4)
        assert [f.type for f in first] == ["HELO", "CARD", "CARD", "CARD"]
        assert {f.sid for f in first} == {sid}
        os.write(fd, encode("NAK", 2, sid))
        again = read_frames(fd, 2)
        assert [(f.seq, f.fields) for f in again] == [(2, (cards[1],)), (3, (cards[2],))]
        os.write(fd, encode("ACK", 3, sid))
        assert shoe.wait_acked(WAIT_S)
        assert shoe.status().naks_received == 1
    finally:
        os.close(fd)
        assert shoe.stop(WAIT_S)


def test_an_ack_or_nak_of_another_sid_is_ignored() -> None:
    """docs/design.md: the shoe ignores an $ACK or $NAK naming another SID (here the SID of its
    previous power-up, as a controller that missed the power cycle would send), and such a
    frame does not end its silence: it still resends after 500 ms."""
    shoe = SimShoe(seed=4, heartbeat_s=None, resend_after_s=0.3)
    fd = open_raw(shoe.create_pty())
    os.set_blocking(fd, False)
    try:
        shoe.start()
        old = shoe.sid
        read_frames(fd, 1)
        new = shoe.power_cycle()
        assert new != old and is_sid(new)
        card = shoe.deal(1)[0]
        frames = read_frames(fd, 2)
        assert [(f.type, f.seq, f.sid) for f in frames] == [("HELO", 0, new), ("CARD", 1, new)]
        os.write(fd, encode("ACK", 1, old))  # cumulative ACK of the old session: ignored
        os.write(fd, encode("NAK", 0, old))  # NAK of the old session: no resend
        assert wait_until(lambda: shoe.status().foreign_received == 2)
        assert shoe.status().unacked == 2 and shoe.status().naks_received == 0
        resent = read_frames(fd, 2)  # the silence resend, oldest first: the HELO
        assert [(f.type, f.seq, f.sid) for f in resent[:2]] == [("HELO", 0, new), ("CARD", 1, new)]
        assert resent[1].fields == (card,)
        os.write(fd, encode("ACK", 1, new))
        assert shoe.wait_acked(WAIT_S)
    finally:
        os.close(fd)
        assert shoe.stop(WAIT_S)


def test_a_new_sid_at_every_power_up() -> None:
    shoe = SimShoe(seed=1, heartbeat_s=None)
    sids = {shoe.sid}
    for _ in range(20):
        sids.add(shoe.power_cycle())
    assert len(sids) == 21 and all(is_sid(s) for s in sids)
    # two shoes built with one seed (one shuffle) still have different sessions
    assert SimShoe(seed=1).sid != SimShoe(seed=1).sid
    # never 00000000, never the previous one, whatever the random source gives
    draws = iter(
        [
            b"\0\0\0\0",
            bytes.fromhex("1A2B3C4D"),
            bytes.fromhex("1A2B3C4D"),
            bytes.fromhex("0000002A"),
        ]
    )
    assert new_sid(None, lambda n: next(draws)) == "1A2B3C4D"
    assert new_sid("1A2B3C4D", lambda n: next(draws)) == "0000002A"


def test_a_cable_pull_keeps_the_frames_held_a_power_cycle_loses_them() -> None:
    shoe = SimShoe(seed=3, heartbeat_s=None)
    shoe.create_pty()
    try:
        shoe.start()
        sid = shoe.sid
        shoe.deal(3)
        shoe.disconnect()
        shoe.deal(2)
        assert shoe.status().unacked == 6 and shoe.sid == sid  # HELO and five cards
        shoe.reconnect()
        assert shoe.status().unacked == 6 and shoe.sid == sid
        shoe.power_cycle()
        status = shoe.status()
        assert status.unacked == 1 and status.sid != sid  # only the new HELO
        assert status.cards_dealt == 5 and status.cards_left == 416 - 5  # the cards stay out
    finally:
        assert shoe.stop(WAIT_S)


def test_the_state_file_keeps_the_powered_shoe_across_a_restart_of_its_process(
    tmp_path: Path,
) -> None:
    """A controller process that restarts builds its simulated shoe again from the state file:
    the same session, the same frames held, the same cards still to come, and no new $HELO
    (the shoe never lost power). After a reboot of the machine it powers up again."""
    state = tmp_path / "sim-shoe.json"
    first = SimShoe(seed=9, heartbeat_s=None, state_path=state)
    first.create_pty()
    first.start()
    dealt = first.deal(4)
    sid, upcoming = first.sid, first.peek(10)
    assert first.stop(WAIT_S)
    again = SimShoe(seed=123, heartbeat_s=None, state_path=state)  # the seed no longer matters
    assert again.sid == sid and again.peek(10) == upcoming
    assert again.status().unacked == 5 and again.status().cards_dealt == 4
    fd = open_raw(again.create_pty())
    os.set_blocking(fd, False)
    try:
        again.start()
        os.write(fd, encode("NAK", 3, sid))  # the restarted controller resumes
        frames = read_frames(fd, 2)
        assert [(f.type, f.seq, f.sid, f.fields) for f in frames] == [
            ("CARD", 3, sid, (dealt[2],)),
            ("CARD", 4, sid, (dealt[3],)),
        ]
        os.write(fd, encode("ACK", 4, sid))
        assert again.wait_acked(WAIT_S)
    finally:
        os.close(fd)
        assert again.stop(WAIT_S)
    assert SimShoe(state_path=state).status().unacked == 0  # the ACK was kept too
    # a reboot: another boot id in the file means the shoe lost power with the machine
    text = state.read_text().replace('"boot_id":"', '"boot_id":"x')
    state.write_text(text)
    rebooted = SimShoe(heartbeat_s=None, state_path=state)
    rebooted.create_pty()
    try:
        rebooted.start()
        assert rebooted.sid != sid and rebooted.status().unacked == 1  # its new HELO
        assert rebooted.status().session_seq == 0 and rebooted.peek(6) == upcoming[:6]
    finally:
        assert rebooted.stop(WAIT_S)
    state.write_text("{not json")
    with pytest.raises(SimShoeError):
        SimShoe(state_path=state)


def test_command_line_deals_on_a_pty() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "drivers.sim.shoe", "--pty", "--seed", "3", "--decks", "6"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        path = proc.stdout.readline().strip()
        # the banner is read here, not by communicate(): communicate() reads the pipe itself and
        # never sees a line that readline() had already buffered with the path
        banner = proc.stdout.readline()
        fd = open_raw(path)
        os.set_blocking(fd, False)
        proc.stdin.write("card QH\ndeal 2\nstatus\nfault bogus\nfault dup\nfault jam\n")
        proc.stdin.flush()
        frames = read_frames(fd, 5)
        assert [f.type for f in frames[:5]] == ["HELO", "CARD", "CARD", "CARD", "FLT"]
        assert frames[1].fields == ("QH",) and frames[4].fields == ("JAM",)
        assert len({f.sid for f in frames}) == 1
        os.close(fd)
        out, _ = proc.communicate("quit\n", timeout=WAIT_S)
        assert "dealt QH" in out and "cards_left=309" in out
        assert "error: unknown shoe fault 'bogus'" in out
        assert "error: unknown shoe fault 'dup'" in out  # one vocabulary: `duplicate`
        assert (
            "commands: deal [N] | peek [N] | card RS | load | fault " + "|".join(FAULTS) in banner
        )
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(WAIT_S)
    assert proc.returncode == 0


def test_every_fault_of_the_vocabulary_can_be_injected() -> None:
    shoe = SimShoe(seed=5, decks=6, keep=1000, heartbeat_s=None)
    for face in [c for c in shoe.peek(312) if c == "QH"]:
        shoe.deal_card(face)  # so that `foreign` has a face beyond the composition
    for kind in FAULTS:
        assert shoe.inject(kind).startswith(f"fault {kind}: ")
    with pytest.raises(SimShoeError, match="faults are checksum, drop, duplicate"):
        shoe.inject("powercycle")


def test_speaks_on_a_named_port_through_pyserial() -> None:
    master, slave = os.openpty()  # the test holds the far end of the "cable"
    os.set_blocking(master, False)
    shoe = SimShoe(os.ttyname(slave), seed=6, heartbeat_s=None, resend_after_s=30.0)
    try:
        shoe.start()
        card = shoe.deal()[0]
        frames = read_frames(master, 2)
        assert [(f.type, f.seq) for f in frames] == [("HELO", 0), ("CARD", 1)]
        assert frames[1].fields == (card,)
        os.write(master, encode("ACK", 1, shoe.sid))
        assert shoe.wait_acked(WAIT_S)
        assert shoe.status().acks_received == 1
    finally:
        assert shoe.stop(WAIT_S)
        os.close(master)
        os.close(slave)


def test_disconnect_removes_the_link_path_and_reconnect_makes_it_again() -> None:
    """An unplugged shoe's path leads nowhere (a closed pty's number may go to another process);
    the replug makes the same path again, to a fresh, working pty."""
    shoe = SimShoe(seed=3, heartbeat_s=None)
    path = shoe.create_pty()
    try:
        shoe.start()
        assert os.path.islink(path)
        shoe.disconnect()
        assert not os.path.lexists(path)
        assert not shoe.status().connected
        shoe.reconnect()
        assert os.path.islink(path) and os.path.exists(path)
        fd = open_raw(path)
        try:
            os.set_blocking(fd, False)
            dealt = shoe.deal(1)[0]
            frames = read_frames(fd, 1)
            assert [f.fields for f in frames if f.type == "CARD"] == [(dealt,)]
        finally:
            os.close(fd)
        # a timed unplug: gone meanwhile, back by itself
        shoe.disconnect(0.2)
        assert not os.path.lexists(path)
        assert wait_until(lambda: os.path.exists(path) and shoe.status().connected)
    finally:
        assert shoe.stop(WAIT_S)
    assert not os.path.lexists(path)


def test_load_puts_a_new_shuffled_shoe_in_the_same_session() -> None:
    shoe = SimShoe(decks=6, seed=4, heartbeat_s=None, keep=1000)
    sid = shoe.sid
    shoe.deal(300)
    held = shoe.status().unacked
    assert shoe.load(seed=9) == 312
    status = shoe.status()
    assert status.cards_left == 312 and status.cards_dealt == 0 and status.covers_left == 1
    assert shoe.sid == sid and status.unacked == held  # the frames held are still held
    other = SimShoe(decks=6, seed=77)
    other.load(seed=9)
    assert shoe.peek(312) == other.peek(312)  # the new shuffle is the seed's


def test_peek_shows_the_next_cards_without_dealing_them() -> None:
    shoe = SimShoe(decks=1, seed=4, cover_from_end=(3,))
    ahead = shoe.peek(52)
    assert len(ahead) == 52 and shoe.status().cards_dealt == 0  # the cover card is skipped
    assert shoe.peek(5) == ahead[:5]
    assert shoe.deal(50) == ahead[:50]
    assert shoe.peek(5) == ahead[50:]  # fewer left than asked: what is left
    with pytest.raises(SimShoeError):
        shoe.peek(-1)


@pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")
def test_on_a_named_port_a_disconnect_under_a_read_leaves_the_thread_running() -> None:
    """The emulator on a real port (``--port``): disconnect() closes the port while the shoe's
    thread is reading it; the thread lives on, reconnects and still deals (found by the HIL
    path in CI: the thread died on pySerial's closed-port TypeError)."""
    master, slave = os.openpty()
    os.set_blocking(master, False)
    shoe = SimShoe(os.ttyname(slave), seed=6, heartbeat_s=None, resend_after_s=30.0)
    try:
        shoe.start()
        read_frames(master, 1)  # the HELO
        for _ in range(20):  # the thread reads for 10 ms at a time: closes land inside a read
            time.sleep(0.004)
            shoe.disconnect()
            time.sleep(0.004)
            shoe.reconnect()
        time.sleep(0.05)
        assert shoe._thread is not None and shoe._thread.is_alive()
        card = shoe.deal()[0]
        assert any(f.fields == (card,) for f in read_frames(master, 1))
    finally:
        assert shoe.stop(WAIT_S)
        os.close(master)
        os.close(slave)
