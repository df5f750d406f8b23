"""The console's PINs, roles and lockout (controller/console/auth.py): the supervisor's role,
failures counted and locked per role (a technician's own logins never reset the supervisor's
count), a PIN changed only with its current PIN, and a lockout that no clock change can shorten,
across restarts and reboots."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.console.auth import (
    LOCKOUT_S,
    MAX_FAILURES,
    SUPERVISOR,
    TECHNICIAN,
    Auth,
    PinCheck,
)
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
        j = Journal(
            self.folder / "journal.sqlite",
            boot_id=f"boot-{self.boot}",
            wall_ns=lambda: int(self.wall_s * 1e9),
            mono_ns=lambda: int(self.mono_s * 1e9),
        )
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


def done(check: PinCheck) -> list[str]:
    """A login or passwd hashed on this thread, as a host that cannot defer a reply does."""
    return check.run_here()


def login(auth: Auth, pin: str, source: str = "serial") -> list[str]:
    return done(auth.login([pin], source))


def passwd(auth: Auth, *args: str, source: str = "serial") -> list[str]:
    return done(auth.passwd(list(args), source))


def refused(fn: Callable[[], object]) -> ConsoleError:
    with pytest.raises(ConsoleError) as caught:
        fn()
    return caught.value


def lock_out(auth: Auth) -> None:
    passwd(auth, TECH_PIN)
    auth.logout("serial")
    for _ in range(MAX_FAILURES):
        refused(lambda: login(auth, "00000000"))
    assert auth.locked_for(TECHNICIAN) == pytest.approx(LOCKOUT_S)


def test_a_forward_clock_jump_and_a_restart_do_not_lift_the_lockout(machine: Machine) -> None:
    lock_out(machine.start())
    machine.wall_s += 3 * 3600  # the wall clock set three hours forward
    restarted = machine.start()
    left = restarted.locked_for(TECHNICIAN)
    assert left is not None and left == pytest.approx(LOCKOUT_S)
    assert refused(lambda: login(restarted, TECH_PIN)).code == "LOCKED"


def test_within_one_boot_the_time_since_the_lock_counts_across_a_restart(machine: Machine) -> None:
    lock_out(machine.start())
    machine.run(100)
    machine.wall_s -= 7 * 86400  # the wall clock set a week back changes nothing
    left = machine.start().locked_for(TECHNICIAN)
    assert left == pytest.approx(LOCKOUT_S - 100)
    machine.run(LOCKOUT_S - 100 + 1)
    again = machine.start()
    assert again.locked_for(TECHNICIAN) is None
    assert login(again, TECH_PIN) == ["logged in"]


def test_time_powered_off_never_shortens_a_lockout(machine: Machine) -> None:
    lock_out(machine.start())
    machine.run(60)
    machine.reboot(off_for_s=86400)  # a day off: none of it counts
    left = machine.start().locked_for(TECHNICIAN)
    assert left == pytest.approx(LOCKOUT_S)


def test_the_time_left_at_shutdown_carries_over_a_reboot(machine: Machine) -> None:
    auth = machine.start()
    lock_out(auth)
    machine.run(200)
    auth.save()  # a clean shutdown journals what is left
    machine.reboot(off_for_s=3600)
    assert machine.start().locked_for(TECHNICIAN) == pytest.approx(LOCKOUT_S - 200)


def test_a_lockout_that_ran_out_does_not_come_back_after_a_reboot(machine: Machine) -> None:
    auth = machine.start()
    lock_out(auth)
    machine.run(LOCKOUT_S + 1)
    auth.tick()  # the loop's tick journals the end of the lockout
    machine.reboot(off_for_s=60)
    assert machine.start().locked_for(TECHNICIAN) is None


def test_the_supervisor_pin_is_set_by_a_technician_then_kept_by_the_supervisor(
    machine: Machine,
) -> None:
    auth = machine.start()
    assert refused(lambda: passwd(auth, SUPERVISOR, SUPER_PIN)).code == "AUTH"
    passwd(auth, TECH_PIN)  # the first PIN: technician, logged in
    same = refused(lambda: passwd(auth, SUPERVISOR, TECH_PIN))
    assert same.code == "RANGE" and "must differ" in same.reason
    assert passwd(auth, SUPERVISOR, SUPER_PIN) == ["supervisor's PIN set"]
    # a technician cannot change it now, not even with the right current PIN
    assert refused(lambda: passwd(auth, SUPERVISOR, SUPER_PIN, "11112222")).code == "AUTH"
    assert auth.who("serial") == f"{TECHNICIAN}@serial"
    auth.logout("serial")
    assert login(auth, SUPER_PIN) == ["logged in as supervisor"]
    assert auth.who("serial") == f"{SUPERVISOR}@serial"
    auth.require("serial", SUPERVISOR)
    assert passwd(auth, SUPERVISOR, SUPER_PIN, "11112222") == ["supervisor's PIN changed"]
    assert auth.describe("serial")[0] == "console: logged in as supervisor (serial)"


def test_a_technician_login_is_not_a_supervisors(machine: Machine) -> None:
    auth = machine.start()
    passwd(auth, TECH_PIN)
    caught = refused(lambda: auth.require("serial", SUPERVISOR))
    assert caught.code == "AUTH" and "supervisor" in caught.reason


def commissioned(machine: Machine) -> Auth:
    """A technician PIN and a supervisor PIN, nobody logged in."""
    auth = machine.start()
    passwd(auth, TECH_PIN)
    passwd(auth, SUPERVISOR, SUPER_PIN)
    auth.logout("serial")
    return auth


def test_a_technicians_own_logins_never_reset_the_supervisors_count(machine: Machine) -> None:
    """The attack as found: four wrong guesses, the technician's own login, again and again.
    With one shared count it never locked and the 43rd try logged in as supervisor."""
    auth = commissioned(machine)
    codes: list[str] = []
    for guess in range(42):
        if guess % 4 == 0 and guess:
            assert login(auth, TECH_PIN) == ["logged in"]  # the technician's own login
            auth.logout("serial")
        pin = f"{10_000_000 + guess}"
        codes.append(refused(lambda pin=pin: login(auth, pin)).code)
        machine.run(0.2)  # 42 guesses in about 8 s
    # MAX_FAILURES wrong PINs are MAX_FAILURES tries at the supervisor's: locked at the fifth
    assert codes[: MAX_FAILURES - 1] == ["AUTH"] * (MAX_FAILURES - 1)
    assert set(codes[MAX_FAILURES - 1 :]) == {"LOCKED"}
    left = auth.locked_for(SUPERVISOR)
    assert left is not None and left > LOCKOUT_S - 10
    assert auth.locked_for(TECHNICIAN) is None  # the technician still logs in
    # the 43rd try, the supervisor's right PIN: refused while locked, as a wrong one would be
    right = refused(lambda: login(auth, SUPER_PIN))
    wrong = refused(lambda: login(auth, "55556666"))
    assert right.code == wrong.code == "LOCKED"
    assert right.reason.split(";")[0] == wrong.reason.split(";")[0]
    assert "supervisor logins locked" in right.reason
    assert auth.who("serial") == f"{TECHNICIAN}@serial" and not auth.session("serial").logged_in
    assert [a for a in machine.alarms if a.startswith("CONSOLE LOCKED: supervisor")]
    rows = machine.journals[-1].events(["console.locked"])
    assert [r.data["role"] for r in rows] == [SUPERVISOR]
    # and once it ran out, the supervisor logs in
    machine.run(LOCKOUT_S)
    assert login(auth, SUPER_PIN) == ["logged in as supervisor"]


def test_one_roles_login_clears_only_its_own_count(machine: Machine) -> None:
    auth = commissioned(machine)
    for _ in range(3):
        refused(lambda: login(auth, "00000000"))
    login(auth, SUPER_PIN)  # the supervisor's: the technician's count stays
    auth.logout("serial")
    refused(lambda: login(auth, "00000000"))
    assert (
        "1 try left" in refused(lambda: login(auth, "00000000")).reason
        or auth.locked_for(TECHNICIAN) is not None
    )
    assert auth.locked_for(TECHNICIAN) is not None and auth.locked_for(SUPERVISOR) is None
    assert login(auth, SUPER_PIN) == ["logged in as supervisor"]
    auth.logout("serial")
    assert refused(lambda: login(auth, TECH_PIN)).code == "LOCKED"


def test_each_roles_lockout_is_restored_after_a_restart(machine: Machine) -> None:
    auth = commissioned(machine)
    for n in range(MAX_FAILURES - 1):
        refused(lambda: login(auth, "00000000"))
        if n == 1:
            login(auth, TECH_PIN)  # the technician's count starts again here
            auth.logout("serial")
    refused(lambda: login(auth, "00000000"))  # the supervisor's fifth: locked
    machine.run(40)
    restarted = machine.start()
    assert restarted.locked_for(SUPERVISOR) == pytest.approx(LOCKOUT_S - 40)
    assert restarted.locked_for(TECHNICIAN) is None
    assert refused(lambda: login(restarted, SUPER_PIN)).code == "LOCKED"
    # the technician's three failures came back too: two more lock the technician
    refused(lambda: login(restarted, "00000000"))
    assert refused(lambda: login(restarted, "00000000")).code == "LOCKED"
    assert restarted.locked_for(TECHNICIAN) == pytest.approx(LOCKOUT_S)
    machine.run(10)
    restarted.save()
    machine.reboot(off_for_s=600)
    again = machine.start()
    assert again.locked_for(SUPERVISOR) == pytest.approx(LOCKOUT_S - 50)
    assert again.locked_for(TECHNICIAN) == pytest.approx(LOCKOUT_S - 10)


def test_a_lock_row_written_before_per_role_counts_locks_every_role(machine: Machine) -> None:
    journal = machine.journal()
    journal.append("console.pin_set", {"algorithm": "scrypt"})
    journal.append("console.locked", {"source": "serial", "failures": 5, "seconds": 300.0})
    restarted = machine.start()
    assert restarted.locked_for(TECHNICIAN) == pytest.approx(LOCKOUT_S)
    assert restarted.locked_for(SUPERVISOR) == pytest.approx(LOCKOUT_S)


def test_changing_a_pin_needs_its_current_pin(machine: Machine) -> None:
    auth = commissioned(machine)
    login(auth, TECH_PIN)  # a console left logged in
    no_current = refused(lambda: passwd(auth, "13572468"))
    assert no_current.code == "AUTH" and "current PIN" in no_current.reason
    wrong = refused(lambda: passwd(auth, "99990000", "13572468"))
    assert wrong.code == "AUTH" and "current PIN" in wrong.reason
    assert refused(lambda: passwd(auth, TECH_PIN, "1357")).code == "RANGE"
    assert passwd(auth, TECH_PIN, "13572468") == ["PIN changed"]
    auth.logout("serial")
    assert refused(lambda: login(auth, TECH_PIN)).code == "AUTH"
    assert login(auth, "13572468") == ["logged in"]
    # the supervisor's PIN also resets the technician's (a forgotten PIN)
    assert passwd(auth, SUPER_PIN, "24242424") == ["PIN changed"]
    auth.logout("serial")
    assert login(auth, "24242424") == ["logged in"]
    rows = machine.journals[-1].events(["console.pin_set"])
    assert [r.data.get("by") for r in rows] == [None, TECHNICIAN, SUPERVISOR]


def test_wrong_current_pins_in_passwd_count_toward_the_lockout(machine: Machine) -> None:
    auth = commissioned(machine)
    login(auth, TECH_PIN)
    for _ in range(MAX_FAILURES - 1):
        assert refused(lambda: passwd(auth, "99990000", "13572468")).code == "AUTH"
    assert refused(lambda: passwd(auth, "99990000", "13572468")).code == "LOCKED"
    assert auth.locked_for(SUPERVISOR) is not None


def test_passwd_cannot_be_used_to_find_the_supervisors_pin(machine: Machine) -> None:
    """A new technician PIN is compared with the supervisor's (they must differ): each
    comparison is a try at the supervisor's PIN, bounded like a login."""
    auth = commissioned(machine)
    login(auth, TECH_PIN)
    current = TECH_PIN
    for n in range(MAX_FAILURES):
        new = f"{30_000_000 + n}"
        assert passwd(auth, current, new) == ["PIN changed"]
        current = new
    assert auth.locked_for(SUPERVISOR) is not None
    assert refused(lambda: passwd(auth, current, SUPER_PIN)).code == "LOCKED"


