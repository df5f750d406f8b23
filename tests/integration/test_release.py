"""A sealed release (issue 14): built, installed offline from ``/``, run from ``/`` through its
entry point, and refused when anything Python would load was changed.

Each tampering plants the same patch (every draw returns 7, and it leaves a marker file when it
runs) where an adversary with write access to the install would: a ``.pth`` file and a module in
the library, ``sitecustomize.py``, ``six.py`` (imported by transitions), a swapped
``transitions/__pycache__/core.cpython-311.pyc`` whose header keeps the source's mtime and size,
and the entry script. Each must end in a program fault at start (play stops: the draw is
refused) and a ``verify SEED`` that differs from the lab's value computed from the artifact.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import marshal
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.hil.rig import PtyMaster, Rig
from tests.integration.release import (
    CLEAN_ENV,
    REPO,
    Staged,
    artifact_in,
    build_release,
    install,
    sim_profile,
)
from tests.services._common import required

SEED = "5eed" * 8
PYC = "lib/transitions/__pycache__/core.cpython-311.pyc"


def patch_source(marker: Path) -> str:
    """The adversary's patch: every draw returns 7; it leaves ``marker`` when it runs."""
    return (
        "\n\ndef _tc_every_draw_is_7():\n"
        "    import pathlib\n"
        f"    pathlib.Path({str(marker)!r}).write_text('ran')\n"
        "    from controller.rng import certified\n"
        "    certified.CertifiedRng.draw = lambda self, *args, **kwargs: 7\n"
        "\n\n_tc_every_draw_is_7()\n"
    )


class Files:
    """What a test changes in the read-only install, put back afterwards (one install serves
    the module): each path's bytes and mode before the first change, or that it was absent."""

    def __init__(self) -> None:
        self._saved: dict[Path, tuple[bytes, int] | None] = {}

    def writable(self, path: Path) -> Path:
        """Make a file (and its folder) writable, as root could; remember how it was."""
        for p in (path.parent, path):
            if p not in self._saved:
                self._saved[p] = (
                    (b"" if p.is_dir() else p.read_bytes(), p.stat().st_mode)
                    if p.exists()
                    else None
                )
            if p.exists():
                p.chmod(p.stat().st_mode | stat.S_IWUSR)
        return path

    def restore(self) -> None:
        for path, saved in sorted(self._saved.items(), key=lambda kv: -len(kv[0].parts)):
            if saved is None:
                if path.exists():
                    path.unlink()
            elif not path.is_dir():
                path.write_bytes(saved[0])
        for path, saved in self._saved.items():
            if saved is not None and path.exists():
                path.chmod(saved[1])
        self._saved.clear()


def plant_pth(files: Files, opt: Path, marker: Path) -> str:
    files.writable(opt / "lib" / "tc_evil.py").write_text(patch_source(marker))
    files.writable(opt / "lib" / "tc-evil.pth").write_text("import tc_evil\n")
    return "unexpected file lib/tc-evil.pth"


def plant_sitecustomize(files: Files, opt: Path, marker: Path) -> str:
    path = files.writable(opt / "python/lib/python3.11/sitecustomize.py")
    path.write_text(patch_source(marker))
    return "unexpected file python/lib/python3.11/sitecustomize.py"


def patch_six(files: Files, opt: Path, marker: Path) -> str:
    six = files.writable(opt / "lib" / "six.py")
    six.write_text(six.read_text() + patch_source(marker))
    return "changed file lib/six.py"


