"""The console's reply codes and the error a refused command raises (docs/design.md "Technician
console": every reply ends ``OK`` or ``ERR <CODE> <reason>``)."""

from __future__ import annotations

from typing import Final

from controller.tables.table import CONSOLE_CODES

#: One vocabulary with the tables' refusals (controller.tables.table.RefusalCode).
CODES: Final = CONSOLE_CODES


class ConsoleError(Exception):
    """A refused command: becomes ``ERR <code> <reason>``."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(f"{code} {reason}")
        self.code = code
        self.reason = reason
