"""The table's side of the host's signed commands (docs/host-commands.md), on the loop thread.

The publisher's thread hands each command it admits (the flood bound) to the loop as
:class:`HostCommandReceived`, unread; here it is checked (controller/floor/commands.py), journaled
with its verdict and obeyed, and the reply is handed back to the publisher. A refused command
changes nothing: it is journaled as ``host.refused`` with why (repeats folded into counted rows,
controller/journal/summary.py), and answered. ``verify SEED`` hashes every loaded file on a worker
thread (tens of megabytes), its result journaled and answered from the loop.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from controller.fields.readers import opt_int_of
from controller.floor.commands import (
    ACCEPTED_KIND,
    REFUSED_KIND,
    Command,
    CommandChecker,
    CommandError,
    reply,
    summary,
)
from controller.journal.store import Journal
from controller.journal.summary import Summaries
from controller.tables.gate import DisableLatch

#: Who a host command is journaled as.
HOST: Final = "host"
#: How long a ``verify SEED`` may hash before the host is told it failed.
VERIFY_TIMEOUT_S: Final = 600.0


@dataclass(frozen=True, slots=True)
class HostCommandReceived:
    """A message on the command topic, as the broker delivered it (unread)."""

    payload: bytes


@dataclass(frozen=True, slots=True)
class HostCommandsFlooded:
    """Commands the publisher dropped unread (more than ``commands_per_minute``)."""

    count: int


class HostCommands:
    """Checks, journals and obeys the host's commands (loop thread only)."""

    def __init__(
        self,
        journal: Journal,
        summaries: Summaries,
        checker: CommandChecker,
        latch: DisableLatch,
        *,
        send_reply: Callable[[bytes], None],
        request_meters: Callable[[], None],
        request_replay: Callable[[int, int], None],
        recall: Callable[[int], list[str]],
        hmac: Callable[[str], Callable[[], tuple[str, int]]],
        post: Callable[[Callable[[], None]], None],
        clock_ns: Callable[[], int] = time.time_ns,
    ) -> None:
        self._journal = journal
        self._summaries = summaries
        self.checker = checker
        self._latch = latch
        self._send_reply = send_reply
        self._request_meters = request_meters
        self._request_replay = request_replay
        self._recall = recall
        self._hmac = hmac
        self._post = post
        self._clock_ns = clock_ns
        row = journal.last([ACCEPTED_KIND])
        if row is not None:
            checker.last_seq = opt_int_of(row.data, "seq") or 0

    def handle(self, event: HostCommandReceived | HostCommandsFlooded) -> None:
        if isinstance(event, HostCommandsFlooded):
            # one row for the lot: each dropped command counted, none read
            self._journal.append(
                REFUSED_KIND,
                {
                    "why": "flood",
                    "reason": "more commands than the profile allows",
                    "count": event.count,
                },
            )
            return
        try:
            command = self.checker.check(event.payload, self._clock_ns())
        except CommandError as exc:
            self._summaries.note(
                REFUSED_KIND,
                f"host:{exc.why}",
                {"why": exc.why, "reason": exc.reason, **summary(event.payload)},
            )
            seen = summary(event.payload).get("seq")
            seq = seen if isinstance(seen, int) else None
            self._answer(seq, False, [f"refused: {exc.reason}"], exc.why)
            return
        self.checker.accepted(command)
        lines, ok = self._obey(command)
        self._journal.append(
            ACCEPTED_KIND,
            {
                "seq": command.seq,
                "ts": command.ts,
                "cmd": command.cmd,
                "args": list(command.args),
                "key_id": command.key_id,
                "ok": ok,
                "lines": lines[:20],
            },
        )
        if lines:
            self._answer(command.seq, ok, lines)

    def _answer(self, seq: int | None, ok: bool, lines: list[str], why: str = "") -> None:
        payload = reply(self.checker.table, seq, ok, lines, why, now_ns=self._clock_ns())
        # sent once the rows above are committed (a reply never tells of an unrecorded change)
        self._journal.after_commit(lambda: self._send_reply(payload))

    def _obey(self, c: Command) -> tuple[list[str], bool]:
        """What the command did: the reply's lines and whether it succeeded. ``verify`` answers
        later (empty lines here)."""
        if c.cmd == "disable":
            reason = " ".join(c.args)
            if self._latch.disable(reason, HOST, HOST):
                return [f"disabled: {reason}; the round under way finishes, no new round"], True
            return [f"already disabled: {self._latch.reason}"], True
        if c.cmd == "enable":
            if self._latch.enable(HOST, HOST):
                return ["enabled: rounds may start"], True
            return ["not disabled: nothing to enable"], True
        if c.cmd == "meters":
            self._request_meters()
            return ["meters published on the meters topic"], True
        # the checker passed the arguments (commands.argument_problem)
        if c.cmd == "recall":
            return self._recall(int(c.args[0]) if c.args else 10), True
        if c.cmd == "replay":
            first = int(c.args[0])
            last = int(c.args[1]) if len(c.args) > 1 else 2**62
            self._request_replay(first, last)
            upto = "" if len(c.args) == 1 else f" to {last}"
            return [f"rows from {first}{upto} re-published on the rows topic"], True
        if c.cmd == "verify":
            self._verify(c)
            return [], True
        return [f"no such command {c.cmd}"], False  # the checker refuses these first

    def _verify(self, c: Command) -> None:
        seed_text = c.args[0]
        try:
            work = self._hmac(seed_text)
        except ValueError as exc:
            self._answer(c.seq, False, [f"verify: {exc}"])
            return

        def worker() -> None:
            try:
                digest, files = work()
                result: tuple[str, int] | str = (digest, files)
            except Exception as exc:  # noqa: BLE001 - answered to the host, journaled
                result = f"{type(exc).__name__}: {exc}"
            self._post(lambda: self._verified(c, seed_text, result))

        threading.Thread(target=worker, name="host-verify", daemon=True).start()

    def _verified(self, c: Command, seed: str, result: tuple[str, int] | str) -> None:
        if isinstance(result, str):
            self._journal.append(
                "program.hmac", {"seed": seed.lower(), "error": result, "source": HOST}
            )
            self._answer(c.seq, False, [f"verify failed: {result}"])
            return
        digest, files = result
        self._journal.append(
            "program.hmac",
            {"seed": seed.lower(), "hmac": digest, "files": files, "source": HOST},
        )
        self._answer(c.seq, True, [f"hmac-sha256 {digest} over {files} files"])


def file_hmac(root: Path, profiles: list[str]) -> Callable[[str], Callable[[], tuple[str, int]]]:
    """``verify SEED`` as the console's: the seeded HMAC-SHA256 of every file loaded (the
    release's install root and the profile files, controller/program/manifest.py). The seed is
    parsed at once (ValueError); the returned work runs on a worker."""
    from controller.program import manifest as mf

    def prepare(seed_text: str) -> Callable[[], tuple[str, int]]:
        try:
            seed = mf.parse_seed(seed_text)
            items = mf.verification_items(root, profiles)
        except mf.ManifestError as exc:
            raise ValueError(str(exc)) from None

        def work() -> tuple[str, int]:
            return mf.hmac_files(seed, items), len(items)

        return work

    return prepare


def recall_lines(journal: Journal, depth: int) -> Callable[[int], list[str]]:
    """``recall N`` as the console's (at most the ``recall_depth`` rule setting)."""
    from controller.journal.recall import format_recall, recall

    def lines(count: int) -> list[str]:
        records = recall(journal, min(count, depth))
        return format_recall(records) if records else ["no rounds in the journal"]

    return lines