def swap_pyc(files: Files, opt: Path, marker: Path) -> str:
    """A timestamp-based .pyc of the patched module whose header carries the real source's
    mtime and size: Python loads it without reading the source."""
    source = opt / "lib" / "transitions" / "core.py"
    code = compile(source.read_text() + patch_source(marker), str(source), "exec")
    st = source.stat()
    header = (
        importlib.util.MAGIC_NUMBER
        + (0).to_bytes(4, "little")
        + (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
        + (st.st_size & 0xFFFFFFFF).to_bytes(4, "little")
    )
    files.writable(opt / PYC).write_bytes(header + marshal.dumps(code))
    return f"changed file {PYC}"


def patch_entry(files: Files, opt: Path, marker: Path) -> str:
    entry = files.writable(opt / "bin" / "table-controller")
    text = entry.read_text()
    anchor = "from controller.cli import main"
    entry.write_text(text.replace(anchor, patch_source(marker) + anchor))
    return "changed file bin/table-controller"


@dataclass
class Table:
    """A staged install of this machine's release with a sim profile whose console is a
    pseudo-terminal reached through a link (so one install serves several starts)."""

    staged: Staged
    artifact: Path
    link: Path
    state: Path
    rigs: list[Rig] = field(default_factory=list)
    files: Files = field(default_factory=Files)

    def start(self) -> Rig:
        pty = PtyMaster()
        if self.link.is_symlink():
            self.link.unlink()
        self.link.symlink_to(pty.slave_path)
        rig = Rig(
            self.staged.profile,
            self.state,
            pty,
            env=CLEAN_ENV,
            cwd=Path("/"),
            program=self.staged.command(),
        )
        self.rigs.append(rig)
        return rig.start()

    def lab_hmac(self) -> str:
        """The lab's value: its offline tool (this repository's copy) over the artifact and the
        installed profile's files (computed once: neither changes)."""
        return lab_hmac(self.artifact, self.staged.profile)


@functools.cache
def lab_hmac(artifact: Path, profile: Path) -> str:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "controller.program.manifest",
            "hmac",
            SEED,
            str(artifact),
            "--profile-of",
            str(profile),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(REPO),
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.split()[1]


@pytest.fixture(scope="module")
def installed(
    release_artifact: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Staged, Path]]:
    """One staged install for the module (install.sh from /, offline, clean environment)."""
    folder = tmp_path_factory.mktemp("release")
    link = folder / "console"
    profile = sim_profile(folder / "profile", link)
    # a stage other users can reach (pytest's own folders are private): the read-only test
    # tries to write as an unprivileged user
    stage = Path(tempfile.mkdtemp(prefix="tc-stage-", dir="/tmp"))
    stage.chmod(0o755)
    yield install(release_artifact, stage, profile), link
    subprocess.run(["chmod", "-R", "u+w", str(stage)], check=False, timeout=60)
    shutil.rmtree(stage, ignore_errors=True)


@pytest.fixture
def table(
    installed: tuple[Staged, Path], release_artifact: Path, tmp_path: Path
) -> Iterator[Table]:
    """The module's install with a fresh journal; whatever a test changed is put back and the
    install is checked against its manifest again afterwards."""
    staged, link = installed
    t = Table(staged, release_artifact, link, tmp_path / "state")
    yield t
    for rig in t.rigs:
        rig.close()
    t.files.restore()
    check = staged.run("manifest", "check", "--profile-of", str(staged.profile))
    assert check.returncode == 0, "the test did not put the install back:\n" + check.stdout


def hmac_of(rig: Rig) -> str:
    line = rig.ok(f"verify {SEED}")[0]
    assert line.startswith("hmac-sha256 "), line
    return line.split()[1]


def press_to_draw(rig: Rig) -> list[str]:
    """The dealer's buttons from a fresh table to the draw. Without a fault each moves the
    round on; under a program fault each is refused (``ERR FAULT``). Returns the refusals."""
    rig.login()
    refused = []
    for button, then in (
        ("shuffled", "betting"),
        ("no_more_bets", ("no_more_bets", "bank_style")),
        ("draw", "dealing"),
    ):
        reply = rig.command(f"sim button {button}")
        if reply.ok:
            rig.wait_status("state", then)
        else:
            assert reply.code == "FAULT" and "program: " in reply.status, reply.status
            refused.append(button)
    return refused


def test_the_install_is_offline_read_only_and_checked_from_root(table: Table) -> None:
    staged = table.staged
    if not staged.offline:
        why = "no network namespace here (needs root and unshare): offline install not proven"
        if required("netns"):  # under CI (TC_REQUIRE_SERVICES=1) a missing part is a failure
            pytest.fail(why, pytrace=False)
        pytest.skip(why)
    opt = staged.opt
    for dirpath, dirnames, filenames in os.walk(opt):
        for name in [*dirnames, *filenames, "."]:
            mode = (Path(dirpath) / name).lstat().st_mode
            assert not mode & 0o222, f"{dirpath}/{name} is writable ({oct(mode)})"
            assert not stat.S_ISLNK(mode)
    if os.geteuid() == 0:
        assert opt.stat().st_uid == 0
        if shutil.which("setpriv"):  # as an unprivileged user: nothing writable

            def as_nobody(script: str) -> subprocess.CompletedProcess[str]:
                return subprocess.run(
                    [
                        "setpriv",
                        "--reuid=65534",
                        "--regid=65534",
                        "--clear-groups",
                        "sh",
                        "-c",
                        script,
                    ],
                    capture_output=True,
                    text=True,
                    timeout=30,
                )

            six = opt / "lib" / "six.py"
            assert as_nobody(f"cat '{six}' >/dev/null").returncode == 0  # it can reach them
            for target in (six, opt / "lib" / "new.pth"):
                attempt = as_nobody(f"echo x >> '{target}'")
                assert attempt.returncode != 0 and "Permission denied" in attempt.stderr
    # the release's own check, run from / with a clean environment
    check = staged.run("manifest", "check", "--profile-of", str(staged.profile))
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.strip() == f"all files match {opt / 'manifest.json'}"


