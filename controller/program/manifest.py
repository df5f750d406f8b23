"""Program verification: manifests of SHA-256 digests, the check against the files on disk, and
the HMAC-SHA256 a lab asks for with a seed it chose.

Why: a regulator's lab must be able to tell that the program running at the table is the one it
approved. A release (``scripts/build-release``) carries its manifest: the digest of every file of
the install root (the interpreter and its standard library, the byte code, the application and
every dependency), so an extra, missing or changed file anywhere in it is a mismatch. The
installer seals the table's profile the same way (a manifest listing the profile's files, beside
the profile). Mismatches are faults that stop play (checked at start by
:mod:`controller.program.boot` and by the console's ``verify``).

"All files match" from a device the lab does not trust proves little, so ``verify SEED`` prints
an HMAC keyed with a fresh seed the lab chose over the same files; the lab computes it over the
artifact it approved (``python -m controller.program.manifest hmac SEED ARTIFACT PROFILE``).

The HMAC (docs/program-verification.md, reproducible by hand):

* program files first, sorted by name (``/`` separators, byte order of the UTF-8 name): for a
  release every file under the install root (``bin/table-controller``, ``lib/controller/app.py``,
  ``manifest.json``, ``python/bin/python3.11``, ...); for a development tree (no release) the
  ``*.py`` files of the ``controller`` and ``drivers`` packages (``controller/app.py``);
* then the profile's files (the profile and every file it includes), named ``profile/`` plus
  their path relative to the profile's folder (``profile/profile.toml``,
  ``profile/boards/rpi4-base.toml``), sorted the same way;
* for each file: the name in UTF-8, one zero byte, the length as 8 bytes big-endian, the bytes;
* key: the seed's bytes (given in hex, 16 to 64 bytes); HMAC-SHA256; printed in lower-case hex.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypedDict

from controller.program.origin import release_root

if TYPE_CHECKING:
    import argparse

PACKAGES: Final = ("controller", "drivers")
FORMAT: Final = 2
#: The manifest of a release, at the top of its install root (and of its artifact).
MANIFEST_NAME: Final = "manifest.json"
#: A profile's seal is this suffix appended to the profile's file name.
PROFILE_SEAL_SUFFIX: Final = ".manifest.json"
#: Environment variable naming a manifest for a program run outside a release (tests, a copy of
#: the program); a release always uses its own manifest.
MANIFEST_ENV: Final = "TABLE_CONTROLLER_MANIFEST"
SEED_MIN_BYTES: Final = 16
SEED_MAX_BYTES: Final = 64
#: Threads that hash large files at once (hashlib releases the GIL on large buffers), and what
#: counts as large.
HASH_WORKERS: Final = 4
BIG_FILE: Final = 1 << 18
_CHUNK: Final = 1 << 20


class ManifestError(ValueError):
    """A manifest that cannot be read or built, or a seed that is not usable. ``code`` is the
    console's error code for it (``SYNTAX`` for text that is not a seed, else ``RANGE``)."""

    def __init__(self, reason: str, code: str = "RANGE") -> None:
        super().__init__(reason)
        self.code = code


@dataclass(frozen=True)
class FileItem:
    """One file: its name in the manifest and the HMAC, where it is on disk, and its size when
    known (-1: not looked at)."""

    name: str
    path: Path
    size: int = -1


@dataclass(frozen=True)
class Tree:
    """The regular files under a root (sorted by name) and what else was found there."""

    files: list[FileItem]
    oddities: list[str] = field(default_factory=list)


class ManifestData(TypedDict):
    """A manifest as written (:func:`build_manifest`, :func:`write_manifest`)."""

    format: int
    algorithm: str
    scope: str
    root: str
    release: dict[str, object]
    files: dict[str, str]


@dataclass(frozen=True)
class Manifest:
    """A manifest as read: ``scope`` ``tree`` (every file under ``root``, nothing else) or
    ``listed`` (the listed files, e.g. a profile's seal)."""

    path: Path
    root: Path
    scope: str
    files: Mapping[str, str]
    release: Mapping[str, object]


def _name_key(item: FileItem) -> bytes:
    return item.name.encode("utf-8")


def installed_root() -> Path:
    """What this process's program verification covers: the install root of the release it was
    started from (:mod:`controller.program.origin`), else the directory holding the packages."""
    root = release_root()
    return root if root is not None else Path(__file__).resolve().parents[2]


