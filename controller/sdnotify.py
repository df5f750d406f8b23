"""systemd's notify protocol (sd_notify(3)) over the NOTIFY_SOCKET datagram socket, stdlib only.

``READY=1`` when the drivers are up, ``WATCHDOG=1`` from the loop that owns the state machine
(so a hung loop is restarted by systemd's WatchdogSec=), ``STOPPING=1`` on the way out.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Mapping

#: A send waits at most this long: WATCHDOG=1 goes out from the loop thread, which must never
#: hang on a notify socket whose reader (the service manager) has stopped reading.
SEND_TIMEOUT_S = 1.0


class Notifier:
    """Sends notify messages when started under systemd; a silent no-op otherwise."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        address = env.get("NOTIFY_SOCKET", "")
        self._address: str | None = None
        if address:
            # An abstract-namespace socket is written with a leading '@' (sd_notify(3)).
            self._address = "\0" + address[1:] if address.startswith("@") else address
        usec = env.get("WATCHDOG_USEC", "")
        self.watchdog_interval_s: float | None = int(usec) / 2e6 if usec.isdigit() else None
        self._last_watchdog = 0.0
        self._sock: socket.socket | None = None

    @property
    def enabled(self) -> bool:
        return self._address is not None

    def notify(self, message: str) -> bool:
        """Send one message; return False (never raise) when there is no socket or it fails."""
        if self._address is None:
            return False
        try:
            if self._sock is None:
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
                self._sock.settimeout(SEND_TIMEOUT_S)
            self._sock.sendto(message.encode("utf-8"), self._address)
            return True
        except OSError:
            return False

    def ready(self, status: str = "") -> bool:
        return self.notify("READY=1" + (f"\nSTATUS={status}" if status else ""))

    def status(self, status: str) -> bool:
        return self.notify(f"STATUS={status}")

    def stopping(self) -> bool:
        return self.notify("STOPPING=1")

    def watchdog(self, now: float | None = None) -> bool:
        """Send ``WATCHDOG=1`` at most every half watchdog interval (every 1 s without one)."""
        t = time.monotonic() if now is None else now
        interval = self.watchdog_interval_s or 1.0
        if t - self._last_watchdog < interval:
            return False
        self._last_watchdog = t
        return self.notify("WATCHDOG=1")

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
