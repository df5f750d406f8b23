"""The profile's ``[feed]`` section (docs/configuration.md, docs/feed.md): off unless a broker
is named, mqtts:// with the table's certificate, mqtt:// only to this machine, topic-safe ids."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from controller.config.profile import ProfileError, check_profile_report, load_profile

ROOT = Path(__file__).resolve().parents[3]
BASE = "\n".join(
    line
    for line in (ROOT / "hw_profiles" / "sim-paigow.toml").read_text().splitlines()
    if not line.startswith("name =")
)


def profile(tmp_path: Path, feed: str, name: str = "t.toml") -> Path:
    p = tmp_path / name
    p.write_text(BASE + "\n[feed]\n" + feed)
    return p


def refused(path: Path) -> ProfileError:
    with pytest.raises(ProfileError) as info:
        load_profile(path)
    return info.value


@pytest.fixture
def pems(tmp_path: Path) -> dict[str, str]:
    out = {}
    for name in ("ca", "cert", "key"):
        f = tmp_path / f"{name}.pem"
        f.write_text("PEM")
        out[name] = str(f)
    return out


def test_the_feed_is_off_in_the_sim_profiles() -> None:
    for game in ("paigow", "baccarat"):
        assert load_profile(ROOT / "hw_profiles" / f"sim-{game}.toml").feed is None
        fed = load_profile(ROOT / "hw_profiles" / f"sim-{game}-feed.toml").feed
        assert fed is not None and fed.broker == "mqtt://127.0.0.1:1883"
        assert (fed.site, fed.table) == ("dev", f"sim-{game}")


def test_a_casino_broker_with_tls(tmp_path: Path, pems: dict[str, str]) -> None:
    p = profile(
        tmp_path,
        f'broker = "mqtts://broker.floor.lan:8883"\nsite = "vegas-1"\n'
        f'table = "pg-07"\nca = "{pems["ca"]}"\ncert = "{pems["cert"]}"\n'
        f'key = "{pems["key"]}"\n',
        "pg-07.toml",
    )
    feed = load_profile(p).feed
    assert feed is not None
    assert (feed.site, feed.table, feed.cert, feed.position_path, feed.heartbeat_s) == (
        "vegas-1",
        "pg-07",
        pems["cert"],
        "feed.position",
        60.0,
    )
    report = check_profile_report(p)
    assert 'feed.broker = "mqtts://broker.floor.lan:8883"' in report
    assert "feed.position_path" in report and "(default)" in report


def test_the_table_id_defaults_to_the_profile_name(tmp_path: Path) -> None:
    p = profile(tmp_path, 'broker = "mqtt://localhost"\nsite = "s"\n', "pg-09.toml")
    feed = load_profile(p).feed
    assert feed is not None and feed.table == "pg-09"


@pytest.mark.parametrize(
    ("feed", "message"),
    [
        ('broker = "http://x"\nsite = "s"\n', "feed.broker: 'http://x': the broker URL must start"),
        ('broker = "mqtt://broker.floor.lan"\nsite = "s"\n', "only to this machine"),
        ('broker = "mqtts://b:99999"\nsite = "s"\n', "bad port"),
        ('broker = "mqtts://b/path"\nsite = "s"\n', "expected mqtts://host[:port]"),
        ('broker = "mqtt://127.0.0.1"\n', "feed.site: missing"),
        ('broker = "mqtt://127.0.0.1"\nsite = "a/b"\n', "feed.site: 'a/b' cannot be an MQTT topic"),
        ('broker = "mqtt://127.0.0.1"\nsite = "#"\n', "cannot be an MQTT topic level"),
        ('broker = "mqtt://127.0.0.1"\nsite = "s"\ntable = "t 1"\n', "feed.table: 't 1' cannot"),
        ('broker = "mqtts://b"\nsite = "s"\n', "feed.cert: missing"),
        ('broker = "mqtt://127.0.0.1"\nsite = "s"\nca = "/etc/ca.pem"\n', "feed.ca: not allowed"),
        ('broker = "mqtt://127.0.0.1"\nsite = "s"\nheartbeat_s = 1\n', "out of range 5.0..3600.0"),
        ('broker = "mqtt://127.0.0.1"\nsite = "s"\nbrokr = 1\n', "did you mean 'broker'"),
    ],
)
def test_mistakes_are_refused(tmp_path: Path, feed: str, message: str) -> None:
    e = refused(profile(tmp_path, feed))
    assert message in str(e), str(e)


def test_tls_files_must_exist(tmp_path: Path, pems: dict[str, str]) -> None:
    e = refused(
        profile(
            tmp_path,
            f'broker = "mqtts://b"\nsite = "s"\ncert = "{pems["cert"]}"\n'
            f'key = "{tmp_path}/none.pem"\n',
        )
    )
    assert f"feed.key: {tmp_path}/none.pem: no such file" in str(e)
    e = refused(
        profile(tmp_path, 'broker = "mqtts://b"\nsite = "s"\ncert = "rel.pem"\nkey = "rel.pem"\n')
    )
    assert "feed.cert: 'rel.pem' is not an absolute path" in str(e)


def test_a_profile_name_that_cannot_be_a_topic_needs_a_table_id(tmp_path: Path) -> None:
    p = tmp_path / "x.toml"
    p.write_text(
        'name = "Table 7"\n' + BASE + '\n[feed]\nbroker = "mqtt://127.0.0.1"\nsite = "s"\n'
    )
    assert "feed.table: missing: the table id 'Table 7'" in str(refused(p))


def test_the_feed_names_the_table_the_journal_signs_for(tmp_path: Path) -> None:
    p = tmp_path / "t.toml"
    p.write_text(
        BASE + '\n[journal]\ntable_id = "pg-07"\n\n[feed]\nbroker = "mqtt://127.0.0.1"\n'
        'site = "s"\n'
    )
    feed = load_profile(p).feed
    assert feed is not None and feed.table == "pg-07"
    p.write_text(
        BASE + '\n[journal]\ntable_id = "pg-07"\n\n[feed]\nbroker = "mqtt://127.0.0.1"\n'
        'site = "s"\ntable = "pg-08"\n'
    )
    e = refused(p)
    assert e.key == "feed.table"
    assert "'pg-08' differs from journal.table_id ('pg-07'), the table id the journal signs" in str(
        e
    )


def test_a_feed_table_alone_is_the_journals_table_id_too(tmp_path: Path) -> None:
    # Issue 16: [feed] table = "t1" without [journal] table_id names the table for both; the
    # profile's name ("t", from t.toml) is used for neither.
    p = profile(tmp_path, 'broker = "mqtt://127.0.0.1"\nsite = "s"\ntable = "t1"\n')
    loaded = load_profile(p)
    assert loaded.name == "t"
    assert loaded.feed is not None and loaded.feed.table == "t1"
    assert loaded.journal.table_id == "t1"
    report = check_profile_report(p)
    assert re.search(r'^  journal\.table_id = "t1" +# \(feed\.table\)$', report, re.M), report
    assert re.search(r'^  feed\.table = "t1" +# .*t\.toml$', report, re.M), report


def test_a_journal_table_id_alone_or_the_same_in_both_is_accepted(tmp_path: Path) -> None:
    p = tmp_path / "t.toml"
    for journal, feed in (('table_id = "t1"\n', ""), ('table_id = "t1"\n', 'table = "t1"\n')):
        p.write_text(
            BASE + f'\n[journal]\n{journal}\n[feed]\nbroker = "mqtt://127.0.0.1"\n'
            f'site = "s"\n{feed}'
        )
        loaded = load_profile(p)
        assert loaded.feed is not None
        assert (loaded.journal.table_id, loaded.feed.table) == ("t1", "t1")


def test_no_feed_table_leaves_the_journal_on_the_profile_name(tmp_path: Path) -> None:
    loaded = load_profile(profile(tmp_path, 'broker = "mqtt://127.0.0.1"\nsite = "s"\n'))
    assert loaded.journal.table_id is None  # the journal signs with the name, "t"
    assert loaded.feed is not None and loaded.feed.table == "t"


def test_the_design_names_the_key_table_not_table_id(tmp_path: Path) -> None:
    # docs/design.md "Host feed (MQTT)": topics tc/<site>/<table>/..., "<table> comes from the
    # profile": the key is feed.table; the journal's key table_id written under [feed] is
    # refused with the right name, never silently ignored.
    e = refused(profile(tmp_path, 'broker = "mqtt://127.0.0.1"\nsite = "s"\ntable_id = "t1"\n'))
    assert e.key == "feed.table_id"
    assert "unknown key (did you mean 'table'?)" in str(e)
