"""docs/host-commands.md: each example command parses, names its fields as the table reads them,
and its signature checks out with the example key the page shows (computed here, not copied)."""

from __future__ import annotations

import re
from pathlib import Path

from controller.floor.commands import CommandChecker, parse
from controller.journal.heads import key_id, load_public_key

DOC = Path(__file__).resolve().parents[3] / "docs" / "host-commands.md"


def _blocks(tag: str) -> list[str]:
    return re.findall(rf"```{tag}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_the_examples_are_signed_by_the_example_key() -> None:
    (pem,) = _blocks("text host-example-key")
    key = load_public_key(pem.encode())
    examples = _blocks("json host-command")
    assert len(examples) == 3
    for text in examples:
        payload = text.strip().encode()
        message = parse(payload)
        assert message["key_id"] == key_id(key)
        checker = CommandChecker(message["table"], key, max_age_s=300)
        command = checker.check(payload, now_ns=message["ts"])  # raises when it is not signed
        assert command.cmd in ("disable", "enable", "verify")


def test_a_changed_example_is_refused() -> None:
    import pytest

    from controller.floor.commands import CommandError

    (pem,) = _blocks("text host-example-key")
    text = _blocks("json host-command")[0].strip().replace("audit", "audiT")
    message = parse(text.encode())
    checker = CommandChecker(message["table"], load_public_key(pem.encode()), max_age_s=300)
    with pytest.raises(CommandError, match="signature"):
        checker.check(text.encode(), now_ns=message["ts"])
