"""Every frame example in docs/shoe-protocol.md and docs/design.md is revision 3 and its checksum
is right: each ``$TYPE,...*HH`` parses as a frame with a session id, every ``$HELO`` names
revision 3 (but the one the doc shows refused), and every frame written schematically
(``$NAK,next,SID``) names its SID."""

from __future__ import annotations

import re
from pathlib import Path

from drivers.shoe_protocol import (
    KNOWN_TYPES,
    REVISION,
    Frame,
    SequenceTracker,
    Verdict,
    helo_revision,
    is_sid,
    parse_frame,
)
from drivers.sim.shoe import FAULTS

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs"
DOC = DOCS / "shoe-protocol.md"
EXAMPLE = re.compile(r"\$[A-Z][A-Z0-9]{0,7},[^`\s]*\*[0-9A-Fa-f]{2}")
SCHEMATIC = re.compile(r"`(\$(?:" + "|".join(sorted(KNOWN_TYPES)) + r"),[^`]*)`")


def test_every_frame_example_is_revision_3_with_the_right_checksum() -> None:
    design = EXAMPLE.findall((DOCS / "design.md").read_text(encoding="utf-8"))
    examples = EXAMPLE.findall(DOC.read_text(encoding="utf-8"))
    assert len(examples) >= 9, examples  # docs/design.md's four, and the doc's own
    refused = []
    for example in [*design, *examples]:
        frame = parse_frame(example.encode("ascii") + b"\r\n")
        assert isinstance(frame, Frame), (example, frame)
        assert is_sid(frame.sid), example
        if frame.type == "HELO" and helo_revision(frame) != REVISION:
            assert SequenceTracker().classify(frame).verdict is Verdict.BAD_REVISION
            refused.append(example)
    assert refused == ["$HELO,0,5C0FFEE5,OLD-SHOE,1.4*1D"]  # the doc's one refused shoe
    assert set(design) == {
        "$HELO,0,1A2B3C4D,REF-SHOE,2.0,3*60",
        "$CARD,1,1A2B3C4D,QH*10",
        "$ACK,1,1A2B3C4D*78",
        "$HBT,1,1A2B3C4D*6F",
    }
    assert set(design) <= set(examples)


def test_every_schematic_frame_names_its_session() -> None:
    """In every doc, README and the table's trigger texts: no revision-1 frame form is left."""
    from controller.tables.baccarat.machine import TRIGGER_INPUTS

    # docs/reliability.md keeps the history of revision 1 (its findings quote its frames)
    texts = {
        str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
        for p in [*sorted(DOCS.glob("*.md")), ROOT / "README.md"]
        if p.name != "reliability.md"
    }
    texts["TRIGGER_INPUTS"] = " ".join(f"`{t}`" for t in TRIGGER_INPUTS.values())
    found = 0
    for name, text in texts.items():
        for written in SCHEMATIC.findall(text):
            fields = written.split("*")[0].split(",")
            assert len(fields) >= 3, (name, written)  # TYPE, SEQ, SID
            assert fields[2] in ("SID", "sid") or is_sid(fields[2]), (name, written)
            found += 1
    assert found >= 10


def _listed(text: str, anchor: str) -> list[str]:
    """The comma-separated names in the parentheses that follow ``anchor``."""
    after = text[text.index(anchor) + len(anchor) - 1 :]
    inside = after[after.index("(") + 1 : after.index(")")]
    return [name.strip().split(":")[0].strip() for name in inside.replace("\n", " ").split(",")]


def test_every_doc_names_the_one_fault_vocabulary() -> None:
    """Issue 12 item 3: the console, the emulator and the docs use drivers.sim.shoe.FAULTS."""
    expected = list(FAULTS)
    protocol = (DOCS / "shoe-protocol.md").read_text()
    table = re.findall(
        r"^\| `([a-z]+)` \|", protocol[protocol.index("sim shoe fault KIND") :], re.MULTILINE
    )
    assert table == expected
    console = (DOCS / "console.md").read_text()
    assert _listed(console, "`sim shoe fault KIND` (") == expected
    baccarat = (DOCS / "baccarat-table.md").read_text()
    assert _listed(baccarat, "`sim shoe fault KIND` injects") == expected
