"""SimShoe on its own: composition, cover card, stimulus, resend rules and the command line."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from collections import Counter

import pytest

from drivers.errors import DriverError
from drivers.shoe_protocol import Frame, FrameDecoder, encode
from drivers.sim.shoe import COVER, SimShoe, SimShoeError, build_shoe
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
    [{"decks": 0}, {"keep": 10}, {"start_seq": 10000}, {"cover_from_end": (0,)},
     {"model": "A,B"}],
)
def test_bad_configuration_is_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(DriverError):
        SimShoe(**kwargs)  # type: ignore[arg-type]


def test_stimulus_keeps_the_inventory_true() -> None:
    shoe = SimShoe(seed=2, decks=1, cover_from_end=(5,))
    shoe.deal_card("QH")
    with pytest.raises(SimShoeError):
        shoe.deal_card("QH")  # the only QH has left the shoe
    with pytest.raises(SimShoeError):
        shoe.deal_card("QX")
    assert shoe.deal_foreign() == "QH"  # an extra copy of the most-dealt face
    assert shoe.status().cards_left == 51
    with pytest.raises(SimShoeError):
        shoe.deal(52)


def test_full_buffer_is_an_error_not_a_silent_loss() -> None:
    shoe = SimShoe(seed=2, keep=64)
    shoe.deal(64)
    with pytest.raises(SimShoeError):
        shoe.deal()


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
        cards = shoe.deal(3)
        first = read_frames(fd, 4)
        assert [f.type for f in first] == ["HELO", "CARD", "CARD", "CARD"]
        os.write(fd, encode("NAK", 2))
        again = read_frames(fd, 2)
        assert [(f.seq, f.fields) for f in again] == [(2, (cards[1],)), (3, (cards[2],))]
        os.write(fd, encode("ACK", 3))
        assert shoe.wait_acked(WAIT_S)
        assert shoe.status().naks_received == 1
    finally:
        os.close(fd)
        assert shoe.stop(WAIT_S)


def test_command_line_deals_on_a_pty() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "drivers.sim.shoe", "--pty", "--seed", "3", "--decks", "6"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        path = proc.stdout.readline().strip()
        fd = open_raw(path)
        os.set_blocking(fd, False)
        proc.stdin.write("card QH\ndeal 2\nstatus\nfault bogus\n")
        proc.stdin.flush()
        frames = read_frames(fd, 4)
        assert [f.type for f in frames[:4]] == ["HELO", "CARD", "CARD", "CARD"]
        assert frames[1].fields == ("QH",)
        os.close(fd)
        out, _ = proc.communicate("quit\n", timeout=WAIT_S)
        assert "dealt QH" in out and "cards_left=309" in out and "error: unknown command" in out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(WAIT_S)
    assert proc.returncode == 0


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
        os.write(master, encode("ACK", 1))
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
