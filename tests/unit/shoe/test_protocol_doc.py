"""Every frame example in docs/shoe-protocol.md (and DESIGN.md's, copied there) is revision 2 and
its checksum is right: each ``$TYPE,...*HH`` parses as a frame with a session id, and every frame
written schematically (``$NAK,next,SID``) names its SID."""

from __future__ import annotations

import re
from pathlib import Path

from drivers.shoe_protocol import KNOWN_TYPES, Frame, is_sid, parse_frame

DOC = Path(__file__).resolve().parents[3] / "docs" / "shoe-protocol.md"
EXAMPLE = re.compile(r"\$[A-Z][A-Z0-9]{0,7},[^`\s]*\*[0-9A-Fa-f]{2}")
SCHEMATIC = re.compile(r"`(\$(?:" + "|".join(sorted(KNOWN_TYPES)) + r"),[^`]*)`")


def test_every_frame_example_is_revision_2_with_the_right_checksum() -> None:
    text = DOC.read_text(encoding="utf-8")
    examples = EXAMPLE.findall(text)
    assert len(examples) >= 7, examples  # DESIGN.md's four, and the doc's own
    for example in examples:
        frame = parse_frame(example.encode("ascii") + b"\r\n")
        assert isinstance(frame, Frame), (example, frame)
        assert is_sid(frame.sid), example
    assert {"$HELO,0,1A2B3C4D,REF-SHOE,2.0*7F", "$CARD,1,1A2B3C4D,QH*10",
            "$HBT,2,1A2B3C4D*6C", "$ACK,2,1A2B3C4D*7B"} <= set(examples)


def test_every_schematic_frame_names_its_session() -> None:
    text = DOC.read_text(encoding="utf-8")
    for written in SCHEMATIC.findall(text):
        fields = written.split("*")[0].split(",")
        assert len(fields) >= 3, written  # TYPE, SEQ, SID
        assert fields[2] in ("SID", "sid") or is_sid(fields[2]), written
