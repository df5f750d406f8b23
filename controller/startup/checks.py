"""The start-up checks (docs/program-verification.md, docs/journal.md, docs/rng.md): each
journals what it found and raises what stops play as a fault, before the table is ready. The
wiring builds one :class:`StartupChecks` and calls its steps in order; the rows and faults they
write are the start's record."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

from controller.journal.store import Journal
from controller.journal.trust import JournalTrust
from controller.journal.verify import VerifyResult

if TYPE_CHECKING:
    from controller.config.profile import Profile
    from controller.config.settings import ConfigStore
    from controller.program.identity import ReleaseIdentity
    from controller.rng.certified import SelfTestReport

log = logging.getLogger("controller")


class StartupRng(Protocol):
    """What the start-up health test needs of the RNG (controller/rng/certified.CertifiedRng)."""

    hwrng_note: str

    def self_test(self) -> SelfTestReport: ...


class StartupChecks:
    """The checks of one start, journaled in ``journal``; ``raise_fault`` holds what stops play
    until a technician clears it (``fault clear``)."""

    def __init__(
        self,
        journal: Journal,
        trust: JournalTrust,
        profile: Profile,
        raise_fault: Callable[[str], None],
        *,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._journal = journal
        self._trust = trust
        self._profile = profile
        self._raise_fault = raise_fault
        self._monotonic = monotonic

    def journal_verdict(self) -> VerifyResult:
        """The journal's verdict at start (the rows after the newest signed head and the
        anchor: bounded, the background scrub re-checks the whole journal), journaled in the
        ``app.start`` row."""
        profile = self._profile
        verdict = self._trust.check_at_start()
        self._journal.append(
            "app.start",
            {
                "profile": profile.name,
                "game": profile.game,
                "profile_files": list(profile.source_files),
                "journal_verified": verdict.ok,
                "pid": os.getpid(),
                "unacknowledged_findings": len(self._trust.findings),
            },
        )
        return verdict

    def install_log(self) -> ReleaseIdentity:
        """The install log (docs/program-verification.md): the release this start runs, and a
        change from the previous start's as its own row (an event, kept past retention)."""
        from controller.program.identity import running_identity

        release = running_identity()
        last_release = self._journal.last(["program.release"])
        self._journal.append("program.release", release.as_dict())
        if last_release is not None and not release.same_release(last_release.data):
            old = {k: last_release.data.get(k) for k in release.as_dict()}
            self._journal.append("program.release_changed", {"old": old, "new": release.as_dict()})
        return release

    def findings(self) -> None:
        """Every unacknowledged finding, this start's and those journaled before it that no
        technician acknowledged yet (a restart forgets none), stops play until `fault clear`."""
        for finding in self._trust.findings:
            self._raise_fault(f"journal verification failed: {finding.describe()}")

    def clock(self) -> None:
        """A wall clock before the profile's floor or behind the journal: warned (the journal
        keeps its own row of it)."""
        floor = datetime.combine(self._profile.journal.clock_floor, datetime.min.time(), tzinfo=UTC)
        for warning in self._journal.check_clock(int(floor.timestamp() * 1e9)):
            log.warning("clock: %s", warning)

    def settings(self, config: ConfigStore) -> None:
        """Replay the journaled settings; one that no longer applies is a fault."""
        for problem in config.replay():
            self._raise_fault(
                f"journaled setting {problem.key}={problem.text} (row {problem.seq})"
                f" no longer applies: {problem.reason}"
            )

    def program(self) -> None:
        """Program verification (controller/program/): a release checked every file before the
        application was imported (boot.py), journaled as ``program.checked``; a changed profile
        or program file is a fault."""
        from controller.program.boot import startup_problems
        from controller.program.origin import boot_check

        problems = startup_problems(self._profile.source_files)
        check = boot_check()
        if check is not None and check.checked:
            self._journal.append(
                "program.checked",
                {
                    "root": str(check.root),
                    "files": check.files,
                    "bytes": check.bytes,
                    "ms": round(check.seconds * 1000, 1),
                    "ok": not problems,
                    "problems": problems[:20],
                },
            )
        for mismatch in problems:
            self._raise_fault(f"program: {mismatch}")

    def rng(self, rng: StartupRng) -> str:
        """The RNG's start-up health test (SP 800-90B 4.3) before the table is ready, so the
        first draw never waits on it: a slow hardware generator is waited for (its silence
        bound), a failure is a fault the table latches into the journal at its next tick.
        Returns the start's note of it."""
        from controller.rng.certified import RngNotReady

        started = self._monotonic()
        try:
            report = rng.self_test()
        except RngNotReady as exc:
            self._journal.append("rng.startup", {"passed": None, "note": exc.reason})
            return f"RNG start-up test deferred to the first draw: {exc.reason}"
        seconds = round(self._monotonic() - started, 3)
        self._journal.append(
            "rng.startup",
            {
                "passed": report.passed,
                "monitors": list(report.monitors),
                "samples": report.samples,
                "failure": report.failure,
                "seconds": seconds,
                "hwrng": rng.hwrng_note,
            },
        )
        if not report.passed:
            return f"RNG start-up test FAILED in {seconds:.1f} s: {report.failure}"
        return (
            f"RNG start-up test passed in {seconds:.1f} s"
            f" ({', '.join(report.monitors)}; {rng.hwrng_note})"
        )
