"""``table-controller lab package`` and ``lab verify``: the command line's side of the lab package.

``package`` builds what the package is made from the way the table builds it (the profile, the
certified RNG with the profile's hardware monitor, the journal's signer, the settings in force),
reading the state directory without writing to it (:mod:`controller.lab.state`), then writes the
package (:mod:`controller.lab.package`). ``verify`` checks one (:mod:`controller.lab.check`).

Exit status: 0 made / everything holds; 1 the package could not be made / a check failed (the
first problem is named); 2 a usage error.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from controller.config.profile import ProfileError, load_profile
from controller.config.settings import ConfigStore
from controller.journal.heads import pem_key_id
from controller.journal.signer import FileSigner, Signer, SignerError
from controller.journal.trust import SignerSettings, open_signer
from controller.lab.check import verify_package
from controller.lab.package import LabError, PackageRequest, Signing, write_package
from controller.lab.ranges import LabRangeError
from controller.lab.state import StateError, TableState, open_state
from controller.program import manifest as mf
from controller.rng.certified import CertifiedRng, RngError

__all__ = ["DEFAULT_STATE_DIR", "package", "verify"]

#: Where a table keeps its journal and key (the service's StateDirectory=).
DEFAULT_STATE_DIR = "/var/lib/table-controller"
#: Seconds between two progress lines on stderr.
PROGRESS_EVERY_S = 5.0

Out = Callable[[str], None]


def _err(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class OneOffSigner:
    """A P-256 key made in memory for one package and never stored: when neither the table's key
    nor a lab key is at hand. Its signature proves the package unchanged since it was made, not
    which device made it; the package says so."""

    def __init__(self) -> None:
        self._key = ec.generate_private_key(ec.SECP256R1())
        self._pem = self._key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )

    @property
    def key_id(self) -> str:
        return pem_key_id(self._pem)

    @property
    def description(self) -> str:
        return "a one-off key made for this package, not stored"

    def public_key_pem(self) -> bytes:
        return self._pem

    def sign(self, message: bytes) -> str:
        return self._key.sign(message, ec.ECDSA(hashes.SHA256())).hex()

    def close(self) -> None:
        """Nothing to release."""


def _signing(
    key: str | None, profile_journal: SignerSettings, state_dir: Path | None
) -> tuple[Signer, Signing]:
    """The package's seal: a lab key (``--key``), else the table's journal key (the profile's
    signer, its file key in the state directory), else, with no state directory given and no
    table key at the default place, a one-off key (said in the package and on the terminal)."""
    if key is not None:
        try:
            signer: Signer = FileSigner.load(key)
        except SignerError as exc:
            raise LabError(f"the lab key: {exc}") from exc
        return signer, Signing(signer, f"a lab key ({key})", table_key=False)
    where = state_dir if state_dir is not None else Path(DEFAULT_STATE_DIR)

    def state_path(name: str) -> Path:
        return Path(name) if Path(name).is_absolute() else where / name

    try:
        signer = open_signer(profile_journal, state_path, create=False)
    except SignerError as exc:
        if state_dir is not None:
            raise LabError(
                f"the table's journal key cannot be opened: {exc}; the package is sealed with"
                " the key of the table whose state directory it reads (or --key LAB-KEY.pem)"
            ) from exc
        _err(
            f"lab package: no table key ({exc}) and no --key: sealing with a one-off key, which"
            " binds the package to no device (give --state-dir DIR or --key LAB-KEY.pem)"
        )
        one_off = OneOffSigner()
        return one_off, Signing(
            one_off,
            "a one-off key made for this package (not the table's: it binds the package to no"
            " device)",
            table_key=False,
        )
    return signer, Signing(signer, f"the table's journal key ({signer.description})", True)


def package(
    out: str,
    profile_path: str,
    *,
    state_dir: str | None = None,
    draws: int,
    raw_bytes: int,
    seed_hex: str | None = None,
    key: str | None = None,
    made_by: str = "table-controller lab package",
    say: Out = print,
) -> int:
    """Make the package; print where it is, its archive's SHA-256, the seed and the HMAC."""
    try:
        profile = load_profile(profile_path)
    except ProfileError as exc:
        _err(f"profile error: {exc}")
        return 1
    try:
        seed = mf.parse_seed(seed_hex) if seed_hex is not None else os.urandom(32)
    except mf.ManifestError as exc:
        _err(f"--seed: {exc}")
        return 2
    target = Path(out).absolute()
    target.parent.mkdir(parents=True, exist_ok=True)
    signer: Signer | None = None
    state: TableState | None = None
    with tempfile.TemporaryDirectory(prefix=f".{target.name}-", dir=target.parent) as scratch:
        try:
            signer, signing = _signing(
                key, profile.journal, Path(state_dir) if state_dir is not None else None
            )
            if state_dir is not None:
                state = open_state(Path(state_dir), profile, Path(scratch) / "journal")
            settings = (
                ConfigStore(state.journal, profile.rules).current()
                if state is not None
                else profile.rules
            )
            hw = profile.rng.hwrng_path
            rng = CertifiedRng(hwrng_path=hw) if hw else CertifiedRng()  # as the table's own
            result = write_package(
                PackageRequest(
                    out=target,
                    profile=profile,
                    rng=rng,
                    signing=signing,
                    settings=settings,
                    program_root=mf.installed_root(),
                    seed=seed,
                    seed_given=seed_hex is not None,
                    made_by=made_by,
                    state=state,
                    draws=draws,
                    raw_bytes=raw_bytes,
                    progress=_progress(),
                )
            )
        except (LabError, LabRangeError, StateError, RngError, mf.ManifestError) as exc:
            _err(f"lab package: {exc}")
            return 1
        except OSError as exc:
            _err(
                f"lab package: {exc.strerror or exc}"
                + (f": {exc.filename}" if exc.filename else "")
            )
            return 1
        finally:
            if state is not None:
                state.close()
            if signer is not None:
                signer.close()
    for line in result.lines():
        say(line)
    return 0


def _progress() -> Callable[[int, int], None]:
    last = [time.monotonic()]

    def report(done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] >= PROGRESS_EVERY_S or done == total:
            last[0] = now
            _err(f"lab package: {done:,} of {total:,} draws and raw bytes ({100 * done // total}%)")

    return report


def verify(path: str, pubkey: str | None = None, say: Out = print) -> int:
    """Check a package; print what held, then OK or the first problem."""
    expected = None
    if pubkey is not None:
        try:
            expected = Path(pubkey).read_bytes()
        except OSError as exc:
            _err(f"cannot read the public key: {exc.strerror or exc}")
            return 2
    verdict = verify_package(Path(path), expected)
    for line in verdict.lines:
        say(line)
    if not verdict.ok:
        say(f"FAILED: {verdict.problems[0]}")
        for more in verdict.problems[1:]:
            say(f"  also: {more}")
        return 1
    say(f"OK: the lab package {path} holds")
    return 0
