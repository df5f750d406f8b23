"""Program verification: a manifest of SHA-256 digests of the installed program and profile, and
an HMAC-SHA256 over the same files keyed with a seed a lab supplies.

Why: a regulator's lab must be able to tell that the program running at the table is the one it
approved. The manifest is made at install time (``python -m controller.program.manifest build``) and
checked at start and by the console's ``verify``; a mismatch is a fault. The device's own "all
files match" proves little to a lab that does not trust the device, so ``verify SEED`` prints an
HMAC keyed with a fresh seed the lab chose: the lab computes the same HMAC over its own copy
(``python -m controller.program.manifest hmac SEED PATH...``) and compares. The device cannot
precompute the answer without holding the approved files themselves.

Which files: every ``*.py`` file under the ``controller`` and ``drivers`` packages (recursively,
``__pycache__`` excluded), named by their path relative to the directory holding the packages
(``controller/app.py``), and the active profile's files (the profile and every file it includes).

The HMAC (documented in docs/program-verification.md, reproducible by hand):

* program files first, sorted by their relative name (``/`` separators, byte order of the UTF-8
  name); then profile files, named ``profile/<file name>``, sorted the same way;
* for each file the message takes: the name in UTF-8, one zero byte, the file's length as 8 bytes
  big-endian, the file's bytes;
* key: the seed's bytes (given in hex, 16 to 64 bytes); HMAC-SHA256; printed in lower-case hex.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

PACKAGES: Final = ("controller", "drivers")
FORMAT: Final = 1
#: Environment variable naming the installed manifest (the systemd unit sets it).
MANIFEST_ENV: Final = "TABLE_CONTROLLER_MANIFEST"
SEED_MIN_BYTES: Final = 16
SEED_MAX_BYTES: Final = 64
_CHUNK: Final = 1 << 16


class ManifestError(ValueError):
    """A manifest that cannot be read or built, or a seed that is not usable. ``code`` is the
    console's error code for it (``SYNTAX`` for text that is not a seed, else ``RANGE``)."""

    def __init__(self, reason: str, code: str = "RANGE") -> None:
        super().__init__(reason)
        self.code = code


@dataclass(frozen=True)
class FileItem:
    """One file the manifest covers: its name in the manifest/HMAC and where it is on disk."""

    name: str
    path: Path


def installed_root() -> Path:
    """The directory holding the ``controller`` and ``drivers`` packages this process runs."""
    return Path(__file__).resolve().parents[2]


def program_files(root: Path) -> list[FileItem]:
    """Every ``*.py`` file of the program packages under ``root``, sorted by name."""
    items: list[FileItem] = []
    for package in PACKAGES:
        base = root / package
        if not base.is_dir():
            raise ManifestError(f"{base} is not a directory: no {package} package under {root}")
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for fname in filenames:
                if fname.endswith(".py"):
                    full = Path(dirpath) / fname
                    items.append(FileItem(full.relative_to(root).as_posix(), full))
    return sorted(items, key=lambda item: item.name.encode("utf-8"))


def foreign_files(root: Path) -> list[str]:
    """Files under the program packages that are not ``*.py`` source: compiled ``.pyc`` files
    (the installed program runs with PYTHONDONTWRITEBYTECODE and none are shipped), native
    modules, anything planted. Python would import a matching ``.pyc`` without reading the
    verified source, so any such file is a mismatch."""
    found: list[str] = []
    for package in PACKAGES:
        for dirpath, _dirnames, filenames in os.walk(root / package):
            for fname in filenames:
                if not fname.endswith(".py"):
                    found.append((Path(dirpath) / fname).relative_to(root).as_posix())
    return sorted(found)


#: Third-party distributions the program imports at the table; their Python files are in the
#: manifest too (not in the lab HMAC, which covers this project's own files).
DEPENDENCIES: Final = ("pyserial", "transitions")


def dependency_files() -> dict[str, Path]:
    """``dist/relative/path.py`` -> file on disk for every Python file of :data:`DEPENDENCIES`."""
    from importlib import metadata

    files: dict[str, Path] = {}
    for dist_name in DEPENDENCIES:
        try:
            dist = metadata.distribution(dist_name)
        except metadata.PackageNotFoundError:
            continue
        for entry in dist.files or ():
            if str(entry).endswith(".py"):
                files[f"{dist_name}/{entry}"] = Path(str(dist.locate_file(entry)))
    return files


def profile_items(profile_files: Iterable[str | os.PathLike[str]]) -> list[FileItem]:
    """The profile's files named ``profile/<file name>``, sorted; duplicate names refused."""
    items: dict[str, FileItem] = {}
    for f in profile_files:
        path = Path(f).resolve()
        name = f"profile/{path.name}"
        if name in items and items[name].path != path:
            raise ManifestError(f"two profile files share the name {path.name}: rename one")
        items[name] = FileItem(name, path)
    return sorted(items.values(), key=lambda item: item.name.encode("utf-8"))


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file's bytes (raises OSError)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