def scan_tree(root: Path, exclude: Iterable[str] = ()) -> Tree:
    """Every regular file under ``root`` (names relative, ``/`` separators), never following a
    symbolic link; links and special files are listed as oddities. ``exclude`` names files
    (relative names) to leave out."""
    skip = set(exclude)
    files: list[FileItem] = []
    odd: list[str] = []

    def walk(directory: Path, prefix: str) -> None:
        with os.scandir(directory) as entries:
            for entry in entries:
                name = prefix + entry.name
                try:
                    name.encode("utf-8")
                except UnicodeEncodeError:
                    # a name the manifest cannot hold (bytes that are not UTF-8): an extra
                    # file no release ships, never a check that stops short
                    odd.append(f"unexpected file whose name is not UTF-8: {name!r}")
                    continue
                if entry.is_symlink():
                    odd.append(f"unexpected symbolic link {name}")
                elif entry.is_dir(follow_symlinks=False):
                    walk(Path(entry.path), name + "/")
                elif entry.is_file(follow_symlinks=False):
                    if name not in skip:
                        size = entry.stat(follow_symlinks=False).st_size
                        files.append(FileItem(name, Path(entry.path), size))
                else:
                    odd.append(f"unexpected special file {name}")

    if not root.is_dir():
        raise ManifestError(f"{root} is not a directory")
    walk(root, "")
    return Tree(sorted(files, key=_name_key), sorted(odd))


def program_files(root: Path) -> list[FileItem]:
    """A development tree's program: every ``*.py`` file of the packages under ``root``."""
    items: list[FileItem] = []
    for package in PACKAGES:
        base = root / package
        if not base.is_dir():
            raise ManifestError(f"{base} is not a directory: no {package} package under {root}")
        items.extend(
            FileItem(f"{package}/{item.name}", item.path)
            for item in scan_tree(base).files
            if item.name.endswith(".py") and "__pycache__/" not in item.name
        )
    return sorted(items, key=_name_key)


def is_release_root(root: Path) -> bool:
    """True when ``root`` is the install root of a release (it holds a manifest)."""
    return (root / MANIFEST_NAME).is_file()


def profile_items(profile_files: Sequence[str | os.PathLike[str]]) -> list[FileItem]:
    """The profile's files named ``profile/<path relative to the profile's folder>``, sorted.
    The profile itself is the last file (``Profile.source_files`` lists includes first); an
    include outside its folder is named with ``../`` (installed profiles have none)."""
    if not profile_files:
        return []
    base = Path(profile_files[-1]).resolve().parent
    items: dict[str, FileItem] = {}
    for f in profile_files:
        path = Path(f).resolve()
        rel = Path(os.path.relpath(path, base)).as_posix()
        items[f"profile/{rel}"] = FileItem(f"profile/{rel}", path)
    return sorted(items.values(), key=_name_key)


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file's bytes (raises OSError). Read with plain system calls, most
    files in one; hashlib releases the GIL while it hashes a large buffer."""
    digest = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        while chunk := os.read(fd, _CHUNK):
            digest.update(chunk)
    finally:
        os.close(fd)
    return digest.hexdigest()


def digest_files(items: Sequence[FileItem], workers: int | None = None) -> dict[str, str | OSError]:
    """name -> hex SHA-256 (or the OSError reading it) for every item. Files of
    :data:`BIG_FILE` bytes or more are hashed by :data:`HASH_WORKERS` threads (at most one per
    CPU; hashing them runs without the GIL) while this thread hashes the small ones, whose cost
    is Python's per-file work that more threads would only contend for."""

    def one(item: FileItem) -> tuple[str, str | OSError]:
        try:
            return item.name, sha256_file(item.path)
        except OSError as exc:
            return item.name, exc

    if workers is None:
        workers = min(HASH_WORKERS, os.cpu_count() or 1)
    big = [item for item in items if item.size >= BIG_FILE]
    if workers <= 1 or not big:
        return dict(map(one, items))
    small = [item for item in items if item.size < BIG_FILE]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="manifest-hash") as pool:
        futures = [pool.submit(one, item) for item in sorted(big, key=lambda i: -i.size)]
        found = dict(map(one, small))
        found.update(f.result() for f in futures)
    return found


# -- manifests -----------------------------------------------------------------------------------


def build_manifest(root: Path, release: Mapping[str, object] | None = None) -> ManifestData:
    """The manifest (JSON-ready) of every file under ``root`` but the manifest itself, for
    ``root/manifest.json``. Links and special files are refused."""
    tree = scan_tree(root, exclude=(MANIFEST_NAME,))
    if tree.oddities:
        raise ManifestError(f"{root}: " + "; ".join(tree.oddities[:5]))
    digests = digest_files(tree.files)
    files: dict[str, str] = {}
    for name, digest in digests.items():
        if isinstance(digest, OSError):
            raise ManifestError(f"cannot read {name}: {digest}")
        files[name] = digest
    return {
        "format": FORMAT,
        "algorithm": "sha256",
        "scope": "tree",
        "root": ".",
        "release": dict(release or {}),
        "files": dict(sorted(files.items())),
    }


