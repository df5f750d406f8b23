#!/usr/bin/env python3
"""Power loss is not SIGKILL: show with a system-call trace that every RNG draw and every card is
on stable storage before it is shown or acknowledged (issue 8).

    python bench/power_loss_trace.py [--rounds N] [--coups N] [--keep]

Runs the REAL controller under ``strace -f -tt -e trace=openat,close,fsync,fdatasync,write,
pwrite64,sendto`` twice:

* pai gow, with the serial LED number display (``driver = "serial-led"``, ``port = "sim"``: a
  simulated LED display on a pseudo-terminal, so showing a number IS a ``write(fd, "D7\\r\\n")``
  system call), N scripted rounds through the console (``sim button ...``);
* baccarat, with the shoe on a pty held by this script's simulated shoe, N coups: every
  acknowledgement is a ``write(fd, "$ACK,seq,SID*HH\\r\\n")``.

From the trace it follows every write to the journal's files (``journal.sqlite`` and
``journal.sqlite-wal``) and every ``fsync``/``fdatasync`` of them, and for each display write of
a number (``D<n>``) and each ``$ACK`` write it checks that (a) there was a journal write since
the previous guarded write (the event's row) and (b) every journal write before it had been
synced (the sync call had *returned*) before the guarded write began. What a power cut leaves is
what was synced, so (a)+(b) mean the draw / card was on stable storage when it became visible.

It also counts the syncs the output WAITED for (issue 13, "one sync per decision"): the
``fsync``/``fdatasync`` calls made by the thread that writes the output, from the input to the
output. The input is, for pai gow, the first WAL write carrying the draw button's input row (the
start of that event's one commit: the loop handles one event at a time, so nothing of this event
syncs before it), and for baccarat the ``read`` that brought the ``$CARD``. Pai gow must show
exactly one. Prints a verdict per event. tests/reliability/test_power_loss.py runs the fast
version (copies of the journal taken at the moment of each display write or $ACK, restarted
from) and this trace.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.reliability.harness import (  # noqa: E402
    PROFILES,
    Controller,
    ControllerDied,
    journal_rows,
    machine_info,
    write_profile,
)

TRACE = "openat,close,fsync,fdatasync,write,pwrite64,sendto,read"
#: What marks the input in the trace (see the module docstring).
DRAW_INPUT = b'"button":"draw"'
CARD_INPUT = b"CARD,"  # the reader takes the "$" alone, then the rest
WAL_FRAME_HEADER = 24
LINE_RE = re.compile(r"^(?:\[pid\s+)?(\d+)\]?\s+(\d\d:\d\d:\d\d\.\d+)\s+(.*)$")


def led_profile(folder: Path) -> Path:
    """sim-paigow with the serial LED display on a simulated pty (no include: the seven-segment
    display's pins would be merged in)."""
    text = (PROFILES / "sim-paigow.toml").read_text()
    start = text.index("[devices.display]")
    end = text.index("[devices.buttons]")
    text = text[:start] + '[devices.display]\ndriver = "serial-led"\nport = "sim"\n\n' + text[end:]
    text = text.replace('name = "sim-paigow"', 'name = "sim-paigow-led"')
    path = folder / "sim-paigow-led.toml"
    path.write_text(text)
    return path


@dataclass
class Guarded:
    kind: str  # "display" or "ack"
    what: str  # "D7" / "$ACK,12"
    time: str
    journal_writes_since_last: int
    unsynced: int  # journal writes not yet synced when it began
    last_sync: str
    waited_syncs: int | None = None  # syncs by the writing thread since the input

    @property
    def ok(self) -> bool:
        return self.journal_writes_since_last > 0 and self.unsynced == 0


def parse_trace(path: Path, guard: str) -> tuple[list[Guarded], int, int]:
    """Walk the strace output in order; returns the guarded writes, journal writes and syncs."""
    fds: dict[int, str] = {}
    pending: dict[int, int] = {}  # journal fd -> writes not yet synced
    unfinished: dict[str, str] = {}  # pid -> call text begun, not yet resumed
    since_last = 0
    last_sync = "-"
    out: list[Guarded] = []
    writes = syncs = 0
    marker = DRAW_INPUT if guard == "display" else CARD_INPUT
    input_seen = False  # the input of the next guarded write has happened
    waited = 0  # journal syncs returned since the input
    frame_page: dict[str, int] = {}  # thread -> page number of the WAL frame it writes
    marks_on_page: dict[int, int] = {}  # page -> input rows it held when last written
    for raw in path.read_text(errors="replace").splitlines():
        m = LINE_RE.match(raw)
        if not m:
            continue
        pid, ts, rest = m.groups()
        if rest.endswith("<unfinished ...>"):
            unfinished[pid] = rest[: -len("<unfinished ...>")]
            begun = rest
        elif rest.startswith("<..."):
            begun = ""
            rest = unfinished.pop(pid, "") + rest.split("resumed>", 1)[-1]
        else:
            begun = rest
        # the input: a WAL page write that holds one more draw input row than that page held
        # before (the new row), or a read that brought a $CARD
        if (
            guard == "display"
            and begun.startswith("pwrite64(")
            and fds.get(_fd(begun), "").endswith("-wal")
        ):
            data = _data(begun)
            if len(data) == WAL_FRAME_HEADER:
                frame_page[pid] = int.from_bytes(data[:4], "big")
            elif pid in frame_page:
                page = frame_page.pop(pid)
                marks = data.count(marker)
                if marks > marks_on_page.get(page, 0) and not input_seen:
                    input_seen, waited = True, 0
                marks_on_page[page] = marks
        if guard == "ack" and rest.startswith("read(") and marker in _data(rest) and not input_seen:
            input_seen, waited = True, 0
        # a guarded write counts when it BEGINS (its first line)
        if begun.startswith("write("):
            fd = int(begun[6 : begun.index(",")])
            target = fds.get(fd, "")
            data = _data(begun)
            seen = waited if input_seen else None
            if guard == "display" and target.startswith("/dev/pts/") and data[:1] == b"D":
                what = data.split(b"\r")[0].decode("ascii", "replace")
                out.append(
                    Guarded(
                        "display",
                        what,
                        ts,
                        since_last,
                        sum(pending.values()),
                        last_sync,
                        seen if what != "D" else None,
                    )
                )
                since_last = 0
                if what != "D":
                    input_seen = False
            elif guard == "ack" and data[:4] == b"$ACK":
                what = data.split(b"*")[0].decode("ascii", "replace")
                out.append(
                    Guarded("ack", what, ts, since_last, sum(pending.values()), last_sync, seen)
                )
                since_last = 0
                input_seen = False
        if (
            begun
            and not begun.endswith("<unfinished ...>")
            or rest.startswith(
                tuple(
                    f"{c}(" for c in ("openat", "close", "fsync", "fdatasync", "pwrite64", "write")
                )
            )
            and "= " in rest
        ):
            _complete(rest, fds, pending)
            call = rest.split("(", 1)[0]
            if call in ("pwrite64", "write"):
                fd = _fd(rest)
                if fd in pending and fds.get(fd, "").endswith(
                    ("journal.sqlite", "journal.sqlite-wal")
                ):
                    writes += 1
                    since_last += 1
            if call in ("fsync", "fdatasync") and _fd(rest) in pending:
                syncs += 1
                last_sync = ts
                waited += 1
    return out, writes, syncs


_ESCAPES = {"n": 10, "t": 9, "r": 13, "v": 11, "f": 12, "a": 7, "b": 8, "e": 27, "\\": 92, '"': 34}


def _data(call: str) -> bytes:
    """The bytes of a call's first string argument as ``strace -x`` prints them (printable
    ASCII as is, the rest ``\\xHH`` or a C escape); the ``...`` of a cut string dropped."""
    start = call.find('"')
    if start < 0:
        return b""
    out = bytearray()
    i = start + 1
    while i < len(call):
        c = call[i]
        if c == '"':
            break
        if c == "\\" and i + 1 < len(call):
            nxt = call[i + 1]
            if nxt == "x" and i + 3 < len(call):
                out.append(int(call[i + 2 : i + 4], 16))
                i += 4
                continue
            if nxt.isdigit():
                j = i + 1
                while j < len(call) and j < i + 4 and call[j].isdigit():
                    j += 1
                out.append(int(call[i + 1 : j], 8) & 0xFF)
                i = j
                continue
            out.append(_ESCAPES.get(nxt, ord(nxt)))
            i += 2
            continue
        out.extend(c.encode("utf-8"))
        i += 1
    return bytes(out)


def _fd(call: str) -> int:
    try:
        return int(call.split("(", 1)[1].split(",", 1)[0].split(")", 1)[0])
    except ValueError:
        return -1


def _complete(call: str, fds: dict[int, str], pending: dict[int, int]) -> None:
    """Apply a completed system call to the fd table and the unsynced-write counts."""
    name = call.split("(", 1)[0]
    result = call.rsplit("= ", 1)[-1].split()[0] if "= " in call else ""
    if name == "openat" and result.lstrip("-").isdigit() and int(result) >= 0:
        fd = int(result)
        fds[fd] = call.split('"')[1] if '"' in call else ""
        if fds[fd].endswith(("journal.sqlite", "journal.sqlite-wal")):
            pending[fd] = 0
        else:
            pending.pop(fd, None)
    elif name == "close":
        fd = _fd(call)
        fds.pop(fd, None)
        pending.pop(fd, None)
    elif name in ("pwrite64", "write"):
        fd = _fd(call)
        if fd in pending:
            pending[fd] += 1
    elif name in ("fsync", "fdatasync") and result == "0":
        fd = _fd(call)
        if fd in pending:
            pending[fd] = 0


def run_paigow(work: Path, rounds: int) -> tuple[list[Guarded], int, int, list[str]]:
    trace = work / "paigow.trace"
    profile = led_profile(work)
    c = Controller(
        profile,
        work / "pg-state",
        # -s: a whole WAL frame (2 KiB pages) is printed, the input row in it
        wrapper=[
            "strace",
            "-f",
            "-tt",
            "-x",
            "-s",
            "2100",
            "-e",
            f"trace={TRACE}",
            "-o",
            str(trace),
        ],
    )
    numbers: list[str] = []
    try:
        c.wait_ready(60)
        c.login()
        for _ in range(rounds):
            for name in ("shuffled", "no_more_bets", "draw"):
                c.ok(f"sim button {name}")
            numbers.append(c.status()["number"])
            for name in ("dealt", "hands_set", "settled"):
                c.ok(f"sim button {name}")
    finally:
        _end(c)
    guarded, writes, syncs = parse_trace(trace, "display")
    return guarded, writes, syncs, numbers


def run_baccarat(work: Path, coups: int) -> tuple[list[Guarded], int, int, list[int]]:
    from drivers.sim.shoe import SimShoe

    trace = work / "baccarat.trace"
    sim = SimShoe(decks=8, seed=11, heartbeat_s=None)
    link = sim.create_pty(str(work / "shoe"))
    sim.start()
    profile = write_profile(work, "sim-baccarat", shoe_port=link)
    c = Controller(
        profile,
        work / "bac-state",
        wrapper=[
            "strace",
            "-f",
            "-tt",
            "-x",
            "-s",
            "200",
            "-e",
            f"trace={TRACE}",
            "-o",
            str(trace),
        ],
    )
    try:
        c.wait_ready(60)
        c.login()
        sim.wait_acked(10)
        done = 0
        while done < coups:
            state = c.status()["state"]
            if state in ("burn", "dealing", "player_third", "banker_third"):
                sim.deal(1)
                if not sim.wait_acked(10):
                    raise TimeoutError("card not acknowledged")
            elif state == "shuffle":
                c.ok("sim button shuffled")
            elif state in ("offering", "passing"):  # (h)(2): never back to the last one
                c.ok(f"curator {int(c.status().get('curator') or 0) % 8 + 1}")
            elif state == "betting":
                c.ok("sim button no_more_bets")
            elif state == "settling":
                c.ok("sim button settled")
                done += 1
            else:
                raise RuntimeError(f"state {state}")
    finally:
        _end(c)
        sim.stop()
    acked = [
        int(r.data["seq"])
        for r in journal_rows(work / "bac-state", kinds=["shoe.frame", "shoe.session"])
    ]
    guarded, writes, syncs = parse_trace(trace, "ack")
    return guarded, writes, syncs, acked


def _end(c: Controller) -> None:
    """End of console input shuts the controller down; strace exits with it."""
    try:
        if c.proc.stdin is not None:
            c.proc.stdin.close()
        c.proc.wait(60)
    except (ControllerDied, OSError, ValueError):
        pass
    finally:
        if c.proc.poll() is None:
            c.kill()
        c.close_pipes()


def report(name: str, guarded: list[Guarded], writes: int, syncs: int) -> bool:
    print(f"[{name}] journal writes {writes}, journal syncs {syncs}, guarded writes {len(guarded)}")
    for g in guarded:
        verdict = "OK " if g.ok else "BAD"
        waited = "-" if g.waited_syncs is None else str(g.waited_syncs)
        print(
            f"  {verdict} {g.time} {g.kind} {g.what:<10} journal writes since the last "
            f"guarded write: {g.journal_writes_since_last}, unsynced when it began: "
            f"{g.unsynced}, last sync returned {g.last_sync}, syncs waited for since the"
            f" input: {waited}"
        )
    bad = [g for g in guarded if not g.ok]
    print(
        f"  {len(guarded) - len(bad)}/{len(guarded)} {name} events on stable storage before "
        f"they were {'shown' if name == 'pai gow' else 'acknowledged'}"
    )
    return not bad and bool(guarded)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--coups", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep the traces")
    args = parser.parse_args(argv)
    if shutil.which("strace") is None:
        print("strace is not installed (apt-get install strace)")
        return 2
    work = Path(tempfile.mkdtemp(prefix="power-loss-"))
    try:
        t0 = time.monotonic()
        pg, pg_w, pg_s, numbers = run_paigow(work, args.rounds)
        bac, bac_w, bac_s, _ = run_baccarat(work, args.coups)
        m = machine_info()
        print(
            f"machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}, "
            f"kernel {m['kernel']}; {time.monotonic() - t0:.1f} s"
        )
        shown_numbers = [g for g in pg if g.what != "D"]
        ok_pg = report("pai gow", shown_numbers, pg_w, pg_s)
        waits = [g.waited_syncs for g in shown_numbers]
        print(
            f"  syncs between the draw button's input and the number shown: {waits}"
            " (one transaction, one sync: each must be 1)"
        )
        ok_pg &= bool(waits) and all(w == 1 for w in waits)
        shown = [g.what[1:] for g in pg]
        print(
            f"  numbers drawn (console status): {numbers}; numbers written to the display: {shown}"
        )
        ok_pg &= all(n in shown for n in numbers)
        ok_bac = report("baccarat", bac, bac_w, bac_s)
        card_waits = sorted({g.waited_syncs for g in bac if g.waited_syncs is not None})
        print(f"  syncs between a $CARD read and its $ACK (distinct counts): {card_waits}")
    finally:
        if args.keep:
            print(f"traces kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"result: {'PASS' if ok_pg and ok_bac else 'FAIL'}")
    return 0 if ok_pg and ok_bac else 1


if __name__ == "__main__":
    raise SystemExit(main())
