"""The collector's table keys: one PEM public key per table id, registered at commissioning
(``<dir>/<table>.pem``, the output of ``table-controller journal pubkey``).

A table commissioned while the collector runs is picked up without a restart: a table id with no
key is looked up again at most every :data:`RESCAN_S` seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from cryptography.hazmat.primitives.asymmetric import ec

from controller.feed.messages import is_token
from controller.journal.heads import key_id, load_public_key

RESCAN_S: Final = 10.0


@dataclass(frozen=True)
class TableKey:
    """A table's public key and its id (docs/journal.md "Signed head")."""

    key: ec.EllipticCurvePublicKey
    key_id: str


class KeyRing:
    """Public keys by table id, read from a directory."""

    def __init__(
        self, directory: str | Path, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.directory = Path(directory)
        if not self.directory.is_dir():
            raise FileNotFoundError(f"keys directory {self.directory} does not exist")
        self._clock = clock
        self._keys: dict[str, TableKey] = {}
        self._missing: dict[str, float] = {}
        self.problems: dict[str, str] = {}

    def get(self, table: str) -> TableKey | None:
        """The table's key, or None when none is registered (or its file is unusable: the
        reason is in :attr:`problems`)."""
        found = self._keys.get(table)
        if found is not None:
            return found
        now = self._clock()
        if table in self._missing and now - self._missing[table] < RESCAN_S:
            return None
        self._missing[table] = now
        if not is_token(table):
            return None
        path = self.directory / f"{table}.pem"
        try:
            pem = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            self.problems[table] = f"{path}: {exc}"
            return None
        try:
            key = load_public_key(pem)
        except ValueError as exc:
            self.problems[table] = f"{path}: {exc}"
            return None
        found = TableKey(key, key_id(key))
        self._keys[table] = found
        self._missing.pop(table, None)
        self.problems.pop(table, None)
        return found

    def known(self) -> list[str]:
        """Table ids with a key file (for the floor view and the start-up line)."""
        return sorted(p.stem for p in self.directory.glob("*.pem") if is_token(p.stem))