def test_the_release_carries_the_unit_its_drop_in_and_the_kiosk(table: Table) -> None:
    """What install.sh and install-kiosk.sh use comes from the release, byte for byte the
    tree's; the sim profile serves the scoreboard, so the loopback drop-in is installed."""
    share = table.staged.opt / "share"
    for src, dest in (
        ("systemd/table-controller.service", "table-controller.service"),
        ("systemd/install.sh", "install.sh"),
        ("systemd/kiosk/scoreboard-kiosk.sh", "kiosk/scoreboard-kiosk.sh"),
        ("systemd/kiosk/install-kiosk.sh", "kiosk/install-kiosk.sh"),
        (
            "systemd/udev/70-table-controller-serial.rules",
            "udev/70-table-controller-serial.rules",
        ),
        (
            "systemd/system.conf.d/60-table-controller-watchdog.conf",
            "system.conf.d/60-table-controller-watchdog.conf",
        ),
    ):
        assert (share / dest).read_bytes() == (REPO / src).read_bytes(), dest
    drop_in = "table-controller.service.d/scoreboard.conf"
    assert (table.staged.stage / "etc" / "systemd" / "system" / drop_in).read_bytes() == (
        REPO / "systemd" / drop_in
    ).read_bytes()


def test_a_clean_release_starts_without_fault_and_answers_the_labs_hmac(table: Table) -> None:
    rig = table.start()
    status = rig.status()
    assert status["faults"] == "none", status
    assert hmac_of(rig) == table.lab_hmac()
    assert (
        rig.ok("verify")[0] == f"all program and profile files match {table.staged.opt}"
        "/manifest.json"
    )
    assert press_to_draw(rig) == []
    assert rig.status()["number"] in list("12345678")
    started = [line for line in rig.stderr_lines if "program verified" in line]
    assert started, rig.stderr_lines[-10:]


def test_the_release_makes_a_lab_package_whose_hmac_the_lab_recomputes(
    table: Table, tmp_path: Path
) -> None:
    """``lab package`` run by the installed release beside its running table: the package
    names the release (its manifest's SHA-256), its HMAC is the one the lab's tool computes from
    the artifact with the profile files the package carries, it holds the documentation's pages
    from the release, and ``lab verify`` run by the release holds (its replay by the release's
    own interpreter, isolated)."""
    rig = table.start()
    assert press_to_draw(rig) == []
    out = tmp_path / "lab"
    made = table.staged.run(
        *("lab", "package", str(out), "--profile", str(table.staged.profile)),
        *("--state-dir", str(table.state), "--draws", "200", "--raw-bytes", "3000"),
        *("--seed", SEED),
        timeout=600,
    )
    assert made.returncode == 0, made.stdout + made.stderr
    assert rig.status()["state"] == "dealing"  # the table played on
    identity = json.loads((out / "program" / "identity.json").read_text())
    opt = table.staged.opt
    assert identity["kind"] == "release"
    assert (out / "program" / "manifest.json").read_bytes() == (opt / "manifest.json").read_bytes()
    assert (
        identity["manifest_sha256"]
        == hashlib.sha256((opt / "manifest.json").read_bytes()).hexdigest()
    )
    assert identity["check"] == ["every program and profile file matches the manifest"]
    assert identity["hmac"] == table.lab_hmac()  # the table's own value, as `verify SEED` gives
    copied = out / "settings" / "profile" / "profile.toml"
    assert lab_hmac(table.artifact, copied) == identity["hmac"]  # from the package's copies
    assert f"hmac-sha256 {identity['hmac']}" in made.stdout
    for page in ("lab.md", "rng.md", "journal.md", "program-verification.md", "paigow-table.md"):
        assert (out / "docs" / page).read_bytes() == (REPO / "docs" / page).read_bytes(), page
    assert "Not included: " in (out / "tests" / "summary.txt").read_text()
    checked = table.staged.run("lab", "verify", str(out), timeout=600)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "(python3 -I -S rng/replay.py)" in checked.stdout


TAMPERINGS: dict[str, tuple[Callable[[Files, Path, Path], str], bool]] = {
    # name: (plant, does the patch run: -S keeps .pth and sitecustomize from running at all)
    "pth": (plant_pth, False),
    "sitecustomize": (plant_sitecustomize, False),
    "six": (patch_six, True),
    "pyc": (swap_pyc, True),
    "entry": (patch_entry, True),
}


