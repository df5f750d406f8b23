"""The lab package made by the running table itself (the console's ``lab package``): from its own
certified RNG (the production instance, its health tests running on), a read-only connection to
its journal, its journal key and the settings in force, on a worker thread."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from controller.config.profile import Profile
from controller.config.settings import RuleSettings
from controller.journal.signer import Signer
from controller.journal.store import Journal
from controller.lab.package import PackageRequest, PackageResult, Signing, write_package
from controller.lab.state import TableState
from controller.program import manifest as mf
from controller.rng.certified import CertifiedRng

__all__ = ["RunningTable", "package_job"]


@dataclass(frozen=True)
class RunningTable:
    """What the running table lends the package: nothing is copied or re-opened but the
    journal, read through its own read-only connection on the worker."""

    profile: Profile
    state_dir: Path
    journal: Journal
    signer: Signer
    anchor_path: Path
    public_pem: bytes
    settings: RuleSettings


def package_job(
    table: RunningTable,
    rng: CertifiedRng,
    out: Path,
    *,
    draws: int,
    raw_bytes: int,
    program_root: Path | None,
    made_by: str,
) -> Callable[[Callable[[int, int], None]], PackageResult]:
    """The work for the console's worker thread: ``job(progress)`` writes the package to
    ``out`` (and ``out.tar.gz``) and returns what was made. Nothing of it runs on the loop."""

    def job(progress: Callable[[int, int], None]) -> PackageResult:
        reader = table.journal.reader()
        try:
            state = TableState(
                state_dir=table.state_dir,
                journal=reader,
                anchor_path=table.anchor_path,
                public_pem=table.public_pem,
                how="the running table, from its console: its journal read through a read-only"
                " connection while it played on",
                live=True,
            )
            return write_package(
                PackageRequest(
                    out=out,
                    profile=table.profile,
                    rng=rng,
                    signing=Signing(
                        table.signer, f"the table's journal key ({table.signer.description})", True
                    ),
                    settings=table.settings,
                    program_root=program_root or mf.installed_root(),
                    seed=os.urandom(32),
                    seed_given=False,
                    made_by=made_by,
                    state=state,
                    draws=draws,
                    raw_bytes=raw_bytes,
                    inside_state_ok=True,
                    self_test=False,
                    progress=progress,
                )
            )
        finally:
            reader.close()

    return job
