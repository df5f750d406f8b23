"""Durable renames: after ``os.replace`` the directory itself is synced, so the new name survives
a power cut (the anchor, the key, an archive segment, a revision-1 journal set aside)."""

from __future__ import annotations

import os
from pathlib import Path


def sync_dir(folder: str | os.PathLike[str]) -> None:
    """fsync ``folder``: its entries (a rename, a new file) reach the storage."""
    fd = os.open(Path(folder), os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
