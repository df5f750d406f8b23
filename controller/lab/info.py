"""What a lab package says of itself: ``package.json`` and its sections (``rng/captures.json``,
``program/identity.json``), as :mod:`controller.lab.package` writes them and
:mod:`controller.lab.readme` describes them."""

from __future__ import annotations

from typing import NotRequired, TypedDict

__all__ = [
    "Captures",
    "FinalCapture",
    "JournalSection",
    "PackageInfo",
    "ProgramSection",
    "RawCapture",
    "RngSection",
    "SettingsSection",
    "TestsSection",
]


class SignedBy(TypedDict):
    key_id: str
    who: str
    table_key: bool


class RawCapture(TypedDict):
    """``rng/raw.bin``: the source's bytes before any scaling."""

    file: str
    bytes: int


class FinalCapture(TypedDict):
    """One final capture: ``count`` outcomes ``low``..``high`` and the raw bytes they consumed."""

    range: str
    low: int
    high: int
    outcomes: str
    raw: str
    count: int
    raw_bytes: int
    bits: int
    bytes_per_attempt: int
    what: str
    reference: str
    profiles: list[str]


class Captures(TypedDict):
    """``rng/captures.json``: the source, its health monitors and the captures."""

    hwrng: str
    monitors: list[str]
    self_test: str
    raw: RawCapture
    final: list[FinalCapture]


class TestCount(TypedDict):
    run: int
    passed: int


class RngSection(Captures):
    """``package.json``'s ``rng``: the captures and how many statistical tests pass."""

    tests: TestCount


class ProgramSection(TypedDict):
    """``program/identity.json``: what runs, its check against the manifest, the seed's HMAC."""

    root: str
    kind: str  # "release" or "development tree"
    version: str
    release: dict[str, object] | None
    release_sha256: str | None
    manifest_sha256: str
    check: list[str]
    seed: str
    seed_given: bool
    hmac: str
    hmac_files: int
    profile_files: list[str]


class SettingsSection(TypedDict):
    profile: str
    copies: list[str]
    seal: list[str]
    rules_from: str


class RowSpan(TypedDict):
    first: int
    last: int


class TailFile(TypedDict):
    file: str
    rows: int


class RecallCount(TypedDict):
    rounds: int
    depth: int


class JournalSection(TypedDict):
    """``package.json``'s ``journal``: where it was read, its key, the export and the tail."""

    how: str
    live: bool
    public_key: str
    key_id: str
    table: str | None
    state_dir: str
    rows: RowSpan
    export: str | None
    head: NotRequired[dict[str, str | int]]
    tail: TailFile
    recall: RecallCount
    anchor: NotRequired[str]


class TestsSection(TypedDict):
    how: str
    absent: str
    total: int


class PackageInfo(TypedDict):
    """``package.json``: what was made, by whom and when, and every figure the README gives."""

    format: int
    made: str
    made_by: str
    profile: str
    game: str
    table: str
    signed_by: SignedBy
    rng: RngSection
    program: ProgramSection
    settings: SettingsSection
    journal: JournalSection | None
    tests: TestsSection
    docs: list[str]
