"""The collector's alarms, sent where a casino already looks (docs/feed.md "Alarms out"): syslog
(RFC 5424, through the standard library's ``SysLogHandler``: UDP to a host and port, or a local
socket such as ``/dev/log``) and the broker topic ``tc/<site>/alarms`` (QoS 1, JSON).

The verifier queues an :class:`AlarmEvent` when it raises an alarm; the collector sends the
queue only after the store committed the batch that raised it, so an alarm the store rolled back
(and raises again on the retry) goes out once.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import os
import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final, Protocol
from urllib.parse import urlsplit

#: Kinds that say the record itself is in doubt: syslog severity ``crit``; the others
#: ``warning`` (RFC 5424 section 6.2.1, severities 2 and 4).
INTEGRITY_KINDS: Final = frozenset(
    ("fork", "rollback", "chain", "bad-signature", "counter-reused", "counter-back")
)
APP_NAME: Final = "table-controller"


def alarm_topic(site: str) -> str:
    """``tc/<site>/alarms``: where the collector publishes the site's alarms."""
    return f"tc/{site}/alarms"


@dataclass(frozen=True)
class AlarmEvent:
    """One alarm as sent out: ``count`` is how many times it was raised so far (repeats within
    the coalescing window are sent again, with the count, at most once a window)."""

    site: str
    table: str
    kind: str
    detail: str
    time_ns: int
    count: int = 1

    @property
    def time(self) -> str:
        """RFC 3339 UTC with milliseconds (RFC 5424 section 6.2.3)."""
        stamp = datetime.fromtimestamp(self.time_ns / 1e9, UTC)
        return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"

    def as_json(self) -> bytes:
        return json.dumps(
            {
                "site": self.site,
                "table": self.table,
                "kind": self.kind,
                "detail": self.detail,
                "time": self.time,
                "count": self.count,
            },
            sort_keys=True,
            ensure_ascii=True,
        ).encode()


class AlarmSink(Protocol):
    """Somewhere alarms go besides the store and the collector's output."""

    def send(self, event: AlarmEvent) -> None: ...

    def close(self) -> None: ...


class SyslogError(ValueError):
    """A syslog address that cannot be used."""


def _rfc5424(event: AlarmEvent, hostname: str) -> str:
    """HEADER SP STRUCTURED-DATA SP MSG without the PRI, which SysLogHandler prepends (RFC 5424
    section 6): VERSION 1, the alarm's time, this host, the app, its pid, the kind as MSGID, no
    structured data ("-"), and the broker topic's JSON as MSG (ASCII: no BOM needed)."""
    return (
        f"1 {event.time} {hostname[:255] or '-'} {APP_NAME} {os.getpid()} {event.kind[:32]} - "
        + event.as_json().decode()
    )


class SyslogSink:
    """Alarms to a syslog server: ``udp://HOST:PORT`` (or ``HOST:PORT``) or a local socket
    path (``/dev/log``), facility ``local0``."""

    def __init__(self, address: str, facility: int = logging.handlers.SysLogHandler.LOG_LOCAL0):
        self.address = address
        target: str | tuple[str, int]
        if address.startswith("/"):
            target = address
        else:
            parts = urlsplit(address if "://" in address else f"udp://{address}")
            if parts.scheme != "udp" or not parts.hostname:
                raise SyslogError(f"{address}: write udp://HOST:PORT, HOST:PORT or a socket path")
            try:
                port = parts.port or 514
            except ValueError as exc:
                raise SyslogError(f"{address}: {exc}") from None
            target = (parts.hostname, port)
        try:
            self._handler = logging.handlers.SysLogHandler(
                address=target, facility=facility, socktype=socket.SOCK_DGRAM
            )
        except OSError as exc:
            raise SyslogError(f"{address}: {exc}") from None
        self._handler.append_nul = False  # RFC 5424 frames by the datagram, no NUL
        self._hostname = socket.gethostname()

    def send(self, event: AlarmEvent) -> None:
        level = logging.CRITICAL if event.kind in INTEGRITY_KINDS else logging.WARNING
        record = logging.LogRecord(
            "controller.feed.alarms", level, __file__, 0, _rfc5424(event, self._hostname), (), None
        )
        # SysLogHandler reports a send that fails through handleError (stderr), never raises
        self._handler.emit(record)

    def close(self) -> None:
        self._handler.close()
