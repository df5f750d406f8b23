"""Print a technician's console session on a simulated table, from a real run: the README's
transcripts are made with this (``python scripts/console_transcript.py paigow``, or
``--readme`` to write both into README.md between their ``<!-- transcript: GAME -->`` marks).

It starts ``table-controller run`` on ``hw_profiles/sim-GAME.toml`` with the console on a
pseudo-terminal (a terminal line: prompt and echo, as ``./run-sim`` shows it) and a fresh state
directory, types each command, waits for its ``OK`` or ``ERR`` and the next prompt, and prints
what the terminal showed. Every wait has a timeout.
"""

from __future__ import annotations

import os
import pty
import select
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT_S = 30.0

SESSIONS = {
    "paigow": [
        "status",
        "config set recall_depth 30",
        "passwd 48151623",
        "config set recall_depth 30",
        "help bank",
        "sim button shuffled",
        "wager 3 2500",
        "sim button no_more_bets",
        "sim button draw",
        "sim button void",
        "sim button dealt",
        "sim button hands_set",
        "tiles dealer 2-6 1-5 3-4 1-6",
        "hands 3 6-6,6-6 1-1,1-1",
        "sim button settled",
        "journal head",
    ],
    "baccarat": [
        "passwd 48151623",
        "sim button shuffled",
        "sim button no_more_bets",
        "sim shoe deal burn",
        "bet 1 banker 2500",
        "curator 1",
        "bet 1 banker 2500",
        "sim button no_more_bets",
        "sim shoe deal coup",
        "status",
        "sim button settled",
    ],
}


def _read_until(fd: int, wanted: bytes, seen: bytearray, timeout: float = TIMEOUT_S) -> bytes:
    deadline = time.monotonic() + timeout
    while wanted not in seen:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"no {wanted!r} within {timeout} s; got {bytes(seen)!r}")
        ready, _, _ = select.select([fd], [], [], min(left, 0.2))
        if ready:
            seen += os.read(fd, 4096)
    head, _, tail = bytes(seen).partition(wanted)
    seen[:] = tail
    return head + wanted


def _as_shown(text: str) -> str:
    """What a terminal shows: a carriage return goes back to the start of the line, and what
    follows is written over it (an ``!`` line over the prompt)."""
    lines = []
    for line in text.split("\n"):
        shown = ""
        for part in line.split("\r"):
            shown = part + shown[len(part) :]
        lines.append(shown.rstrip() if shown.strip() != ">" else shown)
    return "\n".join(lines)


def transcript(game: str) -> str:
    """The terminal's text for the game's session (CR removed, the final prompt dropped)."""
    state = tempfile.mkdtemp(prefix=f"transcript-{game}-")
    profile = Path(state) / "profile.toml"
    profile.write_text(
        f'include = "{ROOT / "hw_profiles" / f"sim-{game}.toml"}"\nscoreboard.port = 0\n',
        encoding="utf-8",
    )
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(ROOT)
        os.execv(
            sys.executable,
            [
                sys.executable,
                "-m",
                "controller",
                "run",
                "--profile",
                str(profile),
                "--state-dir",
                state,
                "--console",
                "stdio",
                "--log-level",
                "error",
            ],
        )
    seen = bytearray()
    out = bytearray()
    try:
        _read_until(fd, b"table-controller ready", seen)
        _read_until(fd, b"> ", seen)
        time.sleep(1.5)  # the power-up lamp test ends: its !DISPLAY line
        out += b"> "
        for command in SESSIONS[game]:
            os.write(fd, command.encode("ascii") + b"\r")
            text = _read_until(fd, b"\r\n> ", seen)
            while not any(line.startswith((b"OK", b"ERR ")) for line in text.split(b"\r\n")):
                text += _read_until(fd, b"\r\n> ", seen)
            out += text
        return _as_shown(bytes(out).decode("ascii", "replace")).removesuffix("> ")
    finally:
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)
        os.close(fd)


def write_readme(path: Path = ROOT / "README.md") -> None:
    """Replace each game's transcript in the README with a fresh one."""
    import re

    text = path.read_text(encoding="utf-8")
    for game in SESSIONS:
        body = "```\n" + transcript(game).rstrip("\n") + "\n```\n"
        text = re.sub(
            rf"(<!-- transcript: {game} -->\n)(.*?)(<!-- end transcript: {game} -->)",
            lambda m, body=body: m.group(1) + body + m.group(3),
            text,
            flags=re.S,
        )
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] == ["--readme"]:
        write_readme()
    else:
        for name in sys.argv[1:] or ["paigow"]:
            print(transcript(name))
