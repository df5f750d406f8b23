"""The installed unit reaches the feed's broker and nothing else (systemd/README.md "Network").

``install.sh`` writes ``table-controller.service.d/feed.conf`` from the sealed profile's
``[feed] broker``: ``PrivateNetwork=no``, the address families the address needs and
``IPAddressAllow=`` for the broker's address only (``IPAddressDeny=any`` stays from the unit).
Checked three ways:

- the generated drop-in, parsed, and ``systemd-analyze verify`` of the unit with it;
- the same restrictions in network namespaces this test creates (a "floor" with the broker's
  address and another one, both served by a real Mosquitto, and a "table" joined to it by a veth
  pair): systemd does not run as PID 1 here, so the cgroup filter that ``IPAddressAllow=``
  installs is emulated by an nftables ruleset generated from the parsed drop-ins (every
  ``IPAddressAllow=`` accepted in and out, everything else dropped, as ``IPAddressDeny=any``).
  From the table, an MQTT CONNECT to the broker's address gets Mosquitto's CONNACK; to the other
  address (the same broker, reachable without the rules) the connect is refused;
- a broker named by a host name neither an address nor in /etc/hosts is refused at install.

Like ``IPAddressAllow=``, the rules filter addresses, not ports: the broker's other ports are
reachable too (asserted, so the docs' statement is checked).
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.release import CLEAN_ENV, INSTALL, REPO, Staged, install
from tests.services._common import missing, required
from tests.services.mosquitto import find_mosquitto

UNIT = REPO / "systemd" / "table-controller.service"
NET = f"10.{secrets.randbelow(200) + 20}.{secrets.randbelow(250) + 1}"
BROKER, TABLE, OTHER = f"{NET}.1", f"{NET}.2", f"{NET}.3"
PORT, OTHER_PORT = 8883, 1883


def _profile(folder: Path, broker: str) -> Path:
    """sim-paigow with a [feed] to ``broker`` (mqtts://: the TLS files need only exist here)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("ca.pem", "table.pem", "table.key"):
        (folder / name).write_text("placeholder\n")
    profile = folder / "feed-table.toml"
    profile.write_text(
        (REPO / "hw_profiles" / "sim-paigow.toml").read_text()
        + textwrap.dedent(f"""
        [feed]
        broker = "{broker}"
        site = "floor1"
        ca = "{folder / "ca.pem"}"
        cert = "{folder / "table.pem"}"
        key = "{folder / "table.key"}"
        """)
    )
    return profile


def _drop_ins(staged: Staged) -> dict[str, dict[str, list[str]]]:
    folder = staged.stage / "etc" / "systemd" / "system" / "table-controller.service.d"
    parsed: dict[str, dict[str, list[str]]] = {}
    for path in sorted(folder.glob("*.conf")):
        values: dict[str, list[str]] = {}
        for raw in path.read_text().splitlines():
            line = raw.strip()
            if line and not line.startswith(("#", "[")) and "=" in line:
                key, _, value = line.partition("=")
                values.setdefault(key, []).append(value)
        parsed[path.name] = values
    return parsed


@pytest.fixture(scope="module")
def staged(release_artifact: Path, tmp_path_factory: pytest.TempPathFactory) -> Staged:
    base = tmp_path_factory.mktemp("feed-stage")
    return install(
        release_artifact, base / "stage", _profile(base / "profile", f"mqtts://{BROKER}:{PORT}")
    )


def test_the_feed_drop_in_opens_the_broker_s_address_only(staged: Staged) -> None:
    drop = _drop_ins(staged)
    feed = drop["feed.conf"]
    assert feed["PrivateNetwork"] == ["no"]
    assert feed["IPAddressAllow"] == [BROKER]  # the address, not the network
    assert feed["RestrictAddressFamilies"] == ["AF_UNIX AF_INET"]
    assert "IPAddressDeny" not in feed  # the unit's "any" stays
    unit = UNIT.read_text().splitlines()
    assert "IPAddressDeny=any" in unit and "PrivateNetwork=yes" in unit
    # every address any drop-in opens: the broker, and loopback for the scoreboard's pages
    opened = {a for values in drop.values() for a in values.get("IPAddressAllow", [])}
    assert opened == {BROKER, "localhost"}


def test_systemd_analyze_verifies_the_unit_with_the_feed_drop_in(
    staged: Staged, tmp_path: Path
) -> None:
    if shutil.which("systemd-analyze") is None or shutil.which("unshare") is None:
        missing("systemd-analyze", "systemd-analyze or unshare", "systemd")
    shutil.copy(UNIT, tmp_path / UNIT.name)
    shutil.copytree(
        staged.stage / "etc" / "systemd" / "system" / "table-controller.service.d",
        tmp_path / "table-controller.service.d",
    )
    script = 'mount --bind "$1" /opt && exec systemd-analyze verify "$2"'
    result = subprocess.run(
        [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            script,
            "sh",
            str(staged.stage / "opt"),
            str(tmp_path / UNIT.name),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if result.returncode != 0 and "unshare failed" in result.stderr:
        pytest.skip(f"no private mount namespace here: {result.stderr.strip()}")
    assert result.returncode == 0, result.stdout + result.stderr
    assert [
        line
        for line in (result.stdout + result.stderr).splitlines()
        if ".conf" in line or "table-controller.service" in line
    ] == []


def test_a_broker_host_name_only_dns_knows_is_refused_at_install(
    release_artifact: Path, tmp_path: Path
) -> None:
    name = f"broker-{secrets.token_hex(4)}.invalid"
    cmd = [
        str(INSTALL),
        "--release",
        str(release_artifact),
        "--profile",
        str(_profile(tmp_path / "profile", f"mqtts://{name}:{PORT}")),
        "--stage",
        str(tmp_path / "stage"),
    ]
    result = subprocess.run(
        cmd, capture_output=True, text=True, timeout=300, cwd="/", env=CLEAN_ENV
    )
    assert result.returncode != 0
    assert f"the broker's host {name} is not an address and not in /etc/hosts" in result.stderr
    assert not (
        tmp_path
        / "stage"
        / "etc"
        / "systemd"
        / "system"
        / "table-controller.service.d"
        / "feed.conf"
    ).exists()


# -- the same restrictions in network namespaces ------------------------------------------------


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True, timeout=30)


def _in(ns: str, *cmd: str, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["ip", "netns", "exec", ns, *cmd], capture_output=True, text=True, timeout=60, **kw
    )  # type: ignore[call-overload]


@pytest.fixture
def floor(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(table namespace, floor namespace): a veth pair between them, the floor holding the
    broker's address and another, a real Mosquitto listening on both (two ports)."""
    why = None
    if os.geteuid() != 0:
        why = "network namespaces need root"
    elif shutil.which("ip") is None:
        why = "the ip command (iproute2) is absent"
    if why is not None:
        if required("netns"):
            pytest.fail(f"MISSING PART (netns): {why}", pytrace=False)
        pytest.skip(why)
    if shutil.which("nft") is None:
        missing("nft", "nft", "nftables")
    binary = find_mosquitto()
    if binary is None:
        missing("mosquitto", "mosquitto", "mosquitto")
    tag = secrets.token_hex(3)
    table, floor_ns = f"tc-table-{tag}", f"tc-floor-{tag}"
    proc: subprocess.Popen[bytes] | None = None
    try:
        _ip("netns", "add", table)
        _ip("netns", "add", floor_ns)
        _ip(
            "link",
            "add",
            f"tct{tag}",
            "netns",
            table,
            "type",
            "veth",
            "peer",
            "name",
            f"tcf{tag}",
            "netns",
            floor_ns,
        )
        _ip("-n", table, "addr", "add", f"{TABLE}/24", "dev", f"tct{tag}")
        _ip("-n", floor_ns, "addr", "add", f"{BROKER}/24", "dev", f"tcf{tag}")
        _ip("-n", floor_ns, "addr", "add", f"{OTHER}/24", "dev", f"tcf{tag}")
        for ns, dev in ((table, f"tct{tag}"), (floor_ns, f"tcf{tag}")):
            _ip("-n", ns, "link", "set", "lo", "up")
            _ip("-n", ns, "link", "set", dev, "up")
        conf = tmp_path / "mosquitto.conf"
        conf.write_text(
            f"user root\nlistener {PORT} 0.0.0.0\nlistener {OTHER_PORT} 0.0.0.0\n"
            "allow_anonymous true\npersistence false\nlog_dest stderr\n"
        )
        log = open(tmp_path / "mosquitto.log", "wb")  # noqa: SIM115 (closed below)
        proc = subprocess.Popen(
            ["ip", "netns", "exec", floor_ns, binary, "-c", str(conf)],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        deadline = time.monotonic() + 10
        while _in(floor_ns, sys.executable, "-c", _CONNACK, BROKER, str(PORT)).returncode:
            assert proc.poll() is None and time.monotonic() < deadline, (
                tmp_path / "mosquitto.log"
            ).read_text()
            time.sleep(0.1)
        yield table, floor_ns
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        for ns in (table, floor_ns):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)


#: An MQTT 3.1.1 CONNECT (clean session, empty client id) and Mosquitto's CONNACK, by hand from
#: the MQTT 3.1.1 spec (3.1, 3.2): exit 0 on an accepted CONNACK, 1 on a refused connection.
_CONNACK = """
import socket, sys
try:
    s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=3)
except OSError as exc:
    print(f"refused: {exc}")
    sys.exit(1)
s.settimeout(3)
s.sendall(bytes([0x10, 12, 0, 4]) + b"MQTT" + bytes([4, 2, 0, 60, 0, 0]))
ack = s.recv(4)
print("connack", ack.hex())
sys.exit(0 if ack == bytes([0x20, 2, 0, 0]) else 2)
"""


def _ruleset(drop_ins: dict[str, dict[str, list[str]]]) -> str:
    """nftables rules equivalent to the unit's IP filter: IPAddressDeny=any, and every
    IPAddressAllow= of the drop-ins accepted both ways (systemd.resource-control(5): a packet
    is allowed when its peer address matches an allow entry, else dropped by deny=any)."""
    v4: list[str] = []
    v6: list[str] = []
    for values in drop_ins.values():
        for entry in values.get("IPAddressAllow", []):
            for address in entry.split():
                if address == "localhost":
                    v4.append("127.0.0.0/8")
                    v6.append("::1")
                else:
                    (v6 if ":" in address else v4).append(address)
    lines = ["table inet tcunit {"]
    for chain, hook, field in (("out", "output", "daddr"), ("in", "input", "saddr")):
        lines.append(f"  chain {chain} {{ type filter hook {hook} priority 0; policy drop;")
        if v4:
            lines.append(f"    ip {field} {{ {', '.join(v4)} }} accept")
        if v6:
            lines.append(f"    ip6 {field} {{ {', '.join(v6)} }} accept")
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def test_in_a_namespace_the_broker_is_reachable_and_another_address_is_not(
    staged: Staged, floor: tuple[str, str], tmp_path: Path
) -> None:
    table, _floor = floor
    probe = [sys.executable, "-c", _CONNACK]
    # without the unit's rules both addresses reach the broker: the refusal below is the rules
    for address in (BROKER, OTHER):
        before = _in(table, *probe, address, str(PORT))
        assert before.returncode == 0, before.stdout + before.stderr
    rules = tmp_path / "unit.nft"
    rules.write_text(_ruleset(_drop_ins(staged)))
    loaded = _in(table, "nft", "-f", str(rules))
    assert loaded.returncode == 0, loaded.stderr + rules.read_text()
    allowed = _in(table, *probe, BROKER, str(PORT))
    assert allowed.returncode == 0 and "connack 20020000" in allowed.stdout, allowed.stdout
    refused = _in(table, *probe, OTHER, str(PORT))
    assert refused.returncode == 1 and "refused" in refused.stdout, refused.stdout
    # addresses, not ports: the broker's other port is open too (what the docs say)
    assert _in(table, *probe, BROKER, str(OTHER_PORT)).returncode == 0
