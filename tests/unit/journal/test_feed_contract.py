"""The journal as the feed reads it (docs/journal.md "Reading for the feed"): what a table's
reader hands the publisher (``rows_after``, ``heads_after``) is what the collector's verifier
accepts with the table's public key alone, and a rewritten row is refused by it."""

from __future__ import annotations

from pathlib import Path

from controller.app import Application
from controller.config.profile import load_profile
from controller.feed.keys import KeyRing
from controller.feed.messages import head_payload, row_payload, topic
from controller.feed.store import Store
from controller.feed.verifier import Verifier, VerifierSettings
from drivers.buttons import ButtonPressed

REPO = Path(__file__).resolve().parents[3]


def _played(state: Path) -> tuple[str, bytes]:
    app = Application(
        load_profile(REPO / "hw_profiles" / "sim-paigow.toml"), state, console_port="none"
    )
    try:
        app.start()
        for _ in range(2):
            for name in ("shuffled", "no_more_bets", "draw", "dealt", "hands_set", "settled"):
                app.dispatch(ButtonPressed(name, 0))
        assert app.trust.notary.wait_idle(10)
        return app.trust.table, app.trust.public_pem
    finally:
        app.close()


def test_the_collector_accepts_the_tables_rows_and_heads(tmp_path: Path) -> None:
    table, pem = _played(tmp_path / "state")
    keys = tmp_path / "keys"
    keys.mkdir()
    (keys / f"{table}.pem").write_bytes(pem)
    store = Store.open(f"sqlite:///{tmp_path / 'collector.sqlite'}")
    alarms: list[str] = []
    verifier = Verifier(store, KeyRing(keys), VerifierSettings(site="s1"), on_alarm=alarms.append)
    from controller.journal.store import Journal

    reader = Journal(tmp_path / "state" / "journal.sqlite", readonly=True)
    try:
        rows = reader.rows_after(0, 10_000)
        heads = reader.heads_after(0, 10_000)
    finally:
        reader.close()
    assert rows and heads
    for row in rows:
        verifier.handle(topic("s1", table, "rows"), row_payload(row.as_dict()))
    for head in heads:
        verifier.handle(topic("s1", table, "heads"), head_payload(head.as_dict()))
    store.commit()
    assert alarms == []
    assert verifier.counters.rows_stored == len(rows)
    assert verifier.counters.heads_stored == len(heads)
    # the same row with another number: a fork (the collector has the original)
    drawn = next(r for r in rows if r.kind == "paigow.drawn")
    forged = {
        **drawn.as_dict(),
        "data": {
            **drawn.data,
            "record": {**drawn.data["record"], "number": drawn.data["record"]["number"] % 8 + 1},
        },
    }
    verifier.handle(topic("s1", table, "rows"), row_payload(forged))
    assert alarms, "a rewritten row must be refused"
    store.close()
