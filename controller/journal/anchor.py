"""The anchor file (docs/journal.md "Anchor"): the newest signed heads, outside the database.

Every signed head is appended as one JSON line and synced before the next is written. The file
may sit on a second medium (profile ``journal.anchor_path``): a database that lost rows (its WAL
deleted or corrupted, its tail cut) is then behind its anchor, which start-up and
``journal verify`` report. Only the newest heads matter, so the file is rewritten with the last
few lines (temporary file, sync, rename, sync the folder) when it grows past :data:`MAX_LINES`.
A torn last line (a power cut in the middle of an append) is ignored: the line before it was
synced first.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from controller.journal.durable import sync_dir
from controller.journal.heads import SignedHead

#: Lines kept when the file is rewritten, and the length that triggers the rewrite.
KEEP_LINES: Final = 8
MAX_LINES: Final = 64


class AnchorError(OSError):
    """The anchor could not be written (the application raises a fault)."""


@dataclass
class AnchorRead:
    """What an anchor file holds: its heads in file order and lines that are not heads."""

    heads: list[SignedHead] = field(default_factory=list)
    bad_lines: list[int] = field(default_factory=list)  # 1-based, a torn last line excluded
    torn_tail: bool = False

    @property
    def newest(self) -> SignedHead | None:
        """The head with the highest seq (the file is in order unless someone edited it)."""
        return max(self.heads, key=lambda h: h.seq) if self.heads else None


def read_anchor(path: str | os.PathLike[str]) -> AnchorRead | None:
    """Parse the anchor; None when there is no file."""
    try:
        text = Path(path).read_bytes().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return None
    result = AnchorRead()
    lines = text.split("\n")
    complete, tail = lines[:-1], lines[-1]
    for number, line in enumerate(complete, start=1):
        if not line.strip():
            continue
        try:
            result.heads.append(SignedHead.from_line(line))
        except ValueError:
            result.bad_lines.append(number)
    if tail.strip():
        result.torn_tail = True  # written without its newline: the append was cut short
    return result


class Anchor:
    """Appends signed heads to the anchor file, synced (used by one thread: the notary's)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lines: int | None = None

    def append(self, head: SignedHead) -> None:
        """Append one head and sync it; rewrite the file short when it has grown long."""
        if self._lines is None:
            existing = read_anchor(self.path)
            self._lines = (
                0
                if existing is None
                else len(existing.heads) + len(existing.bad_lines) + int(existing.torn_tail)
            )
            if existing is not None and existing.torn_tail:
                self._rewrite([*existing.heads[-KEEP_LINES:]])
        if self._lines >= MAX_LINES:
            kept = read_anchor(self.path) or AnchorRead()
            self._rewrite([*kept.heads[-(KEEP_LINES - 1) :], head])
            return
        created = not self.path.exists()
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, (head.line() + "\n").encode("utf-8"))
                os.fdatasync(fd)
            finally:
                os.close(fd)
            if created:
                sync_dir(self.path.parent)
        except OSError as exc:
            raise AnchorError(f"anchor {self.path}: {exc}") from exc
        self._lines += 1

    def reset(self, heads: list[SignedHead]) -> None:
        """Replace the file with exactly ``heads`` (a technician acknowledged a loss, or a new
        journal replaced a revision-1 one)."""
        self._rewrite(heads)

    def _rewrite(self, heads: list[SignedHead]) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                os.write(fd, "".join(h.line() + "\n" for h in heads).encode("utf-8"))
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, self.path)
            sync_dir(self.path.parent)
        except OSError as exc:
            raise AnchorError(f"anchor {self.path}: {exc}") from exc
        self._lines = len(heads)
