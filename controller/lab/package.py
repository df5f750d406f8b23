"""The lab package: one directory (and a ``.tar.gz``) with what a test lab asks of the table.

What goes in (the package's own README.md, written by :mod:`controller.lab.readme`, says the same
file by file, with how each was made and how to reproduce it):

- ``rng/``: a raw capture of M health-tested source bytes before scaling; for every range the
  shipped profiles draw from, N outcomes through the production draw path and the raw bytes those
  draws consumed; the scaling written out; ``replay.py`` (standard library only) that maps the
  raw bytes to the outcomes; the statistics at 99%; the health tests' cutoffs and false-alarm
  arithmetic;
- ``program/``: version, release and manifest hashes, the manifest, the HMAC for a seed and how to
  recompute it from the release artifact;
- ``settings/``: the profile in force (its files and every value), every rule setting with value,
  default, range and regulation; the event catalogue (``events.md``) and, with a state
  directory, the meters counted from its journal and archive (``meters.txt``, ``meters.json``:
  :func:`events_and_meters`);
- ``journal/`` (with a state directory): the last rounds' recall, the signed export, the public
  key, the exact ``journal verify`` command;
- ``tests/``: the test suite's counts by area and its rules checks (collected, not run);
- ``docs/``: the pages a lab reads;
- ``SHA256SUMS`` over every file, signed (``SHA256SUMS.sig``) by the table's journal key or a lab
  key (``signing-key.pem``).

Captures are written as they are drawn and every file is read back a chunk at a time: memory does
not grow with N or M. Nothing is written outside the package's directory and its ``.tar.gz``.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import platform
import shutil
import tarfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from controller.config.markdown import profile_settings_markdown
from controller.config.profile import Profile, check_profile_report
from controller.config.settings import RuleSettings
from controller.fields.readers import parse_object
from controller.journal.anchor import read_anchor
from controller.journal.archive import write_segment
from controller.journal.heads import SignedHead, load_public_key, pem_key_id
from controller.journal.recall import format_recall, recall
from controller.journal.store import Journal
from controller.lab import DEFAULT_DRAWS, DEFAULT_RAW_BYTES, readme, stats, suite
from controller.lab.check import verify_package
from controller.lab.info import (
    Captures,
    FinalCapture,
    JournalSection,
    PackageInfo,
    ProgramSection,
    RngSection,
    SettingsSection,
)
from controller.lab.ranges import DrawRange, draw_ranges, shipped_profiles
from controller.lab.seal import Signer, seal
from controller.lab.state import TableState
from controller.program import manifest as mf
from controller.rng import lab as rng_lab
from controller.rng.certified import CertifiedRng, scaling_plan
from controller.rng.health import HWRNG_PARAMS, OS_SOURCE_PARAMS, false_alarm_report

__all__ = [
    "LAB_DOCS",
    "LabError",
    "PackageRequest",
    "PackageResult",
    "Signing",
    "events_and_meters",
    "write_package",
]

#: The docs pages a lab reads (besides every table's page, ``*-table.md``).
LAB_DOCS: Final = ("lab.md", "rng.md", "journal.md", "program-verification.md", "configuration.md")
#: Rows per read of the journal (the export, the unsigned tail).
_BATCH: Final = 1000
Progress = Callable[[int, int], None]


class LabError(Exception):
    """The package cannot be made (the message says why and what to do)."""


@dataclass(frozen=True)
class Signing:
    """Who seals the package: the table's journal key (``table_key``) or a lab key."""

    signer: Signer
    who: str
    table_key: bool


@dataclass
class PackageRequest:
    """What one package is made from: the table's own collaborators, not copies of them."""

    out: Path
    profile: Profile
    rng: CertifiedRng
    signing: Signing
    settings: RuleSettings
    program_root: Path
    seed: bytes
    seed_given: bool
    made_by: str
    state: TableState | None = None
    draws: int = DEFAULT_DRAWS
    raw_bytes: int = DEFAULT_RAW_BYTES
    #: The console's package goes to the table's own captures folder, in its state directory.
    inside_state_ok: bool = False
    #: Run the RNG's start-up test first (a fresh generator); the running table's generator has
    #: passed its own at start and tests every byte since.
    self_test: bool = True
    #: The test suite's summary (default: :func:`controller.lab.suite.collect`).
    suite_summary: Callable[[Path], suite.SuiteSummary] | None = None
    progress: Progress | None = None


