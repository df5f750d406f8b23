"""A real software TPM 2.0 (Debian's ``swtpm``) on 127.0.0.1, in a fresh state directory.

    tpm = SwTpm.create()      # started: swtpm socket --tpm2, TPM2_Startup done by swtpm
    tpm.tcti                  # "swtpm:host=127.0.0.1,port=N" for tpm2-tools / the table
    tpm.stop(); tpm.start()   # the same TPM (its NV state, its counters) down and up again
    tpm.close()               # stop and remove the directory (the fixture does it)

Its NV memory lives in the state directory, which no test copies or restores: a counter in it
only counts up, as on a table's TPM module.
"""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

from tests.services._common import (
    free_port,
    port_open,
    private_dir,
    remove_dir,
    stop_process,
    tail,
    wait_until,
    which,
)

START_TIMEOUT_S = 15.0


def find_swtpm() -> str | None:
    return which("swtpm", "/usr/bin/swtpm")


def find_tpm2_tools() -> str | None:
    return which("tpm2_nvincrement", "/usr/bin/tpm2_nvincrement")


def _port_pair() -> tuple[int, int]:
    """Two free consecutive ports (the command port and the control port above it)."""
    for _ in range(50):
        port = free_port()
        if port < 65535 and not port_open("127.0.0.1", port + 1, timeout=0.2):
            try:
                with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                    s.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
            return port, port + 1
    raise RuntimeError("no two free consecutive ports on 127.0.0.1")


class SwTpm:
    host = "127.0.0.1"

    def __init__(self, binary: str, directory: Path) -> None:
        self.binary = binary
        self.directory = directory
        self.state_dir = directory / "state"
        self.state_dir.mkdir()
        self.log_path = directory / "swtpm.log"
        # tpm2-tss's swtpm TCTI reaches the control channel at the command port + 1
        self.port, self.ctrl_port = _port_pair()
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def tcti(self) -> str:
        return f"swtpm:host={self.host},port={self.port}"

    @classmethod
    def create(cls) -> SwTpm:
        binary = find_swtpm()
        if binary is None:
            raise FileNotFoundError("swtpm (Debian package 'swtpm')")
        tpm = cls(binary, private_dir("tc-tpm-"))
        try:
            tpm.start()
        except BaseException:
            tpm.close()
            raise
        return tpm

    def start(self) -> None:
        argv = [
            self.binary,
            "socket",
            "--tpm2",
            "--server",
            f"type=tcp,port={self.port},bindaddr={self.host}",
            "--ctrl",
            f"type=tcp,port={self.ctrl_port},bindaddr={self.host}",
            "--tpmstate",
            f"dir={self.state_dir}",
            "--flags",
            "not-need-init,startup-clear",
            "--log",
            f"file={self.log_path},level=1",
        ]
        with open(self.directory / "swtpm.out", "ab") as out:
            self._proc = subprocess.Popen(
                argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
        proc = self._proc

        def exited() -> str | None:
            if proc.poll() is None:
                return None
            return (
                f"swtpm exited with {proc.returncode}:\n"
                f"{tail(self.directory / 'swtpm.out')}\n{tail(self.log_path)}"
            )

        wait_until(
            lambda: port_open(self.host, self.port),
            START_TIMEOUT_S,
            f"swtpm on port {self.port}",
            failed=exited,
        )

    def stop(self) -> None:
        if self._proc is not None:
            stop_process(self._proc, timeout=10.0)
            self._proc = None

    def close(self) -> None:
        self.stop()
        remove_dir(self.directory)

    def __repr__(self) -> str:
        return f"SwTpm({self.tcti}, state={self.state_dir})"
