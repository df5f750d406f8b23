"""The lab package: everything a regulator's test lab asks of the table in one signed directory
(``table-controller lab package``), and its offline check (``table-controller lab verify``).
docs/lab.md describes both."""

DEFAULT_DRAWS = 100_000
"""Outcomes captured per range when the command does not say."""
DEFAULT_RAW_BYTES = 1_000_000
"""Raw bytes captured before scaling when the command does not say."""