def seal_profile(profile_files: Sequence[str | os.PathLike[str]]) -> Path:
    """Write the profile's seal beside the profile (``profile.toml.manifest.json``): the digest
    of the profile and of every file it includes. Returns the seal's path."""
    items = profile_items(profile_files)
    if not items:
        raise ManifestError("no profile files to seal")
    top = Path(profile_files[-1]).resolve()
    files = {item.name.removeprefix("profile/"): sha256_file(item.path) for item in items}
    seal = profile_seal_path(profile_files)
    write_manifest(
        {
            "format": FORMAT,
            "algorithm": "sha256",
            "scope": "listed",
            "root": ".",
            "release": {"profile": top.name},
            "files": files,
        },
        seal,
    )
    return seal


def profile_seal_path(profile_files: Sequence[str | os.PathLike[str]]) -> Path:
    """Where the seal of the profile whose files are ``profile_files`` lives."""
    top = Path(profile_files[-1]).resolve()
    return top.with_name(top.name + PROFILE_SEAL_SUFFIX)


def profile_is_sealed(profile_files: Sequence[str | os.PathLike[str]]) -> bool:
    """Whether the profile was sealed (installed by the install script): its seal exists. A
    sealed profile must pin any code it names from outside the release (a PKCS#11 module)."""
    return bool(profile_files) and profile_seal_path(profile_files).is_file()


def write_manifest(manifest: Mapping[str, object], out: Path) -> None:
    """Write a manifest as sorted, indented JSON (atomically: a temporary file renamed)."""
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, out)


def read_manifest(path: str | os.PathLike[str]) -> Manifest:
    """Read and check the shape of a manifest file; raises ManifestError."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ManifestError(f"manifest {path} is unreadable: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise ManifestError(f"manifest {path} is not JSON: {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ManifestError(f"manifest {path} is not a format {FORMAT} manifest")
    files = data.get("files")
    if not isinstance(files, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in files.items()
    ):
        raise ManifestError(f"manifest {path}: 'files' is not a table of digests")
    scope = data.get("scope")
    if scope not in ("tree", "listed"):
        raise ManifestError(f"manifest {path}: scope must be 'tree' or 'listed'")
    root_text = data.get("root", ".")
    if not isinstance(root_text, str):
        raise ManifestError(f"manifest {path}: 'root' is not a path")
    release = data.get("release", {})
    return Manifest(
        path,
        (path.parent / root_text).resolve(),
        scope,
        files,
        release if isinstance(release, dict) else {},
    )


def compare(
    expected: Mapping[str, str],
    items: Sequence[FileItem],
    label: Callable[[str], str] = "file {}".format,
    complete: bool = True,
) -> list[str]:
    """Mismatches between digests and files: changed, missing, unreadable and (``complete``:
    the items must be exactly the expected set) extra files, in name order; ``label`` says how
    a name is shown."""
    actual = {item.name: item for item in items}
    wanted = [actual[name] for name in expected if name in actual]
    digests = digest_files(wanted)
    names = sorted(expected.keys() | actual.keys()) if complete else sorted(expected)
    problems: list[str] = []
    for name in names:
        if name not in actual:
            problems.append(f"missing {label(name)}")
        elif name not in expected:
            problems.append(f"unexpected {label(name)}: not in the manifest")
        else:
            got = digests[name]
            if isinstance(got, OSError):
                problems.append(f"cannot read {label(name)}: {got.strerror or got}")
            elif not hmac.compare_digest(got, expected[name]):
                problems.append(
                    f"changed {label(name)}: sha256 {got[:16]}... expected {expected[name][:16]}..."
                )
    return problems


def check_tree(manifest: Manifest, root: Path | None = None) -> list[str]:
    """Every file under the manifest's root (or ``root``) against the manifest: extra, missing
    and changed files, links and special files. Empty when all match."""
    base = manifest.root if root is None else root
    try:
        tree = scan_tree(base, exclude=(MANIFEST_NAME,) if base == manifest.path.parent else ())
    except (ManifestError, OSError) as exc:
        return [f"cannot read the program at {base}: {exc}"]
    return [*tree.oddities, *compare(manifest.files, tree.files)]


def check_profile(profile_files: Sequence[str | os.PathLike[str]]) -> list[str]:
    """The active profile's files against its seal: each must be listed and match."""
    if not profile_files:
        return []
    seal = profile_seal_path(profile_files)
    if not seal.is_file():
        return [f"the profile is not sealed: no {seal} (install it with systemd/install.sh)"]
    try:
        sealed = read_manifest(seal)
        items = [
            FileItem(item.name.removeprefix("profile/"), item.path)
            for item in profile_items(profile_files)
        ]
    except ManifestError as exc:
        return [str(exc)]
    unsealed = [
        f"profile file {item.path} is not in the seal {seal}"
        for item in items
        if item.name not in sealed.files
    ]

    def label(name: str) -> str:
        return f"profile file {os.path.normpath(sealed.root / name)}"

    return unsealed + compare(sealed.files, items, label, complete=False)


