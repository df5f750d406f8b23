"""``lab verify``: everything a lab package claims, checked offline, the first problem named.

In order, stopping at the first step that fails (a later step cannot be trusted without it):

1. the seal: ``SHA256SUMS.sig`` verifies with ``signing-key.pem`` (and that key is the one given
   with ``--pubkey``), and every file matches ``SHA256SUMS``, none missing, none extra: one
   changed byte anywhere fails here;
2. the replay: each final capture's raw bytes give its outcomes, by ``rng/replay.py`` run with
   ``python3 -I -S`` (the standard library only, nothing installed can take part). The script is
   code from the package: it is run when it is this program's own, byte for byte, or when the
   package is sealed with the key the lab named (``--pubkey``), never otherwise;
3. the statistics: computed again from the captures, equal to ``rng/statistics.json``;
4. the journal: the export verifies with the table's public key (chain and closing signed head),
   the unsigned tail chains from that head, every recalled row is a row of the journal, and a
   package sealed with the table's key was sealed with the key that signs the journal.

Only the files ``SHA256SUMS`` lists are read: a name in the package's description that is not one
of them (``../``, an absolute path) is refused, never followed.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import tempfile
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from controller.fields.readers import (
    as_list,
    as_map,
    bool_of,
    int_of,
    list_of,
    map_of,
    opt_str_of,
    parse_object,
    str_of,
)
from controller.journal.archive import verify_archive
from controller.journal.chain import verify_rows
from controller.journal.heads import SignedHead, pem_key_id
from controller.lab import stats
from controller.lab.seal import check_seal
from controller.program.manifest import ManifestError, unpack_artifact

__all__ = ["Verdict", "verify_package"]

#: How long one replay may take (a million outcomes take a few seconds here).
REPLAY_TIMEOUT_S: Final = 600.0


@dataclass
class Verdict:
    """What was checked (``lines``) and what failed (``problems``; empty when all hold)."""

    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def fail(self, problem: str) -> Verdict:
        self.problems.append(problem)
        return self


def verify_package(
    path: Path, expected_pem: bytes | None = None, python: str = sys.executable
) -> Verdict:
    """Check the package at ``path`` (its directory, or its ``.tar.gz``)."""
    if path.is_file():
        with tempfile.TemporaryDirectory(prefix="tc-lab-") as tmp:
            try:
                root = unpack_artifact(path, Path(tmp))
            except ManifestError as exc:
                return Verdict().fail(f"{path} is not a lab package archive: {exc}")
            return _verify(root, expected_pem, python)
    if not path.is_dir():
        return Verdict().fail(f"no lab package at {path}")
    return _verify(path, expected_pem, python)


class _Malformed(ValueError):
    """package.json or captures.json names something that is not a sealed file of the package."""


@dataclass(frozen=True)
class _Package:
    """A package whose seal holds: its folder and the files its sums list (nothing else is read:
    a name in its description that is not one of them is refused, never followed)."""

    root: Path
    files: frozenset[str]

    def member(self, name: object) -> Path:
        if not isinstance(name, str) or name not in self.files:
            raise _Malformed(f"{name!r} is not a file of the package")
        return self.root / name


def _verify(root: Path, expected_pem: bytes | None, python: str) -> Verdict:
    verdict = Verdict()
    sealed = check_seal(root, expected_pem)
    if sealed.problems:
        return _many(verdict, sealed.problems)
    verdict.lines.append(
        f"seal: SHA256SUMS signed by key {sealed.key_id}; all {len(sealed.files)} files match"
    )
    package = _Package(root, sealed.files)
    try:
        info = parse_object(package.member("package.json").read_text(encoding="utf-8"))
        captures = parse_object(package.member("rng/captures.json").read_text(encoding="utf-8"))
        if not _replays(package, captures, python, expected_pem is not None, verdict):
            return verdict
        if not _statistics(package, captures, verdict):
            return verdict
        journal = info.get("journal")
        if journal is None:
            verdict.lines.append("journal: none in this package (made without a state directory)")
            return verdict
        _journal(package, info, as_map(journal, "'journal'"), sealed.key_id, verdict)
    except (_Malformed, OSError, KeyError, TypeError, ValueError, AttributeError) as exc:
        verdict.fail(f"the package's description is malformed: {type(exc).__name__}: {exc}")
    return verdict


def _many(verdict: Verdict, problems: list[str]) -> Verdict:
    verdict.problems.extend(problems)
    return verdict


#: This program's own replay script: a package's is run when it is the same, byte for byte, or
#: when the package is sealed with the key the lab named (``--pubkey``).
OWN_REPLAY: Final = Path(__file__).with_name("replay.py")


def _replays(
    package: _Package,
    captures: Mapping[str, object],
    python: str,
    key_given: bool,
    verdict: Verdict,
) -> bool:
    script = package.member("rng/replay.py")
    if script.read_bytes() != OWN_REPLAY.read_bytes() and not key_given:
        verdict.fail(
            "rng/replay.py is not this program's replay script (controller/lab/replay.py): read"
            " it; it is run only for a package sealed with the key given with --pubkey"
        )
        return False
    for item in list_of(captures, "final"):
        final = as_map(item, "a final capture")
        raw, outcomes = package.member(final["raw"]), package.member(final["outcomes"])
        low, high = int_of(final, "low"), int_of(final, "high")
        command = [
            python,
            "-I",
            "-S",
            str(script),
            str(raw.relative_to(package.root)),
            str(low),
            str(high),
            "--check",
            str(outcomes.relative_to(package.root)),
        ]
        try:
            done = subprocess.run(
                command,
                cwd=package.root,
                capture_output=True,
                text=True,
                timeout=REPLAY_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            verdict.fail(f"replay of {final['raw']} did not run: {exc}")
            return False
        if done.returncode != 0:
            said = (done.stderr or done.stdout).strip() or f"exit {done.returncode}"
            verdict.fail(f"replay of {final['raw']} into {final['outcomes']} failed: {said}")
            return False
        verdict.lines.append(done.stdout.strip() + " (python3 -I -S rng/replay.py)")
    return True


def _statistics(package: _Package, captures: Mapping[str, object], verdict: Verdict) -> bool:
    member = package.member
    try:
        raw = map_of(captures, "raw")["file"]
        results = stats.raw_capture_tests(member(raw), str(raw))
        for item in list_of(captures, "final"):
            f = as_map(item, "a final capture")
            low, high = int_of(f, "low"), int_of(f, "high")
            outcomes, consumed = member(f["outcomes"]), member(f["raw"])
            results += stats.final_capture_tests(
                outcomes, consumed, str_of(f, "outcomes"), str_of(f, "raw"), low, high
            )
        recorded = as_list(
            json.loads(member("rng/statistics.json").read_text(encoding="utf-8")),
            "rng/statistics.json",
        )
    except (OSError, ValueError, KeyError) as exc:
        verdict.fail(f"the statistics cannot be computed again: {exc}")
        return False
    computed = [r.as_dict() for r in results]
    if computed != recorded:
        differs = next(
            (c for c, r in zip(computed, recorded, strict=False) if c != r),
            computed[len(recorded)] if len(computed) > len(recorded) else None,
        )
        what = f"{differs['capture']}: {differs['test']}" if differs else "the list of tests"
        verdict.fail(f"rng/statistics.json does not match the captures ({what})")
        return False
    passed = sum(1 for r in results if r.passed)
    verdict.lines.append(
        f"statistics: computed again, equal to rng/statistics.json; {passed} of {len(results)}"
        " tests pass at 99%"
    )
    return True


def _jsonl(path: Path) -> Iterator[dict[str, object]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", newline="\n") as fh:
        for line in fh:
            yield parse_object(line)


def _journal(
    package: _Package,
    info: Mapping[str, object],
    journal: Mapping[str, object],
    key_id: str | None,
    v: Verdict,
) -> None:
    member = package.member
    pem = member(journal["public_key"]).read_bytes()
    try:
        journal_key = pem_key_id(pem)
    except ValueError as exc:
        v.fail(f"{journal['public_key']} is not a P-256 public key: {exc}")
        return
    if journal_key != journal["key_id"]:
        v.fail(
            f"{journal['public_key']} is key {journal_key}, package.json says {journal['key_id']}"
        )
        return
    if bool_of(map_of(info, "signed_by"), "table_key") and key_id != journal_key:
        v.fail(
            f"the package says it is sealed by the table's key, but its key {key_id} is not the"
            f" key that signs the journal ({journal_key})"
        )
        return
    export = opt_str_of(journal, "export")
    after_seq, after_hash = int_of(map_of(journal, "rows"), "first") - 1, None
    if export:
        result = verify_archive(member(export), pem)
        if not result.ok:
            v.fail(f"the journal export {export} does not verify: {result.problem}")
            return
        head = SignedHead.from_mapping(map_of(journal, "head"))
        if (result.head_seq, result.head_hash) != (head.seq, head.hash):
            v.fail(f"the journal export ends at row {result.head_seq}, not at its head {head.seq}")
            return
        after_seq, after_hash = head.seq, head.hash
        v.lines.append(
            f"journal: {export} verifies with key {journal_key}: {result.rows} rows,"
            f" closed by the signed head at row {head.seq}"
        )
    tail_info = map_of(journal, "tail")
    tail = member(tail_info["file"])
    try:
        if after_hash is not None:
            chained = verify_rows(_jsonl(tail), prev=after_hash, after_seq=after_seq)
            if not chained.ok:
                v.fail(
                    f"{tail_info['file']} does not chain from the signed head: {chained.problem}"
                )
                return
        wanted = _recalled(member("journal/recall.jsonl"))
        sources = [_jsonl(member(export))] if export else []
        for rows in [*sources, _jsonl(tail)]:
            for row in rows:
                seq = row.get("seq")
                if isinstance(seq, int) and seq in wanted:
                    if wanted.pop(seq) != row.get("hash"):
                        v.fail(f"journal/recall.jsonl row {seq} is not the journal's row {seq}")
                        return
    except (OSError, ValueError, EOFError, zlib.error) as exc:
        v.fail(f"the journal files are unreadable: {exc}")
        return
    if wanted:
        v.fail(f"journal/recall.jsonl names row {min(wanted)}, which the journal files do not hold")
        return
    v.lines.append(
        f"journal: {tail_info['rows']} unsigned rows chain from the head; every recalled"
        " row is a row of the journal"
    )


def _recalled(path: Path) -> dict[int, str]:
    wanted: dict[int, str] = {}
    for record in _jsonl(path):
        for item in list_of(record, "events"):
            event = as_map(item, "a recalled event")
            wanted[int_of(event, "seq")] = str_of(event, "hash")
    return wanted
