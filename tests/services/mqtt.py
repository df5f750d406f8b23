"""A small, blocking MQTT 5 test client over paho-mqtt 2.x (``CallbackAPIVersion.VERSION2``):
every call waits for the broker's answer, and every wait has a timeout.

    with MqttTestClient.connect_to(broker, "table-07") as c:  # TLS as CN=table-07
        c.subscribe(broker.topic("table-07", "#"))           # -> [ReasonCode] from the SUBACK
        rc = c.publish(broker.topic("table-07", "x"), b"1")  # -> ReasonCode from the PUBACK
        msg = c.expect("tc/site1/table-07/x", timeout=5)     # paho MQTTMessage
        c.quiet(1.0)                                         # messages that came in 1 s
    MqttTestClient.connect_to(broker, plain=True)            # the plain listener, anonymous
"""

from __future__ import annotations

import queue
import ssl
import threading
import time
import uuid
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.reasoncodes import ReasonCode

if TYPE_CHECKING:
    from tests.services.mosquitto import MosquittoBroker

DEFAULT_TIMEOUT_S = 10.0
NOT_AUTHORIZED = 0x87


class MqttTestClient:
    def __init__(
        self,
        host: str,
        port: int,
        *,
        client_id: str | None = None,
        ssl_context: ssl.SSLContext | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.host, self.port, self.timeout = host, port, timeout
        self.client_id = client_id or f"tc-test-{uuid.uuid4().hex[:8]}"
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id=self.client_id,
            protocol=mqtt.MQTTv5,
            reconnect_on_failure=False,
        )
        self.client.connect_timeout = timeout
        if ssl_context is not None:
            self.client.tls_set_context(ssl_context)
        self.messages: queue.Queue[mqtt.MQTTMessage] = queue.Queue()
        self.disconnects: list[ReasonCode] = []
        self._cond = threading.Condition()
        self._connack: ReasonCode | None = None
        self._subacks: dict[int, list[ReasonCode]] = {}
        self._pubacks: dict[int, ReasonCode] = {}
        self.client.on_connect = self._on_connect
        self.client.on_subscribe = self._on_subscribe
        self.client.on_publish = self._on_publish
        self.client.on_message = self._on_message
        self.client.on_disconnect = self._on_disconnect
        self._looping = False

    @classmethod
    def connect_to(
        cls,
        broker: MosquittoBroker,
        identity: str | None = None,
        *,
        plain: bool = False,
        client_id: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
    ) -> MqttTestClient:
        """Connected to ``broker``: over TLS as ``identity`` (its certificate), or ``plain``."""
        if plain:
            if broker.plain_port is None:
                raise ValueError("this broker has no plain listener (plain=True)")
            c = cls(broker.host, broker.plain_port, client_id=client_id, timeout=timeout)
        else:
            if identity is None:
                raise ValueError("a TLS client needs an identity (its certificate's CN)")
            c = cls(
                broker.host,
                broker.port,
                client_id=client_id or identity,
                ssl_context=broker.ssl_context(identity),
                timeout=timeout,
            )
        c.connect()
        return c

    # -- paho callbacks (its network thread) ----------------------------------------------

    def _on_connect(
        self, client: mqtt.Client, userdata: Any, flags: Any, rc: ReasonCode, properties: Any
    ) -> None:
        with self._cond:
            self._connack = rc
            self._cond.notify_all()

    def _on_subscribe(
        self, client: mqtt.Client, userdata: Any, mid: int, rcs: list[ReasonCode], properties: Any
    ) -> None:
        with self._cond:
            self._subacks[mid] = list(rcs)
            self._cond.notify_all()

    def _on_publish(
        self, client: mqtt.Client, userdata: Any, mid: int, rc: ReasonCode, properties: Any
    ) -> None:
        with self._cond:
            self._pubacks[mid] = rc
            self._cond.notify_all()

    def _on_message(self, client: mqtt.Client, userdata: Any, msg: mqtt.MQTTMessage) -> None:
        self.messages.put(msg)

    def _on_disconnect(
        self, client: mqtt.Client, userdata: Any, flags: Any, rc: ReasonCode, properties: Any
    ) -> None:
        with self._cond:
            self.disconnects.append(rc)
            self._cond.notify_all()

    def _wait(self, what: str, ready: Callable[[], bool], timeout: float | None) -> None:
        limit = self.timeout if timeout is None else timeout
        with self._cond:
            if not self._cond.wait_for(ready, limit):
                raise TimeoutError(
                    f"MQTT {what} from {self.host}:{self.port}: no answer within"
                    f" {limit:g} s (disconnects: {self.disconnects})"
                )

    # -- calls ----------------------------------------------------------------------------

    def connect(self, timeout: float | None = None) -> ReasonCode:
        """Connect and wait for the CONNACK; a refusal raises ConnectionRefusedError."""
        self.client.connect(self.host, self.port, keepalive=30)
        self.client.loop_start()
        self._looping = True
        self._wait("CONNACK", lambda: self._connack is not None or bool(self.disconnects), timeout)
        rc = self._connack
        if rc is None:
            raise ConnectionRefusedError(
                f"MQTT: disconnected before the CONNACK: {self.disconnects}"
            )
        if rc.is_failure:
            raise ConnectionRefusedError(f"MQTT connect refused: {rc}")
        return rc

    def subscribe(self, topic: str, qos: int = 1, timeout: float | None = None) -> list[ReasonCode]:
        """Subscribe and return the SUBACK's reason codes (0x87: not authorized)."""
        err, mid = self.client.subscribe(topic, qos)
        if err != mqtt.MQTT_ERR_SUCCESS or mid is None:
            raise ConnectionError(f"MQTT subscribe {topic}: {mqtt.error_string(err)}")
        self._wait(f"SUBACK for {topic}", lambda: mid in self._subacks, timeout)
        return self._subacks[mid]

    def publish(
        self,
        topic: str,
        payload: bytes | str = b"",
        qos: int = 1,
        retain: bool = False,
        timeout: float | None = None,
    ) -> ReasonCode | None:
        """Publish; for QoS 1/2 wait for the broker's answer and return its reason code."""
        info = self.client.publish(topic, payload, qos=qos, retain=retain)
        if info.rc != mqtt.MQTT_ERR_SUCCESS:
            raise ConnectionError(f"MQTT publish {topic}: {mqtt.error_string(info.rc)}")
        if qos == 0:
            info.wait_for_publish(self.timeout if timeout is None else timeout)
            return None
        self._wait(f"PUBACK for {topic}", lambda: info.mid in self._pubacks, timeout)
        return self._pubacks[info.mid]

    def expect(self, topic: str | None = None, timeout: float | None = None) -> mqtt.MQTTMessage:
        """The next message (on ``topic`` when given; others before it are dropped)."""
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(
                    f"no MQTT message{' on ' + topic if topic else ''} within {limit:g} s"
                )
            try:
                msg = self.messages.get(timeout=left)
            except queue.Empty:
                continue
            if topic is None or msg.topic == topic:
                return msg

    def quiet(self, within: float) -> list[mqtt.MQTTMessage]:
        """Wait ``within`` s and return every message that arrived (for "never receives")."""
        time.sleep(within)
        got = []
        while True:
            try:
                got.append(self.messages.get_nowait())
            except queue.Empty:
                return got

    def close(self, timeout: float | None = None) -> None:
        limit = self.timeout if timeout is None else timeout
        if self.client.is_connected():
            self.client.disconnect()
        if self._looping:
            # paho's loop_stop() joins its thread without a limit: join it with one here
            stopper = threading.Thread(target=self.client.loop_stop, daemon=True)
            stopper.start()
            stopper.join(limit)
            self._looping = False
            if stopper.is_alive():
                raise TimeoutError(f"paho's network thread did not stop within {limit:g} s")

    def __enter__(self) -> MqttTestClient:
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
