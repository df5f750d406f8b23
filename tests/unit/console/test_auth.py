"""The console's PINs, roles and lockout (controller/console/auth.py): the supervisor's role,
and a lockout that no clock change can shorten, across restarts and reboots."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from controller.console.auth import LOCKOUT_S, MAX_FAILURES, SUPERVISOR, TECHNICIAN, Auth
from controller.console.errors import ConsoleError
from controller.journal.store import Journal

TECH_PIN = "24681012"
SUPER_PIN = "97531864"


@dataclass
class Machine:
    """One device's clocks: the wall clock (settable, jumps), the monotonic clock of the current
    boot, and the boot ID; a reboot starts a new boot with the monotonic clock near zero."""

    folder: Path
    wall_s: float = 1_800_000_000.0
    mono_s: float = 5000.0
    boot: int = 1
    alarms: list[str] = field(default_factory=list)
    journals: list[Journal] = field(default_factory=list)

    def journal(self) -> Journal:
        j = Journal(self.folder / "journal.sqlite",
                    boot_id=f"boot-{self.boot}", wall_ns=lambda: int(self.wall_s * 1e9),
                    mono_ns=lambda: int(self.mono_s * 1e9))
        self.journals.append(j)
        return j

    def start(self) -> Auth:
        """A (re)start of the program on this boot: a fresh Auth on the journal."""
        return Auth(self.journal(), self.alarms.append, clock=lambda: self.mono_s, scrypt_n=16)

    def run(self, seconds: float) -> None:
        self.wall_s += seconds
        self.mono_s += seconds

    def reboot(self, off_for_s: float) -> None:
        self.wall_s += off_for_s
        self.mono_s = 12.0
        self.boot += 1


@pytest.fixture
def machine(tmp_path: Path) -> Iterator[Machine]:
    m = Machine(tmp_path)
    yield m
    for j in m.journals:
        j.close()


def lock_out(auth: Auth) -> None:
    auth.passwd([TECH_PIN], "serial")
    auth.logout("serial")
    for _ in range(MAX_FAILURES):
        with pytest.raises(ConsoleError):
            auth.login(["00000000"], "serial")
    assert auth.locked_for() == pytest.approx(LOCKOUT_S)


def test_a_forward_clock_jump_and_a_restart_do_not_lift_the_lockout(machine: Machine) -> None:
    lock_out(machine.start())
    machine.wall_s += 3 * 3600            # the wall clock set three hours forward
    restarted = machine.start()
    left = restarted.locked_for()
    assert left is not None and left == pytest.approx(LOCKOUT_S)
    with pytest.raises(ConsoleError) as refused:
        restarted.login([TECH_PIN], "serial")
    assert refused.value.code == "LOCKED"


def test_within_one_boot_the_time_since_the_lock_counts_across_a_restart(
        machine: Machine) -> None:
    lock_out(machine.start())
    machine.run(100)
    machine.wall_s -= 7 * 86400           # the wall clock set a week back changes nothing
    left = machine.start().locked_for()
    assert left == pytest.approx(LOCKOUT_S - 100)
    machine.run(LOCKOUT_S - 100 + 1)
    again = machine.start()
    assert again.locked_for() is None
    assert again.login([TECH_PIN], "serial") == ["logged in"]


def test_time_powered_off_never_shortens_a_lockout(machine: Machine) -> None:
    lock_out(machine.start())
    machine.run(60)
    machine.reboot(off_for_s=86400)       # a day off: none of it counts
    left = machine.start().locked_for()
    assert left == pytest.approx(LOCKOUT_S)


def test_the_time_left_at_shutdown_carries_over_a_reboot(machine: Machine) -> None:
    auth = machine.start()
    lock_out(auth)
    machine.run(200)
    auth.save()                            # a clean shutdown journals what is left
    machine.reboot(off_for_s=3600)
    assert machine.start().locked_for() == pytest.approx(LOCKOUT_S - 200)


def test_a_lockout_that_ran_out_does_not_come_back_after_a_reboot(machine: Machine) -> None:
    auth = machine.start()
    lock_out(auth)
    machine.run(LOCKOUT_S + 1)
    auth.tick()                            # the loop's tick journals the end of the lockout
    machine.reboot(off_for_s=60)
    assert machine.start().locked_for() is None


def test_the_supervisor_pin_is_set_by_a_technician_then_kept_by_the_supervisor(
        machine: Machine) -> None:
    auth = machine.start()
    with pytest.raises(ConsoleError) as no_login:
        auth.passwd([SUPERVISOR, SUPER_PIN], "serial")
    assert no_login.value.code == "AUTH"
    auth.passwd([TECH_PIN], "serial")               # the first PIN: technician, logged in
    with pytest.raises(ConsoleError) as same:
        auth.passwd([SUPERVISOR, TECH_PIN], "serial")
    assert same.value.code == "RANGE" and "must differ" in same.value.reason
    assert auth.passwd([SUPERVISOR, SUPER_PIN], "serial") == ["supervisor's PIN set"]
    with pytest.raises(ConsoleError) as technician:
        auth.passwd([SUPERVISOR, "11112222"], "serial")   # a technician cannot change it now
    assert technician.value.code == "AUTH"
    assert auth.who("serial") == f"{TECHNICIAN}@serial"
    auth.logout("serial")
    assert auth.login([SUPER_PIN], "serial") == ["logged in as supervisor"]
    assert auth.who("serial") == f"{SUPERVISOR}@serial"
    auth.require("serial", SUPERVISOR)
    assert auth.passwd([SUPERVISOR, "11112222"], "serial") == ["supervisor's PIN changed"]
    assert auth.describe("serial")[0] == "console: logged in as supervisor (serial)"


def test_a_technician_login_is_not_a_supervisors(machine: Machine) -> None:
    auth = machine.start()
    auth.passwd([TECH_PIN], "serial")
    with pytest.raises(ConsoleError) as refused:
        auth.require("serial", SUPERVISOR)
    assert refused.value.code == "AUTH" and "supervisor" in refused.value.reason
