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
  acknowledgement is a ``write(fd, "$ACK,seq*HH\\r\\n")``.

From the trace it follows every write to the journal's files (``journal.sqlite`` and
``journal.sqlite-wal``) and every ``fsync``/``fdatasync`` of them, and for each display write of
a number (``D<n>``) and each ``$ACK`` write it checks that (a) there was a journal write since
the previous guarded write (the event's row) and (b) every journal write before it had been
synced (the sync call had *returned*) before the guarded write began. What a power cut leaves is
what was synced, so (a)+(b) mean the draw / card was on stable storage when it became visible.
Prints a verdict per event. tests/reliability/test_power_loss.py runs the fast version (copies
of the journal taken at the moment of each display write or $ACK, restarted from).
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

TRACE = "openat,close,fsync,fdatasync,write,pwrite64,sendto"
LINE_RE = re.compile(r"^(?:\[pid\s+)?(\d+)\]?\s+(\d\d:\d\d:\d\d\.\d+)\s+(.*)$")


def led_profile(folder: Path) -> Path:
    """sim-paigow with the serial LED display on a simulated pty (no include: the seven-segment
    display's pins would be merged in)."""
    text = (PROFILES / "sim-paigow.toml").read_text()
    start = text.index("[devices.display]")
    end = text.index("[devices.buttons]")
    text = (text[:start] + '[devices.display]\ndriver = "serial-led"\nport = "sim"\n\n'
            + text[end:])
    text = text.replace('name = "sim-paigow"', 'name = "sim-paigow-led"')
    path = folder / "sim-paigow-led.toml"
    path.write_text(text)
    return path


@dataclass
class Guarded:
    kind: str        # "display" or "ack"
    what: str        # "D7" / "$ACK,12"
    time: str
    journal_writes_since_last: int
    unsynced: int    # journal writes not yet synced when it began
    last_sync: str

    @property
    def ok(self) -> bool:
        return self.journal_writes_since_last > 0 and self.unsynced == 0


def parse_trace(path: Path, guard: str) -> tuple[list[Guarded], int, int]:
    """Walk the strace output in order; returns the guarded writes, journal writes and syncs."""
    fds: dict[int, str] = {}
    pending: dict[int, int] = {}        # journal fd -> writes not yet synced
    unfinished: dict[str, str] = {}     # pid -> call text begun, not yet resumed
    since_last = 0
    last_sync = "-"
    out: list[Guarded] = []
    writes = syncs = 0
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
        # a guarded write counts when it BEGINS (its first line)
        if begun.startswith("write("):
            fd = int(begun[6:begun.index(",")])
            target = fds.get(fd, "")
            text = begun.split(",", 1)[1]
            if guard == "display" and target.startswith("/dev/pts/") and '"D' in text[:6]:
                what = text.strip().split('"')[1].split("\\r")[0]
                out.append(Guarded("display", what, ts, since_last,
                                   sum(pending.values()), last_sync))
                since_last = 0
            elif guard == "ack" and '"$ACK' in text[:8]:
                what = text.strip().split('"')[1].split("*")[0]
                out.append(Guarded("ack", what, ts, since_last, sum(pending.values()),
                                   last_sync))
                since_last = 0
        if begun and not begun.endswith("<unfinished ...>") or rest.startswith(
                tuple(f"{c}(" for c in ("openat", "close", "fsync", "fdatasync", "pwrite64",
                                         "write"))) and "= " in rest:
            _complete(rest, fds, pending)
            call = rest.split("(", 1)[0]
            if call in ("pwrite64", "write"):
                fd = _fd(rest)
                if fd in pending and fds.get(fd, "").endswith(("journal.sqlite",
                                                                "journal.sqlite-wal")):
                    writes += 1
                    since_last += 1
            if call in ("fsync", "fdatasync") and _fd(rest) in pending:
                syncs += 1
                last_sync = ts
    return out, writes, syncs


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
    c = Controller(profile, work / "pg-state",
                   wrapper=["strace", "-f", "-tt", "-s", "64", "-e", f"trace={TRACE}",
                            "-o", str(trace)])
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
    c = Controller(profile, work / "bac-state",
                   wrapper=["strace", "-f", "-tt", "-s", "64", "-e", f"trace={TRACE}",
                            "-o", str(trace)])
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
            elif state in ("offering", "passing"):   # (h)(2): never back to the last one
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
    acked = [int(r.data["seq"]) for r in journal_rows(work / "bac-state",
                                                      kinds=["shoe.frame", "shoe.session"])]
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
    print(f"[{name}] journal writes {writes}, journal syncs {syncs}, guarded writes "
          f"{len(guarded)}")
    for g in guarded:
        verdict = "OK " if g.ok else "BAD"
        print(f"  {verdict} {g.time} {g.kind} {g.what:<10} journal writes since the last "
              f"guarded write: {g.journal_writes_since_last}, unsynced when it began: "
              f"{g.unsynced}, last sync returned {g.last_sync}")
    bad = [g for g in guarded if not g.ok]
    print(f"  {len(guarded) - len(bad)}/{len(guarded)} {name} events on stable storage before "
          f"they were {'shown' if name == 'pai gow' else 'acknowledged'}")
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
        print(f"machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}, "
              f"kernel {m['kernel']}; {time.monotonic() - t0:.1f} s")
        ok_pg = report("pai gow", [g for g in pg if g.what != "D"], pg_w, pg_s)
        shown = [g.what[1:] for g in pg]
        print(f"  numbers drawn (console status): {numbers}; numbers written to the display: "
              f"{shown}")
        ok_pg &= all(n in shown for n in numbers)
        ok_bac = report("baccarat", bac, bac_w, bac_s)
    finally:
        if args.keep:
            print(f"traces kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"result: {'PASS' if ok_pg and ok_bac else 'FAIL'}")
    return 0 if ok_pg and ok_bac else 1


if __name__ == "__main__":
    raise SystemExit(main())
