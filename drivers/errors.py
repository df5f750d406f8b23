"""Errors raised by the hardware drivers and their simulated twins.

One base, ``DriverError``, so the controller can catch "a device misbehaved" in one place;
each subclass also derives from the matching builtin (gpiozero ``exc.py`` habit) so callers
may catch what they mean (``ValueError`` for bad configuration, ``OSError`` for a device).
"""

from __future__ import annotations

__all__ = [
    "BackendUnavailable",
    "DeviceTimeout",
    "DeviceUnavailable",
    "DisplayValueError",
    "DriverError",
    "PinError",
    "ProtocolError",
    "UnsupportedOperation",
]


class DriverError(Exception):
    """Base class of every error raised by ``drivers``."""


class PinError(DriverError, ValueError):
    """A pin number or pin mapping is invalid (unknown name, duplicate, out of range)."""


class DisplayValueError(DriverError, ValueError):
    """A display was asked to show something it cannot (a number outside 1-8, a long line)."""


class ProtocolError(DriverError, ValueError):
    """A device sent or was sent bytes that do not follow its documented line protocol."""


class DeviceUnavailable(DriverError, OSError):
    """A device or port could not be opened, or went away while in use."""


class DeviceTimeout(DeviceUnavailable, TimeoutError):
    """A write or read on a device did not complete within its timeout."""


class BackendUnavailable(DriverError, ImportError):
    """A named backend's library is not installed (e.g. ``RPi.GPIO`` off a Pi)."""


class UnsupportedOperation(DriverError, NotImplementedError):
    """A backend cannot do what was asked; raised rather than silently doing nothing."""
