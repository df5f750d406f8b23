"""What every service fixture shares: the missing-part policy, free ports, bounded waits,
private directories another user can own, and stopping a process within a time limit.

A part (a Debian package's binary) that is absent is never passed over silently:

- ``TC_REQUIRE_SERVICES=1`` (what ``.ci/run`` sets; also ``all``) or a comma list of part
  names (``mosquitto,postgres,softhsm,chromium,swtpm``): a missing part FAILS the test;
- otherwise the test is skipped with a reason naming the Debian package to install, and the
  same line goes to stderr (shown with ``-rs``, which the project's ``addopts`` has as ``-ra``).

A part that is present but does not start is always a failure, with its log.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NoReturn

import pytest

REQUIRE_ENV = "TC_REQUIRE_SERVICES"
PARTS = ("mosquitto", "postgres", "softhsm", "chromium", "swtpm")


def required(part: str) -> bool:
    """Whether a missing ``part`` must fail (TC_REQUIRE_SERVICES=1|all|comma list)."""
    value = os.environ.get(REQUIRE_ENV, "").strip().lower()
    if value in ("", "0", "no", "false"):
        return False
    if value in ("1", "all", "yes", "true"):
        return True
    return part in {p.strip() for p in value.split(",")}


def missing(part: str, what: str, package: str) -> NoReturn:
    """Fail (when required) or skip loudly: ``what`` is absent, ``package`` provides it."""
    msg = (
        f"MISSING PART ({part}): {what} not found; install the Debian package"
        f" '{package}' (.ci/run does)"
    )
    if required(part):
        pytest.fail(
            f"{msg} [{REQUIRE_ENV}={os.environ.get(REQUIRE_ENV)}: a missing part is a failure]",
            pytrace=False,
        )
    print(f"\n!! {msg}: SKIPPING", file=sys.stderr)
    pytest.skip(msg)


def which(*candidates: str) -> str | None:
    """The first candidate that is an executable path or a command on PATH (+ /usr/sbin)."""
    path = os.environ.get("PATH", "") + ":/usr/sbin:/sbin:/usr/local/sbin"
    for c in candidates:
        if os.sep in c:
            if os.access(c, os.X_OK):
                return c
        else:
            found = shutil.which(c, path=path)
            if found:
                return found
    return None


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` right now (the kernel's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def wait_until(
    predicate: Callable[[], bool],
    timeout: float,
    what: str,
    interval: float = 0.05,
    failed: Callable[[], str | None] | None = None,
) -> None:
    """Poll ``predicate`` until true; ``TimeoutError`` naming ``what`` after ``timeout`` s.

    ``failed`` is asked on every round and ends the wait early with its message (e.g. "the
    process exited with 1")."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return
        if failed is not None:
            reason = failed()
            if reason:
                raise RuntimeError(f"{what}: {reason}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout:g} s")
        time.sleep(interval)


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def service_user(preferred: str) -> pwd.struct_passwd | None:
    """The account a daemon runs as: ``preferred`` when we are root (daemons refuse or drop
    root), else None (run as ourselves)."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(preferred)
    except KeyError:
        return None


def private_dir(prefix: str, owner: pwd.struct_passwd | None = None) -> Path:
    """A fresh directory under the system temp dir (pytest's own tmp dirs are 0700 root, which
    a daemon's account cannot enter), owned by ``owner`` when given. Short, for unix sockets."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    if owner is not None:
        os.chown(path, owner.pw_uid, owner.pw_gid)
    return path


def chown_tree(path: Path, owner: pwd.struct_passwd | None) -> None:
    if owner is None:
        return
    for p in [path, *path.rglob("*")]:
        os.chown(p, owner.pw_uid, owner.pw_gid, follow_symlinks=False)


def remove_dir(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def stop_process(
    proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM, timeout: float = 15.0
) -> int:
    """Send ``sig``, wait ``timeout`` s, then SIGKILL and wait 5 s more. The exit status."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    return int(proc.returncode)


def tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as e:
        return f"(no log: {e})"
    return "\n".join(text.splitlines()[-lines:])


def run_checked(
    argv: Iterable[str], what: str, timeout: float = 60.0, **kwargs: object
) -> subprocess.CompletedProcess[str]:
    """Run a set-up command with a time limit; a failure names the command and its output."""
    args = list(argv)
    try:
        result = subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kwargs)  # type: ignore[call-overload]
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{what}: {' '.join(args)} ran past {timeout:g} s") from None
    if result.returncode != 0:
        raise RuntimeError(
            f"{what}: {' '.join(args)} exited {result.returncode}:\n{result.stdout}{result.stderr}"
        )
    return result  # type: ignore[no-any-return]
