"""``table-controller host``: the host's side of the signed commands (docs/host-commands.md).

Signs one command with the host's private key (a P-256 PEM file), publishes it on
``tc/<site>/<table>/cmd`` (QoS 1), waits for the table's answer on ``.../reply`` with the same
``seq`` and prints it. ``seq`` defaults to the time in microseconds, so commands sent one after
another from any host console are strictly increasing without a counter file.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from controller.fields.readers import JSONObject, JSONValue
from controller.floor.commands import COMMANDS, encode, sign_command

if TYPE_CHECKING:
    from paho.mqtt.client import Client, ConnectFlags, MQTTMessage
    from paho.mqtt.properties import Properties
    from paho.mqtt.reasoncodes import ReasonCode

#: Exit codes: 0 the table obeyed, 1 it refused or failed, 2 no reply in time, 3 not sent.
NO_REPLY = 2
NOT_SENT = 3


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    host = sub.add_parser("host", help="send one signed command to a table and print its reply")
    host.add_argument("cmd", choices=sorted(COMMANDS), help="the command")
    host.add_argument("args", nargs="*", help="its arguments (disable REASON, verify SEED, ...)")
    host.add_argument("--table", required=True, help="the table id")
    host.add_argument("--site", required=True, help="the site id")
    host.add_argument("--broker", required=True, metavar="URL", help="mqtts://host:port")
    host.add_argument("--key", required=True, metavar="PEM", help="the host's private key")
    host.add_argument("--ca", default=None, help="the broker's CA (PEM)")
    host.add_argument("--cert", default=None, help="the host's client certificate")
    host.add_argument("--cert-key", default=None, help="the client certificate's key")
    host.add_argument("--seq", type=int, default=None, help="default: the time in microseconds")
    host.add_argument("--timeout", type=float, default=10.0, metavar="S", help="wait for a reply")


def load_private_key(path: str) -> ec.EllipticCurvePrivateKey:
    key = serialization.load_pem_private_key(Path(path).read_bytes(), password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp256r1":
        raise ValueError(f"{path}: not an ECDSA P-256 private key")
    return key


def run(args: argparse.Namespace, out: Callable[[str], None] = print) -> int:
    from controller.feed.broker import BrokerError, new_client, parse_broker_url
    from controller.feed.messages import topic

    try:
        key = load_private_key(args.key)
        broker = parse_broker_url(args.broker, ca=args.ca, cert=args.cert, key=args.cert_key)
        cmd_topic = topic(args.site, args.table, "cmd")
        reply_topic = topic(args.site, args.table, "reply")
    except (OSError, ValueError, BrokerError) as exc:
        out(f"host: {exc}")
        return NOT_SENT
    seq = args.seq if args.seq is not None else time.time_ns() // 1000
    message = sign_command(key, args.table, seq, args.cmd, list(args.args))
    got: list[JSONObject] = []
    done = threading.Event()
    subscribed = threading.Event()
    client = new_client(broker, f"tc-host-{args.site}-{seq}")

    def on_connect(
        c: Client, _u: object, _f: ConnectFlags, rc: ReasonCode, _p: Properties | None
    ) -> None:
        if not rc.is_failure:
            c.subscribe(reply_topic, qos=1)

    def on_subscribe(
        _c: Client, _u: object, _mid: int, _rc: list[ReasonCode], _p: Properties | None
    ) -> None:
        subscribed.set()

    def on_message(_c: Client, _u: object, msg: MQTTMessage) -> None:
        try:
            body: JSONValue = json.loads(msg.payload)
        except ValueError:
            return
        if isinstance(body, dict) and body.get("seq") == seq:
            got.append(body)
            done.set()

    client.on_connect = on_connect
    client.on_subscribe = on_subscribe
    client.on_message = on_message
    try:
        client.connect(broker.host, broker.port, keepalive=30)
    except OSError as exc:
        out(f"host: {broker.url}: {exc}")
        return NOT_SENT
    deadline = time.monotonic() + args.timeout
    try:
        while not subscribed.is_set() and time.monotonic() < deadline:
            client.loop(0.1)
        if not subscribed.is_set():
            out(f"host: no subscription to {reply_topic} within {args.timeout:.0f} s")
            return NOT_SENT
        client.publish(cmd_topic, encode(message), qos=1)
        while not done.is_set() and time.monotonic() < deadline:
            client.loop(0.1)
    finally:
        client.disconnect()
    if not got:
        out(f"host: no reply from {args.table} within {args.timeout:.0f} s (seq {seq})")
        return NO_REPLY
    body = got[0]
    status = "OK" if body.get("ok") else f"REFUSED {body.get('why', '')}".rstrip()
    out(f"{args.table} seq {seq}: {status}")
    lines = body.get("lines")
    for line in lines if isinstance(lines, list) else []:
        out(f"  {line}")
    return 0 if body.get("ok") else 1
