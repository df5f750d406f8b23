"""install.sh and a ``pkcs11`` signer's module (docs/program-verification.md): the module is
code loaded from outside the release, so the profile it seals must pin the module's SHA-256,
and the module on this machine must have it; otherwise nothing is installed."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from tests.integration.release import CLEAN_ENV, INSTALL, REPO


def _install(artifact: Path, tmp: Path, sha256: str | None) -> subprocess.CompletedProcess[str]:
    module = tmp / "libtoken.so"
    module.write_bytes(b"\x7fELF a module's bytes\n")
    pin = tmp / "token.pin"
    pin.write_text("12345678\n")
    pinned = f'pkcs11_module_sha256 = "{sha256}"\n' if sha256 else ""
    profile = tmp / "pkcs11-table.toml"
    profile.write_text(
        (REPO / "hw_profiles" / "sim-paigow.toml").read_text()
        + f'\n[journal]\nsigner = "pkcs11"\npkcs11_module = "{module}"\n{pinned}'
        f'pkcs11_token = "table"\npkcs11_pin_file = "{pin}"\n'
    )
    return subprocess.run(
        [
            str(INSTALL),
            "--release",
            str(artifact),
            "--profile",
            str(profile),
            "--stage",
            str(tmp / "stage"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd="/",
        env=CLEAN_ENV,
    )


@pytest.mark.parametrize("case", ["missing", "wrong", "right"])
def test_install_needs_the_module_pinned_with_its_hash(
    release_artifact: Path, tmp_path: Path, case: str
) -> None:
    right = hashlib.sha256(b"\x7fELF a module's bytes\n").hexdigest()
    wrong = "0" * 64
    result = _install(
        release_artifact, tmp_path, {"missing": None, "wrong": wrong, "right": right}[case]
    )
    installed = (tmp_path / "stage" / "opt" / "table-controller").exists()
    if case == "right":
        assert result.returncode == 0, result.stdout + result.stderr
        assert f"pkcs11 module {tmp_path / 'libtoken.so'}: sha256 {right} (pinned)" in result.stdout
        assert installed
        return
    assert result.returncode != 0 and not installed
    if case == "missing":
        assert "is not pinned: a sealed profile needs pkcs11_module_sha256" in result.stderr
    else:
        assert (
            f"has sha256 {right}, but the profile pins pkcs11_module_sha256 = {wrong}"
            in result.stderr
        )
