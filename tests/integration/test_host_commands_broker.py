"""The host's signed commands through a real Mosquitto (TLS, client certificates, the ACL of
docs/feed.md): ``table-controller host`` signs and publishes, the table obeys and answers on
``.../reply``. Only the host identity may publish a command: a table's publish on a command topic
gets PUBACK 0x87 (not authorized). A command signed by another key reaches the table through the
ACL (the host identity sent it) and is refused by the signature, journaled, nothing changed."""

from __future__ import annotations

import argparse
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from controller.app import Application
from controller.config.profile import load_profile
from controller.events import Shutdown
from controller.floor.host import run as host_run
from tests.feed_rig import wait_for
from tests.services.mosquitto import HOST, MosquittoBroker

ROOT = Path(__file__).resolve().parents[2]
TABLE = "table-07"


def _write_key(path: Path) -> ec.EllipticCurvePrivateKey:
    key = ec.generate_private_key(ec.SECP256R1())
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return key


@pytest.fixture
def running(
    mosquitto_broker: MosquittoBroker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Application, MosquittoBroker, Path]]:
    monkeypatch.delenv("TABLE_CONTROLLER_MANIFEST", raising=False)
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    broker = mosquitto_broker
    host_key = _write_key(tmp_path / "host.key.pem")
    (tmp_path / "host.pub.pem").write_bytes(
        host_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    pair = broker.make_client_cert(TABLE)
    profile = tmp_path / "table.toml"
    profile.write_text(
        f'include = "{ROOT / "hw_profiles" / "sim-paigow.toml"}"\n'
        "[feed]\n"
        f'broker = "mqtts://{broker.host}:{broker.port}"\n'
        f'site = "{broker.site}"\n'
        f'table = "{TABLE}"\n'
        f'ca = "{broker.ca_path}"\n'
        f'cert = "{pair.cert_path}"\n'
        f'key = "{pair.key_path}"\n'
        f'host_key = "{tmp_path / "host.pub.pem"}"\n'
    )
    app = Application(load_profile(profile), tmp_path / "state", console_port="none")
    app.start()
    loop = threading.Thread(target=app.run, daemon=True)
    loop.start()
    try:
        assert app.feed is not None
        feed = app.feed
        wait_for(lambda: feed.state().connected, 20.0, "the table's feed connected")
        yield app, broker, tmp_path
    finally:
        app.post(Shutdown("test over"))
        loop.join(10)
        app.close()


def _host(broker: MosquittoBroker, key: Path, *words: str, seq: int | None = None) -> list[str]:
    pair = broker.make_client_cert(HOST)
    args = argparse.Namespace(
        cmd=words[0],
        args=list(words[1:]),
        table=TABLE,
        site=broker.site,
        broker=f"mqtts://{broker.host}:{broker.port}",
        key=str(key),
        ca=str(broker.ca_path),
        cert=str(pair.cert_path),
        cert_key=str(pair.key_path),
        seq=seq,
        timeout=20.0,
    )
    out: list[str] = []
    out.append(str(host_run(args, out.append)))
    return out


def test_disable_enable_verify_through_the_broker(
    running: tuple[Application, MosquittoBroker, Path],
) -> None:
    app, broker, tmp = running
    key = tmp / "host.key.pem"
    out = _host(broker, key, "disable", "floor", "audit")
    assert out[-1] == "0" and out[0].endswith(": OK"), out
    assert app.disable_latch.reason == "floor audit"
    out = _host(broker, key, "verify", "00" * 16)
    assert out[-1] == "0" and out[1].strip().startswith("hmac-sha256 "), out
    out = _host(broker, key, "enable")
    assert out[-1] == "0", out
    assert app.disable_latch.reason is None


def test_a_forged_and_a_replayed_command_are_refused(
    running: tuple[Application, MosquittoBroker, Path],
) -> None:
    app, broker, tmp = running
    forger = tmp / "forger.pem"
    _write_key(forger)
    out = _host(broker, forger, "disable", "x")
    assert out[-1] == "1" and "REFUSED forged" in out[0], out
    assert app.disable_latch.reason is None
    assert _host(broker, tmp / "host.key.pem", "meters", seq=100)[-1] == "0"
    out = _host(broker, tmp / "host.key.pem", "disable", "x", seq=100)
    assert out[-1] == "1" and "REFUSED replayed" in out[0], out
    assert app.disable_latch.reason is None


def test_only_the_host_may_publish_a_command(
    running: tuple[Application, MosquittoBroker, Path],
) -> None:
    from tests.services.mqtt import NOT_AUTHORIZED, MqttTestClient

    _app, broker, _tmp = running
    with MqttTestClient.connect_to(broker, TABLE) as c:
        rc = c.publish(broker.topic(TABLE, "cmd"), b"{}")
        assert rc is not None and rc.value == NOT_AUTHORIZED
