"""The pre-commit hooks run what ./run-tests runs before pytest: the same tools (ruff check, ruff
format, mypy) on the same files, from the project's .venv with the versions the test extra pins,
and nothing a hook would download. A path added to one and not the other fails here."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CONFIG = ROOT / ".pre-commit-config.yaml"
RUN_TESTS = ROOT / "run-tests"
SKIP_DIRS = {".venv", ".git", "build", "dist", "__pycache__", ".mypy_cache", ".ruff_cache"}


def hooks(text: str) -> list[dict[str, str]]:
    """The hooks of a pre-commit configuration, each as its ``key: value`` lines (the file is
    plain block YAML: one hook per ``- id:`` item)."""
    found: list[dict[str, str]] = []
    for line in text.splitlines():
        item = re.match(r"\s*-\s+id:\s*(\S+)", line)
        if item:
            found.append({"id": item.group(1)})
            continue
        pair = re.match(r"\s+(\w+):\s*(.*?)\s*$", line)
        if pair and found and not line.lstrip().startswith("#"):
            found[-1][pair.group(1)] = pair.group(2)
    return found


def run_tests_commands(text: str) -> dict[str, list[str]]:
    """What ./run-tests runs before pytest: tool ("ruff check", "ruff format", "mypy") -> its
    path arguments."""
    commands: dict[str, list[str]] = {}
    for line in text.splitlines():
        for part in line.split(";"):
            words = shlex.split(part.strip()) if part.strip() else []
            if words[:2] in (["ruff", "check"], ["ruff", "format"]):
                commands[" ".join(words[:2])] = [w for w in words[2:] if not w.startswith("-")]
            elif words[:1] == ["mypy"]:
                commands["mypy"] = [w for w in words[1:] if not w.startswith("-")]
    return commands


def hook_tool(entry: str) -> tuple[str, list[str]]:
    """(tool, path arguments) of a hook's entry (``.venv/bin/ruff check --x`` -> "ruff check")."""
    words = shlex.split(entry)
    program = Path(words[0]).name
    rest = words[1:]
    if program == "ruff":
        return f"ruff {rest[0]}", [w for w in rest[1:] if not w.startswith("-")]
    return program, [w for w in rest if not w.startswith("-")]


def candidates(root: Path) -> set[str]:
    """Every Python file of the tree (by suffix or by a python shebang), relative, ``/``-joined."""
    found: set[str] = set()
    for path in root.rglob("*"):
        if not path.is_file() or SKIP_DIRS & set(path.relative_to(root).parts):
            continue
        rel = path.relative_to(root).as_posix()
        if path.suffix == ".py":
            found.add(rel)
        elif not path.suffix:
            with path.open("rb") as f:
                if re.match(rb"#![^\n]*python", f.readline()):
                    found.add(rel)
    return found


def covered(paths: list[str], files: set[str]) -> set[str]:
    """What a tool given ``paths`` checks: the ``.py`` files under each folder, a file as named."""
    out: set[str] = set()
    for name in paths:
        if (ROOT / name).is_dir():
            out |= {f for f in files if f.startswith(name.rstrip("/") + "/") and f.endswith(".py")}
        else:
            out.add(name)
    return out


def test_hooks_are_local_and_download_nothing() -> None:
    text = CONFIG.read_text()
    repos = re.findall(r"^\s*-\s+repo:\s*(\S+)", text, re.MULTILINE)
    assert repos == ["local"]
    assert "additional_dependencies" not in text
    for hook in hooks(text):
        assert hook["language"] == "system", hook
        assert hook["entry"].startswith(".venv/bin/"), hook


def test_hooks_run_the_tools_and_paths_of_run_tests() -> None:
    ours = run_tests_commands(RUN_TESTS.read_text())
    assert set(ours) == {"ruff check", "ruff format", "mypy"}, ours
    files = candidates(ROOT)
    theirs: dict[str, set[str]] = {}
    for hook in hooks(CONFIG.read_text()):
        tool, args = hook_tool(hook["entry"])
        if hook.get("pass_filenames") == "false":
            assert args == ours[tool], (hook["id"], args, ours[tool])
            selected = covered(args, files)
        else:
            assert args == [], hook  # the files come from pre-commit, chosen by `files`
            selected = covered(ours[tool], files)
        pattern = re.compile(hook["files"])
        chosen = {f for f in files if pattern.search(f)}
        assert chosen == selected, (hook["id"], sorted(chosen ^ selected)[:10])
        theirs[tool] = chosen
    assert set(theirs) == set(ours)
    assert theirs["ruff check"] == covered(ours["ruff check"], files)
    assert theirs["ruff format"] == covered(ours["ruff format"], files)
    assert {"controller/app.py", "scripts/build-release"} <= theirs["mypy"]


def test_the_hooks_tools_are_pinned() -> None:
    test_extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]["test"]
    pins = {re.split(r"[=<>~!\[;]", spec)[0]: spec for spec in test_extra}
    assert re.fullmatch(r"ruff==[\d.]+", pins["ruff"]), pins["ruff"]
    assert re.fullmatch(r"mypy==[\d.]+", pins["mypy"]), pins["mypy"]


def test_the_readers_see_a_mismatch() -> None:
    config = """repos:
  - repo: local
    hooks:
      - id: mypy
        entry: .venv/bin/mypy controller
        files: ^controller/
        pass_filenames: false
"""
    (hook,) = hooks(config)
    assert hook_tool(hook["entry"]) == ("mypy", ["controller"])
    ours = run_tests_commands('echo "== mypy"; mypy controller drivers scripts/build-release\n')
    assert ours == {"mypy": ["controller", "drivers", "scripts/build-release"]}
    assert hook_tool(hook["entry"])[1] != ours["mypy"]  # the test above would fail on it
