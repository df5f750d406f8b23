"""``table-controller lab package`` and ``lab verify`` on a stopped table's state directory: a
package with small N verifies; the state directory is not changed by a byte; one changed byte in
any file of the package is refused with the file named; a tampering re-sealed by someone holding
the key is still caught by the replay, the statistics or the journal's own signature; the ranges
come from the shipped profiles."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.cli import main, simulate
from controller.config.profile import load_profile
from controller.journal.signer import FileSigner
from controller.lab import suite
from controller.lab.check import verify_package
from controller.lab.ranges import LabRangeError, draw_ranges, ranges_of, shipped_profiles
from controller.lab.seal import seal

ROOT = Path(__file__).resolve().parents[3]
PROFILE = ROOT / "hw_profiles" / "sim-paigow.toml"
DRAWS = 400
RAW = 6000
REAL_COLLECT = suite.collect
FAST_SUITE = suite.SuiteSummary(
    how="a summary stub for this test",
    items=(("tests/unit/paigow/test_x.py::test_rule", "5324.50(b)(1) rows"),),
    by_area={"tests/unit/paigow": 1},
)


@pytest.fixture(autouse=True)
def _quick_suite(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite's summary is collected by its own test below; here a stub keeps N small fast."""
    monkeypatch.setattr(suite, "collect", lambda root, python="": FAST_SUITE)
    monkeypatch.delenv("TABLE_CONTROLLER_MANIFEST", raising=False)


