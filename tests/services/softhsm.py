"""A SoftHSM2 token in a fresh directory: its own softhsm2.conf (SOFTHSM2_CONF) and token store,
one token initialised with ``softhsm2-util --init-token --free``.

    tok = SoftHsmToken.create()       # label "tc-test"
    tok.module                        # "/usr/lib/softhsm/libsofthsm2.so" (the PKCS#11 module)
    tok.label, tok.user_pin, tok.so_pin
    tok.conf_path, tok.env            # {"SOFTHSM2_CONF": ...} for a child process
    lib = tok.pkcs11_lib()            # python-pkcs11's lib, (re)initialised on THIS config
    with tok.open_session() as s: ... # a read/write user session on the token

PKCS#11 libraries are process-wide (C_Initialize reads SOFTHSM2_CONF once): ``pkcs11_lib()``
finalises and re-initialises the module when it was loaded on another token's config, and
``close()`` finalises it, so the next test's token is read afresh.
"""

from __future__ import annotations

import glob
import os
import secrets
import sys
from pathlib import Path
from typing import Any

from tests.services._common import private_dir, remove_dir, run_checked, which

LABEL = "tc-test"
MODULE_CANDIDATES = (
    "/usr/lib/softhsm/libsofthsm2.so",
    "/usr/lib/*/softhsm/libsofthsm2.so",
    "/usr/lib/*/libsofthsm2.so",
    "/usr/local/lib/softhsm/libsofthsm2.so",
)


def find_module() -> str | None:
    if os.environ.get("TC_SOFTHSM_MODULE"):
        return os.environ["TC_SOFTHSM_MODULE"]
    for pattern in MODULE_CANDIDATES:
        for path in sorted(glob.glob(pattern)):
            if os.path.isfile(path):
                return path
    return None


def find_util() -> str | None:
    return which("softhsm2-util")


class SoftHsmToken:
    def __init__(self, module: str, util: str, directory: Path, label: str = LABEL) -> None:
        self.module = module
        self.util = util
        self.directory = directory
        self.label = label
        self.user_pin = f"{secrets.randbelow(10**8):08d}"
        self.so_pin = f"{secrets.randbelow(10**8):08d}"
        self.token_dir = directory / "tokens"
        self.conf_path = directory / "softhsm2.conf"
        self.token_dir.mkdir()
        self.conf_path.write_text(
            f"directories.tokendir = {self.token_dir}\n"
            "objectstore.backend = file\n"
            "log.level = ERROR\n"
            "slots.removable = false\n"
        )
        self.env = {"SOFTHSM2_CONF": str(self.conf_path)}

    @classmethod
    def create(cls, label: str = LABEL) -> SoftHsmToken:
        module, util = find_module(), find_util()
        if module is None or util is None:
            raise FileNotFoundError("libsofthsm2.so / softhsm2-util (Debian package 'softhsm2')")
        token = cls(module, util, private_dir("tc-hsm-"), label)
        try:
            token.init_token()
        except BaseException:
            token.close()
            raise
        return token

    def init_token(self) -> None:
        env = {**os.environ, **self.env}
        run_checked(
            [
                self.util,
                "--init-token",
                "--free",
                "--label",
                self.label,
                "--pin",
                self.user_pin,
                "--so-pin",
                self.so_pin,
            ],
            "softhsm2-util --init-token",
            60.0,
            env=env,
        )

    def show_slots(self) -> str:
        return run_checked(
            [self.util, "--show-slots"],
            "softhsm2-util --show-slots",
            30.0,
            env={**os.environ, **self.env},
        ).stdout

    def pkcs11_lib(self) -> Any:
        """python-pkcs11's ``lib`` for the module, initialised on this token's config."""
        import pkcs11

        conf = str(self.conf_path)
        saved = os.environ.get("SOFTHSM2_CONF")
        os.environ["SOFTHSM2_CONF"] = conf  # read by C_Initialize, and only there
        try:
            lib = pkcs11.lib(self.module)
            if _initialised_on.get(self.module) != conf:
                lib.reinitialize()
                _initialised_on[self.module] = conf
        finally:
            if saved is None:
                del os.environ["SOFTHSM2_CONF"]
            else:
                os.environ["SOFTHSM2_CONF"] = saved
        return lib

    def token(self) -> Any:
        return self.pkcs11_lib().get_token(token_label=self.label)

    def open_session(self, rw: bool = True) -> Any:
        return self.token().open(rw=rw, user_pin=self.user_pin)

    def close(self) -> None:
        pkcs11 = sys.modules.get("pkcs11")
        if pkcs11 is not None:
            loaded = getattr(pkcs11, "_loaded", {}).get(self.module)
            if loaded is not None and loaded.initialized:
                loaded.finalize()
        _initialised_on.pop(self.module, None)
        remove_dir(self.directory)

    def __repr__(self) -> str:
        return f"SoftHsmToken({self.label!r}, module={self.module}, conf={self.conf_path})"


_initialised_on: dict[str, str] = {}
