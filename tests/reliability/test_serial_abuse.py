"""1 MB of random bytes, truncated, over-long and bad-checksum frames, frames of a foreign
session, frames whose SID is not a session id and a revision 2 shoe's $HELO, interleaved with
valid frames (cards, and heartbeats naming the last card) on the shoe's
pseudo-terminal of the real controller process: it does not crash, accepts every valid frame
exactly once and in order, acknowledges nothing it refused, and journals every bad frame it
refused as counted summaries (the bench version, bench/serial_abuse.py, sends 10 MB)."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from serial_abuse import print_result, run_abuse  # noqa: E402


def test_a_megabyte_of_noise_on_the_shoe_port() -> None:
    # the journal on tmpfs where there is one: this test is about the decoder and the sequence
    # rules, not the disk (the bench runs on the real disk)
    base = "/dev/shm" if Path("/dev/shm").is_dir() else None
    work = Path(tempfile.mkdtemp(prefix="serial-abuse-", dir=base))
    try:
        res = run_abuse(1_000_000, seed=20261129, work=work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print_result(res, 20261129)
    assert res.alive, res.problems
    assert res.verify_ok
    assert res.accepted_ok, res.problems
    assert res.acks_ok, res.problems
    assert not res.problems
    assert res.valid_sent > 1000
    # every kind of bad frame was seen and refused
    assert {
        "garbage",
        "too_long",
        "interrupted",
        "checksum_mismatch",
        "foreign_sid",
        "bad_sid",
        "bad_revision",
    } <= set(res.refused)
    assert res.heartbeats_sent > 500  # none journaled, none acknowledged (res.acks_ok)
    assert sum(res.refused.values()) > res.noise_chunks
    # ... and journaled as counted summaries, not a row each
    assert res.refused_rows < sum(res.refused.values()) / 20
