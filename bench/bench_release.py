#!/usr/bin/env python3
"""What verifying a release at start costs: files and bytes hashed, time (warm page cache, one
hashing thread and four), start to READY=1 of the installed release, and an estimate for a
Raspberry Pi 4 from this machine's figures.

    python bench/bench_release.py [--artifact dist/table-controller-VER-ARCH.tar.gz] [--runs N]

Without --artifact it uses dist/'s artifact for this machine (scripts/build-release makes it);
the Pi 4 estimate is for dist/'s arm64 artifact when there is one.
The release is installed with systemd/install.sh --stage into a temporary folder and run
through its own entry point, as the service runs it.

The Pi 4 estimate scales two measured parts: the per-file cost (everything but the SHA-256
itself: walking, opening, reading, Python; the one-thread time less the bytes at this machine's
SHA-256 rate) by CPU_FACTOR, and the bytes by PI4_SHA256_MB_S. With threads, the large files
(manifest.BIG_FILE and up) are hashed on the other cores while the main thread does the small
ones, so the estimate is the longer of the two: the per-file cost plus the small files' bytes,
or the largest file's bytes. The factors are stated assumptions, not measurements: CPU_FACTOR 4
(a Cortex-A72 at 1.5 GHz runs CPython about four times slower than one core of this kind of
machine), PI4_SHA256_MB_S 190 (OpenSSL's SHA-256 on the A72 without the ARMv8 crypto
extensions, which the BCM2711 lacks), SD_MB_S 40 (reading the files from a good SD card on a
cold start).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARCH = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
CPU_FACTOR = 4.0
PI4_SHA256_MB_S = 190.0
SD_MB_S = 40.0

CHECK = r"""
import json, sys, time
root, workers = sys.argv[1], int(sys.argv[2])
sys.path.insert(0, root + "/lib")
from controller.program import manifest as mf
mf.HASH_WORKERS = workers
from controller.program.boot import boot
started = time.monotonic()
check = boot(root, ["run"])
print(json.dumps({"files": check.files, "bytes": check.bytes, "s": check.seconds,
                  "problems": len(check.problems)}))
"""


def sha256_rate() -> float:
    """This machine's SHA-256 throughput in MB/s (hashlib, one thread, 64 MiB)."""
    data = os.urandom(64 << 20)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        hashlib.sha256(data).digest()
        best = min(best, time.perf_counter() - t0)
    return len(data) / best / 1e6


def check_once(opt: Path, workers: int) -> dict[str, float]:
    python = opt / "python" / "bin" / "python3.11"
    out = subprocess.run(
        [str(python), "-I", "-S", "-B", "-c", CHECK, str(opt), str(workers)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd="/",
        env={"PATH": "/usr/bin:/bin"},
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-500:])
    result: dict[str, float] = json.loads(out.stdout)
    return result


