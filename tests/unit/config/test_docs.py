"""docs/configuration.md stays true: its tables of settings are the declarations'
(controller/config/markdown.py), every key its example profile shows is a declared setting, and
every declaration carries what a reader needs (a reference, a line of what it does)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from controller.config import markdown
from controller.config.declare import declared
from controller.config.profile import PROFILE_GROUPS
from controller.config.settings import RULE_SETTINGS, SETTING_KEYS

DOC = Path(__file__).resolve().parents[3] / "docs" / "configuration.md"
#: Tables in the example whose keys are names the game fixes, not settings (pins).
NAMED_PINS = ("devices.display.pins", "devices.buttons.pins", "devices.seat_lamps.pins")


def generated(name: str) -> str:
    match = markdown.section_pattern(name).search(DOC.read_text(encoding="utf-8"))
    assert match, f"no generated section {name} in {DOC}"
    return match.group(2)


@pytest.mark.parametrize("name", sorted(markdown.GENERATED))
def test_the_generated_tables_are_the_declarations(name: str) -> None:
    assert generated(name) == markdown.GENERATED[name](), (
        f"docs/configuration.md's {name} differs from the declarations:"
        " run python -m controller.config.markdown"
    )


def test_every_declared_setting_is_in_the_tables() -> None:
    profile = generated("profile_settings_markdown")
    for group, cls in PROFILE_GROUPS:
        heading = f"`[{group}]`" if group else "top level"
        part = profile.split(heading, 1)[1].split("\n\n`[", 1)[0]
        for d in declared(cls):
            assert f"| `{d.name}` |" in part, (group, d.name)
    rules = generated("rule_settings_markdown")
    assert [line.split("`")[1] for line in rules.splitlines()[2:]] == list(SETTING_KEYS)


def example_keys() -> list[str]:
    """The dotted keys the page's example profile sets (commented-out keys included)."""
    text = DOC.read_text(encoding="utf-8")
    block = text.split("## Profile format", 1)[1].split("```toml\n", 1)[1].split("```", 1)[0]
    keys: list[str] = []
    table = ""
    for line in block.splitlines():
        header = re.match(r"\[([a-z_.]+)\]", line)
        if header:
            table = header.group(1)
            continue
        key = re.match(r"#?\s?([a-z_0-9]+) = ", line)
        if key and not line.startswith(" "):
            keys.append(f"{table}.{key.group(1)}" if table else key.group(1))
    return keys


def test_every_key_of_the_example_is_a_setting() -> None:
    keys = example_keys()
    assert len(keys) >= 40, keys  # the example shows most of a profile
    known = {
        f"{group}.{d.name}" if group else d.name
        for group, cls in PROFILE_GROUPS
        for d in declared(cls)
    }
    known |= {f"rules.{k}" for k in SETTING_KEYS} | {"include", *NAMED_PINS}
    assert [k for k in keys if k not in known] == []


def test_every_declaration_says_where_it_comes_from_and_what_it_does() -> None:
    for group, cls in PROFILE_GROUPS:
        for d in declared(cls):
            assert d.spec.ref and d.spec.doc, (group, d.name)
    for spec in RULE_SETTINGS:
        # a rule setting cites the regulation: a section such as 5324.50(f)(10) or 13:69F-10.7
        assert re.search(r"\d+\.\d+|13:69F", spec.cite), spec.key
        assert spec.doc, spec.key
        assert "issue" not in spec.cite.lower(), spec.key


def test_a_changed_declaration_shows_as_a_diff(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above would see a setting whose range changed."""
    from controller.config import settings

    first = settings.RULE_SETTINGS[0]
    changed = (first.__class__(first.key, first.kind, "another reference", first.doc),)
    monkeypatch.setattr(markdown, "RULE_SETTINGS", changed + settings.RULE_SETTINGS[1:])
    assert markdown.rule_settings_markdown() != generated("rule_settings_markdown")


FEED = '[feed]\nbroker = "mqtt://127.0.0.1:1883"\nsite = "s1"\n'
POWER_FAIL = "[devices.power_fail]\npin = 10\n"
DOOR = "[devices.door]\npin = 3\n"


def _startpos_base() -> str:
    """The shipped Asia poker profile without its ``[startpos]`` table (the test writes it)."""
    text = (Path(__file__).parents[3] / "hw_profiles" / "sim-asia-poker.toml").read_text()
    return text[: text.index("[startpos]")] + text[text.index("[devices.display]") :]


@pytest.mark.parametrize(
    ("group", "name", "default"),
    [
        (group, d.name, d.default)
        for group, cls in PROFILE_GROUPS
        for d in declared(cls)
        if group and not d.required and d.default is not None
    ],
    ids=lambda v: str(v),
)
def test_every_declared_profile_setting_is_read(
    tmp_path: Path, group: str, name: str, default: object
) -> None:
    """Declared is read: each setting written into a profile (at its default) is taken from
    the file, not refused as an unknown key nor left unread."""
    from controller.config.declare import toml_text
    from controller.config.profile import check_profile_report
    from tests.unit.config.test_profile import BACCARAT, PAIGOW, write

    value = default.isoformat() if hasattr(default, "isoformat") else toml_text(default)
    if isinstance(default, int) and not isinstance(default, bool):
        value = str(default)
    base = BACCARAT if group in ("devices.shoe", "devices.dealer_display") else PAIGOW
    base = _startpos_base() if group == "startpos" else base
    extra = {"feed": FEED, "devices.power_fail": POWER_FAIL, "devices.door": DOOR}.get(group, "")
    write(tmp_path, "base.toml", base + extra)
    needs = "pins = { 1 = 23 }\n" if group == "devices.seat_lamps" else ""  # its required key
    f = write(tmp_path, "t.toml", f'include = "base.toml"\n[{group}]\n{name} = {value}\n{needs}')
    report = check_profile_report(f)
    (line,) = [ln for ln in report.splitlines() if ln.strip().startswith(f"{group}.{name} = ")]
    assert line.endswith(f"# {f}"), line
