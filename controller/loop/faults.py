"""The faults the controller holds besides the table's: a journal that failed or cannot be
vouched for, a program or profile file that changed, the feed, the settings. Each stops play
(the tables refuse round inputs while one is held) until a technician clears it with
``fault clear`` (docs/console.md); raising and clearing are journaled, and alarmed on every
console."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping


class Faults:
    """The held faults, in the order they were raised, each once."""

    def __init__(
        self,
        journal: Callable[[str, Mapping[str, object]], object],
        alarm: Callable[[str], None],
    ) -> None:
        self._journal = journal
        self._alarm = alarm
        self._held: list[str] = []

    def raise_fault(self, text: str, source: str = "app") -> None:
        """Hold ``text``: journaled (``fault.raised``) and alarmed, once."""
        if text not in self._held:
            self._held.append(text)
            self._journal("fault.raised", {"fault": text, "source": source})
            self._alarm(f"FAULT {text}")

    def latch(self, text: str) -> bool:
        """Hold ``text`` without a row (the journal itself failed); True when it is new (the
        caller alarms it at once: the transaction it was in is lost)."""
        if text in self._held:
            return False
        self._held.append(text)
        return True

    def clear(self, who: str) -> list[str]:
        """Clear every held fault (its causes are gone: the console checked); one
        ``fault.cleared`` row each. Returns the console lines."""
        lines = []
        for fault in list(self._held):
            self._journal("fault.cleared", {"fault": fault, "who": who})
            lines.append(f"cleared: {fault}")
        self._held.clear()
        return lines

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._held))

    def __len__(self) -> int:
        return len(self._held)

    def __contains__(self, text: object) -> bool:
        return text in self._held
