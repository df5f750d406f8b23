"""Fixtures shared by the integration tests: the release artifact (tests/integration/release.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.integration.release import artifact_in, build_release, missing


@pytest.fixture(scope="session")
def release_artifact(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This machine's release, built once per session from the cache (or TC_RELEASE_ARTIFACT)."""
    named = os.environ.get("TC_RELEASE_ARTIFACT")
    if named:
        return Path(named)
    out = tmp_path_factory.mktemp("dist")
    result = build_release(out)
    if result.returncode != 0:
        missing(
            "scripts/build-release --offline failed (run scripts/build-release once, with"
            " PyPI and Debian's archive reachable, to fill its cache):\n" + result.stderr[-2000:]
        )
    return artifact_in(out)
