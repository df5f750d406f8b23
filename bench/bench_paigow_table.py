"""Time from a dealer's button edge to the display showing the drawn number (target < 5 ms).

    python bench/bench_paigow_table.py [--rounds N]

The whole path runs for real: the sim profile's Application (its one loop thread), the journal
in a temporary directory with ``synchronous=FULL`` (every row fsynced before it returns), the
CertifiedRng with its health tests, the seven-segment driver on SimGPIO. The edge is
``SimGPIO.drive`` on the draw button's pin from this (the "GPIO event") thread, as RPi.GPIO's
edge thread would call the DealerButtons callback; the clock stops when the display's output pins
read back the drawn digit. Between samples the other buttons are pressed the same way. Prints
the median and the 99th percentile; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from controller.app import Application  # noqa: E402
from controller.config.profile import load_profile  # noqa: E402
from controller.events import Shutdown  # noqa: E402
from drivers.number_display import DIGIT_SEGMENTS  # noqa: E402

PROFILE = Path(__file__).resolve().parents[1] / "hw_profiles" / "sim-paigow.toml"
WAIT_S = 2.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument(
        "--dir",
        default=None,
        help="where the temporary journal goes (default: the system's temp dir;"
        " use a directory on the device's real storage)",
    )
    args = parser.parse_args()
    profile = load_profile(PROFILE)
    digits = {segs: n for n, segs in DIGIT_SEGMENTS.items()}
    with tempfile.TemporaryDirectory(prefix="bench-paigow-", dir=args.dir) as tmp:
        app = Application(profile, tmp, console_port="none")
        app.start()
        loop = threading.Thread(target=app.run, daemon=True)
        loop.start()
        gpio = app.devices.gpio
        display = app.devices.table.display
        pins = app.devices.table.sim.buttons.pins
        gap_ms = profile.buttons.bounce_ms + 1
        table = app.table

        def press(name: str) -> None:
            gpio.drive(pins[name], 0)
            gpio.clock.advance(gap_ms)
            gpio.drive(pins[name], 1)
            gpio.clock.advance(gap_ms)
            app.call(lambda: None)  # the press has been handled (FIFO queue)

        samples: list[float] = []
        try:
            for _ in range(args.rounds):
                for name in ("shuffled", "no_more_bets"):
                    press(name)
                start = time.perf_counter_ns()
                gpio.drive(pins["draw"], 0)
                # rpi-lgpio's debounce (the simulator's default) reports the press once the
                # line has been stable for bounce_ms: on the simulated clock, at once here
                gpio.clock.advance(gap_ms)
                deadline = time.monotonic() + WAIT_S
                while display.read_back() not in digits:
                    if time.monotonic() > deadline:
                        raise SystemExit(
                            f"no number within {WAIT_S} s; state "
                            f"{app.call(lambda: table.model.state)}"
                        )
                    time.sleep(0)
                samples.append((time.perf_counter_ns() - start) / 1e6)
                gpio.drive(pins["draw"], 1)
                gpio.clock.advance(gap_ms)
                for name in ("dealt", "hands_set", "settled"):
                    press(name)
        finally:
            app.post(Shutdown("bench done"))
            loop.join(timeout=10)
            app.close()
    first, samples = samples[0], sorted(samples[1:])
    if not samples:
        raise SystemExit("need --rounds 2 or more")
    p99 = samples[min(len(samples) - 1, round(0.99 * (len(samples) - 1)))]
    print(f"first draw after power-up (includes the RNG start-up health test): {first:.3f} ms")
    print(
        f"button edge -> number on the display, {len(samples)} more draws "
        f"(journal synchronous=FULL in {args.dir or tempfile.gettempdir()}):"
    )
    print(f"  median {statistics.median(samples):6.3f} ms")
    print(f"  p99    {p99:6.3f} ms")
    print(f"  max    {samples[-1]:6.3f} ms   (target: under 5 ms)")


if __name__ == "__main__":
    main()