def check_manifest(
    manifest_path: str | os.PathLike[str],
    profile_files: Sequence[str | os.PathLike[str]],
    root: Path | None = None,
) -> list[str]:
    """Mismatches between the program and profile on disk and their manifests; empty when all
    match. ``root`` overrides the manifest's root (a copy of the program elsewhere)."""
    try:
        manifest = read_manifest(manifest_path)
    except ManifestError as exc:
        return [str(exc)]
    if manifest.scope != "tree":
        return [f"manifest {manifest.path} lists files but is not the manifest of a program"]
    return [*check_tree(manifest, root), *check_profile(profile_files)]


def manifest_digest(manifest_path: str | os.PathLike[str]) -> str:
    """SHA-256 of the manifest file itself (``verify`` prints it; so does the release build)."""
    return sha256_file(Path(manifest_path))


def configured_manifest(environ: Mapping[str, str] | None = None) -> Path | None:
    """The manifest this process is checked against: its release's (started from a release's
    entry point), else ``$TABLE_CONTROLLER_MANIFEST`` if set, else None (a development tree)."""
    root = release_root()
    if root is not None:
        return root / MANIFEST_NAME
    env = os.environ if environ is None else environ
    named = env.get(MANIFEST_ENV, "")
    return Path(named) if named else None


# -- the lab's HMAC ------------------------------------------------------------------------------


def parse_seed(text: str) -> bytes:
    """The seed's bytes from hex; raises ManifestError naming what is wrong."""
    try:
        seed = bytes.fromhex(text)
    except ValueError:
        raise ManifestError(
            "the seed must be hex digits (an even number of them)", "SYNTAX"
        ) from None
    if not SEED_MIN_BYTES <= len(seed) <= SEED_MAX_BYTES:
        raise ManifestError(
            f"the seed must be {SEED_MIN_BYTES} to {SEED_MAX_BYTES} bytes"
            f" ({2 * SEED_MIN_BYTES} to {2 * SEED_MAX_BYTES} hex digits),"
            f" got {len(seed)}"
        )
    return seed


