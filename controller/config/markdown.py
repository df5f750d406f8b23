"""docs/configuration.md's tables of settings, generated from the declarations (a setting is
declared once, controller/config/declare.py) and snapshot-tested (tests/unit/config/test_docs.py):
a setting added, removed or changed shows as a diff of the page.

``python -m controller.config.markdown`` rewrites the generated sections of the page."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Final

from controller.config.declare import declared, toml_text
from controller.config.profile import PROFILE_GROUPS
from controller.config.settings import RULE_SETTINGS, RuleSettings, default_text

DOC: Final = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def profile_settings_markdown() -> str:
    """One table per table of a profile: key, type, range, default, what it does, reference."""
    out: list[str] = []
    for group, cls in PROFILE_GROUPS:
        out += [
            f"`[{group}]`" if group else "top level (no table header)",
            "",
            "| key | type | range | default | what | reference |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for d in declared(cls):
            s = d.spec
            default = (
                s.default_text
                if s.default_text is not None
                else "required"
                if d.required
                else toml_text(d.default)
            )
            out.append(
                f"| `{d.name}` | {s.kind.tag} | {_cell(s.kind.range_text())} | {_cell(default)}"
                f" | {_cell(s.doc)} | {_cell(s.ref)} |"
            )
        out.append("")
    return "\n".join(out)


def rule_settings_markdown() -> str:
    """Every rule setting: key, type, range, default, what it does, regulation, and why it has
    no effect at the defaults (when it has none)."""
    defaults = RuleSettings()
    out = [
        "| key | type | range | default | what | regulation | at the defaults |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for spec in RULE_SETTINGS:
        why = defaults.inactive_reason(spec.key)
        out.append(
            f"| `{spec.key}` | {spec.tag} | {_cell(spec.range_text())}"
            f" | {_cell(default_text(spec))} | {_cell(spec.doc)} | {_cell(spec.cite)}"
            f" | {_cell(f'inactive: {why}' if why else '')} |"
        )
    return "\n".join(out) + "\n"


GENERATED: Final = {
    "profile_settings_markdown": profile_settings_markdown,
    "rule_settings_markdown": rule_settings_markdown,
}


def section_pattern(name: str) -> re.Pattern[str]:
    """A generated section of the page: its opening comment, its text, its closing comment."""
    return re.compile(
        rf"(<!-- generated: {name} [^\n]*-->\n)(.*?)(<!-- end generated: {name} -->)", re.S
    )


def regenerate(text: str) -> str:
    """``text`` with every generated section made anew."""
    for name, make in GENERATED.items():
        made = make()

        def fill(m: re.Match[str], made: str = made) -> str:
            return m.group(1) + made + m.group(3)

        text, found = section_pattern(name).subn(fill, text)
        if found != 1:
            raise ValueError(f"docs/configuration.md has {found} generated sections {name}")
    return text


def main() -> int:
    DOC.write_text(regenerate(DOC.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"regenerated {', '.join(GENERATED)} in {DOC}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