@dataclass
class PackageResult:
    """What was made: the directory, the archive and its SHA-256, and what a lab compares."""

    directory: Path
    archive: Path
    archive_sha256: str
    seed: str
    hmac: str
    hmac_files: int
    key_id: str
    signed_by: str
    seed_given: bool = False
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """What the console and the command line print: where, the archive's SHA-256, the seed
        and the HMAC a lab compares, and who sealed it."""
        return [
            f"lab package {self.directory}",
            f"archive {self.archive}",
            f"  sha256 {self.archive_sha256}",
            f"seed {self.seed}"
            + (" (given)" if self.seed_given else " (chosen at random: keep it with the package)"),
            f"hmac-sha256 {self.hmac} over {self.hmac_files} files",
            f"signed by {self.signed_by}, key {self.key_id}",
            *(f"note: {note}" for note in self.notes),
            "lab verify: every check holds",
        ]


def events_and_meters(state: TableState | None, archive_dir: str = "archive") -> dict[str, bytes]:
    """The event catalogue (``events.md``: each event's code, severity, what raises and clears
    it, its reference; docs/events.md) and, with a state directory, the meters counted from its
    journal and archive segments as ``table-controller meters`` counts them (``meters.txt``,
    ``meters.json``), as files for ``settings/``."""
    from controller.floor.events import catalogue_markdown
    from controller.floor.meters import fold_journal

    files = {"events.md": ("# The event catalogue\n\n" + catalogue_markdown()).encode()}
    if state is not None:
        archive = Path(archive_dir)
        fold = fold_journal(
            state.journal.events(), archive if archive.is_absolute() else state.state_dir / archive
        )
        files["meters.txt"] = ("\n".join(fold.lines()) + "\n").encode()
        files["meters.json"] = (
            json.dumps(fold.as_dict(), sort_keys=True, indent=1) + "\n"
        ).encode()
    return files


def write_package(req: PackageRequest) -> PackageResult:
    """Make the package at ``req.out`` and ``req.out`` + ``.tar.gz``; raises :class:`LabError`.
    The directory and the archive must not exist yet, and must not be inside the state
    directory."""
    out = req.out
    archive = out.with_name(out.name + ".tar.gz")
    _refuse_bad_destination(req, archive)
    ranges = draw_ranges(shipped_profiles(req.program_root))
    if req.draws < 2 or req.raw_bytes < 2:
        raise LabError("the package needs at least 2 draws per range and 2 raw bytes")
    out.mkdir(parents=True)
    try:
        return _fill(req, ranges, archive)
    except BaseException:
        # a package cut short is no package: nothing half-made is left to be mistaken for one
        shutil.rmtree(out, ignore_errors=True)
        archive.unlink(missing_ok=True)
        raise


