"""`table-controller ... | head -1`: a reader that goes away ends any command quietly (no
traceback) with exit 141, as a program killed by SIGPIPE reports in a shell (controller/cli.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from controller.app import Application
from controller.config.profile import load_profile

REPO = Path(__file__).resolve().parents[2]
PROFILE = REPO / "hw_profiles" / "sim-paigow.toml"


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A table's state directory with rows, signed heads and an anchor (the real application)."""
    path = tmp_path_factory.mktemp("table")
    app = Application(load_profile(PROFILE), path, console_port="none")
    app.start()
    for i in range(200):
        app.journal.append("test.row", {"i": i})
    app.close()
    return path


def _with_stdout_closed(args: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``python -m controller ARGS`` with stdout a pipe whose read end is closed before the
    program starts: its first write (or its last flush) meets EPIPE, whatever its timing."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [sys.executable, "-m", "controller", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            cwd=REPO,
            timeout=120,
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize(
    "command",
    [
        ["journal", "head"],
        ["journal", "export"],
        ["journal", "verify"],
        ["journal", "pubkey"],
        ["check-profile", str(PROFILE)],
    ],
)
def test_a_closed_pipe_ends_the_command_quietly(state: Path, command: list[str]) -> None:
    args = [*command]
    if command[0] == "journal":
        args += ["--state-dir", str(state)]
    result = _with_stdout_closed(args)
    assert "Traceback" not in result.stderr, result.stderr
    assert "BrokenPipeError" not in result.stderr and "Exception ignored" not in result.stderr
    assert result.returncode == 141, (result.returncode, result.stderr)


def test_an_open_pipe_still_gets_the_whole_output(state: Path) -> None:
    """The quiet exit is only for a reader gone: `journal head` read to the end exits 0."""
    result = subprocess.run(
        [sys.executable, "-m", "controller", "journal", "head", "--state-dir", str(state)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    first, signed = result.stdout.splitlines()
    seq, _, digest = first.partition(":")
    assert int(seq) >= 200 and len(digest) == 64
    assert json.loads(signed)["seq"] <= int(seq)  # the newest signed head
