"""What the test suite holds, for a lab: test counts by area and the rules checks, collected by
pytest without running a single test.

The collection runs in a child process (``python -m pytest --collect-only`` with a small plugin
that records each test's id and the first line of its docstring, which names the regulation it
checks), with no cache and no byte code written, so the source tree is left as it was. A release
does not carry the test suite: there the summary says so and how to make it from the source tree
the release was built from.

The rules checks are the tests of the pure game rules (``controller/games/``: tiles, ranking,
house way, settlement, baccarat's third-card rules, wagers, odds), each written from the regulation
text and checked against values or an independent re-implementation; the suite holds every one,
and ``./run-tests`` fails if any of them does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

__all__ = ["RULES_AREAS", "SuiteSummary", "as_json", "collect", "summary_lines"]

#: The test folders of the pure rules (controller/games/).
RULES_AREAS: Final = ("tests/unit/paigow", "tests/unit/baccarat")
#: How long the collection may take (the whole suite collects in 10-20 s here).
COLLECT_TIMEOUT_S: Final = 600.0

_PLUGIN = r"""
import json, sys
import pytest

class Record:
    def __init__(self):
        self.items = []
        self.errors = []

    def pytest_collection_modifyitems(self, items):
        for item in items:
            doc = getattr(getattr(item, "function", None), "__doc__", None) or ""
            first = " ".join(doc.strip().split("\n\n")[0].split())
            self.items.append([item.nodeid, first])

    def pytest_collectreport(self, report):
        if report.failed:
            self.errors.append(report.nodeid or "?")

record = Record()
code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", *sys.argv[2:]],
                   plugins=[record])
with open(sys.argv[1], "w", encoding="utf-8") as out:
    json.dump({"exit": int(code), "items": record.items, "errors": record.errors}, out)
"""


@dataclass(frozen=True)
class SuiteSummary:
    """The collected suite: every test id with its docstring's first line, by area."""

    how: str
    items: tuple[tuple[str, str], ...] = ()
    errors: tuple[str, ...] = ()
    absent: str = ""

    by_area: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return len(self.items)

    def rules_checks(self) -> list[tuple[str, str]]:
        return [(n, d) for n, d in self.items if n.startswith(tuple(a + "/" for a in RULES_AREAS))]


def _area(nodeid: str) -> str:
    parts = nodeid.split("::", 1)[0].split("/")
    if len(parts) >= 3 and parts[1] == "unit":
        return "/".join(parts[:3])
    return "/".join(parts[:2]) if len(parts) >= 2 else parts[0]


def collect(root: Path, python: str = sys.executable) -> SuiteSummary:
    """Collect the suite under ``root`` (the source tree holding ``tests/`` and pyproject.toml)
    with ``python``; a summary saying why when there is none to collect."""
    if not (root / "tests").is_dir() or not (root / "pyproject.toml").is_file():
        return SuiteSummary(
            how="not collected",
            absent=(
                f"{root} is not a source tree (no tests/ beside the program): a release does not"
                " carry the test suite. Make this package from the source tree the release was"
                " built from (the same commit) to include the summary, or run"
                " `python -m pytest --collect-only -q` there."
            ),
        )
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    with tempfile.TemporaryDirectory(prefix="tc-suite-") as tmp:
        out = Path(tmp) / "items.json"
        try:
            done = subprocess.run(
                [python, "-c", _PLUGIN, str(out), "tests"],
                cwd=root,
                env=env,
                capture_output=True,
                text=True,
                timeout=COLLECT_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return SuiteSummary(how="not collected", absent=f"pytest's collection failed: {exc}")
        if not out.is_file():
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            return SuiteSummary(
                how="not collected",
                absent="pytest's collection did not run (is pytest installed?): " + " ".join(tail),
            )
        data = json.loads(out.read_text(encoding="utf-8"))
    items = tuple((str(n), str(d)) for n, d in data["items"])
    return SuiteSummary(
        how=(
            f"collected by `{Path(python).name} -m pytest --collect-only -q tests` in {root}"
            " (no test was run; no cache or byte code written)"
        ),
        items=items,
        errors=tuple(str(e) for e in data["errors"]),
        by_area=dict(sorted(Counter(_area(n) for n, _ in items).items())),
    )


def summary_lines(summary: SuiteSummary) -> list[str]:
    """The summary as the package's ``tests/summary.txt`` holds it."""
    if summary.absent:
        return ["# The test suite", "", "Not included: " + summary.absent]
    lines = [
        "# The test suite",
        "",
        f"How this was made: {summary.how}.",
        "",
        f"{summary.total:,} tests in {len(summary.by_area)} areas"
        + (f"; {len(summary.errors)} files could not be collected" if summary.errors else "")
        + ":",
        "",
    ]
    width = max(len(a) for a in summary.by_area) if summary.by_area else 10
    lines += [f"  {area:<{width}}  {count:>6,}" for area, count in summary.by_area.items()]
    lines += [f"  not collected: {e}" for e in summary.errors]
    rules = summary.rules_checks()
    lines += [
        "",
        f"## The rules checks ({len(rules):,} tests of controller/games/,"
        f" in {', '.join(RULES_AREAS)})",
        "",
        "Each is written from the regulation text it names and compares the rules with values",
        "or an independent re-implementation; ./run-tests fails if any of them fails.",
        "",
    ]
    grouped: dict[str, tuple[int, str]] = {}
    for nodeid, doc in rules:
        base = nodeid.split("[", 1)[0]
        count, _ = grouped.get(base, (0, doc))
        grouped[base] = (count + 1, doc)
    for base, (count, doc) in grouped.items():
        cases = f" ({count} cases)" if count > 1 else ""
        lines.append(f"- {base}{cases}" + (f": {doc}" if doc else ""))
    return lines


def as_json(summary: SuiteSummary) -> str:
    """The summary as JSON (``tests/collected.json``): every test id and its docstring's line."""
    return json.dumps(
        {
            "how": summary.how,
            "absent": summary.absent,
            "by_area": summary.by_area,
            "errors": list(summary.errors),
            "tests": [{"id": n, "doc": d} for n, d in summary.items],
        },
        indent=1,
        sort_keys=True,
    )
