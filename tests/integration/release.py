"""A release as a table gets it: built by ``scripts/build-release`` (from the cache, offline),
installed by ``systemd/install.sh --release ... --stage DIR`` from ``/`` without network, and
run from ``/`` through its own entry point, never from the repository.

The artifact is built once per session for this machine's architecture;
``TC_RELEASE_ARTIFACT`` names a prebuilt one instead (the arm64 leg hands in the arm64 build).
Building needs the inputs in the cache (``scripts/build-release`` fills it once, with network):
without them the tests fail under CI and are skipped, loudly, elsewhere.
"""

from __future__ import annotations

import functools
import os
import platform
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "scripts" / "build-release"
INSTALL = REPO / "systemd" / "install.sh"
HOST_ARCH = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
#: What install.sh and the release see: no virtual environment, no PYTHON* variables.
CLEAN_ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "LANG": "C.UTF-8",
    "HOME": "/root",
}


def missing(reason: str) -> None:
    """A part the test needs is absent: a failure under CI, a loud skip elsewhere."""
    if os.environ.get("CI") or os.environ.get("TC_REQUIRE_SERVICES"):
        pytest.fail(reason)
    pytest.skip(reason)


def build_release(out: Path, arch: str = HOST_ARCH) -> subprocess.CompletedProcess[str]:
    """``scripts/build-release --offline`` for one architecture into ``out``."""
    return subprocess.run(
        [sys.executable, str(BUILD), "--arch", arch, "--offline", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd="/",
    )


def artifact_in(out: Path) -> Path:
    found = sorted(out.glob("table-controller-*.tar.gz"))
    assert len(found) == 1, found
    return found[0]


@functools.cache
def can_unshare_network() -> bool:
    """True when this process may start a command in a network namespace of its own (root)."""
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "--net", "true"], capture_output=True, timeout=30)
    return probe.returncode == 0


@dataclass(frozen=True)
class Staged:
    """An installed release under ``stage`` (``stage/opt/table-controller``, ``stage/etc``)."""

    stage: Path
    offline: bool

    @property
    def opt(self) -> Path:
        return self.stage / "opt" / "table-controller"

    @property
    def etc(self) -> Path:
        return self.stage / "etc" / "table-controller"

    @property
    def profile(self) -> Path:
        return self.etc / "profile.toml"

    def command(self) -> list[str]:
        """The unit's ExecStart, with the staged paths."""
        return [
            str(self.opt / "python" / "bin" / "python3.11"),
            "-I",
            "-S",
            "-B",
            "-u",
            str(self.opt / "bin" / "table-controller"),
        ]

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self.command(), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd="/",
            env=CLEAN_ENV,
        )


def install(artifact: Path, stage: Path, profile: str | Path) -> Staged:
    """``install.sh --release ARTIFACT --profile PROFILE --stage DIR``, run from ``/`` with a
    clean environment, in a network namespace of its own (no network at all) when allowed."""
    cmd = [
        str(INSTALL),
        "--release",
        str(artifact),
        "--profile",
        str(profile),
        "--stage",
        str(stage),
    ]
    offline = can_unshare_network()
    if offline:
        cmd = ["unshare", "--net", *cmd]
    result = subprocess.run(
        cmd, capture_output=True, text=True, timeout=300, cwd="/", env=CLEAN_ENV
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return Staged(stage, offline)


def sim_profile(folder: Path, console_port: Path, game: str = "paigow") -> Path:
    """A profile folder as a technician would hand to install.sh: the sim profile and a
    profile that includes it (relative), moves the console to ``console_port`` as a machine
    peer's line (no terminal echo: the rig reads replies) and serves the scoreboard on any free
    port."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(REPO / "hw_profiles" / f"sim-{game}.toml", folder / f"sim-{game}.toml")
    table = folder / "table.toml"
    table.write_text(
        f'include = "sim-{game}.toml"\nname = "release-test"\n\n[console]\n'
        f'port = "{console_port}"\nline_editing = false\n\n[scoreboard]\n'
        "port = 0\n",
        encoding="utf-8",
    )
    return table
