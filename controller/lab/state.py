"""A table's state directory, read for the lab package without writing into it.

SQLite opening a WAL database read-only still creates its ``-wal`` and ``-shm`` files when they
are absent, and rewrites the ``-shm`` index of a WAL left by a killed writer. So:

- a live table (its process holds the journal's shared-memory lock): the journal is opened
  read-only beside the running writer, as the table's own readers are (a reader marks its place
  in the ``-shm`` index, the writer's shared memory; no other file is touched);
- a stopped table with no WAL content: opened ``immutable`` (no lock, no file created);
- a stopped table whose WAL still holds rows (its writer was killed): the database and its WAL are
  copied to a scratch folder outside the state directory and the copy is read.

Everything else (the anchor, the public key) is only read.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from controller.config.profile import Profile
from controller.journal.store import Journal, JournalError

__all__ = ["StateError", "TableState", "open_state", "writer_holds"]

#: The byte of the ``-shm`` file every open SQLite connection holds a shared lock on (the
#: "dead man switch": unix-excl.c's UNIX_SHM_DMS, 120 + 8).
_SHM_DMS: Final = 128
#: struct flock on Linux (short type, short whence, off_t start, off_t len, pid_t pid).
_FLOCK: Final = "hhqqi4x"


class StateError(Exception):
    """The state directory cannot be read for the package (the message says why)."""


def writer_holds(db: Path) -> int | None:
    """The pid of a process that has the journal open (a live table), or None (stopped)."""
    shm = db.with_name(db.name + "-shm")
    try:
        fd = os.open(shm, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        asked = struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, _SHM_DMS, 1, 0)
        kind, _, _, _, pid = struct.unpack(_FLOCK, fcntl.fcntl(fd, fcntl.F_GETLK, asked))
    finally:
        os.close(fd)
    return None if kind == fcntl.F_UNLCK else pid


@dataclass
class TableState:
    """The journal (read-only), the anchor's path, the table's public key, and how they were
    read."""

    state_dir: Path
    journal: Journal
    anchor_path: Path
    public_pem: bytes | None
    how: str
    live: bool

    def close(self) -> None:
        self.journal.close()


def state_file(state_dir: Path, name: str) -> Path:
    """A file the profile's ``[journal]`` names: relative to the state directory unless absolute
    (the anchor on a second medium)."""
    path = Path(name)
    return path if path.is_absolute() else state_dir / path


def open_state(state_dir: Path, profile: Profile, scratch: Path) -> TableState:
    """Open the state directory's journal without writing to the directory (see the module
    docstring); ``scratch`` is a folder outside it for a copy, when one is needed."""
    if not state_dir.is_dir():
        raise StateError(f"no state directory at {state_dir}")
    db = state_file(state_dir, profile.journal.path)
    if not db.is_file():
        raise StateError(f"no journal at {db}")
    wal = db.with_name(db.name + "-wal")
    holder = writer_holds(db)
    try:
        if holder is not None:
            journal = Journal(db, readonly=True)
            how = (
                f"a live table (process {holder} has the journal open): the journal was read"
                " through a read-only connection beside it"
            )
        elif wal.is_file() and wal.stat().st_size > 0:
            scratch.mkdir(parents=True, exist_ok=True)
            copy = scratch / db.name
            shutil.copyfile(db, copy)
            shutil.copyfile(wal, copy.with_name(copy.name + "-wal"))
            journal = Journal(copy, readonly=True)
            how = (
                "a stopped table whose journal still had rows in its write-ahead log (its"
                " process was stopped without closing it): the database and the log were copied"
                " out of the state directory and the copy was read"
            )
        else:
            journal = Journal(db, readonly=True, immutable=True)
            how = (
                "a stopped table: the journal was read as an immutable file (read-only, no lock,"
                " no file created beside it)"
            )
    except JournalError as exc:
        raise StateError(f"the journal {db} cannot be read: {exc}") from exc
    stored = journal.meta("public_key")
    return TableState(
        state_dir=state_dir,
        journal=journal,
        anchor_path=state_file(state_dir, profile.journal.anchor_path),
        public_pem=stored.encode("ascii") if stored else None,
        how=how,
        live=holder is not None,
    )