def _fill(req: PackageRequest, ranges: Sequence[DrawRange], archive: Path) -> PackageResult:
    out = req.out
    made = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    notes: list[str] = []
    rng = _rng_section(req, ranges, out)
    program = _program_section(req, out / "program")
    settings = _settings_section(req, out / "settings", notes)
    journal = _journal_section(req, out / "journal", notes) if req.state else None
    summary = (req.suite_summary or suite.collect)(req.program_root)
    _write(out / "tests" / "summary.txt", "\n".join(suite.summary_lines(summary)) + "\n")
    _write(out / "tests" / "collected.json", suite.as_json(summary) + "\n")
    docs = _docs_section(req.program_root, out / "docs", notes)
    info: PackageInfo = {
        "format": 1,
        "made": made,
        "made_by": req.made_by,
        "profile": req.profile.name,
        "game": req.profile.game,
        "table": _table_id(req),
        "signed_by": {
            "key_id": req.signing.signer.key_id,
            "who": req.signing.who,
            "table_key": req.signing.table_key,
        },
        "rng": rng,
        "program": program,
        "settings": settings,
        "journal": journal,
        "tests": {"how": summary.how, "absent": summary.absent, "total": summary.total},
        "docs": docs,
    }
    _write(out / "package.json", json.dumps(info, indent=1, sort_keys=True) + "\n")
    _write(out / "README.md", readme.text(info, ranges, meters=req.state is not None))
    key_id = seal(out, req.signing.signer)
    verdict = verify_package(out)
    if not verdict.ok:
        raise LabError(f"the package made at {out} does not verify: {verdict.problems[0]}")
    digest = write_archive(out, archive)
    return PackageResult(
        directory=out,
        archive=archive,
        archive_sha256=digest,
        seed=program["seed"],
        hmac=program["hmac"],
        hmac_files=program["hmac_files"],
        key_id=key_id,
        signed_by=req.signing.who,
        seed_given=req.seed_given,
        notes=notes,
    )


def _table_id(req: PackageRequest) -> str:
    """The id the table signs its heads with: its journal's, else the profile's choice
    (``journal.table_id``, else the feed's table, else the profile's name)."""
    if req.state is not None:
        named = req.state.journal.meta("table")
        if named:
            return named
    p = req.profile
    return p.journal.table_id or (p.feed.table if p.feed is not None else p.name)


def _refuse_bad_destination(req: PackageRequest, archive: Path) -> None:
    for path in (req.out, archive, archive.with_name(archive.name + ".sha256")):
        if path.exists() or path.is_symlink():
            raise LabError(f"{path} exists already: the package never overwrites anything")
    if req.state is not None and not req.inside_state_ok:
        state = req.state.state_dir.resolve()
        parent = req.out.parent.resolve()
        if parent == state or parent.is_relative_to(state):
            raise LabError(
                f"{req.out} is inside the state directory {state}: the package is written"
                " elsewhere, never into the table's state"
            )


