"""The docs/paigow-table.md tables and diagram, generated from the machine's definition
(:mod:`controller.tables.paigow.definition`) and snapshot-tested
(tests/unit/paigow_table/test_docs.py)."""

from __future__ import annotations

from controller.tables.paigow.definition import (
    INPUTS,
    RECOVERY_RULES,
    STATES,
    TRANSITIONS,
    TRIGGERS,
)


def mermaid() -> str:
    """The Mermaid state diagram of :data:`TRANSITIONS` (snapshot-tested against the docs)."""
    lines = ["stateDiagram-v2", "    [*] --> inspection"]
    for t in TRANSITIONS:
        guard = [*t.conditions, *(f"not {u}" for u in t.unless)]
        label = t.trigger + (f" [{', '.join(guard)}]" if guard else "")
        lines.append(f"    {t.source} --> {t.dest} : {label}")
    return "\n".join(lines) + "\n"


def state_table_markdown() -> str:
    """Every state, what happens in it and the triggers that leave it (docs/paigow-table.md)."""
    rows = [
        "| state | at the table | regulation | triggers accepted (-> next state) |",
        "| --- | --- | --- | --- |",
    ]
    for name, what, cite in STATES:
        out = []
        for t in TRANSITIONS:
            if t.source == name:
                guard = [*t.conditions, *(f"not {u}" for u in t.unless)]
                g = f" [{', '.join(guard)}]" if guard else ""
                out.append(f"`{t.trigger}`{g} -> {t.dest}")
        rows.append(f"| `{name}` | {what} | {cite} | {'; '.join(out)} |")
    return "\n".join(rows) + "\n"


def input_table_markdown() -> str:
    """Every trigger and which input sends it, with its data (docs/paigow-table.md)."""
    rows = [
        "| trigger | dealer button | console command | data carried |",
        "| --- | --- | --- | --- |",
    ]
    for trig in TRIGGERS:
        i = INPUTS[trig]
        rows.append(f"| `{trig}` | {i.button} | {i.console} | {i.data} |")
    return "\n".join(rows) + "\n"


def recovery_table_markdown() -> str:
    """The recovery rule per state (docs/paigow-table.md)."""
    rows = ["| state at restart | rule | why |", "| --- | --- | --- |"]
    for state, (rule, why) in RECOVERY_RULES.items():
        rows.append(f"| `{state}` | {rule} | {why} |")
    return "\n".join(rows) + "\n"
