"""systemd's notify protocol from the real process: ``READY=1`` once the drivers are up and
``WATCHDOG=1`` from the loop, received on a real NOTIFY_SOCKET datagram socket."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hil.rig import PROFILES, PtyMaster, Rig, override_profile

TIMEOUT_S = 20.0


@pytest.fixture
def notify_socket(tmp_path: Path) -> Iterator[tuple[socket.socket, Path]]:
    path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(0.5)
    yield sock, path
    sock.close()


def _messages_until(sock: socket.socket, wanted: str, seen: list[str]) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while not any(wanted in m.split("\n") for m in seen):
        if time.monotonic() > deadline:
            raise AssertionError(f"no {wanted} within {TIMEOUT_S} s; got {seen!r}")
        try:
            seen.append(sock.recv(4096).decode("utf-8"))
        except TimeoutError:
            continue


def test_ready_then_watchdog_on_a_real_notify_socket(
    tmp_path: Path, notify_socket: tuple[socket.socket, Path]
) -> None:
    sock, path = notify_socket
    pty = PtyMaster()
    env = dict(os.environ, NOTIFY_SOCKET=str(path), WATCHDOG_USEC="400000")
    rig = Rig(
        override_profile(tmp_path, PROFILES / "sim-paigow.toml", pty.slave_path),
        tmp_path / "state",
        pty,
        env=env,
    )
    rig.start()
    try:
        seen: list[str] = []
        _messages_until(sock, "READY=1", seen)
        ready_at = next(i for i, m in enumerate(seen) if "READY=1" in m.split("\n"))
        assert any(
            line.startswith("STATUS=table-controller ready") for line in seen[ready_at].split("\n")
        )
        after: list[str] = []
        _messages_until(sock, "WATCHDOG=1", after)  # from the loop, after READY
        rig.ok("status")  # the loop that pets it is serving
        again: list[str] = []
        _messages_until(sock, "WATCHDOG=1", again)
        assert rig.stop() == 0
        rest: list[str] = []
        _messages_until(sock, "STOPPING=1", rest)
    finally:
        rig.close()
