"""Why a trigger is refused: a guard returns its reason once.

A game's guards are named functions returning a reason (None: allowed). The same guard is the
state machine's condition and the refusal's reason, and within one verdict (the table asking
"may this input fire?" and then firing it) each guard is evaluated once: the machine's
condition reads the answer the refusal computed, so a guard that reads settings or computes a
settlement does not run twice per input, and the two can never disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Generic, TypeVar

#: The event a guard reads (its ``kwargs``, its ``source`` state): the machine's, or a probe.
E = TypeVar("E", contravariant=True)


class Guards(Generic[E]):
    """A game's guards by name (each: the event -> the reason, or None), with one verdict's
    memo."""

    def __init__(self, guards: Mapping[str, Callable[[E], str | None]]) -> None:
        self._guards = dict(guards)
        self._memo: dict[str, str | None] | None = None

    def why(self, name: str, event: E) -> str | None:
        """The reason guard ``name`` refuses ``event`` (None: allowed); once per verdict."""
        memo = self._memo
        if memo is not None and name in memo:
            return memo[name]
        reason = self._guards[name](event)
        if memo is not None:
            memo[name] = reason
        return reason

    def ok(self, name: str) -> Callable[[E], bool]:
        """The machine's condition for guard ``name``."""
        return lambda event: self.why(name, event) is None

    @contextmanager
    def verdict(self) -> Iterator[None]:
        """One input's decision: each guard evaluated at most once inside (the refusal's
        question, then the machine's conditions as it fires with the same data)."""
        outer = self._memo
        if outer is None:
            self._memo = {}
        try:
            yield
        finally:
            if outer is None:
                self._memo = None
