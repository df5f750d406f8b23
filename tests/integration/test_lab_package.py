"""``table-controller lab package --state-dir`` beside the real ``table-controller run`` process:
on a live table it reads the journal while the table plays on (the process keeps running, answers
its console and stops cleanly); on a table killed mid-round (its journal's write-ahead log left
behind) it leaves every file of the state directory unchanged, byte for byte."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.lab.check import verify_package
from tests.reliability.harness import REPO, Controller, fast_tmpdir, write_profile


@pytest.fixture
def work() -> Iterator[Path]:
    path = fast_tmpdir("labpkg-")
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def lab_package(out: Path, profile: Path, state: Path) -> subprocess.CompletedProcess[str]:
    """The command as a lab runs it, in its own process (the suite's summary is left out of
    these runs by pointing the program at no test tree: the unit tests cover it)."""
    code = (
        "import sys; from controller.lab import suite;"
        " suite.collect = lambda root, python='': suite.SuiteSummary(how='left out here');"
        " from controller.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    return subprocess.run(
        [sys.executable, "-c", code, "lab", "package", str(out), "--profile", str(profile)]
        + ["--state-dir", str(state), "--draws", "300", "--raw-bytes", "4000"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _play_to_the_draw(c: Controller) -> None:
    c.login()
    for step in ("shuffled", "no_more_bets", "draw"):
        c.ok(f"sim button {step}")


def test_a_live_table_plays_on_while_it_is_packaged(work: Path) -> None:
    profile = write_profile(work, "sim-paigow")
    state = work / "state"
    c = Controller(profile, state)
    try:
        c.wait_ready()
        _play_to_the_draw(c)
        c.ok("sim button dealt")
        done = lab_package(work / "pkg", profile, state)
        assert done.returncode == 0, done.stderr
        assert c.proc.poll() is None, "the table stopped"
        assert c.status()["state"] == "setting_hands"  # it answers, where it was
        c.ok("sim button hands_set")
        info = json.loads((work / "pkg" / "package.json").read_text())
        assert info["journal"]["live"] is True
        assert info["journal"]["how"].startswith(f"a live table (process {c.pid} has the journal")
        recall = (work / "pkg" / "journal" / "recall.txt").read_text()
        assert "paigow.drawn" in recall  # the round under way, with its draw
        verdict = verify_package(work / "pkg")
        assert verdict.ok, verdict.problems
    finally:
        code = c.stop()
    assert code == 0, "\n".join(c.stderr_lines[-20:])


def test_a_killed_tables_state_directory_is_left_as_it_was(work: Path) -> None:
    profile = write_profile(work, "sim-paigow")
    state = work / "state"
    c = Controller(profile, state)
    c.wait_ready()
    _play_to_the_draw(c)
    c.kill()  # mid-round: the WAL and its index stay behind, never checkpointed
    c.close_pipes()
    assert (state / "journal.sqlite-wal").stat().st_size > 0
    before = snapshot(state)
    done = lab_package(work / "pkg", profile, state)
    assert done.returncode == 0, done.stderr
    assert snapshot(state) == before
    info = json.loads((work / "pkg" / "package.json").read_text())
    assert info["journal"]["how"].startswith("a stopped table whose journal still had rows")
    assert "paigow.drawn" in (work / "pkg" / "journal" / "recall.txt").read_text()
    assert not list(work.glob(".pkg-*")), "the scratch copy was left behind"
    assert verify_package(work / "pkg").ok