def _write(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")


# -- rng/ ---------------------------------------------------------------------------------------


def _rng_section(req: PackageRequest, ranges: Sequence[DrawRange], out: Path) -> RngSection:
    rng, folder = req.rng, out / "rng"
    folder.mkdir()
    watched = ["kernel CSPRNG", *(["hardware RNG"] if rng.monitors_hwrng else [])]
    if req.self_test:
        report = rng.self_test()
        self_test = report.format()
        if not report.passed:
            raise LabError(f"the RNG is in fault: {report.format()}; no capture is made")
    else:
        self_test = (
            "the running table's generator: its start-up test passed at start, and every byte"
            " since has been health-tested"
        )
    total = req.raw_bytes + req.draws * len(ranges)
    done = [0]

    def step(offset: int) -> Progress:
        def report(count: int, _total: int) -> None:
            done[0] = offset + count
            if req.progress is not None:
                req.progress(done[0], total)

        return report

    raw = folder / "raw.bin"
    rng_lab.capture_raw(rng, req.raw_bytes, raw, progress=step(0))
    finals: list[FinalCapture] = []
    results = stats.raw_capture_tests(raw, "rng/raw.bin")
    for index, r in enumerate(ranges):
        final, consumed = folder / f"final-{r.label}.txt", folder / f"final-{r.label}.raw"
        offset = req.raw_bytes + index * req.draws
        rng_lab.capture_final(rng, req.draws, final, r.low, r.high, consumed, step(offset))
        k, width = scaling_plan(r.low, r.high)
        finals.append(
            {
                "range": r.label,
                "low": r.low,
                "high": r.high,
                "outcomes": f"rng/{final.name}",
                "raw": f"rng/{consumed.name}",
                "count": req.draws,
                "raw_bytes": consumed.stat().st_size,
                "bits": k,
                "bytes_per_attempt": width,
                "what": r.what,
                "reference": r.reference,
                "profiles": list(r.profiles),
            }
        )
        results += stats.final_capture_tests(
            final, consumed, f"rng/{final.name}", f"rng/{consumed.name}", r.low, r.high
        )
    if req.progress is not None:
        req.progress(total, total)
    section: Captures = {
        "hwrng": rng.hwrng_note,
        "monitors": watched,
        "self_test": self_test,
        "raw": {"file": "rng/raw.bin", "bytes": req.raw_bytes},
        "final": finals,
    }
    shutil.copyfile(Path(__file__).with_name("replay.py"), folder / "replay.py")
    _write(folder / "captures.json", json.dumps(section, indent=1, sort_keys=True) + "\n")
    _write(folder / "scaling.md", readme.scaling_text(finals))
    _write(folder / "source.md", readme.source_text(section, platform.release()))
    _write(
        folder / "statistics.json",
        json.dumps([r.as_dict() for r in results], indent=1, sort_keys=True) + "\n",
    )
    _write(
        folder / "statistics.txt",
        "\n".join(["# Statistical tests at the 99% level", "", *stats.report_lines(results)])
        + "\n",
    )
    monitors = [("kernel CSPRNG", OS_SOURCE_PARAMS)]
    if rng.monitors_hwrng:
        monitors.append(("hardware RNG", HWRNG_PARAMS))
    _write(folder / "health.txt", false_alarm_report(tuple(monitors)) + "\n")
    return {**section, "tests": {"run": len(results), "passed": sum(r.passed for r in results)}}


# -- program/ -----------------------------------------------------------------------------------


def _version(root: Path) -> str:
    try:
        from importlib.metadata import PackageNotFoundError, version

        return version("table-controller")
    except (ImportError, PackageNotFoundError):
        pass
    try:
        import tomllib

        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
        return str(data["project"]["version"])
    except (OSError, KeyError, ValueError):
        return "unknown"


def _program_section(req: PackageRequest, folder: Path) -> ProgramSection:
    """``program/``: what runs (a release's identity, or a development tree's files), checked
    against its manifest, and the HMAC for the seed."""
    root = req.program_root
    folder.mkdir()
    profile_files = list(req.profile.source_files)
    release: dict[str, object] | None
    if mf.is_release_root(root):
        release = parse_object((root / "release.json").read_text(encoding="utf-8"))
        kind, version = "release", str(release.get("version", "unknown"))
        release_sha256: str | None = mf.sha256_file(root / "release.json")
        manifest_sha256 = mf.manifest_digest(root / mf.MANIFEST_NAME)
        shutil.copyfile(root / mf.MANIFEST_NAME, folder / "manifest.json")
        shutil.copyfile(root / "release.json", folder / "release.json")
        problems = mf.check_manifest(root / mf.MANIFEST_NAME, profile_files)
        check = problems or ["every program and profile file matches the manifest"]
    else:
        items = mf.program_files(root)
        digests = mf.digest_files(items)
        files = {n: d for n, d in digests.items() if isinstance(d, str)}
        mf.write_manifest(
            {
                "format": mf.FORMAT,
                "algorithm": "sha256",
                "scope": "listed",
                "root": ".",
                "release": {"development tree": str(root)},
                "files": dict(sorted(files.items())),
            },
            folder / "manifest.json",
        )
        kind, version, release, release_sha256 = "development tree", _version(root), None, None
        manifest_sha256 = mf.sha256_file(folder / "manifest.json")
        check = [
            "a development tree has no release manifest: program/manifest.json was made now"
            f" from the {len(files)} files `verify SEED` covers"
        ]
    digest, count = mf.hmac_paths(req.seed, root, profile_files)
    section: ProgramSection = {
        "root": str(root),
        "kind": kind,
        "version": version,
        "release": release,
        "release_sha256": release_sha256,
        "manifest_sha256": manifest_sha256,
        "check": check,
        "seed": req.seed.hex(),
        "seed_given": req.seed_given,
        "hmac": digest,
        "hmac_files": count,
        "profile_files": [item.name for item in mf.profile_items(profile_files)],
    }
    _write(folder / "identity.json", json.dumps(section, indent=1, sort_keys=True) + "\n")
    _write(folder / "hmac.txt", readme.hmac_text(section, req.profile))
    return section


# -- settings/ ----------------------------------------------------------------------------------


def _settings_section(req: PackageRequest, folder: Path, notes: list[str]) -> SettingsSection:
    profile = req.profile
    top = Path(profile.source_files[-1])
    _write(folder / "profile.txt", check_profile_report(top) + "\n")
    _write(
        folder / "profile-settings.md",
        "# Every profile setting: type, range, default, reference\n\n"
        + profile_settings_markdown(),
    )
    copies = []
    for item in mf.profile_items(profile.source_files):
        name = item.name.removeprefix("profile/")
        if name.startswith("../") or "/../" in name:
            name = "outside/" + name.replace("../", "up/")
            notes.append(
                f"the profile includes {item.path}, outside its folder: copied as"
                f" settings/profile/{name}; an installed profile has none"
            )
        _write(folder / "profile" / name, item.path.read_bytes())
        copies.append(f"settings/profile/{name}")
    seal_problems = mf.check_profile(list(profile.source_files))
    where = (
        "the profile's [rules] with every `config set` journaled since"
        if req.state is not None
        else "the profile's [rules] (no state directory given: changes made at the console are"
        " not included)"
    )
    lines = [f"# Rule settings in force: {where}", "", *req.settings.describe()]
    _write(folder / "rules.txt", "\n".join(lines) + "\n")
    for name, data in events_and_meters(req.state, req.profile.journal.archive_dir).items():
        _write(folder / name, data)
    return {
        "profile": str(top),
        "copies": copies,
        "seal": seal_problems or ["the profile's files match its seal"],
        "rules_from": where,
    }


# -- journal/ -----------------------------------------------------------------------------------


def _newest_head(journal: Journal, anchor: Path, pem: bytes) -> SignedHead | None:
    """The newest signed head that verifies with ``pem`` and names a row the journal holds: the
    anchor's newest line or the database's newest stored head."""
    key = load_public_key(pem)
    candidates: list[SignedHead] = []
    read = read_anchor(anchor)
    if read is not None and read.newest is not None:
        candidates.append(read.newest)
    stored = journal.newest_head()
    if stored is not None:
        candidates.append(stored)
    for head in sorted(candidates, key=lambda h: -h.seq):
        row = journal.row(head.seq)
        if row is not None and row.hash == head.hash and head.verify(key):
            return head
    return None


def _rows(
    journal: Journal, after: int, through: int | None = None
) -> Iterator[Mapping[str, object]]:
    seq = after
    while True:
        rows = journal.rows_after(seq, _BATCH)
        for row in rows:
            if through is not None and row.seq > through:
                return
            yield row.as_dict()
            seq = row.seq
        if len(rows) < _BATCH:
            return


def _journal_section(req: PackageRequest, folder: Path, notes: list[str]) -> JournalSection:
    state = req.state
    assert state is not None
    journal = state.journal
    folder.mkdir()
    pem = state.public_pem
    if req.signing.table_key:
        signer_pem = req.signing.signer.public_key_pem()
        if pem is not None and pem_key_id(pem) != pem_key_id(signer_pem):
            raise LabError(
                f"the journal is signed by key {pem_key_id(pem)}, but the table's signer holds"
                f" key {pem_key_id(signer_pem)}: not this table's journal"
            )
        pem = signer_pem
    if pem is None:
        raise LabError(f"the journal {journal.path} names no public key: not a signed journal")
    _write(folder / "table.pub.pem", pem)
    base_seq, _ = journal.base()
    last_seq = journal.stored_last_seq()
    head = _newest_head(journal, state.anchor_path, pem)
    export: str | None = None
    export_to = base_seq
    if head is not None and head.seq > base_seq:
        try:
            segment = write_segment(journal, base_seq + 1, head.seq, head, folder, pem)
        except ValueError as exc:
            raise LabError(f"the journal export does not verify: {exc}") from exc
        export = f"journal/{segment.path.name}"
        export_to = head.seq
    else:
        notes.append("the journal has no signed head yet: no signed export")
    tail = folder / "unsigned-tail.jsonl"
    count = 0
    with open(tail, "w", encoding="utf-8") as fh:
        for row in _rows(journal, export_to, last_seq):
            fh.write(json.dumps(row, sort_keys=True, separators=(",", ":"), ensure_ascii=False))
            fh.write("\n")
            count += 1
    depth = req.settings.recall_depth
    records = recall(journal, depth)
    _write(folder / "recall.txt", "\n".join(format_recall(records)) + "\n")
    _write(
        folder / "recall.jsonl",
        "".join(
            json.dumps(r.as_dict(), sort_keys=True, separators=(",", ":")) + "\n" for r in records
        ),
    )
    section: JournalSection = {
        "how": state.how,
        "live": state.live,
        "public_key": "journal/table.pub.pem",
        "key_id": pem_key_id(pem),
        "table": journal.meta("table"),
        "state_dir": str(state.state_dir),
        "rows": {"first": base_seq + 1, "last": last_seq},
        "export": export,
        "tail": {"file": "journal/unsigned-tail.jsonl", "rows": count},
        "recall": {"rounds": len(records), "depth": depth},
    }
    if export is not None and head is not None:
        section["head"] = head.as_dict()
    if state.anchor_path.is_file():
        shutil.copyfile(state.anchor_path, folder / "journal.anchor")
        section["anchor"] = "journal/journal.anchor"
    _write(folder / "verify.txt", readme.journal_verify_text(section))
    return section


# -- docs/ --------------------------------------------------------------------------------------


def _docs_section(root: Path, folder: Path, notes: list[str]) -> list[str]:
    source = next((d for d in (root / "docs", root / "share" / "docs") if d.is_dir()), None)
    if source is None:
        notes.append(f"no docs folder beside the program at {root}: no docs pages copied")
        return []
    names = [*LAB_DOCS, *sorted(p.name for p in source.glob("*-table.md"))]
    copied = []
    for name in names:
        if (source / name).is_file():
            _write(folder / name, (source / name).read_bytes())
            copied.append(f"docs/{name}")
        else:
            notes.append(f"docs page {name} is missing from {source}")
    return copied


# -- the archive ----------------------------------------------------------------------------------


@contextmanager
def _removed_on_error(path: Path) -> Iterator[None]:
    try:
        yield
    except BaseException:
        path.unlink(missing_ok=True)
        raise


def write_archive(folder: Path, archive: Path) -> str:
    """``folder`` as a ``.tar.gz`` (one top folder, entries sorted, owner root, no links),
    streamed; returns its SHA-256 and writes ``ARCHIVE.sha256`` in ``sha256sum`` format."""
    tmp = archive.with_name(archive.name + ".tmp")
    with _removed_on_error(tmp):
        with tarfile.open(tmp, "w:gz", format=tarfile.GNU_FORMAT) as tar:
            items = sorted(
                [folder, *folder.rglob("*")], key=lambda p: p.relative_to(folder).as_posix()
            )
            for path in items:
                rel = path.relative_to(folder)
                name = folder.name if rel == Path(".") else f"{folder.name}/{rel.as_posix()}"
                info = tar.gettarinfo(str(path), arcname=name)
                info.uid = info.gid = 0
                info.uname = info.gname = "root"
                info.mode = 0o755 if path.is_dir() else 0o644
                if info.isfile():
                    with open(path, "rb") as fh:
                        tar.addfile(info, fh)
                else:
                    tar.addfile(info)
        os.replace(tmp, archive)
    digest = hashlib.sha256()
    with open(archive, "rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    hexdigest = digest.hexdigest()
    archive.with_name(archive.name + ".sha256").write_text(
        f"{hexdigest}  {archive.name}\n", encoding="utf-8"
    )
    return hexdigest
