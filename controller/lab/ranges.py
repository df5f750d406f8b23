"""The ranges the shipped profiles draw from: what the lab package captures final outcomes for.

Read from the profiles a release ships (``hw_profiles/``; ``share/hw_profiles/`` in an install
root), never listed by hand: each profile names its game, and the game's rules say what its
certified RNG draws. A profile of a game this module does not know is an error naming it, so a new
table cannot ship without its ranges in the lab package.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from controller.config.profile import Profile, ProfileError, load_profile
from controller.games.paigow.dealing import DIE_MAX, DIE_MIN, RNG_MAX, RNG_MIN

__all__ = ["DrawRange", "LabRangeError", "draw_ranges", "ranges_of", "shipped_profiles"]


class LabRangeError(ValueError):
    """A shipped profile whose draws the lab package does not know, or one that does not load."""


@dataclass(frozen=True)
class DrawRange:
    """Outcomes ``low``..``high`` through the certified RNG's production path."""

    low: int
    high: int
    what: str
    reference: str
    profiles: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.low}-{self.high}"


def ranges_of(profile: Profile) -> list[DrawRange]:
    """What a profile's table draws from the certified RNG, with the regulation behind it."""
    if profile.game == "paigow":
        return [
            DrawRange(
                RNG_MIN,
                RNG_MAX,
                "the pai gow starting position: the RNG selects and displays a number from one"
                " through eight",
                "9 NYCRR 5324.50(a)(4)",
            ),
            DrawRange(
                DIE_MIN,
                DIE_MAX,
                "one die: the dice that decide the starting position when the shaker is used or"
                " the RNG is in fault (entered by the dealer as `dice A B C`, each 1-6); the"
                " capture shows the certified scaling for a die, a range with rejections",
                "9 NYCRR 5324.50(a)(3)",
            ),
        ]
    if profile.game == "startpos" and profile.startpos is not None:
        return [
            DrawRange(
                1,
                profile.startpos.range,
                "the starting position: the RNG selects and displays a number from one through"
                f" {profile.startpos.range} (the profile's [startpos] range)",
                "N.J.A.C. 13:69F-31.11(c)",
            )
        ]
    if profile.game == "baccarat":
        return []  # the cards come from the shoe; the table draws nothing
    raise LabRangeError(
        f"profile {profile.name} ({profile.source_files[-1]}): the lab package does not know what"
        f" a {profile.game} table draws from the RNG (controller/lab/ranges.py)"
    )


def shipped_profiles(program_root: Path) -> list[Path]:
    """The profiles shipped with the program at ``program_root`` (a source tree or a release's
    install root), every ``*.toml`` at the top of its profiles folder (``boards/`` holds the
    included board files, not tables)."""
    for folder in (program_root / "hw_profiles", program_root / "share" / "hw_profiles"):
        if folder.is_dir():
            return sorted(folder.glob("*.toml"))
    return []


def draw_ranges(profiles: Iterable[Path]) -> list[DrawRange]:
    """Every distinct range the given profiles draw from, with the profiles that draw it."""
    found: dict[tuple[int, int], DrawRange] = {}
    for path in profiles:
        try:
            profile = load_profile(path)
        except ProfileError as exc:
            raise LabRangeError(f"shipped profile {path} does not load: {exc}") from exc
        for r in ranges_of(profile):
            key = (r.low, r.high)
            known = found.get(key, r)
            found[key] = DrawRange(
                r.low, r.high, known.what, known.reference, (*known.profiles, profile.name)
            )
    return sorted(found.values(), key=lambda r: (-r.high, r.low))