def hmac_files(seed: bytes, items: Sequence[FileItem]) -> str:
    """HMAC-SHA256 over the files in the given order (see the module docstring)."""
    mac = hmac.new(seed, digestmod=hashlib.sha256)
    for item in items:
        with open(item.path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            mac.update(item.name.encode("utf-8") + b"\0" + size.to_bytes(8, "big"))
            read = 0
            while chunk := fh.read(_CHUNK):
                mac.update(chunk)
                read += len(chunk)
        if read != size:
            raise ManifestError(f"{item.name} changed size while it was read")
    return mac.hexdigest()


def verification_items(
    root: Path, profile_files: Sequence[str | os.PathLike[str]]
) -> list[FileItem]:
    """The files ``verify SEED`` covers, in HMAC order: the program (every file of a release's
    install root, or a development tree's package sources), then the profile's files."""
    if is_release_root(root):
        tree = scan_tree(root)
        if tree.oddities:
            raise ManifestError("; ".join(tree.oddities[:3]), "FAULT")
        program = tree.files
    else:
        program = program_files(root)
    return [*program, *profile_items(profile_files)]


def unpack_artifact(artifact: Path, into: Path) -> Path:
    """Extract a release artifact (a tar archive with one top folder, the install root) and
    return that root. Only files and folders are written (no owner, mode or time is applied);
    links, devices and paths leaving the folder are refused."""
    import tarfile

    try:
        with tarfile.open(artifact) as tar:
            members = tar.getmembers()
            tops = {m.name.split("/", 1)[0] for m in members}
            if len(tops) != 1:
                raise ManifestError(f"{artifact}: expected one top folder, found {sorted(tops)}")
            for m in members:
                parts = m.name.split("/")
                if not (m.isfile() or m.isdir()) or m.name.startswith("/") or ".." in parts:
                    raise ManifestError(f"{artifact}: refused member {m.name}")
                dest = into.joinpath(*parts)
                if m.isdir():
                    dest.mkdir(parents=True, exist_ok=True)
                    continue
                dest.parent.mkdir(parents=True, exist_ok=True)
                src = tar.extractfile(m)
                assert src is not None
                with open(dest, "wb") as out:
                    while chunk := src.read(_CHUNK):
                        out.write(chunk)
    except (OSError, tarfile.TarError) as exc:
        raise ManifestError(f"{artifact} is not a readable release artifact: {exc}") from exc
    return into / tops.pop()


def hmac_paths(
    seed: bytes, program: str | os.PathLike[str], profile_files: Sequence[str | os.PathLike[str]]
) -> tuple[str, int]:
    """The lab's side: ``program`` is a release artifact, a release's install root or a
    development tree (the folder holding ``controller/`` and ``drivers/``); ``profile_files``
    the profile's files, the profile itself last. Returns (hex HMAC, number of files)."""
    import tempfile

    path = Path(program)
    if path.is_dir():
        items = verification_items(path, profile_files)
        return hmac_files(seed, items), len(items)
    with tempfile.TemporaryDirectory(prefix="tc-artifact-") as tmp:
        root = unpack_artifact(path, Path(tmp))
        if not is_release_root(root):
            raise ManifestError(f"{program}: no {MANIFEST_NAME} in the artifact")
        items = verification_items(root, profile_files)
        return hmac_files(seed, items), len(items)


# -- command line ----------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m controller.program.manifest",
        description="Program manifests and the lab's HMAC (docs/program-verification.md)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="write the manifest of every file under a root")
    build.add_argument("--root", required=True, help="the install root (a release's tree)")
    build.add_argument(
        "--release",
        default=None,
        metavar="JSON",
        help="a JSON object recorded as the manifest's 'release'",
    )
    seal = sub.add_parser(
        "seal-profile",
        help="seal a profile: the digests of its files, beside it (PROFILE.manifest.json)",
    )
    seal.add_argument("profile")
    check = sub.add_parser("check", help="compare the files on disk with their manifests")
    check.add_argument(
        "manifest", nargs="?", default=None, help="default: the running release's manifest"
    )
    check.add_argument("--root", default=None, help="a copy of the program elsewhere")
    check.add_argument(
        "--profile-of",
        default=None,
        metavar="PROFILE",
        help="also check this profile (and its includes) against its seal",
    )
    mac = sub.add_parser("hmac", help="HMAC-SHA256 over a copy of the program (lab side)")
    mac.add_argument("seed", help="hex, 16 to 64 bytes")
    mac.add_argument(
        "program",
        help="a release artifact (.tar.gz), an install root, or a"
        " folder holding controller/ and drivers/",
    )
    mac.add_argument(
        "profiles",
        nargs="*",
        metavar="PROFILE_FILE",
        help="the profile's files, includes first, the profile itself last",
    )
    mac.add_argument(
        "--profile-of",
        default=None,
        metavar="PROFILE",
        help="the profile and every file it includes (instead of listing them)",
    )
    return parser


def _profile_files(profile: str | None) -> list[str]:
    if profile is None:
        return []
    from controller.config.profile import load_profile

    return list(load_profile(profile).source_files)


def _command(args: argparse.Namespace, out: Callable[[str], None]) -> int:
    if args.command == "hmac":
        profiles = list(args.profiles) + _profile_files(args.profile_of)
        digest, count = hmac_paths(parse_seed(args.seed), args.program, profiles)
        out(f"hmac-sha256 {digest} over {count} files")
        return 0
    if args.command == "build":
        root = Path(args.root)
        release = json.loads(args.release) if args.release else None
        manifest = build_manifest(root, release)
        write_manifest(manifest, root / MANIFEST_NAME)
        out(
            f"manifest of {len(manifest['files'])} files written to {root / MANIFEST_NAME},"
            f" sha256 {manifest_digest(root / MANIFEST_NAME)}"
        )
        return 0
    if args.command == "seal-profile":
        out(f"profile sealed: {seal_profile(_profile_files(args.profile))}")
        return 0
    named = Path(args.manifest) if args.manifest else configured_manifest()
    if named is None:
        raise ManifestError("no manifest named, and this is not a release")
    problems = check_manifest(
        named, _profile_files(args.profile_of), Path(args.root) if args.root else None
    )
    for problem in problems:
        out(problem)
    out("MISMATCH" if problems else f"all files match {named}")
    return 1 if problems else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Exit status: 0 done / all match, 1 mismatch, 2 usage or unreadable input."""
    args = _parser().parse_args(argv)
    try:
        return _command(args, print)
    except (ManifestError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
