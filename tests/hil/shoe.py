"""The shoe end of the rig: who deals the cards in the baccarat scenarios.

* simulated rig: the table's own simulated shoe, through the console (``sim shoe deal coup``,
  ``sim shoe fault KIND``...): :class:`ConsoleShoe`;
* hardware rig (``--hil-shoe-peer PORT``): the shoe emulator process on the other end of the
  shoe's cable, ``python -m drivers.sim.shoe --port PORT``, driven through its stdin commands
  (``deal N``, ``peek N``, ``card RS``, ``fault KIND``): :class:`EmulatorShoe`. Both speak the
  one vocabulary of shoe faults, ``drivers.sim.shoe.FAULTS``. It works out how
  many cards a burn or a coup takes from ``peek`` with the rules engine, as ``sim shoe deal
  coup`` does inside the controller.

Both return the cards dealt; the scenario then waits for the table's reaction on ``status``
(every wait bounded). Nothing here is imported by the program.
"""

from __future__ import annotations

import queue
import subprocess
import threading
from collections.abc import Sequence
from typing import Protocol

from controller.games.baccarat.shoe import BurnProgress, CoupInProgress
from drivers.sim.shoe import FAULTS
from tests.hil.rig import REPLY_TIMEOUT_S, Rig, RigError

LOOK_AHEAD = 12  # a burn takes at most 11 cards, a coup 6


class ShoeDriver(Protocol):
    #: True when a deal's reply comes once the table has handled its frames (the console's
    #: ``sim shoe`` replies wait); False: wait for the table's reaction on ``status``.
    handled_on_reply: bool
    #: True when the shoe's cable can really be unplugged (the sim's pty link disappears); an
    #: emulator on a cable only closes its own end, the controller's port stays open.
    unplugs_link: bool

    def deal(self, n: int) -> list[str]: ...

    def card(self, code: str) -> None: ...

    def deal_burn(self) -> list[str]: ...

    def deal_coup(self, dealt: Sequence[str] = ()) -> list[str]: ...

    def fault(self, kind: str) -> str: ...


def _cards_after(prefix: str, line: str) -> list[str]:
    if not line.startswith(prefix):
        raise RigError(f"expected {prefix!r}..., got {line!r}")
    return line[len(prefix) :].split()


class ConsoleShoe:
    """The simulated rig: the controller's own simulated shoe, through its console."""

    unplugs_link = True
    handled_on_reply = True

    def __init__(self, rig: Rig) -> None:
        self.rig = rig

    def deal(self, n: int) -> list[str]:
        return _cards_after("dealt ", self.rig.ok(f"sim shoe deal {n}")[-1])

    def card(self, code: str) -> None:
        self.rig.ok(f"sim shoe card {code}")

    def deal_burn(self) -> list[str]:
        return _cards_after("dealt burn: ", self.rig.ok("sim shoe deal burn")[-1])

    def deal_coup(self, dealt: Sequence[str] = ()) -> list[str]:
        """The rest of the coup in progress (the table knows what it holds)."""
        return _cards_after("dealt coup: ", self.rig.ok("sim shoe deal coup")[-1])

    def fault(self, kind: str) -> str:
        if kind not in FAULTS:
            raise RigError(f"no shoe fault {kind!r}: {', '.join(FAULTS)}")
        return self.rig.ok(f"sim shoe fault {kind}")[-1]


class EmulatorShoe:
    """The hardware rig: the standalone shoe emulator process, through its stdin and stdout.

    The scenarios carry no card into a coup, so a coup holds the cards they dealt into it; the
    burn starts with its face-up card.
    """

    unplugs_link = False
    handled_on_reply = False

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        if proc.stdin is None or proc.stdout is None:
            raise RigError("the shoe emulator needs stdin and stdout pipes")
        self._proc = proc
        self._lines: queue.SimpleQueue[str] = queue.SimpleQueue()
        threading.Thread(target=self._read, name="shoe-emulator-out", daemon=True).start()

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for raw in self._proc.stdout:
            line = raw.decode("utf-8", "replace").strip()
            if line and not line.startswith(("commands:", "auto:")):
                self._lines.put(line)

    def command(self, line: str, timeout: float = REPLY_TIMEOUT_S) -> str:
        assert self._proc.stdin is not None
        self._proc.stdin.write(line.encode("ascii") + b"\n")
        self._proc.stdin.flush()
        try:
            reply = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise RigError(
                f"the shoe emulator did not answer {line!r} within {timeout} s"
            ) from None
        if reply.startswith("error:"):
            raise RigError(f"shoe emulator: {line!r}: {reply}")
        return reply

    def deal(self, n: int) -> list[str]:
        return _cards_after("dealt ", self.command(f"deal {n}"))

    def card(self, code: str) -> None:
        self.command(f"card {code}")

    def _peek(self) -> list[str]:
        return _cards_after("next ", self.command(f"peek {LOOK_AHEAD}"))

    def deal_burn(self) -> list[str]:
        burn = BurnProgress()
        n = 0
        for code in self._peek():
            if burn.done:
                break
            burn.add(code)
            n += 1
        return self.deal(n)

    def deal_coup(self, dealt: Sequence[str] = ()) -> list[str]:
        """The rest of a coup that holds ``dealt`` so far."""
        coup = CoupInProgress(dealt)
        n = 0
        for code in self._peek():
            if coup.complete:
                break
            coup.add(code)
            n += 1
        return self.deal(n)

    def fault(self, kind: str) -> str:
        if kind not in FAULTS:
            raise RigError(f"no shoe fault {kind!r}: {', '.join(FAULTS)}")
        return self.command(f"fault {kind}")
