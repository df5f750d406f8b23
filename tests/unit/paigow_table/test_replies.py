"""The replies' texts are data (controller/tables/paigow/replies.py): each names a trigger of
the machine and fills only the fields the table gives it."""

from __future__ import annotations

import string

from controller.tables.paigow.definition import TRIGGERS
from controller.tables.paigow.replies import CONFIRMATIONS, confirmation

FIELDS = {"rid", "seat", "player", "whose", "reason", "reshuffles", "bank_seat"}


def test_every_reply_is_a_triggers() -> None:
    assert {key.partition("/")[0] for key in CONFIRMATIONS} <= set(TRIGGERS)


def test_every_template_takes_only_the_tables_fields() -> None:
    for key, template in CONFIRMATIONS.items():
        names = {name for _, name, _, _ in string.Formatter().parse(template) if name}
        assert names <= FIELDS, key


def test_a_reply_not_in_the_table_says_nothing() -> None:
    assert confirmation("draw", rid=1) == []
    assert confirmation("no_bank", rid=7) == ["the house banks round 7"]
