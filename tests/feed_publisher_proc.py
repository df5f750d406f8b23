"""A publisher in a process of its own, over a journal kept as JSON lines by the test (rows and
heads written by tests/feed_journal.py), so a test can SIGKILL it mid-publish and start it again.

    python -m tests.feed_publisher_proc JOURNAL_DIR STATE_DIR HOST PORT CA CERT KEY SITE TABLE
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from controller.feed.broker import BrokerSettings
from controller.feed.publisher import Publisher, PublisherSettings
from tests.feed_journal import FakeHead, FakeRow


class FileJournal:
    """rows.jsonl and heads.jsonl, re-read on every call (the test appends to them)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _lines(self, name: str) -> list[dict[str, Any]]:
        try:
            text = (self.directory / name).read_text()
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in text.splitlines() if line.endswith("}")]

    def rows_after(self, seq: int, limit: int) -> list[FakeRow]:
        return [FakeRow(**r) for r in self._lines("rows.jsonl") if r["seq"] > seq][:limit]

    def heads_after(self, seq: int, limit: int) -> list[FakeHead]:
        return [FakeHead(**h) for h in self._lines("heads.jsonl") if h["seq"] > seq][:limit]

    def close(self) -> None:
        pass


def write_journal(directory: Path, rows: list[FakeRow], heads: list[FakeHead]) -> None:
    """Write the test's journal for the process (whole files, replaced)."""
    for name, items in (("rows.jsonl", rows), ("heads.jsonl", heads)):
        tmp = directory / (name + ".tmp")
        tmp.write_text("".join(json.dumps(i.as_dict()) + "\n" for i in items))
        tmp.replace(directory / name)


def main(argv: list[str]) -> None:
    jdir, state, host, port, ca, cert, key, site, table = argv
    settings = PublisherSettings(
        BrokerSettings(host, int(port), True, ca, cert, key),
        site,
        table,
        Path(state) / "feed.position",
    )
    pub = Publisher(settings, lambda: FileJournal(Path(jdir)))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    pub.start()
    print("publisher started", flush=True)
    while not stop.wait(0.02):
        pub.wake()
    pub.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
