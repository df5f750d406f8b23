"""A part that is not installed is never passed over silently: under TC_REQUIRE_SERVICES (as
.ci/run sets it) the fixture fails; without it, the test is skipped with the package's name."""

from __future__ import annotations

import pytest

from tests.services import _common, chromium, mosquitto, postgres, softhsm, swtpm

FIXTURES = [
    ("mosquitto_broker", mosquitto, "find_mosquitto", "'mosquitto'"),
    ("postgres_server", postgres, "find_bin_dir", "'postgresql'"),
    ("softhsm_token", softhsm, "find_util", "'softhsm2'"),
    ("softhsm_token", softhsm, "find_module", "'softhsm2'"),
    ("chromium_browser", chromium, "find_chromium", "'chromium'"),
    ("chromium_browser", chromium, "find_chromedriver", "'chromium-driver'"),
    ("swtpm_tpm", swtpm, "find_swtpm", "'swtpm'"),
    ("swtpm_tpm", swtpm, "find_tpm2_tools", "'tpm2-tools'"),
]
# every finder a fixture asks, so that only the one under test is missing (whatever is installed)
FINDERS = {
    mosquitto: ["find_mosquitto"],
    postgres: ["find_bin_dir"],
    softhsm: ["find_util", "find_module"],
    chromium: ["find_chromium", "find_chromedriver"],
    swtpm: ["find_swtpm", "find_tpm2_tools"],
}


def _only_missing(monkeypatch: pytest.MonkeyPatch, module: object, finder: str) -> None:
    for name in FINDERS[module]:  # type: ignore[index]
        monkeypatch.setattr(module, name, lambda: "/nonexistent/present")
    monkeypatch.setattr(module, finder, lambda: None)


@pytest.mark.parametrize(
    ("value", "part", "expected"),
    [
        ("", "mosquitto", False),
        ("0", "mosquitto", False),
        ("1", "mosquitto", True),
        ("all", "chromium", True),
        ("mosquitto,postgres", "postgres", True),
        ("mosquitto,postgres", "chromium", False),
        (" softhsm ", "softhsm", True),
        ("mosquitto,postgres,softhsm", "swtpm", False),  # the arm64 leg's list: swtpm skips there
    ],
)
def test_which_parts_are_required(
    monkeypatch: pytest.MonkeyPatch, value: str, part: str, expected: bool
) -> None:
    monkeypatch.setenv(_common.REQUIRE_ENV, value)
    assert _common.required(part) is expected


@pytest.mark.parametrize(("fixture", "module", "finder", "package"), FIXTURES)
def test_a_missing_part_fails_when_required(
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    fixture: str,
    module: object,
    finder: str,
    package: str,
) -> None:
    _only_missing(monkeypatch, module, finder)
    monkeypatch.setenv(_common.REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match=f"install the Debian package {package}"):
        request.getfixturevalue(fixture)


@pytest.mark.parametrize(("fixture", "module", "finder", "package"), FIXTURES)
def test_a_missing_part_skips_loudly_otherwise(
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    fixture: str,
    module: object,
    finder: str,
    package: str,
) -> None:
    _only_missing(monkeypatch, module, finder)
    monkeypatch.delenv(_common.REQUIRE_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception, match=f"MISSING PART.*{package}"):
        request.getfixturevalue(fixture)
    assert "MISSING PART" in capsys.readouterr().err