def test_one_pin_check_at_a_time(machine: Machine) -> None:
    auth = commissioned(machine)
    check = auth.login([TECH_PIN], "serial")  # being hashed (not finished yet)
    busy = refused(lambda: auth.login([SUPER_PIN], "stdio"))
    assert busy.code == "STATE"
    assert done(check) == ["logged in"]
    assert login(auth, SUPER_PIN, "stdio") == ["logged in as supervisor"]


# -- random sequences against a model of the rules ---------------------------------------------

PINS = {"tech": TECH_PIN, "super": SUPER_PIN, "wrong": "00001111", "new": "55443322"}
#: Wrong PINs weighted up: a lockout needs MAX_FAILURES of them between a role's logins.
OPS = st.sampled_from(
    [("login", "wrong")] * 6
    + [("login", "tech")] * 3
    + [("login", "super")]
    + [("passwd", "wrong")] * 2
    + [
        ("passwd", "tech"),
        ("passwd", "super"),
        ("logout", ""),
        ("wait", "1"),
        ("wait", "60"),
        ("wait", "301"),
        ("restart", ""),
    ]
)


class Model:
    """The documented rules, computed on their own: per-role counts, locks and sessions."""

    def __init__(self) -> None:
        self.pins = {TECHNICIAN: TECH_PIN, SUPERVISOR: SUPER_PIN}
        self.failures = {TECHNICIAN: 0, SUPERVISOR: 0}
        self.until: dict[str, float | None] = {TECHNICIAN: None, SUPERVISOR: None}
        self.role: str | None = None

    def locked(self, role: str, now: float) -> bool:
        until = self.until[role]
        if until is not None and now >= until:
            self.until[role], self.failures[role] = None, 0
        return self.until[role] is not None

    def fail(self, roles: list[str], now: float) -> str:
        for role in roles:
            self.failures[role] += 1
            if self.failures[role] >= MAX_FAILURES:
                self.until[role] = now + LOCKOUT_S
        return "LOCKED" if any(self.locked(r, now) for r in self.pins) else "AUTH"

    def login(self, pin: str, now: float) -> str:
        open_ = [r for r in (TECHNICIAN, SUPERVISOR) if not self.locked(r, now)]
        if not open_:
            return "LOCKED"
        match = next((r for r in open_ if self.pins[r] == pin), None)
        if match is None:
            return self.fail(open_, now)
        self.failures[match] = 0
        self.role = match
        return match

    def passwd(self, current: str, new: str, now: float) -> str:
        if self.role is None:
            return "AUTH"
        open_ = [r for r in (TECHNICIAN, SUPERVISOR) if not self.locked(r, now)]
        if not open_ or self.locked(SUPERVISOR, now):
            return "LOCKED"
        by = next((r for r in open_ if self.pins[r] == current), None)
        if by is None:
            return self.fail(open_, now)
        if by != SUPERVISOR:
            self.fail([SUPERVISOR], now)  # the new PIN compared with the supervisor's
        if new == self.pins[SUPERVISOR]:
            return "RANGE"
        self.pins[TECHNICIAN] = new
        return "OK"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(OPS, max_size=60))
