"""docs/baccarat-table.md matches the machine: the diagram, every state and every trigger."""

from __future__ import annotations

from pathlib import Path

from controller.tables.baccarat.machine import RECOVERY_RULES, STATES, TRANSITIONS, mermaid

DOC = Path(__file__).resolve().parents[3] / "docs" / "baccarat-table.md"


def test_the_diagram_in_the_docs_is_the_machine() -> None:
    text = DOC.read_text()
    start = text.index("```mermaid\n") + len("```mermaid\n")
    assert text[start : text.index("```", start)] == mermaid()


def test_every_state_has_a_row_and_a_recovery_rule() -> None:
    text = DOC.read_text()
    for state in STATES:
        assert f"| `{state}` |" in text
    assert set(RECOVERY_RULES) == set(STATES)


def test_every_trigger_is_documented() -> None:
    text = DOC.read_text()
    for trigger, *_ in TRANSITIONS:
        assert f"`{trigger}`" in text