def snapshot(folder: Path) -> dict[str, tuple[int, str]]:
    """Every file under ``folder``: its mode and the SHA-256 of its bytes."""
    return {
        str(p.relative_to(folder)): (p.stat().st_mode, hashlib.sha256(p.read_bytes()).hexdigest())
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def stopped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A stopped pai gow table's state directory: three scripted rounds, then a clean stop."""
    state = tmp_path_factory.mktemp("lab") / "state"
    assert simulate(str(PROFILE), 3, str(state), out=lambda line: None) == 0
    return state


@pytest.fixture(scope="module")
def made(stopped: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """One package of the stopped table (the module's tests copy it before changing it)."""
    mp = pytest.MonkeyPatch()
    mp.setattr(suite, "collect", lambda root, python="": FAST_SUITE)
    out = tmp_path_factory.mktemp("made") / "pkg"
    lines: list[str] = []
    from controller.lab import command

    code = command.package(
        str(out),
        str(PROFILE),
        state_dir=str(stopped),
        draws=DRAWS,
        raw_bytes=RAW,
        seed_hex="00112233445566778899aabbccddeeff",
        say=lines.append,
    )
    mp.undo()
    assert code == 0, lines
    yield out, "\n".join(lines)


def copy_of(made: tuple[Path, str], tmp_path: Path) -> Path:
    copy = tmp_path / "pkg"
    shutil.copytree(made[0], copy)
    return copy


def test_a_small_package_verifies(made: tuple[Path, str]) -> None:
    out, printed = made
    verdict = verify_package(out)
    assert verdict.ok, verdict.problems
    said = "\n".join(verdict.lines)
    assert f"replay: {DRAWS} outcomes of 1-8 from rng/final-1-8.raw match" in said
    assert f"replay: {DRAWS} outcomes of 1-6 from rng/final-1-6.raw match" in said
    assert "statistics: computed again, equal to rng/statistics.json" in said
    assert "verifies with key" in said
    # what the command printed: the archive and its real SHA-256, the seed, the HMAC
    archive = out.with_name("pkg.tar.gz")
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    assert f"archive {archive}\n  sha256 {digest}" in printed
    assert (out.parent / "pkg.tar.gz.sha256").read_text() == f"{digest}  pkg.tar.gz\n"
    assert "seed 00112233445566778899aabbccddeeff (given)" in printed


def test_the_package_holds_what_a_lab_asks_for(made: tuple[Path, str], stopped: Path) -> None:
    out, printed = made
    files = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    for name in (
        "README.md",
        "SHA256SUMS",
        "SHA256SUMS.sig",
        "signing-key.pem",
        "package.json",
        "rng/raw.bin",
        "rng/final-1-8.txt",
        "rng/final-1-8.raw",
        "rng/final-1-6.txt",
        "rng/final-1-6.raw",
        "rng/replay.py",
        "rng/scaling.md",
        "rng/source.md",
        "rng/statistics.txt",
        "rng/statistics.json",
        "rng/health.txt",
        "program/identity.json",
        "program/manifest.json",
        "program/hmac.txt",
        "settings/profile.txt",
        "settings/profile-settings.md",
        "settings/profile/sim-paigow.toml",
        "settings/rules.txt",
        "settings/events.md",
        "settings/meters.txt",
        "settings/meters.json",
        "journal/recall.txt",
        "journal/recall.jsonl",
        "journal/table.pub.pem",
        "journal/verify.txt",
        "tests/summary.txt",
        "docs/rng.md",
        "docs/journal.md",
        "docs/program-verification.md",
        "docs/paigow-table.md",
        "docs/baccarat-table.md",
    ):
        assert name in files, name
    assert (out / "rng" / "raw.bin").stat().st_size == RAW
    assert len((out / "rng" / "final-1-8.txt").read_text().split()) == DRAWS
    assert (out / "rng" / "final-1-8.raw").stat().st_size == DRAWS  # 1-8: one byte, never rejected
    assert (out / "rng" / "final-1-6.raw").stat().st_size >= DRAWS
    # the raw capture's statistics and each final capture's, with the four named tests
    tests = json.loads((out / "rng" / "statistics.json").read_text())
    by_capture: dict[str, set[str]] = {}
    for t in tests:
        by_capture.setdefault(t["capture"], set()).add(t["test"].split(" (")[0])
    assert {"frequency chi-square", "serial pairs chi-square", "mono-bit", "runs"} <= by_capture[
        "rng/raw.bin"
    ]
    for r in ("1-8", "1-6"):
        assert {"frequency chi-square", "serial pairs chi-square", "runs of equal outcomes"} <= (
            by_capture[f"rng/final-{r}.txt"]
        )
        assert {"mono-bit", "runs"} <= by_capture[f"rng/final-{r}.raw"]
    source = " ".join((out / "rng" / "source.md").read_text().split())
    assert "13:69E-1.28G(b)5" in source and "The program never seeds it" in source
    health = (out / "rng" / "health.txt").read_text()
    assert "RCT cutoff C = 1 + ceil(56 / 8) = 8" in health and "false alarms per year" in health
    # every setting with value, default, range and reference
    rules = (out / "settings" / "rules.txt").read_text()
    assert "recall_depth = 20  (default 20, range 10..1000; 5324.50(f)(11)" in rules
    assert "start_mode = rng  (default rng (NY), dice (NJ), range rng|dice" in rules
    profile_settings = (out / "settings" / "profile-settings.md").read_text()
    assert "| `bounce_ms` | " in profile_settings and "| reference |" in profile_settings
    assert 'console.port = "stdio"' in (out / "settings" / "profile.txt").read_text()
    readme = (out / "README.md").read_text()
    assert "settings/events.md" in readme and "settings/meters.txt" in readme
    assert "meters are absent" not in readme
    assert "table-controller lab verify" in readme
    # the program: the HMAC printed is the one of the files (the lab's own tool agrees)
    identity = json.loads((out / "program" / "identity.json").read_text())
    assert identity["seed"] == "00112233445566778899aabbccddeeff"
    assert f"hmac-sha256 {identity['hmac']} over {identity['hmac_files']} files" in printed
    from controller.program.manifest import hmac_paths, parse_seed

    again, count = hmac_paths(
        parse_seed(identity["seed"]), ROOT, [out / "settings" / "profile" / "sim-paigow.toml"]
    )
    assert (again, count) == (identity["hmac"], identity["hmac_files"])
    # the journal: the public key is the table's; the exact verify command works as written
    key = FileSigner.load(stopped / "journal-key.pem")
    assert (out / "journal" / "table.pub.pem").read_bytes() == key.public_key_pem()
    assert (out / "signing-key.pem").read_bytes() == key.public_key_pem()
    recall_text = (out / "journal" / "recall.txt").read_text()
    assert recall_text.count("round ") >= 3 and "paigow.drawn" in recall_text
    info = json.loads((out / "package.json").read_text())
    export = info["journal"]["export"]
    verify_line = f"table-controller journal verify --archive {export}"
    assert verify_line in (out / "journal" / "verify.txt").read_text().replace("\\\n        ", "")


def test_the_journal_verify_command_in_the_package_passes(
    made: tuple[Path, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _ = made
    info = json.loads((out / "package.json").read_text())
    monkeypatch.chdir(out)
    code = main(
        [
            "journal",
            "verify",
            "--archive",
            info["journal"]["export"],
            "--pubkey",
            "journal/table.pub.pem",
        ]
    )
    assert code == 0, capsys.readouterr()


def test_the_seal_checks_without_this_program(made: tuple[Path, str]) -> None:
    out, _ = made
    sums = subprocess.run(
        ["sha256sum", "--quiet", "-c", "SHA256SUMS"], cwd=out, capture_output=True, timeout=60
    )
    assert sums.returncode == 0, sums.stdout
    if shutil.which("openssl") is None:
        pytest.skip("MISSING PART: openssl (Debian package openssl)")
    sig = subprocess.run(
        [
            "openssl",
            "dgst",
            "-sha256",
            "-verify",
            "signing-key.pem",
            "-signature",
            "SHA256SUMS.sig",
            "SHA256SUMS",
        ],
        cwd=out,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert sig.stdout.strip() == "Verified OK", sig


def test_the_stopped_tables_state_directory_is_unchanged(stopped: Path, tmp_path: Path) -> None:
    before = snapshot(stopped)
    from controller.lab import command

    assert (
        command.package(
            str(tmp_path / "again"),
            str(PROFILE),
            state_dir=str(stopped),
            draws=50,
            raw_bytes=500,
            say=lambda line: None,
        )
        == 0
    )
    assert snapshot(stopped) == before


# -- one changed byte anywhere ------------------------------------------------------------------

TAMPERED = [
    "rng/raw.bin",
    "rng/final-1-8.txt",
    "rng/final-1-6.raw",
    "rng/replay.py",
    "rng/statistics.json",
    "rng/captures.json",
    "program/manifest.json",
    "program/hmac.txt",
    "settings/rules.txt",
    "settings/profile/sim-paigow.toml",
    "journal/recall.jsonl",
    "journal/table.pub.pem",
    "journal/EXPORT",
    "tests/summary.txt",
    "docs/rng.md",
    "package.json",
    "README.md",
]


def flip(path: Path, at: int | None = None) -> None:
    data = bytearray(path.read_bytes())
    index = len(data) // 2 if at is None else at
    data[index] ^= 0x20
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("name", TAMPERED)
def test_one_changed_byte_in_any_file_is_refused(
    made: tuple[Path, str], tmp_path: Path, name: str
) -> None:
    pkg = copy_of(made, tmp_path)
    if name == "journal/EXPORT":
        name = json.loads((pkg / "package.json").read_text())["journal"]["export"]
    flip(pkg / name)
    verdict = verify_package(pkg)
    assert not verdict.ok
    assert verdict.problems[0].startswith(f"changed file {name}: sha256"), verdict.problems


@pytest.mark.parametrize("name", ["SHA256SUMS", "SHA256SUMS.sig", "signing-key.pem"])
def test_one_changed_byte_in_the_seal_is_refused(
    made: tuple[Path, str], tmp_path: Path, name: str
) -> None:
    pkg = copy_of(made, tmp_path)
    flip(pkg / name, at=70 if name == "SHA256SUMS" else None)  # a digit of a digest
    verdict = verify_package(pkg)
    assert not verdict.ok
    first = verdict.problems[0]
    assert "is not a signature of SHA256SUMS" in first or "signing-key.pem" in first, first


def test_an_added_or_removed_file_is_refused(made: tuple[Path, str], tmp_path: Path) -> None:
    pkg = copy_of(made, tmp_path)
    (pkg / "rng" / "extra.bin").write_bytes(b"x")
    assert verify_package(pkg).problems[0] == "unexpected file rng/extra.bin: not in the manifest"
    (pkg / "rng" / "extra.bin").unlink()
    (pkg / "docs" / "rng.md").unlink()
    assert verify_package(pkg).problems[0] == "missing file docs/rng.md"


def test_the_archive_verifies_and_a_changed_byte_in_it_is_refused(
    made: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = made[0].with_name("pkg.tar.gz")
    assert main(["lab", "verify", str(archive)]) == 0
    assert capsys.readouterr().out.strip().endswith(f"OK: the lab package {archive} holds")
    bad = tmp_path / "pkg.tar.gz"
    shutil.copyfile(archive, bad)
    flip(bad)
    assert main(["lab", "verify", str(bad)]) == 1
    assert "FAILED: " in capsys.readouterr().out


# -- tampering by someone who holds the key: the deeper checks still catch it -------------------


def resealed(pkg: Path, stopped: Path) -> Path:
    seal(pkg, FileSigner.load(stopped / "journal-key.pem"))
    return pkg


def test_resealed_raw_bytes_fail_the_replay(
    made: tuple[Path, str], stopped: Path, tmp_path: Path
) -> None:
    pkg = copy_of(made, tmp_path)
    raw = bytearray((pkg / "rng" / "final-1-8.raw").read_bytes())
    raw[7] = (raw[7] & 0xF8) | (((raw[7] & 7) + 1) % 8)  # another outcome
    (pkg / "rng" / "final-1-8.raw").write_bytes(bytes(raw))
    verdict = verify_package(resealed(pkg, stopped))
    assert verdict.problems[0].startswith(
        "replay of rng/final-1-8.raw into rng/final-1-8.txt failed: replay:"
    ), verdict.problems
    assert "outcome 8: the raw bytes give" in verdict.problems[0]


def test_resealed_statistics_that_do_not_match_the_captures_are_refused(
    made: tuple[Path, str], stopped: Path, tmp_path: Path
) -> None:
    pkg = copy_of(made, tmp_path)
    results = json.loads((pkg / "rng" / "statistics.json").read_text())
    results[4]["p_value"] = 0.5
    (pkg / "rng" / "statistics.json").write_text(json.dumps(results))
    verdict = verify_package(resealed(pkg, stopped))
    assert verdict.problems == [
        f"rng/statistics.json does not match the captures ({results[4]['capture']}:"
        f" {results[4]['test']})"
    ]


def test_a_resealed_journal_export_with_an_edited_row_is_refused(
    made: tuple[Path, str], stopped: Path, tmp_path: Path
) -> None:
    pkg = copy_of(made, tmp_path)
    export = pkg / json.loads((pkg / "package.json").read_text())["journal"]["export"]
    lines = gzip.decompress(export.read_bytes()).decode().splitlines()
    drawn = next(i for i, line in enumerate(lines) if '"paigow.drawn"' in line)
    row = json.loads(lines[drawn])
    row["data"]["record"]["number"] = 9 - row["data"]["record"]["number"]
    lines[drawn] = json.dumps(row, sort_keys=True, separators=(",", ":"))
    export.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    verdict = verify_package(resealed(pkg, stopped))
    assert verdict.problems[0].startswith(f"the journal export {export.relative_to(pkg)}")
    assert f"archive row {row['seq']} does not match its hash (edited)" in verdict.problems[0]


def test_a_resealed_recall_that_is_not_the_journals_is_refused(
    made: tuple[Path, str], stopped: Path, tmp_path: Path
) -> None:
    pkg = copy_of(made, tmp_path)
    records = [
        json.loads(line) for line in (pkg / "journal" / "recall.jsonl").read_text().splitlines()
    ]
    event = records[-1]["events"][2]
    event["hash"] = "0" * 64
    (pkg / "journal" / "recall.jsonl").write_text(
        "".join(json.dumps(r, sort_keys=True) + "\n" for r in records)
    )
    verdict = verify_package(resealed(pkg, stopped))
    assert verdict.problems == [
        f"journal/recall.jsonl row {event['seq']} is not the journal's row {event['seq']}"
    ]


def test_a_package_resealed_with_another_key_is_named(
    made: tuple[Path, str], tmp_path: Path, stopped: Path
) -> None:
    pkg = copy_of(made, tmp_path)
    other = tmp_path / "other.pem"
    FileSigner.create(other)
    seal(pkg, FileSigner.load(other))
    verdict = verify_package(pkg)  # claims the table's key, is not
    assert "is not the key that signs the journal" in verdict.problems[0], verdict.problems
    table_pub = tmp_path / "table.pub"
    table_pub.write_bytes(FileSigner.load(stopped / "journal-key.pem").public_key_pem())
    verdict = verify_package(pkg, table_pub.read_bytes())
    assert verdict.problems[0].startswith("the package is signed by key ")
    assert "not by the key given" in verdict.problems[0]


# -- the command line ---------------------------------------------------------------------------


def _lab_key(path: Path) -> Path:
    key = ec.generate_private_key(ec.SECP256R1())
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return path


def test_a_lab_key_seals_a_package_without_a_state_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = _lab_key(tmp_path / "lab.pem")
    out = tmp_path / "nostate"
    code = main(
        [
            "lab",
            "package",
            str(out),
            "--profile",
            str(PROFILE),
            "--draws",
            "50",
            "--raw-bytes",
            "300",
            "--key",
            str(key),
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0, printed
    seed = next(line.split()[1] for line in printed.splitlines() if line.startswith("seed "))
    assert len(seed) == 64 and "(chosen at random" in printed
    assert f"signed by a lab key ({key})" in printed
    assert not (out / "journal").exists()
    readme = (out / "README.md").read_text()
    assert "Absent: the package was made without a state directory" in readme
    # the catalogue is the program's; the meters are a journal's, and there is none
    assert (out / "settings" / "events.md").is_file()
    assert not (out / "settings" / "meters.txt").exists() and "The meters are absent" in readme
    assert main(["lab", "verify", str(out)]) == 0
    pub = tmp_path / "lab.pub"
    pub.write_bytes(FileSigner.load(key).public_key_pem())
    assert main(["lab", "verify", str(out), "--pubkey", str(pub)]) == 0


def test_without_a_key_or_a_state_directory_a_one_off_key_seals_it_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from controller.lab import command

    monkeypatch.setattr(command, "DEFAULT_STATE_DIR", str(tmp_path / "no-such-state"))
    out = tmp_path / "p"
    args = ["--profile", str(PROFILE), "--draws", "20", "--raw-bytes", "200"]
    code = main(["lab", "package", str(out), *args])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "sealing with a one-off key, which binds the package to no device" in printed.err
    assert "give --state-dir DIR or --key LAB-KEY.pem" in printed.err
    assert "signed by a one-off key made for this package" in printed.out
    readme = " ".join((out / "README.md").read_text().split())
    assert "a one-off key made for this package (not the table's: it binds the package to no" in (
        readme
    )
    assert verify_package(out).ok
    table_key = tmp_path / "table.pub"
    FileSigner.create(tmp_path / "table.pem")
    table_key.write_bytes(FileSigner.load(tmp_path / "table.pem").public_key_pem())
    assert "not by the key given" in verify_package(out, table_key.read_bytes()).problems[0]


def test_a_state_directory_without_its_key_is_refused(
    stopped: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "state"
    shutil.copytree(stopped, copy)
    (copy / "journal-key.pem").unlink()
    args = ["--profile", str(PROFILE), "--state-dir", str(copy), "--draws", "10"]
    assert main(["lab", "package", str(tmp_path / "p"), *args]) == 1
    err = capsys.readouterr().err
    assert "the table's journal key cannot be opened: no signing key at" in err
    assert not (tmp_path / "p").exists()


def test_an_existing_package_or_one_inside_the_state_directory_is_refused(
    made: tuple[Path, str], stopped: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(stopped)
    args = ["--profile", str(PROFILE), "--state-dir", str(stopped), "--draws", "10"]
    assert main(["lab", "package", str(made[0]), *args]) == 1
    assert "exists already: the package never overwrites anything" in capsys.readouterr().err
    assert main(["lab", "package", str(stopped / "inside"), *args]) == 1
    assert "is inside the state directory" in capsys.readouterr().err
    assert snapshot(stopped) == before


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--draws", "1"], "must be 2 or more"),
        (["--raw-bytes", "x"], "expected a whole number"),
        (["--seed", "abc"], "--seed: the seed must be hex digits"),
        (["--seed", "00ff"], "--seed: the seed must be 16 to 64 bytes"),
    ],
)
def test_usage_errors_are_named(
    tmp_path: Path, args: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(["lab", "package", str(tmp_path / "p"), "--profile", str(PROFILE), *args])
    except SystemExit as exc:
        code = int(exc.code or 0)
    assert code == 2
    assert needle in capsys.readouterr().err
    assert not (tmp_path / "p").exists()


def test_verify_names_a_folder_that_is_not_a_package(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["lab", "verify", str(tmp_path / "none")]) == 1
    assert f"FAILED: no lab package at {tmp_path / 'none'}" in capsys.readouterr().out
    (tmp_path / "empty").mkdir()
    assert main(["lab", "verify", str(tmp_path / "empty")]) == 1
    assert "FAILED: the package's seal is incomplete" in capsys.readouterr().out


# -- ranges and the suite's summary ---------------------------------------------------------------


def test_the_ranges_come_from_the_shipped_profiles() -> None:
    ranges = draw_ranges(shipped_profiles(ROOT))
    assert [(r.low, r.high) for r in ranges] == [(1, 8), (1, 7), (1, 6)]
    assert "sim-paigow" in ranges[0].profiles and "5324.50(a)(4)" in ranges[0].reference
    # N.J.A.C. 13:69F-31.11(c): "a number from 1 through 7" (the starting-position table)
    assert "sim-asia-poker" in ranges[1].profiles and "13:69F-31.11(c)" in ranges[1].reference
    assert all(
        not ranges_of(load_profile(p)) for p in shipped_profiles(ROOT) if "baccarat" in p.name
    )


def test_a_table_whose_draws_the_package_does_not_know_is_refused() -> None:
    other = dataclasses.replace(load_profile(PROFILE), game="roulette")  # type: ignore[arg-type]
    with pytest.raises(LabRangeError, match="does not know what a roulette table draws"):
        ranges_of(other)


def test_the_suite_is_collected_without_running_a_test(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\ntestpaths = ['tests']\n")
    rules = tmp_path / "tests" / "unit" / "paigow"
    rules.mkdir(parents=True)
    (rules / "test_rules.py").write_text(
        "import pytest\n"
        "@pytest.mark.parametrize('x', [1, 2, 3])\n"
        "def test_pairs(x):\n    '''5324.50(b)(1): every pair ranks.'''\n"
        "    raise SystemExit('a test was run')\n"
    )
    other = tmp_path / "tests" / "integration"
    other.mkdir(parents=True)
    (other / "test_proc.py").write_text("def test_a():\n    raise SystemExit('run')\n")
    got = REAL_COLLECT(tmp_path)  # the real collection, not the stub
    assert got.total == 4 and not got.absent
    assert got.by_area == {"tests/integration": 1, "tests/unit/paigow": 3}
    text = "\n".join(suite.summary_lines(got))
    assert (
        "- tests/unit/paigow/test_rules.py::test_pairs (3 cases): 5324.50(b)(1): every pair"
        " ranks." in text
    )
    assert not list(tmp_path.rglob("__pycache__")) and not (tmp_path / ".pytest_cache").exists()


def test_a_release_without_its_tests_says_the_summary_is_absent(tmp_path: Path) -> None:
    got = REAL_COLLECT(tmp_path)
    assert got.absent.startswith(f"{tmp_path} is not a source tree")


def test_the_raw_capture_uses_the_production_source_and_health_tests(
    made: tuple[Path, str],
) -> None:
    info = json.loads((made[0] / "package.json").read_text())
    assert info["rng"]["monitors"][0] == "kernel CSPRNG"
    assert info["rng"]["self_test"].endswith(": PASS")
    assert os.path.getsize(made[0] / "rng" / "raw.bin") == RAW


# -- hostile packages: a description that points outside, malformed values, another script ------


def test_a_name_outside_the_package_is_refused_never_followed(
    made: tuple[Path, str], stopped: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("1\n" * 500)
    pkg = copy_of(made, tmp_path)
    captures = json.loads((pkg / "rng" / "captures.json").read_text())
    captures["final"][0]["outcomes"] = str(secret)
    (pkg / "rng" / "captures.json").write_text(json.dumps(captures))
    verdict = verify_package(resealed(pkg, stopped))
    assert verdict.problems == [
        f"the package's description is malformed: _Malformed: '{secret}' is not a file of the"
        " package"
    ]


def test_a_replay_script_other_than_this_programs_runs_only_for_the_key_given(
    made: tuple[Path, str], stopped: Path, tmp_path: Path
) -> None:
    pkg = copy_of(made, tmp_path)
    marker = tmp_path / "ran"
    script = pkg / "rng" / "replay.py"
    text = script.read_text(encoding="utf-8")
    planted = f"open({str(marker)!r}, 'w').write('ran')\nCHUNK = 1 << 16"
    script.write_text(text.replace("CHUNK = 1 << 16", planted, 1), encoding="utf-8")
    resealed(pkg, stopped)
    verdict = verify_package(pkg)
    assert verdict.problems[0].startswith("rng/replay.py is not this program's replay script")
    assert not marker.exists()
    table_key = FileSigner.load(stopped / "journal-key.pem").public_key_pem()
    assert verify_package(pkg, table_key).ok  # the commissioned key vouches for it
    assert marker.exists()


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


def _paths(value: object, at: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Every place in a JSON value (the keys and indexes that reach it)."""
    found = [at]
    if isinstance(value, dict):
        for k, v in value.items():
            found += _paths(v, (*at, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += _paths(v, (*at, i))
    return found


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_fuzz_a_resealed_description_never_crashes_verify(
    made: tuple[Path, str],
    stopped: Path,
    tmp_path_factory: pytest.TempPathFactory,
    data: st.DataObject,
) -> None:
    """package.json or captures.json with any value replaced by any JSON, re-sealed with the
    table's key: verify answers (a verdict naming a problem, or all holding when the change does
    not matter), never an exception."""
    pkg = copy_of(made, tmp_path_factory.mktemp("fuzz"))
    name = data.draw(st.sampled_from(["package.json", "rng/captures.json"]))
    doc = json.loads((pkg / name).read_text())
    place = data.draw(st.sampled_from(_paths(doc)[1:]))
    value = data.draw(JSON)
    target = doc
    for key in place[:-1]:
        target = target[key]
    target[place[-1]] = value
    (pkg / name).write_text(json.dumps(doc))
    verdict = verify_package(resealed(pkg, stopped))
    assert all(isinstance(p, str) and p for p in verdict.problems)
    if not verdict.ok:
        assert "Traceback" not in verdict.problems[0]


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_fuzz_any_changed_bytes_are_refused(
    made: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    pkg = copy_of(made, tmp_path_factory.mktemp("fuzzbytes"))
    files = sorted(str(p.relative_to(pkg)) for p in pkg.rglob("*") if p.is_file())
    name = data.draw(st.sampled_from(files))
    raw = bytearray((pkg / name).read_bytes())
    at = data.draw(st.integers(0, max(0, len(raw) - 1)))
    new = data.draw(st.integers(0, 255).filter(lambda b: not raw or b != raw[at]))
    if raw:
        raw[at] = new
    else:
        raw.append(new)
    (pkg / name).write_bytes(bytes(raw))
    verdict = verify_package(pkg)
    assert not verdict.ok, name


def test_an_rng_fault_mid_capture_leaves_no_package(
    stopped: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The generator's health test fails during the raw capture (a source stuck on one byte):
    the command says so and leaves nothing that could be taken for a package."""
    from controller.lab import command
    from controller.rng import certified

    served = [0]

    def sticking(count: int) -> bytes:
        served[0] += count
        return os.urandom(count) if served[0] <= 4096 else b"\x2a" * count

    real = certified.CertifiedRng
    monkeypatch.setattr(command, "CertifiedRng", lambda **kw: real(sticking, hwrng_path=None))
    out = tmp_path / "p"
    code = main(
        [
            "lab",
            "package",
            str(out),
            "--profile",
            str(PROFILE),
            "--state-dir",
            str(stopped),
            "--raw-bytes",
            "20000",
            "--draws",
            "10",
        ]
    )
    err = capsys.readouterr().err
    assert code == 1
    assert "lab package: " in err and "repetition count test failed" in err
    assert not out.exists() and not out.with_name("p.tar.gz").exists()


def test_the_events_and_the_meters_are_the_tables(
    made: tuple[Path, str], stopped: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """settings/events.md is docs/events.md's catalogue; settings/meters.* count the stopped
    table's three scripted rounds, as `table-controller meters` counts them."""
    out, _ = made
    events = (out / "settings" / "events.md").read_text()
    docs = (Path(__file__).parents[3] / "docs" / "events.md").read_text()
    table = [line for line in events.splitlines() if line.startswith("| ")]
    assert len(table) > 20 and all(line in docs.splitlines() for line in table)
    meters = json.loads((out / "settings" / "meters.json").read_text())
    lifetime = meters["lifetime"]
    assert lifetime["paigow.games_played"] == 3  # the fixture's three rounds
    assert sum(lifetime.get(f"paigow.rng.{n}", 0) for n in range(1, 9)) == 3  # one draw each
    assert lifetime["power_ups"] == 1
    capsys.readouterr()
    assert main(["meters", "--state-dir", str(stopped)]) == 0
    assert (out / "settings" / "meters.txt").read_text() == capsys.readouterr().out