# -- the manifest --------------------------------------------------------------------------------


def build_manifest(root: Path,
                   profile_files: Sequence[str | os.PathLike[str]] = ()) -> dict[str, Any]:
    """The manifest (a JSON-ready mapping) of the program under ``root`` and the profile files."""
    return {
        "format": FORMAT,
        "algorithm": "sha256",
        "root": str(root.resolve()),
        "program": {item.name: sha256_file(item.path) for item in program_files(root)},
        "dependencies": {name: sha256_file(path) for name, path in dependency_files().items()
                         if path.is_file()},
        "profiles": {str(item.path): sha256_file(item.path)
                     for item in profile_items(profile_files)},
    }


def write_manifest(manifest: Mapping[str, Any], out: Path) -> None:
    """Write the manifest as sorted, indented JSON (atomically: a temporary file renamed)."""
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, out)


def read_manifest(path: Path) -> dict[str, Any]:
    """Read and check the shape of a manifest file; raises ManifestError."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ManifestError(f"manifest {path} is unreadable: {exc}") from exc
    except ValueError as exc:
        raise ManifestError(f"manifest {path} is not JSON: {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ManifestError(f"manifest {path} is not a format {FORMAT} manifest")
    for section in ("program", "profiles"):
        table = data.get(section)
        if not isinstance(table, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in table.items()):
            raise ManifestError(f"manifest {path}: '{section}' is not a table of digests")
    return data


def check_manifest(manifest_path: str | os.PathLike[str],
                   profile_files: Sequence[str | os.PathLike[str]],
                   root: Path | None = None) -> list[str]:
    """Mismatch descriptions between the manifest and the files on disk; empty when all match.

    ``root`` is the directory holding the running program's packages (by default the one this
    process imported them from). A changed, missing or extra program file, a changed active
    profile file, or an active profile file the manifest does not list is a mismatch.
    """
    try:
        manifest = read_manifest(Path(manifest_path))
    except ManifestError as exc:
        return [str(exc)]
    root = installed_root() if root is None else root
    problems: list[str] = []
    expected: dict[str, str] = manifest["program"]
    try:
        actual = {item.name: item.path for item in program_files(root)}
    except ManifestError as exc:
        return [str(exc)]
    for name in sorted(expected.keys() | actual.keys()):
        if name not in actual:
            problems.append(f"missing program file {name}")
        elif name not in expected:
            problems.append(f"program file {name} is not in the manifest")
        else:
            problems.extend(_compare(name, actual[name], expected[name]))
    problems.extend(f"unexpected file {name}: Python could run it instead of the verified"
                    " source" for name in foreign_files(root))
    deps = dependency_files()
    for dep_name, want in sorted(manifest.get("dependencies", {}).items()):
        dep_path = deps.get(dep_name)
        if dep_path is None or not dep_path.is_file():
            problems.append(f"missing dependency file {dep_name}")
        else:
            problems.extend(_compare(dep_name, dep_path, want))
    listed: dict[str, str] = manifest["profiles"]
    for f in profile_files:
        path = str(Path(f).resolve())
        if path not in listed:
            problems.append(f"profile file {path} is not in the manifest")
        else:
            problems.extend(_compare(path, Path(path), listed[path]))
    return problems


def _compare(name: str, path: Path, want: str) -> list[str]:
    try:
        got = sha256_file(path)
    except OSError as exc:
        return [f"cannot read {name}: {exc.strerror or exc}"]
    if not hmac.compare_digest(got, want):
        return [f"changed {name}: sha256 {got[:16]}... expected {want[:16]}..."]
    return []


def manifest_digest(manifest_path: str | os.PathLike[str]) -> str:
    """SHA-256 of the manifest file itself (printed by ``verify`` so a lab can compare it)."""
    return sha256_file(Path(manifest_path))


def configured_manifest(environ: Mapping[str, str] | None = None) -> Path | None:
    """The manifest this installation uses: ``$TABLE_CONTROLLER_MANIFEST`` if set, else
    ``manifest.json`` beside the virtual environment (``/opt/table-controller/manifest.json``
    for ``/opt/table-controller/venv``) if it exists, else None (a development tree)."""
    env = os.environ if environ is None else environ
    named = env.get(MANIFEST_ENV, "")
    if named:
        return Path(named)
    beside = Path(sys.prefix).parent / "manifest.json"
    return beside if beside.is_file() else None


def startup_problems(profile_files: Sequence[str | os.PathLike[str]],
                     environ: Mapping[str, str] | None = None) -> list[str]:
    """For Application.__init__: the mismatches to raise as faults (none without a manifest).

    A manifest named by ``$TABLE_CONTROLLER_MANIFEST`` that is missing is itself a mismatch.
    """
    path = configured_manifest(environ)
    if path is None:
        return []
    return check_manifest(path, profile_files)


# -- the lab's HMAC ------------------------------------------------------------------------------


def parse_seed(text: str) -> bytes:
    """The seed's bytes from hex; raises ManifestError naming what is wrong."""
    try:
        seed = bytes.fromhex(text)
    except ValueError:
        raise ManifestError("the seed must be hex digits (an even number of them)",
                            "SYNTAX") from None
    if not SEED_MIN_BYTES <= len(seed) <= SEED_MAX_BYTES:
        raise ManifestError(f"the seed must be {SEED_MIN_BYTES} to {SEED_MAX_BYTES} bytes"
                            f" ({2 * SEED_MIN_BYTES} to {2 * SEED_MAX_BYTES} hex digits),"
                            f" got {len(seed)}")
    return seed


