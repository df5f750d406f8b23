"""The publisher's durable position: the last journal row and the last signed head the broker
acknowledged (docs/feed.md "The outbox").

A small JSON file in the state directory, replaced atomically (write a temporary file, fsync,
rename, fsync the directory), written by the publisher's thread at most once a second. It is not
a table in the journal database on purpose: a write there would take the database's write lock
and a sync that the loop's next append would wait behind, and the journal is the loop's alone.
Losing the newest update (power cut) costs only re-sending a few rows, which the collector drops
as duplicates; the row's hash is kept with its seq so that a journal that no longer holds that
row (restored, rolled back) is noticed and the feed starts again from the first row.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Position:
    """The newest acknowledged row (seq and hash) and head (seq); 0 when none."""

    row_seq: int = 0
    row_hash: str = ""
    head_seq: int = 0


class PositionError(ValueError):
    """A position file that cannot be read as one."""


def load_position(path: str | os.PathLike[str]) -> Position:
    """The stored position; ``Position()`` when there is none yet. A damaged file is a
    :class:`PositionError` (the caller starts from the first row: never skips rows)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return Position()
    except OSError as exc:
        raise PositionError(f"{path}: {exc}") from None
    try:
        obj = json.loads(text)
        pos = Position(int(obj["row_seq"]), str(obj["row_hash"]), int(obj["head_seq"]))
    except (ValueError, KeyError, TypeError) as exc:
        raise PositionError(f"{path}: not a feed position ({exc})") from None
    if pos.row_seq < 0 or pos.head_seq < 0:
        raise PositionError(f"{path}: negative seq")
    return pos


def save_position(path: str | os.PathLike[str], pos: Position) -> None:
    """Replace the stored position atomically and durably."""
    target = Path(path)
    tmp = target.with_name(target.name + ".tmp")
    data = json.dumps(
        {"row_seq": pos.row_seq, "row_hash": pos.row_hash, "head_seq": pos.head_seq}, sort_keys=True
    ).encode()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, target)
    dir_fd = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
