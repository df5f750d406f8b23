"""Every alarm the collector raises also reaches syslog (RFC 5424 over UDP) and the broker topic
``tc/<site>/alarms`` (QoS 1, JSON) (docs/feed.md "Alarms out"): a UDP socket on 127.0.0.1 is the
syslog server, a subscriber with the surveillance identity of the docs' ACL reads the topic on a
real Mosquitto, and a table the collector has no key for raises ``unknown-table``."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from controller.feed.messages import row_payload, topic
from controller.feed.store import Store
from tests.feed_journal import TableJournal
from tests.feed_rig import CollectorThread, wait_for, write_keys

if TYPE_CHECKING:
    from tests.services.mosquitto import MosquittoBroker

pytest.importorskip("tests.services.mqtt")

# RFC 5424 section 6: <PRI>VERSION SP TIMESTAMP SP HOSTNAME SP APP-NAME SP PROCID SP MSGID SP SD
# SP MSG; section 6.2.3's timestamp, here always UTC ("Z")
RFC5424 = re.compile(
    r"<(?P<pri>\d{1,3})>1 (?P<ts>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) (?P<host>\S+)"
    r" (?P<app>\S+) (?P<pid>\d+) (?P<msgid>\S{1,32}) - (?P<msg>.*)\Z",
    re.S,
)
LOCAL0 = 16  # RFC 5424 table 1: local use 0
WARNING = 4  # table 2


def test_an_alarm_goes_to_syslog_and_to_the_alarms_topic(
    mosquitto_broker: MosquittoBroker, tmp_path: Path
) -> None:
    from tests.services.mosquitto import SURVEILLANCE
    from tests.services.mqtt import MqttTestClient

    b = mosquitto_broker
    known = TableJournal("table-07")
    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    server.bind(("127.0.0.1", 0))
    server.settimeout(20)
    port = server.getsockname()[1]
    store_url = f"sqlite:///{tmp_path / 'collector.sqlite'}"
    collector = CollectorThread(
        b, store_url, write_keys(tmp_path / "k", known), syslog=f"udp://127.0.0.1:{port}"
    )
    try:
        with MqttTestClient.connect_to(b, SURVEILLANCE) as pager:
            assert [rc.value for rc in pager.subscribe(f"tc/{b.site}/alarms", qos=1)] == [1]
            stranger = TableJournal("table-99")  # commissioned nowhere: no key
            row = stranger.rounds(1)[0].as_dict()
            with MqttTestClient.connect_to(b, "table-99") as table:
                rc = table.publish(topic(b.site, "table-99", "rows"), row_payload(row), qos=1)
                assert not rc.is_failure

            datagram, _ = server.recvfrom(65536)
            got = RFC5424.match(datagram.decode("utf-8"))
            assert got is not None, datagram
            assert int(got["pri"]) == LOCAL0 * 8 + WARNING
            assert (got["app"], got["msgid"]) == ("table-controller", "unknown-table")
            syslog = json.loads(got["msg"])

            msg = pager.expect(f"tc/{b.site}/alarms", timeout=20)
            assert msg.qos == 1
            pushed = json.loads(msg.payload)
        assert pushed == syslog
        assert set(pushed) == {"site", "table", "kind", "detail", "time", "count"}
        assert (pushed["site"], pushed["table"], pushed["kind"], pushed["count"]) == (
            b.site,
            "table-99",
            "unknown-table",
            1,
        )
        assert pushed["time"] == got["ts"]

        # what went out is what the store holds; the collector's own alarm message, which it
        # receives through its subscription to the site, is not an alarm of its own
        store = Store.open(store_url)
        try:
            wait_for(lambda: len(store.alarms()) >= 1, 10, "the alarm stored")
            stored = store.alarms()
        finally:
            store.close()
        assert [(a.table, a.kind, a.detail) for a in stored] == [
            ("table-99", "unknown-table", pushed["detail"])
        ]
    finally:
        collector.stop()
        server.close()
