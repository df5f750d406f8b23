"""docs/paigow-table.md is generated from the machine's definition: snapshot tests, so a change
to the certified sequence is a reviewable diff (docs/design.md "State machines")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from controller.config.profile import PAIGOW_BUTTONS, PAIGOW_OPTIONAL_BUTTONS
from controller.tables.paigow import definition, markdown
from controller.tables.paigow.machine import PaigowRound

DOC = Path(__file__).resolve().parents[3] / "docs" / "paigow-table.md"


def section(name: str) -> str:
    text = DOC.read_text()
    match = re.search(
        rf"<!-- generated: {name} [^\n]*-->\n(.*?)<!-- end generated: {name} -->", text, re.S
    )
    assert match, f"no generated section {name} in {DOC}"
    return match.group(1)


def test_mermaid_diagram_equals_the_machine() -> None:
    assert section("mermaid") == "```mermaid\n" + markdown.mermaid() + "```\n"


@pytest.mark.parametrize(
    "name", ["state_table_markdown", "input_table_markdown", "recovery_table_markdown"]
)
def test_tables_equal_the_machine(name: str) -> None:
    assert section(name) == getattr(markdown, name)()


def test_mermaid_has_every_transition_and_state() -> None:
    diagram = markdown.mermaid()
    assert diagram.count(" --> ") == len(definition.TRANSITIONS) + 1
    for state in definition.STATE_NAMES:
        assert f" {state} --> " in diagram or f"--> {state} :" in diagram


def test_every_guard_is_documented() -> None:
    text = DOC.read_text()
    guards = {g for t in definition.TRANSITIONS for g in (*t.conditions, *t.unless)}
    for guard in guards:
        assert f"| `{guard}` |" in text
        assert hasattr(PaigowRound, f"why_{guard}")


def test_every_trigger_has_a_device_that_sends_it() -> None:
    """Nothing in the round depends on an input no device can send: each trigger is a dealer
    button the profile wires, or a console command the table accepts."""
    buttons = set(PAIGOW_BUTTONS) | set(PAIGOW_OPTIONAL_BUTTONS)
    assert set(definition.INPUTS) == set(definition.TRIGGERS)
    for trigger, inp in definition.INPUTS.items():
        button = inp.button.split("`")[1] if "`" in inp.button else None
        command = inp.console.split("`")[1].split()[0] if "`" in inp.console else None
        assert button in buttons or command in definition.ACTION_NAMES, trigger
        if button is not None:
            assert button == trigger
    # Every required button is a trigger: a button press never goes unused.
    assert set(PAIGOW_BUTTONS) <= set(definition.TRIGGERS)


def test_every_state_has_a_recovery_rule() -> None:
    assert set(definition.STATE_NAMES) <= set(definition.RECOVERY_RULES)
    assert all(rule in ("resume", "void") for rule, _ in definition.RECOVERY_RULES.values())
