"""Many collectors on one PostgreSQL store: which instance serves which table (docs/feed.md
"Many collectors").

Each instance is a *member* (``collector_members``: its name, its MQTT client id, until when it
is alive) and holds *leases* (``collector_leases``: one row a table, its holder and until when).
Every :data:`RENEW_S` an instance renews its membership and its leases in one transaction, then:

* adopts a dead member (its membership expired): takes all its leases at once and is told the
  dead one's MQTT client id, so it can drain the session the broker kept for it (what the
  tables sent after the death and before the adopter subscribed is there, nowhere else);
* claims unleased tables (commissioned keys, tables in the store, tables seen on the site-wide
  ``tc/<site>/+/status`` watch) up to its share: the tables divided by the live members;
* offers its surplus (it holds more than its share while another holds less): an offered lease
  stays its holder's, who keeps storing, until another instance that has subscribed to the
  table takes it over (:meth:`Share.take_offered`); from then on the old holder's batches see
  it is no longer theirs (:meth:`Share.locked`, a row lock each batch takes) and leave it.

Every batch the collector stores locks its leases (``FOR SHARE``): a lease is never moved while
a batch of its table is being stored, so one table's rows are stored by one instance at a time.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from controller.feed.store import Store
from controller.fields.readers import as_int

#: How long a lease and a membership last without renewal (seconds): a killed instance's tables
#: are adopted by another within LEASE_S + RENEW_S (and its session drained after that).
LEASE_S: Final = 10.0
#: How often an instance renews, claims and offers (seconds).
RENEW_S: Final = 2.0


@dataclass
class Renewal:
    """What one renewal changed for this instance."""

    held: set[str] = field(default_factory=set)
    gained: set[str] = field(default_factory=set)
    lost: set[str] = field(default_factory=set)
    #: Dead members adopted: (their MQTT client id, the tables taken from them).
    adopted: list[tuple[str, set[str]]] = field(default_factory=list)
    #: Tables offered by others that this instance may take (subscribe first, then take).
    offered: set[str] = field(default_factory=set)


class Share:
    """This instance's share of a site's tables, kept in the store's lease tables."""

    def __init__(self, store: Store, site: str, holder: str, client_id: str) -> None:
        self.store = store
        self.site = site
        self.holder = holder
        self.client_id = client_id
        self.held: set[str] = set()

    def _ns(self, seconds: float) -> int:
        return int(seconds * 1e9)

    def renew(self, now_ns: int, universe: Iterable[str], *, claim: bool = True) -> Renewal:
        """One renewal in its own transaction (committed here)."""
        s, me, lease = self.site, self.holder, self._ns(LEASE_S)
        until = now_ns + lease
        out = Renewal()
        db = self.store
        held = self._alive(until)
        dead = db.execute(
            "SELECT holder FROM collector_members WHERE site = ? AND expires_ns < ?"
            " AND adopted_by IS NULL AND holder <> ?",
            (s, now_ns, me),
        )
        for (other,) in dead:
            won = db.execute(
                "UPDATE collector_members SET adopted_by = ? WHERE site = ? AND holder = ?"
                " AND adopted_by IS NULL AND expires_ns < ? RETURNING client_id",
                (me, s, other, now_ns),
            )
            if not won:
                continue
            taken = {
                str(r[0])
                for r in db.execute(
                    "UPDATE collector_leases SET holder = ?, expires_ns = ?, offered = 0"
                    " WHERE site = ? AND holder = ? RETURNING table_id",
                    (me, until, s, other),
                )
            }
            out.adopted.append((str(won[0][0]), taken))
            held |= taken
        if claim:
            members = {
                str(r[0])
                for r in db.execute(
                    "SELECT holder FROM collector_members WHERE site = ? AND expires_ns >= ?",
                    (s, now_ns),
                )
            }
            live = len(members | {me})
            leases = {
                str(t): (str(h), as_int(e, "expires_ns"), bool(o))
                for t, h, e, o in db.execute(
                    "SELECT table_id, holder, expires_ns, offered FROM collector_leases"
                    " WHERE site = ?",
                    (s,),
                )
            }
            tables = set(universe) | set(leases)
            share = math.ceil(len(tables) / live)
            free = sorted(t for t in tables if t not in leases or leases[t][1] < now_ns)
            for table in free[: max(share - len(held), 0)]:
                got = db.execute(
                    "INSERT INTO collector_leases (site, table_id, holder, expires_ns, offered)"
                    " VALUES (?, ?, ?, ?, 0) ON CONFLICT (site, table_id) DO UPDATE SET"
                    " holder = excluded.holder, expires_ns = excluded.expires_ns, offered = 0"
                    " WHERE collector_leases.expires_ns < ? RETURNING table_id",
                    (s, table, me, until, now_ns),
                )
                if got:
                    held.add(table)
            # the floor's share: more than this instance's share while another has less
            counts: dict[str, int] = {}
            for h, e, _ in leases.values():
                if e >= now_ns:
                    counts[h] = counts.get(h, 0) + 1
            short = any(counts.get(h, 0) < share for h in members if h != me)
            mine_offered = {t for t, (h, _, o) in leases.items() if h == me and o}
            surplus = len(held) - share
            if surplus > 0 and short:
                for table in sorted(held - mine_offered)[: surplus - len(mine_offered)]:
                    db.execute(
                        "UPDATE collector_leases SET offered = 1 WHERE site = ? AND table_id = ?"
                        " AND holder = ?",
                        (s, table, me),
                    )
            if len(held) < share:
                out.offered = {
                    t for t, (h, e, o) in leases.items() if o and h != me and e >= now_ns
                }
        db.commit()
        out.gained, out.lost = held - self.held, self.held - held
        self.held = out.held = held
        return out

    def _alive(self, until: int) -> set[str]:
        """Renew the membership and the leases held to ``until``; the tables held."""
        s, me, db = self.site, self.holder, self.store
        db.execute(
            "INSERT INTO collector_members (site, holder, client_id, expires_ns, adopted_by)"
            " VALUES (?, ?, ?, ?, NULL) ON CONFLICT (site, holder) DO UPDATE SET"
            " client_id = excluded.client_id, expires_ns = excluded.expires_ns, adopted_by = NULL",
            (s, me, self.client_id, until),
        )
        return {
            str(r[0])
            for r in db.execute(
                "UPDATE collector_leases SET expires_ns = ? WHERE site = ? AND holder = ?"
                " RETURNING table_id",
                (until, s, me),
            )
        }

    def keep_alive(self, now_ns: int) -> None:
        """While the broker is away: renew the membership and the leases held, nothing more
        (committed here). The instance is not dead (its tables' messages wait for it in its
        broker session), so no other adopts its tables; it adopts and claims nothing either,
        since it could not drain or receive what it would gain."""
        self.store.rollback()
        self._alive(now_ns + self._ns(LEASE_S))
        self.store.commit()

    def take_offered(self, now_ns: int, tables: Iterable[str]) -> set[str]:
        """Take tables another instance offered (this one subscribed to them already); waits
        for the offering instance's running batch (its row lock). Committed here."""
        got: set[str] = set()
        until = now_ns + self._ns(LEASE_S)
        for table in sorted(tables):
            rows = self.store.execute(
                "UPDATE collector_leases SET holder = ?, expires_ns = ?, offered = 0"
                " WHERE site = ? AND table_id = ? AND offered = 1 AND holder <> ?"
                " RETURNING table_id",
                (self.holder, until, self.site, table, self.holder),
            )
            if rows:
                got.add(table)
        self.store.commit()
        self.held |= got
        return got

    def locked(self) -> set[str]:
        """The tables this instance holds, their lease rows locked until the running
        transaction ends (a batch's first statement)."""
        return {
            str(r[0])
            for r in self.store.execute(
                "SELECT table_id FROM collector_leases WHERE site = ? AND holder = ? FOR SHARE",
                (self.site, self.holder),
            )
        }

    def leave(self) -> None:
        """On a clean exit: the membership ends now, so another instance adopts the tables at
        its next renewal and drains what the broker keeps in this one's session meanwhile (as
        after a death, without waiting for the lease to run out)."""
        self.store.rollback()
        self.store.execute(
            "UPDATE collector_members SET expires_ns = 0 WHERE site = ? AND holder = ?",
            (self.site, self.holder),
        )
        self.store.commit()
