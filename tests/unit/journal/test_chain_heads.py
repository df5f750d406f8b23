"""The revision-2 chain and signed heads (docs/journal.md "Format"), checked against bytes and
digests written out by hand from the format's text."""

from __future__ import annotations

import hashlib
import json

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from hypothesis import given
from hypothesis import strategies as st

from controller.journal.chain import (
    GENESIS,
    ChainError,
    canonical_row,
    row_hash,
    row_hash_and_data,
    verify_rows,
)
from controller.journal.heads import canonical_head, key_id, load_public_key, verify_head

ROW = {
    "seq": 1,
    "ts": 1_700_000_000_000_000_000,
    "boot": "b1",
    "mono": 5,
    "kind": "paigow.drawn",
    "round": 1,
    "data": {"number": 6, "raw": "05"},
}
#: The canonical bytes of ROW as the format writes them: sorted keys, no spaces.
ROW_BYTES = (
    b'{"boot":"b1","data":{"number":6,"raw":"05"},"kind":"paigow.drawn","mono":5,'
    b'"round":1,"seq":1,"ts":1700000000000000000}'
)


def test_canonical_row_is_the_sorted_compact_json_of_the_seven_fields() -> None:
    assert canonical_row({**ROW, "hash": "ignored", "prev": "ignored"}) == ROW_BYTES


def test_non_ascii_is_utf8_not_escaped() -> None:
    row = {**ROW, "data": {"who": "Zoë"}}
    assert '"who":"Zoë"'.encode() in canonical_row(row)


def test_row_hash_is_sha256_of_prev_bytes_then_row_bytes() -> None:
    assert row_hash(GENESIS, ROW) == hashlib.sha256(bytes(32) + ROW_BYTES).hexdigest()
    prev = "ab" * 32
    assert row_hash(prev, ROW) == hashlib.sha256(b"\xab" * 32 + ROW_BYTES).hexdigest()


@pytest.mark.parametrize("prev", ["", "00" * 31, "zz" * 32])
def test_a_bad_prev_is_refused(prev: str) -> None:
    with pytest.raises(ChainError):
        row_hash(prev, ROW)


def test_a_row_json_cannot_carry_is_refused() -> None:
    with pytest.raises(ChainError):
        row_hash(GENESIS, {**ROW, "data": {"x": float("nan")}})
    with pytest.raises(ChainError, match="lacks boot"):
        canonical_row({k: v for k, v in ROW.items() if k != "boot"})


def _chain(n: int) -> list[dict[str, object]]:
    rows, prev = [], GENESIS
    for seq in range(1, n + 1):
        row: dict[str, object] = {**ROW, "seq": seq, "data": {"n": seq}}
        digest = hashlib.sha256(bytes.fromhex(prev) + canonical_row(row)).hexdigest()
        rows.append({**row, "prev": prev, "hash": digest})
        prev = digest
    return rows


def test_verify_rows_walks_a_good_chain() -> None:
    rows = _chain(5)
    check = verify_rows(rows)
    assert check.ok and check.rows == 5 and check.head_seq == 5
    assert check.head_hash == rows[-1]["hash"]
    tail = verify_rows(rows[2:], prev=str(rows[1]["hash"]), after_seq=2)
    assert tail.ok and tail.rows == 3


def test_verify_rows_names_the_first_changed_missing_or_reordered_row() -> None:
    rows = _chain(5)
    edited = [dict(r) for r in rows]
    edited[2]["data"] = {"n": 99}
    assert verify_rows(edited).broken_seq == 3
    assert "changed" in verify_rows(edited).problem
    assert verify_rows(rows[:2] + rows[3:]).broken_seq == 4  # row 3 deleted
    assert verify_rows([rows[0], rows[2], rows[1]]).broken_seq == 3  # reordered
    rehashed = [{k: v for k, v in r.items() if k not in ("hash", "prev")} for r in rows]
    rehashed[1]["data"] = {"n": 7}  # no stored hash to compare: the head differs instead
    assert verify_rows(rehashed).head_hash != rows[-1]["hash"]


def test_signed_head_verifies_with_the_public_key_alone() -> None:
    private = ec.generate_private_key(ec.SECP256R1())
    pem = private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    key = load_public_key(pem)
    head = {"table": "T1", "seq": 42, "hash": "cd" * 32, "ts": 7}
    assert canonical_head({**head, "sig": "x"}) == (
        b'{"hash":"' + b"cd" * 32 + b'","seq":42,"table":"T1","ts":7}'
    )
    sig = private.sign(canonical_head(head), ec.ECDSA(hashes.SHA256())).hex()
    assert verify_head(head, sig, key)
    assert not verify_head({**head, "seq": 43}, sig, key)
    assert not verify_head(head, sig[:-2] + "00", key)
    assert not verify_head(head, "not hex", key)
    other = ec.generate_private_key(ec.SECP256R1()).public_key()
    assert not verify_head(head, sig, other)
    der = key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    assert key_id(key) == hashlib.sha256(der).hexdigest()[:16]


def test_a_key_that_is_not_p256_is_refused() -> None:
    p384 = ec.generate_private_key(ec.SECP384R1()).public_key()
    pem = p384.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    with pytest.raises(ValueError, match="P-256"):
        load_public_key(pem)


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@given(
    st.fixed_dictionaries(
        {k: _json for k in ("seq", "ts", "boot", "mono", "kind", "round")},
        optional={"hash": st.text(), "extra": _json},
    ),
    st.dictionaries(st.text(), _json, max_size=4),
)
def test_the_row_joined_from_its_fields_is_the_canonical_json_of_the_row(
    fields: dict[str, object], data: dict[str, object]
) -> None:
    """canonical_row joins each field's text (one encoding of ``data`` serves the hash and the
    collector's stored text): byte for byte json.dumps of the seven fields, sorted and compact,
    whatever the values."""
    row = {**fields, "data": data}
    seven = {k: row[k] for k in ("seq", "ts", "boot", "mono", "kind", "round", "data")}
    expected = json.dumps(seven, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert canonical_row(row) == expected.encode()
    digest, text = row_hash_and_data(GENESIS, row)
    assert digest == hashlib.sha256(bytes(32) + expected.encode()).hexdigest()
    assert text == json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@given(
    st.fixed_dictionaries(
        {
            "seq": st.integers(),
            "ts": st.integers(),
            "boot": st.text(),
            "mono": st.integers(),
            "kind": st.text(),
            "round": st.none() | st.integers(),
        }
    ),
    st.dictionaries(st.text(), _json, max_size=4),
)
def test_a_journal_rows_canonical_bytes_are_json_dumps_of_its_fields(
    fields: dict[str, object], data: dict[str, object]
) -> None:
    """A row whose fields have the journal's types (every row of a journal and of the feed)
    is joined at once: still byte for byte json.dumps of the seven fields."""
    row = {**fields, "data": data}
    expected = json.dumps(row, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert canonical_row(row) == expected.encode()
    assert row_hash_and_data(GENESIS, row)[1] == json.dumps(
        data, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )


def test_a_row_whose_integer_cannot_be_written_is_a_chain_error() -> None:
    """An integer Python will not write as text (beyond its digit limit) is a ChainError, as
    any value JSON cannot carry: a walk reports the row instead of failing."""
    row = {**ROW, "mono": 10**5000}
    with pytest.raises(ChainError):
        canonical_row(row)
    assert not verify_rows([row]).ok
