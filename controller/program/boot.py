"""The check a release makes of itself when it starts, before the application is imported.

Why: Python runs code from many places besides the application's sources (``.pth`` files and
``sitecustomize`` from the site module, ``PYTHON*`` variables, the user's site-packages, a
``__pycache__`` file whose header matches its source, the entry script, the standard library),
and any of them can change what the table does. A release therefore runs its own interpreter
isolated (``-I -S -B``: none of those hooks run) from its install root, and the entry script
(``bin/table-controller``) calls :func:`boot` first: it records the release's root, checks that
the interpreter really is isolated and runs from the root, and, for ``run``, hashes every file of
the root against the release's manifest. Whatever it finds is raised as a program fault when the
application starts (:func:`startup_problems`), which stops play.

What it found is kept as the process's record (:mod:`controller.program.origin`): which release
it was started from and what that release looked like when its code was loaded.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

from controller.program import manifest as mf
from controller.program.origin import BootCheck, boot_check, record, release_root

#: The interpreter of a release, relative to its install root.
INTERPRETER: Final = "python/bin/python3.11"
#: The commands that hash the whole release before they run (the service).
CHECKED_COMMANDS: Final = frozenset({"run"})
#: Environment variables through which the dynamic loader runs code (-I does not stop them).
LOADER_HOOKS: Final = ("LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT")


def boot(root: str | os.PathLike[str], argv: list[str]) -> BootCheck:
    """Called by a release's entry script before anything of the application is imported:
    record the release, check the interpreter's isolation and (for ``run``) every file."""
    check = BootCheck(Path(root).resolve())
    record(check)
    check.problems.extend(isolation_problems(check.root))
    if argv[:1] and argv[0] in CHECKED_COMMANDS:
        started = time.monotonic()
        manifest_path = check.root / mf.MANIFEST_NAME
        try:
            manifest = mf.read_manifest(manifest_path)
        except mf.ManifestError as exc:
            check.problems.append(str(exc))
        else:
            try:
                tree = mf.scan_tree(check.root, exclude=(mf.MANIFEST_NAME,))
            except (mf.ManifestError, OSError) as exc:
                check.problems.append(f"cannot read the release at {check.root}: {exc}")
            else:
                check.problems.extend([*tree.oddities, *mf.compare(manifest.files, tree.files)])
                check.files = len(tree.files)
                check.bytes = sum(item.size for item in tree.files)
        check.seconds = time.monotonic() - started
        check.checked = True
    return check


def isolation_problems(root: Path) -> list[str]:
    """How this interpreter is not running the release isolated (empty when it is)."""
    problems: list[str] = []
    flags = sys.flags
    if not (flags.isolated and flags.ignore_environment and flags.no_user_site):
        problems.append(
            "the interpreter is not isolated (-I): PYTHON* variables, the user's"
            " site-packages or the working directory could change what runs"
        )
    if not flags.no_site:
        problems.append("the site module ran (no -S): .pth files and sitecustomize could run")
    if not sys.dont_write_bytecode:
        problems.append("the interpreter may write byte code (no -B)")
    for name in LOADER_HOOKS:
        if os.environ.get(name):
            problems.append(
                f"{name} is set: the dynamic loader ran code the manifest does not"
                " cover before the check"
            )
    want = (root / INTERPRETER).resolve()
    if Path(sys.executable).resolve() != want:
        problems.append(f"the interpreter is {sys.executable}, not the release's {want}")
    for entry in sys.path:
        if not _inside(Path(entry).resolve(), root):
            problems.append(f"sys.path names {entry}, outside the release {root}")
    return problems


def loaded_outside(root: Path, listed: set[str]) -> list[str]:
    """Modules this process has imported from a file that is not a file of the release."""
    problems: list[str] = []
    for name, module in sorted(sys.modules.copy().items()):
        origin = getattr(module, "__file__", None)
        if not isinstance(origin, str):
            continue
        path = Path(origin).resolve()
        rel = path.relative_to(root).as_posix() if _inside(path, root) else None
        if rel is None or rel not in listed:
            problems.append(f"module {name} was loaded from {origin}, not a file of the release")
    return problems


def boot_problems() -> list[str]:
    """The start-up check's findings, and any module loaded since from outside the release."""
    check = boot_check()
    if check is None:
        return []
    problems = list(check.problems)
    try:
        listed = set(mf.read_manifest(check.root / mf.MANIFEST_NAME).files)
    except mf.ManifestError:
        return problems
    problems.extend(p for p in loaded_outside(check.root, listed) if p not in problems)
    return problems


def startup_problems(
    profile_files: Sequence[str | os.PathLike[str]], environ: Mapping[str, str] | None = None
) -> list[str]:
    """For the start-up checks (controller/startup/checks.py): the mismatches to raise as
    faults (none without a manifest).

    Started from a release, the program was checked before the application was imported (the
    boot check); a manifest named by ``$TABLE_CONTROLLER_MANIFEST`` is checked here.
    """
    if release_root() is not None:
        return [*boot_problems(), *mf.check_profile(profile_files)]
    path = mf.configured_manifest(environ)
    return [] if path is None else mf.check_manifest(path, profile_files)


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
