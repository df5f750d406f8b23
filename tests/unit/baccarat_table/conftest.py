"""Fixtures: a table on a journal in RAM-backed storage where the machine has it (fast fsync)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unit.baccarat_table.helpers import Rig


@pytest.fixture
def fast_tmp() -> Iterator[Path]:
    base = "/dev/shm" if Path("/dev/shm").is_dir() else None
    path = Path(tempfile.mkdtemp(prefix="bactable-", dir=base))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def rig(fast_tmp: Path) -> Rig:
    return Rig(fast_tmp)


@pytest.fixture
def fast_tmp_factory(fast_tmp: Path) -> Iterator[object]:
    """Builds fresh rigs (each in its own directory): for hypothesis and for settings."""
    count = 0

    def make(**kwargs: object) -> Rig:
        nonlocal count
        count += 1
        path = fast_tmp / f"rig{count}"
        path.mkdir()
        return Rig(path, **kwargs)  # type: ignore[arg-type]

    yield make
