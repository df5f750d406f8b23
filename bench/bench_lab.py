#!/usr/bin/env python3
"""What ``table-controller lab package`` costs: time and peak memory for the defaults (100,000
outcomes per range, 1,000,000 raw bytes) on a stopped table's state directory, the same with a
capture four times larger (memory must not grow: the captures are streamed), ``lab verify``'s
time, and an estimate for a Raspberry Pi 4 by bench/bench_release.py's method.

    python bench/bench_lab.py [--draws N] [--raw-bytes M] [--rounds R] [--json FILE]

The command runs in its own process, as a lab runs it; its peak memory is that process's
high-water mark (ru_maxrss). The profile is sim-paigow with its hardware generator read from a
file of random bytes, so the figures are the package's own work with a monitored generator; a
real board's generator adds its read time (below). The test suite's summary is left out (a
table's release carries no suite); its collection in a source tree is timed apart.

The Pi 4 estimate scales this machine's measured parts as bench/bench_release.py does: the CPU
time less the SHA-256 work (hashed bytes at this machine's measured rate) by CPU_FACTOR, the hashed
bytes at PI4_SHA256_MB_S, plus two stated assumptions: the Pi's /dev/hwrng read for every byte the
captures take (PI4_HWRNG_KB_S: about 90-110 kB/s published for the Pi's generator, not measured
here) and, on a release, the program's files hashed twice more (the check against the manifest
and the HMAC: bench_release's Pi 4 estimate of one check, twice).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_release import CPU_FACTOR, PI4_SHA256_MB_S  # noqa: E402

#: The Pi's hardware generator (BCM2835/BCM2711 iproc-rng): an assumption, not measured here.
PI4_HWRNG_KB_S = 100.0
#: bench_release's Pi 4 estimate of one warm check of the arm64 release (docs/program-
#: verification.md "Time": 0.4-0.5 s); the package hashes the release twice.
PI4_RELEASE_CHECK_S = 0.45

WRAPPER = r"""
import json, resource, sys, time
from controller.lab import suite
suite.collect = lambda root, python="": suite.SuiteSummary(how="left out (bench)")
from controller.cli import main
t0 = time.perf_counter()
code = main(sys.argv[2:])
wall = time.perf_counter() - t0
use = resource.getrusage(resource.RUSAGE_SELF)
kids = resource.getrusage(resource.RUSAGE_CHILDREN)  # the replays, run by python3 -I -S
with open(sys.argv[1], "w") as out:
    json.dump({"code": code, "wall_s": wall, "peak_kib": use.ru_maxrss,
               "cpu_s": use.ru_utime + use.ru_stime + kids.ru_utime + kids.ru_stime}, out)
