"""The collector's TPM-counter alarms (docs/feed.md "The TPM counter"): each value belongs to one
signed head and the values count up one by one; a value on two heads (``counter-reused``), one
that goes back (``counter-back``) and values skipped past the gap timeout (``counter-gap``) are
alarmed. Heads signed here with the table's key, the counter inside the signature."""

from __future__ import annotations

import json
import time
from pathlib import Path

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

from controller.feed.messages import head_payload
from controller.journal.heads import SignedHead, canonical_head
from tests.feed_journal import TableJournal
from tests.unit.feed.test_verifier import SITE, Rig


def _head(t: TableJournal, seq: int, counter: int | None, hash_: str | None = None) -> bytes:
    row = t.rows[seq - 1]
    head = SignedHead(t.table, seq, hash_ or row.hash, time.time_ns(), "", t.key_id, counter)
    sig = t.key.sign(canonical_head(head.head()), ec.ECDSA(hashes.SHA256())).hex()
    return head_payload(
        SignedHead(head.table, seq, head.hash, head.ts, sig, t.key_id, counter).as_dict()
    )


def _send(rig: Rig, t: TableJournal, payload: bytes) -> None:
    rig.raw(f"tc/{SITE}/{t.table}/heads", payload)


def _rig(tmp_path: Path, rows: int = 12) -> tuple[Rig, TableJournal]:
    t = TableJournal("table-07")
    rig = Rig(tmp_path, t, gap=60.0)
    for r in t.rounds(rows // 3):
        rig.row(t, r)
    return rig, t


def test_counters_one_by_one_are_stored_without_alarm(tmp_path: Path) -> None:
    rig, t = _rig(tmp_path)
    for seq, counter in ((3, 17), (6, 18), (9, 19), (12, 20)):
        _send(rig, t, _head(t, seq, counter))
    rig.clock.advance(120)  # past the gap timeout: nothing was skipped
    rig.tick()
    assert rig.kinds() == [] and rig.store.tables()[0].head_seq == 12


def test_a_counter_on_two_heads_is_alarmed(tmp_path: Path) -> None:
    rig, t = _rig(tmp_path)
    _send(rig, t, _head(t, 3, 5))
    _send(rig, t, _head(t, 6, 6))
    _send(rig, t, _head(t, 9, 6))  # a second journal signed with the same counter value
    assert rig.kinds() == ["counter-reused"]
    assert "signed heads 6 and 9 both carry TPM counter 6" in rig.printed[0]


def test_a_counter_that_goes_back_is_alarmed(tmp_path: Path) -> None:
    rig, t = _rig(tmp_path)
    _send(rig, t, _head(t, 3, 40))
    _send(rig, t, _head(t, 6, 41))
    _send(rig, t, _head(t, 9, 30))  # a later head, an older counter
    assert rig.kinds() == ["counter-back"]
    assert "carries TPM counter 30, below the 41 of signed head 6" in rig.printed[0]


def test_skipped_values_are_alarmed_once_the_gap_timeout_passes(tmp_path: Path) -> None:
    rig, t = _rig(tmp_path)
    _send(rig, t, _head(t, 3, 7))
    _send(rig, t, _head(t, 6, 11))  # 8, 9, 10: anchored by the table, never sent
    rig.clock.advance(59)
    rig.tick()
    assert rig.kinds() == []  # the backlog may still bring them
    rig.clock.advance(2)
    rig.tick()
    assert rig.kinds() == ["counter-gap"]
    assert "TPM counter 8-10 never arrived within 61 s" in rig.printed[0]
    rig.clock.advance(600)
    rig.tick()
    assert len(rig.store.alarms()) == 1  # said once


def test_a_forged_counter_is_a_bad_signature_not_a_counter_alarm(tmp_path: Path) -> None:
    rig, t = _rig(tmp_path)
    _send(rig, t, _head(t, 3, 7))
    obj = json.loads(_head(t, 6, 8))
    obj["counter"] = 7  # the value changed after signing
    _send(rig, t, json.dumps(obj).encode())
    assert rig.kinds() == ["bad-signature"]


def test_heads_without_a_counter_are_checked_as_before(tmp_path: Path) -> None:
    rig, t = _rig(tmp_path)
    _send(rig, t, _head(t, 3, None))
    _send(rig, t, _head(t, 6, 3))
    _send(rig, t, _head(t, 9, None))  # an archive segment's closing head has none
    _send(rig, t, _head(t, 12, 4))
    assert rig.kinds() == []


def test_a_malformed_counter_is_refused_and_alarmed(tmp_path: Path) -> None:
    rig, t = _rig(tmp_path)
    for bad in (-1, True, "5", 2**64, 1.5, None):
        obj = json.loads(_head(t, 3, 5))
        obj["counter"] = bad
        _send(rig, t, json.dumps(obj).encode())
    assert set(rig.kinds()) == {"malformed"}
    assert rig.store.tables()[0].head_seq == 0
