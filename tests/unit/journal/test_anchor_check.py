"""The anchor check (controller/journal/verify.py ``check_anchor``): EVERY line of the anchor,
not only the newest, is compared with the row the journal stores at its seq (docs/journal.md
"Anchor"). An older line whose row has another hash is a fork (rewritten, or lost and written
again); a line past the journal's end proves rows lost."""

from __future__ import annotations

from pathlib import Path

from controller.journal.anchor import Anchor, read_anchor
from controller.journal.heads import SignedHead, canonical_head
from controller.journal.signer import FileSigner
from controller.journal.store import Journal
from controller.journal.verify import VerifyResult, check_anchor, startup_check, verify_journal


def _signed(signer: FileSigner, seq: int, hash_hex: str) -> SignedHead:
    head = {"table": "t", "seq": seq, "hash": hash_hex, "ts": seq}
    return SignedHead(**head, sig=signer.sign(canonical_head(head)), key_id=signer.key_id)


def _journal(tmp_path: Path, rows: int) -> tuple[Journal, FileSigner]:
    signer = FileSigner.create(tmp_path / "k.pem")
    j = Journal(tmp_path / "j.sqlite")
    j.set_meta("key_id", signer.key_id)
    for i in range(rows):
        j.append("test.row", {"i": i})
    return j, signer


def _anchor(tmp_path: Path, heads: list[SignedHead]) -> Path:
    path = tmp_path / "anchor"
    anchor = Anchor(path)
    for h in heads:
        anchor.append(h)
    return path


def _check(j: Journal, signer: FileSigner, path: Path, every_line: bool) -> VerifyResult:
    result = VerifyResult()
    check_anchor(
        j, read_anchor(path), signer.public_key_pem(), result, required=True, every_line=every_line
    )
    return result


def test_every_anchor_line_matching_its_row_passes(tmp_path: Path) -> None:
    j, signer = _journal(tmp_path, 20)
    path = _anchor(
        tmp_path,
        [
            _signed(signer, s, j.row(s).hash)  # type: ignore[union-attr]
            for s in (5, 10, 15, 20)
        ],
    )
    for every in (True, False):
        result = _check(j, signer, path, every)
        assert result.ok, result.problems
        assert result.anchor_seq == 20 and result.rows_lost == 0
    j.close()


def test_an_older_line_that_no_longer_matches_its_row_is_a_finding(tmp_path: Path) -> None:
    """The newest line matches (a faulted run signed the damaged journal's head), an older one
    names a hash row 10 no longer has: the rows it vouched for are gone as signed."""
    j, signer = _journal(tmp_path, 20)
    heads = [
        _signed(signer, 5, j.row(5).hash),  # type: ignore[union-attr]
        _signed(signer, 10, "ab" * 32),  # what row 10 was when it was signed
        _signed(signer, 20, j.row(20).hash),
    ]  # type: ignore[union-attr]
    path = _anchor(tmp_path, heads)
    for every in (True, False):  # `journal verify` and start-up alike
        result = _check(j, signer, path, every)
        assert not result.ok
        assert result.first_bad_seq == 10
        assert "row 10 differs from the anchor's signed head" in (result.problem or "")
        assert result.rows_lost == 10 - 5  # since the newest line below it that matched
    pem = signer.public_key_pem()
    assert not startup_check(j, pem, read_anchor(path)).ok
    assert not verify_journal(j, pem, read_anchor(path), anchor_required=False).ok
    j.close()


def test_a_line_past_the_journals_end_is_rows_lost(tmp_path: Path) -> None:
    j, signer = _journal(tmp_path, 20)
    path = _anchor(
        tmp_path,
        [
            _signed(signer, 8, j.row(8).hash),  # type: ignore[union-attr]
            _signed(signer, 26, "cd" * 32),
        ],
    )
    result = _check(j, signer, path, False)
    assert not result.ok and result.rows_lost == 6 and result.first_bad_seq == 21
    assert "behind its anchor" in (result.problem or "")
    j.close()


def test_a_forged_older_line_is_named_as_forged_not_as_a_rewritten_row(tmp_path: Path) -> None:
    j, signer = _journal(tmp_path, 20)
    other = FileSigner.create(tmp_path / "other.pem")
    path = _anchor(tmp_path, [_signed(other, 10, "ef" * 32), _signed(signer, 20, j.row(20).hash)])  # type: ignore[union-attr]
    result = _check(j, signer, path, False)
    assert not result.ok
    assert any("anchor head at row 10 has a bad signature" in p for p in result.problems)
    assert not any("differs" in p for p in result.problems)
    j.close()
