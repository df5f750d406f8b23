"""Where the broker is and how to reach it: ``mqtt://`` (plain TCP, development only) or
``mqtts://`` (TLS, a client certificate per table), and the paho-mqtt 2 client both ends use
(MQTT 5, the version-2 callback API)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import paho.mqtt.client as mqtt

SCHEMES: Final = {"mqtt": 1883, "mqtts": 8883}
#: Seconds a TCP connect and TLS handshake may take before the attempt counts as failed.
CONNECT_TIMEOUT_S: Final = 5.0


class BrokerError(ValueError):
    """A broker URL or TLS setting that cannot work."""


@dataclass(frozen=True)
class BrokerSettings:
    """The broker's address and this client's TLS files (PEM paths; None: not used)."""

    host: str
    port: int
    tls: bool
    ca: str | None = None
    cert: str | None = None
    key: str | None = None

    @property
    def url(self) -> str:
        return f"{'mqtts' if self.tls else 'mqtt'}://{self.host}:{self.port}"


def parse_broker_url(
    url: str, *, ca: str | None = None, cert: str | None = None, key: str | None = None
) -> BrokerSettings:
    """``mqtt://host[:port]`` or ``mqtts://host[:port]`` plus the TLS files; a client
    certificate without TLS, or a certificate without its key, is refused."""
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES:
        raise BrokerError(f"{url!r}: the broker URL must start mqtt:// or mqtts://")
    if not parts.hostname:
        raise BrokerError(f"{url!r}: no host")
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
        raise BrokerError(f"{url!r}: only mqtt[s]://host[:port] (no user, path or query)")
    try:
        port = parts.port or SCHEMES[parts.scheme]
    except ValueError:
        raise BrokerError(f"{url!r}: bad port") from None
    tls = parts.scheme == "mqtts"
    if not tls and (ca or cert or key):
        raise BrokerError(f"{url!r}: a CA or client certificate needs mqtts://")
    if (cert is None) != (key is None):
        raise BrokerError("a client certificate needs its key, and a key its certificate")
    return BrokerSettings(parts.hostname, port, tls, ca, cert, key)


def new_client(
    settings: BrokerSettings, client_id: str, *, manual_ack: bool = False
) -> mqtt.Client:
    """A paho client for ``settings`` (not yet connected): MQTT 5, TLS when asked, no
    automatic reconnection (the caller decides when to try again)."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    client = mqtt.Client(
        CallbackAPIVersion.VERSION2,
        client_id=client_id,
        protocol=mqtt.MQTTv5,
        reconnect_on_failure=False,
        manual_ack=manual_ack,
    )
    client.connect_timeout = CONNECT_TIMEOUT_S
    if settings.tls:
        client.tls_set(ca_certs=settings.ca, certfile=settings.cert, keyfile=settings.key)
    return client
