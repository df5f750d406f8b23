"""Top-level pytest configuration: the hardware-in-the-loop switch and the ``rig`` fixture.

``pytest`` runs every scenario against the simulated rig (the real process on a sim profile,
its console on a pseudo-terminal). ``pytest --hil PROFILE --hil-console-peer PORT
[--hil-shoe-peer PORT] tests/hil`` runs the same scenarios against a real build: PROFILE's
serial ports and GPIO, the test talking to the console through PORT at the other end of a
cable, and the shoe emulator (``python -m drivers.sim.shoe --port PORT``) on the shoe's cable.
A lock file keeps two HIL runs on one machine apart. See docs/hil-rig.md.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# CI (CI=true, as .ci/run is run) explores the same examples on every run, so a landing is never
# decided by a new random draw; a developer's run keeps exploring (and keeps its failure
# database), and a failure found there becomes an explicit regression test.
settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
if os.environ.get("CI"):
    settings.load_profile("ci")

# Real services for any test: mosquitto_broker, postgres_server, softhsm_token, chromium_browser
# (tests/services/fixtures.py; TC_REQUIRE_SERVICES=1 turns a missing part into a failure).
pytest_plugins = ("tests.services.fixtures",)

LOCK_TIMEOUT_S = 120.0
DEFAULT_LOCK = "/tmp/table-controller-hil.lock"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("hil", "hardware in the loop (docs/hil-rig.md)")
    group.addoption(
        "--hil",
        metavar="PROFILE",
        default=None,
        help="run the rig scenarios against a real build with this profile",
    )
    group.addoption(
        "--hil-console-peer",
        metavar="PORT",
        default=None,
        help="the test's serial port wired to the profile's console port",
    )
    group.addoption(
        "--hil-shoe-peer",
        metavar="PORT",
        default=None,
        help="the test's serial port wired to the profile's shoe port (the shoe"
        " emulator runs on it)",
    )
    group.addoption(
        "--hil-lock",
        metavar="FILE",
        default=DEFAULT_LOCK,
        help=f"lock file that keeps two HIL runs apart (default {DEFAULT_LOCK})",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--hil"):
        return
    skip = pytest.mark.skip(
        reason="needs real hardware: run pytest --hil PROFILE"
        " --hil-console-peer PORT tests/hil (docs/hil-rig.md)"
    )
    for item in items:
        if item.get_closest_marker("hil") is not None:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def hil_lock(request: pytest.FixtureRequest) -> Iterator[None]:
    """Hold the HIL lock file for the whole run (no-op on the simulated rig)."""
    if not request.config.getoption("--hil"):
        yield
        return
    path = request.config.getoption("--hil-lock")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    deadline = time.monotonic() + LOCK_TIMEOUT_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() > deadline:
                os.close(fd)
                pytest.fail(f"another HIL run holds {path} (waited {LOCK_TIMEOUT_S:.0f} s)")
            time.sleep(0.5)
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


@pytest.fixture
def make_rig(
    request: pytest.FixtureRequest, tmp_path: Path, hil_lock: None
) -> Iterator[Callable[..., object]]:
    """``make_rig(game=None)`` -> a started Rig; a game the HIL profile is not is skipped."""
    from tests.hil.rig import PROFILES, PtyMaster, Rig, SerialPeer, override_profile
    from tests.hil.shoe import ConsoleShoe, EmulatorShoe

    made: list[Rig] = []
    emulators: list[subprocess.Popen[bytes]] = []
    config = request.config

    def make(game: str | None = None) -> Rig:
        hil = config.getoption("--hil")
        state = tmp_path / f"state{len(made)}"
        if hil:
            from controller.config.profile import load_profile

            profile = load_profile(hil)
            if game is not None and profile.game != game:
                pytest.skip(f"the HIL profile {hil} is a {profile.game} table, not {game}")
            peer = config.getoption("--hil-console-peer")
            if not peer:
                pytest.fail("--hil needs --hil-console-peer PORT (the cable to the console)")
            shoe_peer = config.getoption("--hil-shoe-peer")
            if profile.shoe is not None and shoe_peer and not emulators:
                # the emulator holds as many decks as the table counts (rules.baccarat.decks)
                emulators.append(
                    subprocess.Popen(
                        [
                            sys.executable,
                            "-m",
                            "drivers.sim.shoe",
                            "--port",
                            shoe_peer,
                            "--baud",
                            str(profile.shoe.baud),
                            "--decks",
                            str(profile.rules.baccarat.decks),
                        ],
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                    )
                )
            # The rig is a machine peer: the table's profile as given, its console line without
            # a terminal's echo and prompt.
            folder = tmp_path / f"hil{len(made)}"
            folder.mkdir()
            rig = Rig(
                override_profile(folder, Path(hil), None, scoreboard_port=None),
                state,
                SerialPeer(peer, profile.console.baud),
                hardware=True,
            )
            if emulators:
                rig.shoe = EmulatorShoe(emulators[0])
        else:
            pty = PtyMaster()
            base = PROFILES / f"sim-{game or 'paigow'}.toml"
            # six decks, the fewest 5324.20(a)(4) allows: a whole shoe in fewer coups
            extra = "[rules.baccarat]\ndecks = 6\n" if game == "baccarat" else ""
            rig = Rig(override_profile(tmp_path, base, pty.slave_path, extra), state, pty)
            if game == "baccarat":
                rig.shoe = ConsoleShoe(rig)
        made.append(rig)
        return rig.start()

    yield make
    for rig in made:
        rig.close()
    for emulator in emulators:
        if emulator.stdin is not None:
            emulator.stdin.close()
        try:
            emulator.wait(10)
        except subprocess.TimeoutExpired:
            emulator.kill()
            emulator.wait(10)


@pytest.fixture
def rig(make_rig: Callable[..., object]) -> object:
    """The rig for whichever game the run is about (pai gow on the simulated rig)."""
    return make_rig()
