"""The project's own documents are where its code points: no file names a design note kept
outside the repository, and every ``docs/design.md "Section"`` a comment or a page cites is a
heading of docs/design.md, so a newcomer following a reference finds what it names."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DESIGN = ROOT / "docs" / "design.md"
#: What the project's files may point to: its own tree. Spelt in pieces, so this file does not
#: name them itself.
OUTSIDE = ("DESIGN" + ".md", "STYLE" + ".md", "../" + "shared")
SOURCES = ("controller", "drivers", "tests", "docs", "bench", "scripts", "systemd", "hw_profiles")
TOP_FILES = ("README.md", "CONTRIBUTING.md", "CHANGELOG.md", "pyproject.toml", "run-sim")
SUFFIXES = {".py", ".md", ".toml", ".sh", ".service", ".conf", ""}
#: ``docs/design.md "Heading"``, also with ``'s``, a comma or an opening parenthesis between.
CITED = re.compile(r"docs/design\.md(?:'s)?[ ,(]*\"([^\"]+)\"")


def project_files() -> Iterator[Path]:
    for name in TOP_FILES:
        if (ROOT / name).is_file():
            yield ROOT / name
    for top in SOURCES:
        for path in sorted((ROOT / top).rglob("*")):
            if path.is_file() and path.suffix in SUFFIXES and "__pycache__" not in path.parts:
                yield path


def _joined(text: str) -> str:
    """The text with line breaks and comment markers folded to spaces (a citation may wrap)."""
    return re.sub(r"\s*\n\s*(?:#:?\s*)?", " ", text)


def headings() -> set[str]:
    return {
        line.lstrip("#").strip() for line in DESIGN.read_text().splitlines() if line.startswith("#")
    }


def test_no_file_points_outside_the_repository() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in project_files()
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if any(name in line for name in OUTSIDE)
    ]
    assert found == []


def test_every_cited_section_of_the_design_is_a_heading() -> None:
    known = headings()
    cited = {
        (str(path.relative_to(ROOT)), title)
        for path in project_files()
        if path != Path(__file__).resolve()  # this file's own examples
        for title in CITED.findall(_joined(path.read_text(errors="replace")))
    }
    assert len(cited) >= 10  # the code cites the design by section in many places
    assert sorted(c for c in cited if c[1] not in known) == []


def test_the_checks_see_what_they_look_for() -> None:
    text = '# see docs/design.md "Reference shoe protocol,\n    # revision 3" and\n'
    assert CITED.findall(_joined(text)) == ["Reference shoe protocol, revision 3"]
    assert CITED.findall('(docs/design.md, "Durability and trust")') == ["Durability and trust"]
    assert "Reference shoe protocol, revision 3" in headings()
    assert any(name in f"see {OUTSIDE[0]}" for name in OUTSIDE)