"""


def run_measured(work: Path, *args: str) -> dict[str, float]:
    figures = work / f"figures-{time.monotonic_ns()}.json"
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER, str(figures), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )
    if done.returncode != 0 or not figures.exists():
        raise RuntimeError(f"lab {args[0]} failed: {done.stdout[-300:]} {done.stderr[-500:]}")
    result: dict[str, float] = json.loads(figures.read_text())
    return result


def sha256_rate() -> float:
    """This machine's SHA-256 rate (bytes/s) on 64 MiB in 1 MiB blocks."""
    block = os.urandom(1 << 20)
    digest = hashlib.sha256()
    t0 = time.perf_counter()
    for _ in range(64):
        digest.update(block)
    return (64 << 20) / (time.perf_counter() - t0)


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def measure(
    draws: int, raw_bytes: int, rounds: int, larger: bool = True, suite: bool = True
) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench-lab-") as tmp:
        work = Path(tmp)
        hwrng = work / "hwrng.bin"
        with open(hwrng, "wb") as fh:
            for _ in range(max(8, (4 * raw_bytes + 4 * draws) >> 20) + 4):
                fh.write(os.urandom(1 << 20))
        profile = work / "lab.toml"
        profile.write_text(
            f'include = "{ROOT / "hw_profiles" / "sim-paigow.toml"}"\n'
            f'[rng]\nhwrng_path = "{hwrng}"\n',
            encoding="utf-8",
        )
        state = work / "state"
        from controller.cli import simulate

        simulate(str(profile), rounds, str(state), out=lambda line: None)
        common = ["--profile", str(profile), "--state-dir", str(state)]
        sizes = ["--draws", str(draws), "--raw-bytes", str(raw_bytes)]
        made = run_measured(work, "lab", "package", str(work / "pkg"), *common, *sizes)
        package = work / "pkg"
        checked = run_measured(work, "lab", "verify", str(package))
        out = {
            "draws": draws,
            "raw_bytes": raw_bytes,
            "package_s": made["wall_s"],
            "package_cpu_s": made["cpu_s"],
            "package_peak_mib": made["peak_kib"] / 1024,
            "verify_s": checked["wall_s"],
            "verify_cpu_s": checked["cpu_s"],
            "verify_peak_mib": checked["peak_kib"] / 1024,
            "package_bytes": folder_bytes(package),
            "archive_bytes": (work / "pkg.tar.gz").stat().st_size,
        }
        captures = json.loads((package / "rng" / "captures.json").read_text())
        capture_bytes = raw_bytes + sum(f["raw_bytes"] for f in captures["final"])
        program_bytes = sum(
            (ROOT / p).stat().st_size
            for p in json.loads((package / "program" / "manifest.json").read_text())["files"]
        )
        # hashed: the seal and the check of the seal, the archive once, the program for the HMAC
        hashed = 2 * out["package_bytes"] + out["archive_bytes"] + program_bytes
        rate = sha256_rate()
        cpu_rest = max(0.0, made["cpu_s"] - hashed / rate)
        out["pi4_package_s"] = (
            cpu_rest * CPU_FACTOR
            + hashed / (PI4_SHA256_MB_S * 1e6)
            + (capture_bytes + 1024) / (PI4_HWRNG_KB_S * 1e3)
            + 2 * PI4_RELEASE_CHECK_S
        )
        out["pi4_hwrng_s"] = (capture_bytes + 1024) / (PI4_HWRNG_KB_S * 1e3)
        out["pi4_verify_s"] = checked["cpu_s"] * CPU_FACTOR
        if larger:
            shutil.rmtree(package)
            (work / "pkg.tar.gz").unlink()
            (work / "pkg.tar.gz.sha256").unlink()
            big = ["--draws", str(draws), "--raw-bytes", str(4 * raw_bytes)]
            bigger = run_measured(work, "lab", "package", str(work / "pkg"), *common, *big)
            out["package4_s"] = bigger["wall_s"]
            out["package4_peak_mib"] = bigger["peak_kib"] / 1024
        if suite:
            t0 = time.perf_counter()
            from controller.lab.suite import collect

            summary = collect(ROOT)
            out["suite_s"] = time.perf_counter() - t0
            out["suite_tests"] = summary.total
        out["self_peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        return out


def report(m: dict[str, float]) -> str:
    lines = [
        f"lab package, {m['draws']:,.0f} outcomes per range and {m['raw_bytes']:,.0f} raw bytes:"
        f" {m['package_s']:.1f} s ({m['package_cpu_s']:.1f} s CPU with the replays), peak"
        f" {m['package_peak_mib']:.1f} MiB; {m['package_bytes'] / 1e6:.1f} MB,"
        f" archive {m['archive_bytes'] / 1e6:.1f} MB",
        f"lab verify: {m['verify_s']:.1f} s ({m['verify_cpu_s']:.1f} s CPU), peak"
        f" {m['verify_peak_mib']:.1f} MiB",
    ]
    if "package4_s" in m:
        lines.append(
            f"lab package with 4x the raw bytes: {m['package4_s']:.1f} s, peak"
            f" {m['package4_peak_mib']:.1f} MiB (the same memory: streamed)"
        )
    lines += [
        f"Raspberry Pi 4 estimate (a release): lab package ~{m['pi4_package_s']:.0f} s"
        f" (of which ~{m['pi4_hwrng_s']:.0f} s reading /dev/hwrng at {PI4_HWRNG_KB_S:.0f} kB/s,"
        f" assumed), lab verify ~{m['pi4_verify_s']:.0f} s",
    ]
    if "suite_s" in m:
        lines.append(
            f"the test suite's collection in this source tree: {m['suite_s']:.1f} s"
            f" ({m['suite_tests']:,.0f} tests)"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from controller.lab import DEFAULT_DRAWS, DEFAULT_RAW_BYTES

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=DEFAULT_DRAWS)
    parser.add_argument("--raw-bytes", type=int, default=DEFAULT_RAW_BYTES)
    parser.add_argument("--rounds", type=int, default=20, help="rounds in the journal")
    parser.add_argument("--json", default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    m = measure(args.draws, args.raw_bytes, args.rounds)
    print(f"machine load average at the start: {load:.1f} ({os.cpu_count()} CPUs)")
    print(report(m))
    if args.json:
        Path(args.json).write_text(json.dumps(m, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
