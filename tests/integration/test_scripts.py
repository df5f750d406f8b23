"""The two scripts a new user runs first (issue 15): the first ``./run-sim`` or ``./run-tests``
says what it does while it builds ``.venv``, and ``./run-sim`` names the games it knows."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A stand-in for python3.11 that makes a venv without pip's 20 s of downloads: the script's
# messages are the subject here, not pip.
FAKE_PYTHON = """#!/bin/sh
if [ "$1" = "--version" ]; then echo "Python 3.11.99"; exit 0; fi
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
    mkdir -p "$3/bin"
    printf '#!/bin/sh\\nexit 0\\n' > "$3/bin/python"
    chmod +x "$3/bin/python"
    printf 'PATH="%s/bin:$PATH"\n' "$(cd "$3" && pwd)" > "$3/bin/activate"
    exit 0
fi
exit 1
"""


def _sandbox(tmp_path: Path) -> Path:
    box = tmp_path / "checkout"
    (box / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "venv.sh", box / "scripts" / "venv.sh")
    (box / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    fake = tmp_path / "python3.11"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    return box


def _source_venv(box: Path, fake: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", "set -euo pipefail; source ./scripts/venv.sh"],
        cwd=box,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHON": str(fake)},
    )


def test_the_first_run_says_what_it_builds_and_the_next_is_quiet(tmp_path: Path) -> None:
    box = _sandbox(tmp_path)
    first = _source_venv(box, tmp_path / "python3.11")
    assert first.returncode == 0, first.stderr
    lines = first.stderr.splitlines()
    assert lines[0] == f"== first run: creating .venv with Python 3.11.99 ({tmp_path}/python3.11)"
    assert lines[1].startswith("== installing the project and its test tools into .venv")
    assert lines[2].startswith("== .venv ready in ") and lines[2].endswith(" s")
    again = _source_venv(box, tmp_path / "python3.11")
    assert again.returncode == 0 and again.stderr == ""
    (box / "pyproject.toml").write_text("[project]\nname = 'y'\n")  # changed: reinstall
    changed = _source_venv(box, tmp_path / "python3.11")
    assert "creating" not in changed.stderr and "== installing" in changed.stderr


def test_run_sim_names_the_games_for_a_misspelt_one() -> None:
    result = subprocess.run(
        [str(ROOT / "run-sim"), "bacarat"], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "run-sim: no game 'bacarat': one of paigow, baccarat, asia-poker, paigow-poker,"
        " paigow-feed, baccarat-feed (./run-sim baccarat)"
    )
