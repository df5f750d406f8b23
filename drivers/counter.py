"""A monotonic counter that root cannot rewind: a TPM 2.0 NV counter (TPM 2.0 Part 1, 37.2.4
"NV Counter": it only ever counts up, and survives a restore of every file on the table).

The journal's notary puts the counter's next value in every signed head it anchors and then
increments it (docs/journal.md "The TPM counter"); a journal copied back from before is behind
the counter at the next start. The TPM is reached through tpm2-tss's TCTI string
(``device:/dev/tpmrm0`` for the Pi's add-on module, ``swtpm:host=127.0.0.1,port=N`` for a
software TPM) by the ``tpm2-tools`` commands (Debian package ``tpm2-tools``), each with a time
limit. Every call is slow (tens of milliseconds): never on the loop thread.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
from typing import Final, Protocol

#: The NV index the journal's counter lives at (the owner's range, TPM 2.0 Part 2, 13.4).
DEFAULT_INDEX: Final = 0x01500016
#: A tpm2-tools command that has not answered in this time failed.
COMMAND_TIMEOUT_S: Final = 10.0
#: The counter's attributes: owner-authorised, a counter, no dictionary-attack lockout.
_ATTRIBUTES: Final = "ownerread|ownerwrite|authread|authwrite|nt=counter|no_da"
#: TPM_RC_NV_UNINITIALIZED (defined, never incremented), as tpm2-tools print it.
_UNWRITTEN: Final = ("(0x14a)", "used before being initialized")


class CounterError(OSError):
    """The counter could not be read or incremented (the TPM is absent, busy or refuses)."""


class MonotonicCounter(Protocol):
    """A counter that only counts up."""

    #: What the console and the docs call it (``TPM device:/dev/tpmrm0 NV 0x1500016``).
    description: str

    def read(self) -> int:
        """The counter's value now (0 before the first increment)."""
        ...

    def increment(self) -> int:
        """Add one; the value after it."""
        ...


class TpmCounter:
    """A TPM 2.0 NV counter at ``index``, reached through the TCTI ``tcti``; defined on first
    use. Increments are serialised within the process (the notary and the archive)."""

    def __init__(
        self,
        tcti: str,
        index: int = DEFAULT_INDEX,
        *,
        tools_dir: str | None = None,
        timeout_s: float = COMMAND_TIMEOUT_S,
    ) -> None:
        self.tcti = tcti
        self.index = index
        self.timeout_s = timeout_s
        self.description = f"TPM {tcti} NV {index:#x}"
        self._tools_dir = tools_dir
        self._lock = threading.Lock()
        self._defined = False

    def _tool(self, name: str) -> str:
        found = shutil.which(name, path=self._tools_dir) if self._tools_dir else shutil.which(name)
        if found is None:
            raise CounterError(f"{name} not found (the Debian package 'tpm2-tools')")
        return found

    def _run(self, name: str, *args: str) -> subprocess.CompletedProcess[bytes]:
        argv = [self._tool(name), "-T", self.tcti, *args]
        try:
            return subprocess.run(
                argv,
                capture_output=True,
                timeout=self.timeout_s,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            raise CounterError(
                f"{self.description}: {name} did not answer within {self.timeout_s:g} s"
            ) from None
        except OSError as exc:
            raise CounterError(f"{self.description}: {name}: {exc}") from exc

    @staticmethod
    def _said(result: subprocess.CompletedProcess[bytes]) -> str:
        """tpm2-tools' own diagnosis (its ERROR line with the TPM's answer)."""
        lines = (result.stderr or b"").decode("utf-8", "replace").strip().splitlines()
        errors = [ln for ln in lines if ln.startswith("ERROR: Esys") or "tpm:" in ln]
        return (errors or lines or [f"exit {result.returncode}"])[-1][:300]

    def _ensure_defined(self) -> None:
        if self._defined:
            return
        probe = self._run("tpm2_nvreadpublic", f"{self.index:#x}")
        if probe.returncode != 0:
            made = self._run(
                "tpm2_nvdefine", f"{self.index:#x}", "-C", "o", "-s", "8", "-a", _ATTRIBUTES
            )
            if made.returncode != 0:
                raise CounterError(
                    f"{self.description}: not defined and tpm2_nvdefine failed: {self._said(made)}"
                )
        self._defined = True

    def _read_locked(self) -> int:
        self._ensure_defined()
        result = self._run("tpm2_nvread", "-C", "o", "-s", "8", f"{self.index:#x}")
        if result.returncode != 0:
            everything = (result.stderr or b"").decode("utf-8", "replace").lower()
            if any(m in everything for m in _UNWRITTEN):
                return 0
            said = self._said(result)
            raise CounterError(f"{self.description}: tpm2_nvread failed: {said}")
        if len(result.stdout) != 8:
            raise CounterError(
                f"{self.description}: tpm2_nvread gave {len(result.stdout)} bytes, not 8"
            )
        return int.from_bytes(result.stdout, "big")

    def read(self) -> int:
        with self._lock:
            return self._read_locked()

    def increment(self) -> int:
        with self._lock:
            self._ensure_defined()
            result = self._run("tpm2_nvincrement", "-C", "o", f"{self.index:#x}")
            if result.returncode != 0:
                raise CounterError(
                    f"{self.description}: tpm2_nvincrement failed: {self._said(result)}"
                )
            return self._read_locked()


def open_counter(spec: str, index: int = DEFAULT_INDEX) -> MonotonicCounter | None:
    """The counter a profile names: ``none`` (None: the table has no TPM) or a TCTI string
    (``device:/dev/tpmrm0``, ``swtpm:host=...,port=...``, ``mssim:...``)."""
    if spec.strip().lower() == "none":
        return None
    return TpmCounter(spec, index)
