"""The Mosquitto fixture: mutual TLS, the certificate's CN as the user, the per-table ACL, the
collector, the plain listener, and a broker that goes down and comes back on the same port.

Mosquitto 2.0's answers, found here and pinned: to a QoS 1 publish its ACL refuses, an MQTT 5
client gets PUBACK with reason code 0x87 (not authorized) and the message reaches nobody; a
subscription outside the client's subtree is granted (the default ACL does not check SUBSCRIBE)
but no message it may not read is ever delivered on it.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable

import pytest

from tests.services.mosquitto import COLLECTOR, MosquittoBroker
from tests.services.mqtt import NOT_AUTHORIZED, MqttTestClient

QUIET_S = 1.0  # how long "never receives" listens, after a QoS 1 round trip has completed


def test_a_table_publishes_under_its_own_topic_and_the_collector_receives_it(
    mosquitto_broker: MosquittoBroker,
) -> None:
    b = mosquitto_broker
    with (
        MqttTestClient.connect_to(b, COLLECTOR) as collector,
        MqttTestClient.connect_to(b, "table-07") as table,
    ):
        assert [rc.value for rc in collector.subscribe("tc/#", qos=1)] == [1]
        rc = table.publish(b.topic("table-07", "events"), b'{"round": 1}', qos=1)
        assert rc is not None and rc.value == 0, rc
        msg = collector.expect(b.topic("table-07", "events"), timeout=10)
        assert msg.payload == b'{"round": 1}'
        assert msg.topic == "tc/site1/table-07/events"
        # its own subtree it may read too
        assert [rc.value for rc in table.subscribe(b.topic("table-07", "cmd", "#"))] == [1]


def test_publishing_under_another_tables_topic_is_refused_and_never_delivered(
    mosquitto_broker: MosquittoBroker,
) -> None:
    b = mosquitto_broker
    with (
        MqttTestClient.connect_to(b, COLLECTOR) as collector,
        MqttTestClient.connect_to(b, "table-07") as intruder,
        MqttTestClient.connect_to(b, "table-08") as victim,
    ):
        collector.subscribe("tc/#")
        victim.subscribe(b.topic("table-08", "#"))
        rc = intruder.publish(b.topic("table-08", "events"), b"forged", qos=1)
        assert rc is not None and rc.value == NOT_AUTHORIZED, rc  # Mosquitto 2.0: PUBACK 0x87
        # outside the tc/<site>/<id>/ tree altogether
        rc = intruder.publish("tc/site1/events", b"forged", qos=1)
        assert rc is not None and rc.value == NOT_AUTHORIZED, rc
        # a legitimate message after the forged ones: once it arrives, anything forged would
        # have arrived before it (one connection, in order), and QUIET_S more for good measure
        intruder.publish(b.topic("table-07", "events"), b"genuine", qos=1)
        got = [collector.expect(timeout=10)] + collector.quiet(QUIET_S)
        assert [(m.topic, m.payload) for m in got] == [("tc/site1/table-07/events", b"genuine")]
        assert victim.quiet(0.1) == []
    assert "Denied PUBLISH from table-07" in b.log_text()


def test_a_table_never_receives_another_tables_messages_even_subscribed_to_them(
    mosquitto_broker: MosquittoBroker,
) -> None:
    # Mosquitto 2.0's ACL does not check SUBSCRIBE (the SUBACK grants "tc/#"); it checks read
    # access on every message it would deliver, so the table gets only its own subtree.
    b = mosquitto_broker
    with (
        MqttTestClient.connect_to(b, "table-07") as table,
        MqttTestClient.connect_to(b, "table-08") as other,
    ):
        assert [rc.value for rc in table.subscribe("tc/#")] == [1]
        assert [rc.value for rc in table.subscribe(b.topic("table-08", "#"))] == [1]
        rc = other.publish(b.topic("table-08", "events"), b"not yours")
        assert rc is not None and not rc.is_failure, rc
        rc = table.publish(b.topic("table-07", "events"), b"yours")
        assert rc is not None and not rc.is_failure, rc
        got = [table.expect(timeout=10)] + table.quiet(QUIET_S)
        assert [(m.topic, m.payload) for m in got] == [("tc/site1/table-07/events", b"yours")]


def test_the_collector_reads_but_does_not_write_other_tables_topics(
    mosquitto_broker: MosquittoBroker,
) -> None:
    b = mosquitto_broker
    with MqttTestClient.connect_to(b, COLLECTOR) as collector:
        rc = collector.publish(b.topic("table-07", "cmd"), b"x", qos=1)
        assert rc is not None and rc.value == NOT_AUTHORIZED


def test_a_client_without_a_certificate_or_with_a_foreign_ca_is_refused(
    mosquitto_broker: MosquittoBroker, tmp_path: object
) -> None:
    b = mosquitto_broker
    no_cert = ssl.create_default_context(cafile=str(b.ca_path))
    c = MqttTestClient(b.host, b.port, ssl_context=no_cert, timeout=5)
    with pytest.raises((OSError, ConnectionRefusedError, TimeoutError)):
        c.connect()
    c.close()
    # a certificate from another CA, even with a plausible CN
    from tests.services.pki import CertificateAuthority

    other = CertificateAuthority(b.directory / "other-ca", name="someone else's CA")
    pair = other.issue_client("table-07")
    ctx = ssl.create_default_context(cafile=str(b.ca_path))
    ctx.load_cert_chain(str(pair.cert_path), str(pair.key_path))
    c = MqttTestClient(b.host, b.port, ssl_context=ctx, timeout=5)
    with pytest.raises((OSError, ConnectionRefusedError, TimeoutError)):
        c.connect()
    c.close()


def test_the_broker_stops_and_restarts_on_the_same_port(mosquitto_broker: MosquittoBroker) -> None:
    b = mosquitto_broker
    port = b.port
    b.stop()
    assert not b.running
    c = MqttTestClient(b.host, b.port, ssl_context=b.ssl_context("table-07"), timeout=3)
    with pytest.raises(ConnectionRefusedError):
        c.connect()
    c.close()
    b.start()
    assert b.port == port and b.running
    with MqttTestClient.connect_to(b, "table-07") as table:
        rc = table.publish(b.topic("table-07", "events"), b"after restart", qos=1)
        # accepted; nobody subscribes, so Mosquitto answers 0x10 "No matching subscribers"
        assert rc is not None and not rc.is_failure and rc.value in (0x00, 0x10), rc


def test_the_plain_listener_is_anonymous_and_open(
    make_mosquitto_broker: Callable[..., MosquittoBroker],
) -> None:
    b = make_mosquitto_broker(plain=True, site="lab")
    assert b.plain_port is not None and b.plain_port != b.port
    with (
        MqttTestClient.connect_to(b, plain=True) as sub,
        MqttTestClient.connect_to(b, plain=True) as pub,
    ):
        sub.subscribe("anything/#")
        pub.publish("anything/at/all", b"hi", qos=1)
        assert sub.expect("anything/at/all", timeout=10).payload == b"hi"
    assert b.topic("t1") == "tc/lab/t1"


@pytest.mark.parametrize("persistence", [False, True])
def test_persistence_keeps_what_the_broker_holds_across_a_restart(
    make_mosquitto_broker: Callable[..., MosquittoBroker], persistence: bool
) -> None:
    """``persistence=True``: what the broker holds (here a retained message) is saved and read
    back by the restarted broker; the default broker starts empty."""
    b = make_mosquitto_broker(persistence=persistence)
    topic = b.topic("table-07", "status")
    with MqttTestClient.connect_to(b, "table-07") as table:
        rc = table.publish(topic, b"online", qos=1, retain=True)
        assert rc is not None and not rc.is_failure, rc
    b.stop()
    b.start()
    with MqttTestClient.connect_to(b, COLLECTOR) as collector:
        collector.subscribe(topic, qos=1)
        if persistence:
            assert collector.expect(topic, timeout=10).payload == b"online"
        else:
            assert collector.quiet(QUIET_S) == []
