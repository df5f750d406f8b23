"""The collectors' share of a site's tables (controller/feed/share.py) on a real PostgreSQL,
with the clock given: an instance alone claims every table; one that joins gets its share by
taking what the first offers, and the first's batches no longer lock what it gave; a member that
stops renewing is adopted whole by another, which learns its client id; a clean exit ends the
membership at once (docs/feed.md "Many collectors")."""

from __future__ import annotations

import importlib.util

import pytest

from controller.feed.share import LEASE_S, RENEW_S, Share
from controller.feed.store import Store

if importlib.util.find_spec("tests.services") is None:
    pytest.skip("MISSING tests/services (the real-services fixtures)", allow_module_level=True)

SITE = "site1"
TABLES = [f"table-{n:02d}" for n in range(1, 8)]
S = 1_000_000_000


def test_share_claim_offer_take_adopt(postgres_url: str) -> None:
    a_store, b_store = Store.open(postgres_url), Store.open(postgres_url)
    try:
        a = Share(a_store, SITE, "a", "tc-collector-site1-a")
        b = Share(b_store, SITE, "b", "tc-collector-site1-b")
        t = 1000 * S
        # alone: the first renewal only joins, the next claims every table
        assert a.renew(t, TABLES, claim=False).held == set()
        assert a.renew(t + 2 * S, TABLES).held == set(TABLES)
        # b joins; a (7 tables, share now 4) offers 3; b takes them
        assert b.renew(t + 3 * S, TABLES, claim=False).held == set()
        assert a.renew(t + 4 * S, TABLES).held == set(TABLES)
        renewal = b.renew(t + 5 * S, TABLES)
        assert renewal.held == set() and len(renewal.offered) == 3
        taken = b.take_offered(t + 5 * S, renewal.offered)
        assert taken == renewal.offered
        # a's next batch locks only what is still its own; its renewal says what it lost
        mine = a.locked()
        a_store.rollback()
        assert mine == set(TABLES) - taken
        assert a.renew(t + 6 * S, TABLES).lost == taken
        assert b.renew(t + 6 * S, TABLES).held == taken
        # b stops renewing (killed): once its lease ran out, a adopts all of it with its id
        later = t + 6 * S + int((LEASE_S + RENEW_S) * S)
        renewal = a.renew(later, TABLES)
        assert renewal.adopted == [("tc-collector-site1-b", taken)]
        assert renewal.held == set(TABLES) and renewal.gained == taken
        # adopted once: the next renewal adopts nothing again
        assert a.renew(later + 2 * S, TABLES).adopted == []
        # b comes back: it joins with nothing and is offered its share again
        b.renew(later + 3 * S, TABLES, claim=False)
        a.renew(later + 4 * S, TABLES)
        assert len(b.renew(later + 5 * S, TABLES).offered) == 3
        # a clean exit ends a's membership at once: b adopts a's tables at its next renewal
        a.leave()
        renewal = b.renew(later + 6 * S, TABLES)
        assert [cid for cid, _ in renewal.adopted] == ["tc-collector-site1-a"]
        assert renewal.held == set(TABLES)
    finally:
        a_store.close()
        b_store.close()


def test_members_away_from_the_broker_keep_their_tables(postgres_url: str) -> None:
    """Both instances lost the broker (an outage): each keeps its membership and leases alive
    and nothing more, so neither adopts the other's tables; one that only keeps alive is not
    adopted, one that stops altogether still is."""
    a_store, b_store = Store.open(postgres_url), Store.open(postgres_url)
    try:
        a = Share(a_store, "site-away", "a", "tc-collector-away-a")
        b = Share(b_store, "site-away", "b", "tc-collector-away-b")
        t = 1000 * S
        a.renew(t, TABLES, claim=False)
        a.renew(t + 2 * S, TABLES)
        b.renew(t + 3 * S, TABLES, claim=False)
        a.renew(t + 4 * S, TABLES)
        b.take_offered(t + 5 * S, b.renew(t + 5 * S, TABLES).offered)
        a_held = set(TABLES) - b.held
        assert a.renew(t + 6 * S, TABLES).held == a_held
        # the broker is away for three lease times: both only keep alive every RENEW_S
        step = int(RENEW_S * S)
        now = t + 6 * S
        while now < t + 6 * S + int(3 * LEASE_S * S):
            now += step
            a.keep_alive(now)
            b.keep_alive(now)
        # back: nobody adopted anybody, each holds what it held
        ra, rb = a.renew(now + step, TABLES), b.renew(now + step, TABLES)
        assert ra.adopted == [] and rb.adopted == []
        assert ra.held == a_held and rb.held == set(TABLES) - a_held
        assert ra.lost == set() and rb.lost == set()
        # b stops keeping alive too (killed): it is adopted as before
        later = now + step + int((LEASE_S + RENEW_S) * S)
        a.keep_alive(later - step)  # a only kept alive meanwhile: it adopts nothing itself
        assert [cid for cid, _ in a.renew(later, TABLES).adopted] == ["tc-collector-away-b"]
    finally:
        a_store.close()
        b_store.close()
