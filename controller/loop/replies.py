"""Console replies that wait: for a command on a worker thread (``journal verify``, ``rng
capture``), or for the events a command caused (a simulated button's press, a simulated shoe's
frames). The loop asks :meth:`DeferredReplies.flush` after each round of events; a reply is
sent once its result is ready, or at its deadline with a warning, and a running command's
progress lines are sent as they come. Nothing here blocks the loop."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class PendingReply:
    """A console reply the loop sends once ``ready`` (or at ``deadline``, with a warning);
    ``progress`` gives the lines a running command has to say meanwhile."""

    ready: Callable[[], bool]
    deadline: float
    reply: Callable[[list[str]], None]
    render: Callable[[], list[str]]
    progress: Callable[[], list[str]] | None = None
    send_progress: Callable[[list[str]], None] | None = None


class DeferredReplies:
    """The replies waiting, answered from the loop thread."""

    def __init__(self, guarded: Callable[[Callable[[], object]], object], wait_s: float) -> None:
        #: Runs a check and reports (never raises) what it raised.
        self._guarded = guarded
        self._wait_s = wait_s
        self._pending: list[PendingReply] = []

    def add(self, pending: PendingReply) -> None:
        self._pending.append(pending)

    def __bool__(self) -> bool:
        return bool(self._pending)

    def flush(self, now: float) -> None:
        """Send what is ready (or overdue), and the progress of what is still running."""
        keep = []
        for pending in self._pending:
            if pending.progress is not None and pending.send_progress is not None:
                news: list[str] = []
                self._guarded(functools.partial(_extend_from, pending.progress, news))
                if news:
                    pending.send_progress(news)
            arrived: list[bool] = []
            self._guarded(functools.partial(_check_into, pending.ready, arrived))
            if not arrived or arrived[0]:  # arrived, or its check failed (reported): answer
                pending.reply(pending.render())
            elif now >= pending.deadline:
                pending.reply([f"!WARN no result within {self._wait_s:.0f} s", *pending.render()])
            else:
                keep.append(pending)
        self._pending = keep


def _extend_from(source: Callable[[], list[str]], box: list[str]) -> None:
    box.extend(source())


def _check_into(ready: Callable[[], bool], box: list[bool]) -> None:
    box.append(bool(ready()))