def test_random_logins_and_passwds_keep_the_rules(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, str]]
) -> None:
    machine = Machine(tmp_path_factory.mktemp("auth"))
    try:
        auth = commissioned(machine)
        model = Model()
        for op, arg in ops:
            now = machine.mono_s
            if op == "login":
                want = model.login(PINS[arg], now)
                try:
                    reply = login(auth, PINS[arg])
                    got = SUPERVISOR if reply == ["logged in as supervisor"] else TECHNICIAN
                except ConsoleError as exc:
                    got = exc.code
                assert got == want, (op, arg, ops)
            elif op == "passwd":
                new = PINS["new"] if model.pins[TECHNICIAN] != PINS["new"] else TECH_PIN
                want = model.passwd(PINS[arg], new, now)
                try:
                    passwd(auth, PINS[arg], new)
                    got = "OK"
                except ConsoleError as exc:
                    got = exc.code
                assert got == want, (op, arg, ops)
            elif op == "logout":
                auth.logout("serial")
                model.role = None
            elif op == "wait":
                machine.run(float(arg))
                auth.tick()
            else:
                auth.save()
                auth = machine.start()  # a restart: the lockouts come back
                model.role = None
            for role in (TECHNICIAN, SUPERVISOR):
                locked = model.locked(role, machine.mono_s)
                assert (auth.locked_for(role) is not None) == locked, (role, ops)
        for journal in machine.journals[-1:]:
            for row in journal.events():
                text = repr(row.data)
                assert all(pin not in text for pin in PINS.values()), row.kind
    finally:
        for journal in machine.journals:
            journal.close()