def hmac_files(seed: bytes, items: Sequence[FileItem]) -> str:
    """HMAC-SHA256 over the files in the given order (see the module docstring)."""
    mac = hmac.new(seed, digestmod=hashlib.sha256)
    for item in items:
        data = item.path.read_bytes()
        mac.update(item.name.encode("utf-8") + b"\0" + len(data).to_bytes(8, "big"))
        mac.update(data)
    return mac.hexdigest()


def verification_items(root: Path, profile_files: Sequence[str | os.PathLike[str]]
                       ) -> list[FileItem]:
    """The files ``verify SEED`` covers, in HMAC order: program files, then profile files."""
    return [*program_files(root), *profile_items(profile_files)]


def hmac_paths(seed: bytes, paths: Sequence[str | os.PathLike[str]]) -> tuple[str, int]:
    """The lab's side: each directory in ``paths`` holds the ``controller`` and ``drivers``
    packages, each file is a profile file. Returns (hex HMAC, number of files)."""
    roots = [Path(p) for p in paths if Path(p).is_dir()]
    profiles = [p for p in paths if not Path(p).is_dir()]
    if len(roots) != 1:
        raise ManifestError("name exactly one directory holding controller/ and drivers/")
    items = verification_items(roots[0], profiles)
    return hmac_files(seed, items), len(items)


# -- command line ----------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m controller.program.manifest",
                                     description="Program manifest and lab HMAC")
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="write the manifest of the installed program")
    build.add_argument("--out", required=True, help="manifest file to write")
    build.add_argument("--root", default=None,
                       help="directory holding controller/ and drivers/ (default: installed)")
    build.add_argument("--profile", action="append", default=[], metavar="FILE",
                       help="a profile file (repeat for each file it includes); or give the"
                            " profile with --profile-of")
    build.add_argument("--profile-of", default=None, metavar="PROFILE",
                       help="add a profile and every file it includes")
    check = sub.add_parser("check", help="compare the installed program with a manifest")
    check.add_argument("manifest")
    check.add_argument("--root", default=None)
    check.add_argument("--profile-of", default=None, metavar="PROFILE")
    mac = sub.add_parser("hmac", help="HMAC-SHA256 over a copy of the program (lab side)")
    mac.add_argument("seed", help="hex, 16 to 64 bytes")
    mac.add_argument("paths", nargs="+", metavar="PATH",
                     help="one directory holding controller/ and drivers/, then profile files")
    return parser


def _profile_files(profile: str | None) -> list[str]:
    if profile is None:
        return []
    from controller.config.profile import load_profile

    return list(load_profile(profile).source_files)


def main(argv: Sequence[str] | None = None) -> int:
    """Exit status: 0 done / all match, 1 mismatch, 2 usage or unreadable input."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "hmac":
            digest, count = hmac_paths(parse_seed(args.seed), args.paths)
            print(f"hmac-sha256 {digest} over {count} files")
            return 0
        root = Path(args.root) if args.root else installed_root()
        profiles = list(getattr(args, "profile", [])) + _profile_files(args.profile_of)
        if args.command == "build":
            manifest = build_manifest(root, profiles)
            write_manifest(manifest, Path(args.out))
            print(f"manifest of {len(manifest['program'])} program files and"
                  f" {len(manifest['profiles'])} profile files written to {args.out}")
            if not profiles:
                print("warning: no profile recorded (give --profile-of PROFILE): a table "
                      "started with any profile will find its files missing", file=sys.stderr)
            return 0
        problems = check_manifest(args.manifest, profiles, root)
        for problem in problems:
            print(problem)
        print("MISMATCH" if problems else "all files match the manifest")
        return 1 if problems else 0
    except (ManifestError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
