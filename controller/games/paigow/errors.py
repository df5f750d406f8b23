"""Exceptions of the pai gow tiles rules (9 NYCRR 5324.50; N.J.A.C. 13:69F-10.7, 10.8).

Every error the paigow package raises derives from :class:`PaigowError`, so a caller can catch
the whole family at once. Errors about bad input also derive from :class:`ValueError`, so code
that only knows "bad argument" still catches them.

The message of every error names what is wrong (the offending tile, the count that was expected,
the duplicated tile, ...), so it can be shown to a floorperson as it is.
"""

from __future__ import annotations

__all__ = [
    "PaigowError",
    "TileError",
    "HandError",
    "SetError",
    "PolicyError",
]


class PaigowError(Exception):
    """Base class of every error raised by ``controller.games.paigow``."""


class TileError(PaigowError, ValueError):
    """A tile that does not exist in a pai gow set (e.g. ``"7-1"``), or text that is no tile."""


class HandError(PaigowError, ValueError):
    """A hand of the wrong size, or holding a tile more often than the 32-tile set has it."""


class SetError(PaigowError, ValueError):
    """A set of tiles that cannot be examined at all (not a collection of tiles)."""


class PolicyError(PaigowError, ValueError):
    """A house-way policy that is unknown or malformed (13:69F-10.7(e))."""