@pytest.mark.parametrize("name", sorted(TAMPERINGS))
def test_a_tampering_is_a_program_fault_at_start_and_changes_verify_seed(
    table: Table, tmp_path: Path, name: str
) -> None:
    plant, runs = TAMPERINGS[name]
    lab = table.lab_hmac()
    marker = tmp_path / "patch-ran"
    expected = plant(table.files, table.staged.opt, marker)
    rig = table.start()
    faults = rig.status()["faults"]
    assert f"program: {expected}" in faults, faults
    assert marker.exists() == runs
    assert hmac_of(rig) != lab
    assert press_to_draw(rig) == ["shuffled", "no_more_bets", "draw"]  # play is stopped
    status = rig.status()
    assert status["state"] != "dealing" and status["number"] == "-", status
    rig.err("fault clear", "FAULT")  # the file is still there


def test_the_fault_clears_once_the_files_match_again(table: Table, tmp_path: Path) -> None:
    six = table.staged.opt / "lib" / "six.py"
    original = six.read_bytes()
    patch_six(table.files, table.staged.opt, tmp_path / "patch-ran")
    rig = table.start()
    assert "program: changed file lib/six.py" in rig.status()["faults"]
    six.write_bytes(original)
    rig.login()
    assert rig.ok("fault clear")[0].startswith("cleared: program: changed file lib/six.py")
    assert rig.status()["faults"] == "none"


def test_an_unsealed_or_changed_profile_is_a_fault(table: Table) -> None:
    seal = table.files.writable(table.staged.etc / "profile.toml.manifest.json")
    profile = table.files.writable(table.staged.profile)
    profile.write_text(profile.read_text() + "# edited after install\n")
    rig = table.start()
    assert (
        f"program: changed profile file {table.staged.etc}/profile.toml" in rig.status()["faults"]
    )
    rig.close()
    seal.unlink()
    rig = table.start()
    assert "program: the profile is not sealed" in rig.status()["faults"]


def test_every_module_has_checked_hash_byte_code_in_the_manifest(table: Table) -> None:
    """PEP 552: flags 0b11 (checked hash) in every .pyc; each .py of lib/ and the standard
    library has one, and the manifest lists it."""
    import json

    opt = table.staged.opt
    files = json.loads((opt / "manifest.json").read_text())["files"]
    release = json.loads((opt / "release.json").read_text())
    uncompiled = set(release["python"]["not_compiled"])
    sources = [n for n in files if n.endswith(".py") and n.startswith(("lib/", "python/lib/"))]
    assert len(sources) > 500
    for name in sources:
        if name in uncompiled:
            continue
        pyc = importlib.util.cache_from_source(name)
        assert pyc in files, name
        header = (opt / pyc).read_bytes()[:16]
        assert header[:4] == importlib.util.MAGIC_NUMBER
        assert int.from_bytes(header[4:8], "little") == 0b11, name
    assert not [n for n in files if n.endswith(".pth") or "customize" in n.rsplit("/", 1)[-1]]


@pytest.mark.slow
def test_two_builds_from_the_same_tree_give_the_same_bytes(
    release_artifact: Path, tmp_path: Path
) -> None:
    if os.environ.get("TC_RELEASE_ARTIFACT"):
        pytest.skip("the artifact was built elsewhere (TC_RELEASE_ARTIFACT)")
    again = build_release(tmp_path / "again")
    assert again.returncode == 0, again.stderr
    assert artifact_in(tmp_path / "again").read_bytes() == release_artifact.read_bytes()


def test_install_refuses_an_artifact_that_does_not_match_its_manifest(
    release_artifact: Path, tmp_path: Path
) -> None:
    """The artifact rewritten member by member with one file changed (its manifest kept)."""
    import io
    import tarfile

    bad = tmp_path / "tampered.tar"
    with tarfile.open(release_artifact) as src, tarfile.open(bad, "w") as out:
        for member in src.getmembers():
            data = src.extractfile(member).read() if member.isfile() else None  # type: ignore[union-attr]
            if member.name.endswith("/lib/six.py"):
                data = b"# not six\n"
                member.size = len(data)
            out.addfile(member, io.BytesIO(data) if data is not None else None)
    profile = sim_profile(tmp_path / "profile", tmp_path / "console")
    with pytest.raises(AssertionError, match="does not match its own manifest"):
        install(bad, tmp_path / "stage", profile)
    assert not (tmp_path / "stage" / "opt" / "table-controller").exists()
