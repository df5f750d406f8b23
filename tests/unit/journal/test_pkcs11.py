"""The ``pkcs11`` signer against a real SoftHSM2 token (docs/journal.md "Signer"): the key is
generated inside the token, sensitive and not extractable, so nothing in the state directory can
sign; a table runs on it, and its export verifies with the public key alone.

The token is the shared ``softhsm_token`` fixture (tests/services: Debian's ``softhsm2``, which
.ci/run installs; without it the tests say so and skip, or fail under TC_REQUIRE_SERVICES).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.app import Application
from controller.cli import main
from controller.config.profile import load_profile
from controller.journal.chain import verify_rows
from controller.journal.heads import SignedHead, load_public_key
from controller.journal.signer import Pkcs11Signer, SignerKeyMissing
from drivers.buttons import ButtonPressed
from tests.services.softhsm import SoftHsmToken

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def token(softhsm_token: SoftHsmToken) -> SoftHsmToken:
    """The shared SoftHSM2 token (tests/services), the PKCS#11 library initialised on it (the
    library reads its configuration once per process)."""
    softhsm_token.pkcs11_lib()
    return softhsm_token


def test_the_key_is_made_in_the_token_and_cannot_be_read_out(token: SoftHsmToken) -> None:
    from pkcs11 import Attribute, KeyType, ObjectClass

    with pytest.raises(SignerKeyMissing):
        Pkcs11Signer.open(token.module, token.label, "k1", token.user_pin)
    signer = Pkcs11Signer.open(token.module, token.label, "k1", token.user_pin, create=True)
    try:
        head = {"table": "t", "seq": 1, "hash": "ab" * 32, "ts": 1}
        from controller.journal.heads import canonical_head, verify_head

        sig = signer.sign(canonical_head(head))
        assert verify_head(head, sig, load_public_key(signer.public_key_pem()))
    finally:
        signer.close()
    import pkcs11

    session = (
        pkcs11.lib(token.module).get_token(token_label=token.label).open(user_pin=token.user_pin)
    )
    try:
        private = session.get_key(
            object_class=ObjectClass.PRIVATE_KEY, key_type=KeyType.EC, label="k1"
        )
        assert private[Attribute.SENSITIVE] is True
        assert private[Attribute.EXTRACTABLE] is False
        with pytest.raises(pkcs11.PKCS11Error):
            private[Attribute.VALUE]  # the private scalar never leaves
    finally:
        session.close()
    again = Pkcs11Signer.open(token.module, token.label, "k1", token.user_pin)
    assert again.key_id == signer.key_id  # the same key on every open
    again.close()


def _profile(tmp: Path, token: SoftHsmToken) -> Path:
    pin = tmp / "secret" / "pin"
    pin.parent.mkdir(parents=True)
    pin.write_text(token.user_pin + "\n")
    pin.chmod(0o600)
    text = (REPO / "hw_profiles" / "sim-paigow.toml").read_text()
    text += (
        f'\n[journal]\nsigner = "pkcs11"\npkcs11_module = "{token.module}"\n'
        f'pkcs11_token = "{token.label}"\npkcs11_key_label = "table-journal"\n'
        f'pkcs11_pin_file = "{pin}"\n'
    )
    path = tmp / "sim-paigow-pkcs11.toml"
    path.write_text(text)
    return path


def test_a_table_signs_in_the_token_and_its_export_verifies_with_the_public_key_alone(
    token: SoftHsmToken, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile_path = _profile(tmp_path, token)
    state = tmp_path / "state"
    app = Application(load_profile(profile_path), state, console_port="none")
    try:
        app.start()
        for name in ("shuffled", "no_more_bets", "draw", "dealt", "hands_set", "settled"):
            app.dispatch(ButtonPressed(name, 0))
        assert app.trust.notary.wait_idle(10)
        assert "pkcs11" in app.trust.signer.description
    finally:
        app.close()
    # nothing in the state directory can sign: no private key material in any file
    for path in state.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert b"PRIVATE KEY" not in data, path
    assert not (state / "journal-key.pem").exists()
    # the public key, from the token, as printed at commissioning
    assert (
        main(["journal", "pubkey", "--profile", str(profile_path), "--state-dir", str(state)]) == 0
    )
    pem = capsys.readouterr().out
    assert pem.startswith("-----BEGIN PUBLIC KEY-----")
    (tmp_path / "table.pub").write_text(pem)
    # an auditor: the export and the heads with the public key alone
    assert main(["journal", "export", "--state-dir", str(state)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    check = verify_rows(rows)
    assert check.ok and check.rows == len(rows) and rows
    anchor = [SignedHead.from_line(x) for x in (state / "journal.anchor").read_text().splitlines()]
    key = load_public_key(pem.encode())
    assert anchor and all(h.verify(key) for h in anchor)
    by_seq = {r["seq"]: r["hash"] for r in rows}
    assert all(by_seq[h.seq] == h.hash for h in anchor if h.seq in by_seq)
    assert (
        main(
            [
                "journal",
                "verify",
                "--state-dir",
                str(state),
                "--pubkey",
                str(tmp_path / "table.pub"),
            ]
        )
        == 0
    )
    assert "journal verified" in capsys.readouterr().out


# -- the module is pinned (docs/program-verification.md) --------------------------------------


def _module_sha256(module: str) -> str:
    """Computed here independently of the program: the bytes of the file the loader opens."""
    import hashlib
    import os

    return hashlib.sha256(Path(os.path.realpath(module)).read_bytes()).hexdigest()


def _pinned(tmp: Path, token: SoftHsmToken, sha256: str | None, *, sealed: bool) -> Path:
    path = _profile(tmp, token)
    if sha256 is not None:
        path.write_text(
            path.read_text().replace(
                "pkcs11_token =", f'pkcs11_module_sha256 = "{sha256}"\npkcs11_token =', 1
            )
        )
    if sealed:
        from controller.program.manifest import seal_profile

        seal_profile(load_profile(path).source_files)
    return path


def test_a_sealed_profile_with_the_module_s_hash_starts(
    token: SoftHsmToken, tmp_path: Path
) -> None:
    profile = _pinned(tmp_path, token, _module_sha256(token.module).upper(), sealed=True)
    app = Application(load_profile(profile), tmp_path / "state", console_port="none")
    try:
        assert "pkcs11" in app.trust.signer.description
    finally:
        app.close()


@pytest.mark.parametrize("sealed", [True, False])
def test_a_module_with_another_hash_is_refused_naming_the_file_and_both_hashes(
    token: SoftHsmToken, tmp_path: Path, sealed: bool
) -> None:
    import os

    from controller.journal.trust import StartRefused

    right = _module_sha256(token.module)
    wrong = ("0" if right[0] != "0" else "1") + right[1:]
    profile = _pinned(tmp_path, token, wrong, sealed=sealed)
    with pytest.raises(StartRefused) as refused:
        Application(load_profile(profile), tmp_path / "state", console_port="none")
    text = str(refused.value)
    assert os.path.realpath(token.module) in text
    assert right in text and wrong in text
    assert not (tmp_path / "state" / "journal.anchor").exists()  # nothing was signed


def test_a_sealed_profile_without_the_module_s_hash_is_refused(
    token: SoftHsmToken, tmp_path: Path
) -> None:
    from controller.journal.trust import StartRefused

    profile = _pinned(tmp_path, token, None, sealed=True)
    with pytest.raises(StartRefused, match="pkcs11_module_sha256") as refused:
        Application(load_profile(profile), tmp_path / "state", console_port="none")
    assert token.module in str(refused.value)
    # the same profile, not sealed (a development tree), starts without a pin
    (tmp_path / "sim-paigow-pkcs11.toml.manifest.json").unlink()
    app = Application(load_profile(profile), tmp_path / "state2", console_port="none")
    app.close()


@pytest.mark.parametrize("text", ["abc", "g" * 64, "0" * 63, "0" * 65])
def test_a_malformed_module_hash_is_a_profile_error(tmp_path: Path, text: str) -> None:
    from controller.config.profile import ProfileError

    path = tmp_path / "p.toml"
    path.write_text(
        (REPO / "hw_profiles" / "sim-paigow.toml").read_text()
        + f'\n[journal]\npkcs11_module_sha256 = "{text}"\n'
    )
    with pytest.raises(ProfileError, match="pkcs11_module_sha256"):
        load_profile(path)
