"""The lab package's replay script (controller/lab/replay.py): standard library only, run the way
``lab verify`` runs it (``python3 -I -S``, from a folder where nothing of the project can be
imported), it turns the raw bytes the certified RNG consumed into exactly the outcomes the
production draw path gave, and names the first difference when they do not match."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from controller.rng.certified import CertifiedRng
from controller.rng.lab import capture_final
from tests.unit.rng.sources import ScriptedSource

SCRIPT = Path(__file__).resolve().parents[3] / "controller" / "lab" / "replay.py"


def make_rng(source: ScriptedSource) -> CertifiedRng:
    return CertifiedRng(source, hwrng_path=None)


def run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The script copied alone into ``folder`` and run isolated (no site, no PYTHON* variables,
    not the project's folder on the path): only the standard library can take part."""
    script = folder / "replay.py"
    if not script.exists():
        shutil.copyfile(SCRIPT, script)
    return subprocess.run(
        [sys.executable, "-I", "-S", str(script), *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_script_imports_only_the_standard_library() -> None:
    tree = ast.parse(SCRIPT.read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    assert imported and imported <= set(sys.stdlib_module_names) | {"__future__"}, imported


@pytest.mark.parametrize(("low", "high"), [(1, 8), (1, 7), (1, 6), (1, 300)])
def test_production_captures_replay_exactly(tmp_path: Path, low: int, high: int) -> None:
    rng = CertifiedRng(hwrng_path=None)
    capture_final(rng, 3000, tmp_path / "final.txt", low, high, tmp_path / "final.raw")
    done = run(tmp_path, "final.raw", str(low), str(high), "--check", "final.txt")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        f"replay: 3000 outcomes of {low}-{high} from final.raw match final.txt"
    )
    printed = run(tmp_path, "final.raw", str(low), str(high))
    assert printed.returncode == 0
    assert printed.stdout == (tmp_path / "final.txt").read_text()


def test_rejections_follow_the_written_rule(tmp_path: Path) -> None:
    # 1-6: k = 3; low three bits 6 and 7 are rejected. 0x07 -> 7 rejected, 0x0f -> 7 rejected,
    # 0xf9 -> 1 -> outcome 2; 0x00 -> 1; 0x06 rejected, 0x0d -> 5 -> outcome 6.
    (tmp_path / "raw").write_bytes(bytes([0x00, 0x07, 0x0F, 0xF9, 0x06, 0x0D]))
    done = run(tmp_path, "raw", "1", "6")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "2", "6"]
    # two bytes per attempt for 1-300: big-endian, low nine bits, 300..511 rejected
    (tmp_path / "raw2").write_bytes(bytes([0xFF, 0xFF, 0x01, 0x2B, 0x00, 0x00]))
    done = run(tmp_path, "raw2", "1", "300")
    assert done.stdout.split() == ["300", "1"]  # 0x1ff rejected; 0x12b = 299; 0


def test_the_scripted_draws_match_the_generator(tmp_path: Path) -> None:
    raw = bytes([0x00, 0x07, 0x0F, 0xF9, 0x06, 0x0D])
    capture_final(make_rng(ScriptedSource(raw)), 3, tmp_path / "f.txt", 1, 6, tmp_path / "f.raw")
    assert (tmp_path / "f.raw").read_bytes() == raw
    assert run(tmp_path, "f.raw", "1", "6", "--check", "f.txt").returncode == 0


def _capture(folder: Path) -> None:
    rng = CertifiedRng(hwrng_path=None)
    capture_final(rng, 500, folder / "f.txt", 1, 6, folder / "f.raw")


def test_a_changed_outcome_is_named(tmp_path: Path) -> None:
    _capture(tmp_path)
    lines = (tmp_path / "f.txt").read_text().splitlines()
    lines[99] = "6" if lines[99] != "6" else "5"
    (tmp_path / "f.txt").write_text("\n".join(lines) + "\n")
    done = run(tmp_path, "f.raw", "1", "6", "--check", "f.txt")
    assert done.returncode == 1
    assert "outcome 100: the raw bytes give" in done.stderr


def test_a_changed_raw_byte_is_caught(tmp_path: Path) -> None:
    _capture(tmp_path)
    raw = bytearray((tmp_path / "f.raw").read_bytes())
    at = next(i for i in range(10, len(raw)) if raw[i] & 7 < 6)  # an accepted attempt
    raw[at] = (raw[at] & 0xF8) | ((raw[at] & 7) + 1) % 6  # another accepted outcome
    (tmp_path / "f.raw").write_bytes(bytes(raw))
    done = run(tmp_path, "f.raw", "1", "6", "--check", "f.txt")
    assert done.returncode == 1, done.stdout


@pytest.mark.parametrize("cut", ["raw", "final"])
def test_a_short_file_on_either_side_is_caught(tmp_path: Path, cut: str) -> None:
    _capture(tmp_path)
    if cut == "raw":
        raw = (tmp_path / "f.raw").read_bytes()
        cut = next(i for i in range(len(raw) - 40, 0, -1) if raw[i - 1] & 7 < 6)  # whole draws
        (tmp_path / "f.raw").write_bytes(raw[:cut])
        expected = "more than the"
    else:
        (tmp_path / "f.txt").write_text(
            "".join((tmp_path / "f.txt").read_text().splitlines(keepends=True)[:-3])
        )
        expected = "the capture ends after 497 outcomes"
    done = run(tmp_path, "f.raw", "1", "6", "--check", "f.txt")
    assert done.returncode == 1
    assert expected in done.stderr


def test_raw_bytes_ending_on_a_rejected_attempt_are_refused(tmp_path: Path) -> None:
    (tmp_path / "raw").write_bytes(bytes([0x00, 0x07]))  # 1, then a rejected attempt
    done = run(tmp_path, "raw", "1", "6")
    assert done.returncode == 1
    assert "end inside a draw" in done.stderr


@pytest.mark.parametrize("args", [[], ["raw", "8", "1"], ["raw", "1", "x"], ["raw", "1", "8", "x"]])
def test_usage_errors_exit_2(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "raw").write_bytes(b"\x00")
    assert run(tmp_path, *args).returncode == 2


def test_a_missing_file_exits_2(tmp_path: Path) -> None:
    done = run(tmp_path, "nothing.raw", "1", "8")
    assert done.returncode == 2 and "nothing.raw" in done.stderr
