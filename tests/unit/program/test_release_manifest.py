"""The release's manifest and the lab's HMAC over an artifact, on small synthetic releases: the
HMAC recomputed here from docs/program-verification.md, the tree check's findings, the artifact
reader's refusals, and the boot check's view of a process that is not isolated."""

from __future__ import annotations

import hashlib
import hmac
import io
import sys
import tarfile
from pathlib import Path

import pytest

from controller.program import boot
from controller.program import manifest as mf

SEED = "00112233445566778899aabbccddeeff"


def make_release(root: Path) -> Path:
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "table-controller").write_text("#!/bin/false\n")
    (root / "lib" / "controller").mkdir(parents=True)
    (root / "lib" / "controller" / "__init__.py").write_text('"""c"""\n')
    (root / "lib" / "six.py").write_bytes(b"# six\n" * 1000)
    (root / "release.json").write_text('{"name": "t"}\n')
    mf.write_manifest(mf.build_manifest(root, {"name": "t"}), root / mf.MANIFEST_NAME)
    return root


def make_artifact(root: Path, out: Path) -> Path:
    with tarfile.open(out, "w:gz") as tar:
        tar.add(root, root.name)
    return out


def documented_hmac(seed: str, files: list[tuple[str, bytes]]) -> str:
    """docs/program-verification.md, step by step: names sorted by UTF-8 bytes within each
    group (program, then profile); name, NUL, 8-byte big-endian length, bytes."""
    mac = hmac.new(bytes.fromhex(seed), digestmod=hashlib.sha256)
    for name, data in files:
        mac.update(name.encode() + b"\0" + len(data).to_bytes(8, "big") + data)
    return mac.hexdigest()


def test_the_labs_hmac_over_an_artifact_is_the_documented_one(tmp_path: Path) -> None:
    root = make_release(tmp_path / "table-controller-9-amd64")
    artifact = make_artifact(root, tmp_path / "a.tar.gz")
    profiles = tmp_path / "etc"
    (profiles / "boards").mkdir(parents=True)
    (profiles / "boards" / "base.toml").write_text('game = "paigow"\n')
    (profiles / "profile.toml").write_text('include = "boards/base.toml"\n')
    order = [
        "bin/table-controller",
        "lib/controller/__init__.py",
        "lib/six.py",
        "manifest.json",
        "release.json",
    ]
    files = [(name, (root / name).read_bytes()) for name in order]
    files += [
        ("profile/boards/base.toml", (profiles / "boards" / "base.toml").read_bytes()),
        ("profile/profile.toml", (profiles / "profile.toml").read_bytes()),
    ]
    want = documented_hmac(SEED, files)
    profile_files = [profiles / "boards" / "base.toml", profiles / "profile.toml"]
    assert mf.hmac_paths(bytes.fromhex(SEED), artifact, profile_files) == (want, 7)
    # the installed root gives the same value as the artifact
    assert mf.hmac_paths(bytes.fromhex(SEED), root, profile_files) == (want, 7)
    (root / "lib" / "sitecustomize.py").write_text("")
    assert mf.hmac_paths(bytes.fromhex(SEED), root, profile_files)[0] != want


def test_the_tree_check_names_every_difference(tmp_path: Path) -> None:
    root = make_release(tmp_path / "r")
    manifest = mf.read_manifest(root / mf.MANIFEST_NAME)
    assert manifest.scope == "tree" and manifest.root == root.resolve()
    assert mf.check_tree(manifest) == []
    (root / "lib" / "x.pth").write_text("import os\n")
    (root / "lib" / "six.py").write_text("# six, changed\n")
    (root / "release.json").unlink()
    problems = mf.check_tree(manifest)
    assert problems[0].startswith("changed file lib/six.py: sha256 ")
    assert problems[1:] == [
        "unexpected file lib/x.pth: not in the manifest",
        "missing file release.json",
    ]


def test_an_artifact_with_a_link_or_an_escape_is_refused(tmp_path: Path) -> None:
    for member in ("link", "escape"):
        out = tmp_path / f"{member}.tar"
        with tarfile.open(out, "w") as tar:
            info = tarfile.TarInfo("top/manifest.json")
            info.size = 2
            tar.addfile(info, io.BytesIO(b"{}"))
            bad = tarfile.TarInfo("top/lib/six.py" if member == "link" else "top/../evil")
            if member == "link":
                bad.type, bad.linkname = tarfile.SYMTYPE, "/etc/passwd"
                tar.addfile(bad)
            else:
                bad.size = 0
                tar.addfile(bad, io.BytesIO(b""))
        with pytest.raises(mf.ManifestError, match="refused member"):
            mf.unpack_artifact(out, tmp_path / f"x-{member}")
    assert not (tmp_path / "evil").exists()


def test_a_process_that_is_not_isolated_is_told_so(tmp_path: Path) -> None:
    """pytest runs without -I -S -B, from a venv, with the working directory on sys.path."""
    problems = boot.isolation_problems(tmp_path)
    assert any("not isolated" in p for p in problems)
    assert any("site module ran" in p for p in problems)
    assert any(
        f"not the release's {tmp_path.resolve()}/python/bin/python3.11" in p for p in problems
    )
    assert any("outside the release" in p for p in problems)
    outside = boot.loaded_outside(tmp_path, set())
    assert (
        f"module pytest was loaded from {sys.modules['pytest'].__file__}, not a file of"
        " the release" in outside
    )