def ready_time(opt: Path, profile: Path, state: Path) -> float:
    """Seconds from spawn to READY=1 of the installed release (the unit's command line)."""
    with tempfile.TemporaryDirectory(prefix="notify-") as tmp:
        path = Path(tmp) / "notify.sock"
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(str(path))
        sock.settimeout(0.2)
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [
                str(opt / "python" / "bin" / "python3.11"),
                "-I",
                "-S",
                "-B",
                "-u",
                str(opt / "bin" / "table-controller"),
                "run",
                "--profile",
                str(profile),
                "--state-dir",
                str(state),
                "--console",
                "none",
            ],
            cwd="/",
            env={"PATH": "/usr/bin:/bin", "NOTIFY_SOCKET": str(path)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 60
            while True:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError(f"no READY=1 (exit {proc.poll()})")
                try:
                    msg = sock.recv(4096).decode()
                except TimeoutError:
                    continue
                if "READY=1" in msg.split("\n"):
                    return time.perf_counter() - t0
        finally:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(15)
            sock.close()


def member_sizes(artifact: Path) -> list[int]:
    """The size of every file in an artifact, largest first (read from the tar's headers)."""
    with tarfile.open(artifact) as tar:
        return sorted((m.size for m in tar.getmembers() if m.isfile()), reverse=True)


def measure(artifact: Path, runs: int, pi_artifact: Path | None = None) -> dict[str, float]:
    """Figures of ``artifact`` installed here; the Pi 4 estimate for ``pi_artifact`` (the arm64
    release: its own files and bytes, this machine's per-file cost), else for ``artifact``."""
    with tempfile.TemporaryDirectory(prefix="bench-release-") as tmp:
        stage = Path(tmp) / "stage"
        inst = subprocess.run(
            [
                str(ROOT / "systemd" / "install.sh"),
                "--release",
                str(artifact),
                "--profile",
                "sim-paigow",
                "--stage",
                str(stage),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            cwd="/",
        )
        if inst.returncode != 0:
            raise RuntimeError(inst.stderr[-500:])
        opt = stage / "opt" / "table-controller"
        profile = stage / "etc" / "table-controller" / "profile.toml"
        check_once(opt, 4)  # warm the page cache
        one = [check_once(opt, 1) for _ in range(runs)]
        four = [check_once(opt, 4) for _ in range(runs)]
        state = Path(tmp) / "state"
        ready_time(opt, profile, state)  # first start: a new journal
        ready = [ready_time(opt, profile, state) for _ in range(runs)]
    if any(r["problems"] for r in one + four):
        raise RuntimeError("the staged release does not match its manifest")
    rate = sha256_rate()
    files, size = one[0]["files"], one[0]["bytes"]
    t1 = statistics.median(r["s"] for r in one)
    t4 = statistics.median(r["s"] for r in four)
    per_file = max(0.0, t1 - size / (rate * 1e6)) / files
    sizes = member_sizes(pi_artifact or artifact)
    pi_bytes = sum(sizes)
    big = [n for n in sizes if n >= (1 << 18)]
    pi4_rate = PI4_SHA256_MB_S * 1e6
    overhead = per_file * len(sizes) * CPU_FACTOR
    pi4_one = overhead + pi_bytes / pi4_rate
    pi4_four = max(
        overhead + (pi_bytes - sum(big)) / pi4_rate,
        (big[0] if big else 0) / pi4_rate,
        sum(big) / pi4_rate / 3,
    )
    return {
        "files": files,
        "bytes": size,
        "one_s": t1,
        "four_s": t4,
        "sha_mb_s": rate,
        "ready_s": statistics.median(ready),
        "pi_files": len(sizes),
        "pi_bytes": pi_bytes,
        "pi4_one_s": pi4_one,
        "pi4_four_s": pi4_four,
        "pi4_cold_s": pi4_four + pi_bytes / (SD_MB_S * 1e6),
    }


def default_artifact(arch: str = ARCH) -> Path | None:
    found = sorted((ROOT / "dist").glob(f"table-controller-*-{arch}.tar.gz"))
    return found[-1] if found else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--artifact", default=None)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    artifact = Path(args.artifact) if args.artifact else default_artifact()
    if artifact is None:
        print("no artifact: run scripts/build-release first", file=sys.stderr)
        return 2
    m = measure(artifact, args.runs, default_artifact("arm64"))
    print(f"artifact {artifact.name}: {m['files']:.0f} files, {m['bytes'] / 1e6:.1f} MB hashed")
    print(
        f"start-up check, warm: {m['one_s'] * 1000:.0f} ms (1 thread),"
        f" {m['four_s'] * 1000:.0f} ms (4 threads); SHA-256 here {m['sha_mb_s']:.0f} MB/s"
    )
    print(f"start to READY=1 of the installed release: {m['ready_s'] * 1000:.0f} ms (median)")
    print(
        f"Raspberry Pi 4 estimate for the arm64 release ({m['pi_files']:.0f} files,"
        f" {m['pi_bytes'] / 1e6:.1f} MB): {m['pi4_one_s'] * 1000:.0f} ms (1 thread),"
        f" {m['pi4_four_s'] * 1000:.0f} ms (4 threads), cold from SD"
        f" {m['pi4_cold_s'] * 1000:.0f} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
