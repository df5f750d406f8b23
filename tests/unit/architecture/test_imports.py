"""The import rules of docs/architecture.md, enforced: each part of the program may import only
the parts the table below names. Rules import nothing of the application; drivers never judge
(they import nothing of the controller); only the wiring knows whether a device is simulated
(nothing but the wiring imports ``drivers.sim``)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

#: The wiring: these modules at controller/'s top assemble the parts and may import anything.
WIRING = frozenset({"app", "cli", "__main__", "devices", "events", "sdnotify", "__init__"})

#: Leaf parts every part of the controller may import (not the drivers, which import no part).
LEAVES = frozenset({"controller.fields"})

#: part -> the parts it may import (besides itself, the standard library and third parties).
ALLOWED: dict[str, frozenset[str]] = {
    "controller.games": frozenset(),
    "controller.events": frozenset(),
    "controller.journal": frozenset(),
    "controller.rng": frozenset(),
    "controller.config": frozenset({"controller.games"}),
    "controller.program": frozenset({"controller.config"}),
    "controller.tables": frozenset(
        {
            "controller.games",
            "controller.journal",
            "controller.config",
            "controller.rng",
            "controller.events",
            "drivers",
        }
    ),
    "controller.console": frozenset(
        {
            "controller.games",
            "controller.journal",
            "controller.config",
            "controller.rng",
            "controller.program",
            "controller.tables",
            "controller.events",
            "controller.lab",
            "controller.floor",
        }
    ),
    # the host's commands: checked against the journal's canonical JSON and key ids, obeyed
    # through the tables' play gate, answered through the feed, verified as the program's
    "controller.floor": frozenset(
        {
            "controller.games",
            "controller.rng",
            "controller.journal",
            "controller.tables",
            "controller.feed",
            "controller.program",
        }
    ),
    "controller.feed": frozenset({"controller.journal", "controller.config"}),
    "controller.lab": frozenset(
        {
            "controller.games",
            "controller.journal",
            "controller.config",
            "controller.rng",
            "controller.program",
            "controller.floor",
        }
    ),
    "controller.scoreboard": frozenset({"controller.games", "controller.config"}),
    # the loop's faults and waiting replies: plain holders, importing nothing of the program
    "controller.loop": frozenset(),
    # the start-up checks: the journal's trust, the install log, the settings replayed, the
    # program's files, the RNG's start-up test
    "controller.startup": frozenset(
        {"controller.journal", "controller.config", "controller.program", "controller.rng"}
    ),
    # typed readers of decoded JSON: a leaf that imports no other part
    "controller.fields": frozenset(),
    "drivers": frozenset(),
    "drivers.sim": frozenset({"drivers"}),
}


def part_of(module: str) -> str | None:
    """The part a dotted module name belongs to; None for the wiring and for third parties."""
    names = module.split(".")
    if names[0] == "drivers":
        return "drivers.sim" if len(names) > 1 and names[1] == "sim" else "drivers"
    if names[0] != "controller":
        return None
    if len(names) > 1 and names[1] == "events":  # the loop's event types: data, no imports
        return "controller.events"
    if len(names) == 1 or names[1] in WIRING:
        return "controller.<wiring>" if len(names) > 1 else "controller"
    return f"controller.{names[1]}"


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(root: Path, path: Path) -> Iterator[tuple[int, str]]:
    """Every module a file imports (function-level and TYPE_CHECKING imports included),
    relative imports resolved against the file's package."""
    tree = ast.parse(path.read_text(), str(path))
    package = _module_name(root, path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            if module in ("controller", "drivers"):  # `from controller import app`
                for alias in node.names:
                    yield node.lineno, f"{module}.{alias.name}"
            else:
                yield node.lineno, module


def violations(root: Path) -> list[str]:
    """Each import under ``root``'s controller/ and drivers/ that the rules forbid."""
    found: list[str] = []
    for top in ("controller", "drivers"):
        for path in sorted((root / top).rglob("*.py")):
            source = part_of(_module_name(root, path))
            if source is None or source.startswith("controller.<wiring>") or source == "controller":
                continue
            allowed = ALLOWED.get(source)
            rel = path.relative_to(root).as_posix()
            if allowed is None:
                found.append(f"{rel}: part {source} is not in the rules (docs/architecture.md)")
                continue
            for line, module in _imports(root, path):
                target = part_of(module)
                if target is None or target == source or target in allowed:
                    continue
                if target in LEAVES and source.startswith("controller."):
                    continue
                found.append(
                    f"{rel}:{line}: {source} imports {module} ({target});"
                    f" {source} may import {sorted(allowed) or 'no other part'}"
                )
    return found


def test_the_program_keeps_the_import_rules() -> None:
    assert violations(ROOT) == []


def test_controller_holds_only_parts_and_wiring() -> None:
    top = {p.stem for p in (ROOT / "controller").glob("*.py")}
    assert top <= WIRING, f"modules at controller/'s top that belong in a part: {top - WIRING}"
    parts = {
        p.name
        for p in (ROOT / "controller").iterdir()
        if p.is_dir() and (p / "__init__.py").exists()
    }
    assert {f"controller.{p}" for p in parts} <= set(ALLOWED)


def test_no_class_inherits_from_two_project_mixins() -> None:
    """Composition over inheritance: no class of the project's own is built from more than one
    project base class (docs/architecture.md)."""
    project_classes: set[str] = set()
    trees = []
    for top in ("controller", "drivers"):
        for path in (ROOT / top).rglob("*.py"):
            tree = ast.parse(path.read_text())
            trees.append((path, tree))
            project_classes |= {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    offenders = []
    for path, tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                own = [
                    b.id for b in node.bases if isinstance(b, ast.Name) and b.id in project_classes
                ]
                if len(own) > 1 or any(name.endswith("Mixin") for name in own):
                    offenders.append(f"{path.relative_to(ROOT)}: {node.name}({', '.join(own)})")
    assert offenders == []


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for pkg in ("controller", "drivers"):
        (tmp_path / pkg).mkdir(exist_ok=True)
    return tmp_path


@pytest.mark.parametrize(
    ("name", "source", "needle"),
    [
        (
            "controller/games/paigow/rules.py",
            "from controller.tables.table import Refused\n",
            "controller.games imports controller.tables.table",
        ),
        (
            "controller/games/baccarat/roads.py",
            "import drivers.serial_shoe\n",
            "controller.games imports drivers.serial_shoe",
        ),
        (
            "drivers/buttons.py",
            "from controller.games import paigow\n",
            "drivers imports controller.games",
        ),
        (
            "drivers/gpio.py",
            "from drivers.sim.gpio import SimGPIO\n",
            "drivers imports drivers.sim",
        ),
        (
            "controller/tables/baccarat/table.py",
            "def f():\n    from drivers.sim.shoe import SimShoe\n",
            "controller.tables imports drivers.sim.shoe",
        ),
        (
            "controller/tables/paigow/table.py",
            "from controller import app\n",
            "controller.tables imports controller.app",
        ),
        (
            "controller/journal/store.py",
            "from ..tables import table\n",
            "controller.journal imports controller.tables",
        ),
        (
            "controller/scoreboard/server.py",
            "from controller.tables.baccarat.table import X\n",
            "controller.scoreboard imports controller.tables",
        ),
        (
            "controller/feed/publisher.py",
            "from controller.tables.table import Refused\n",
            "controller.feed imports controller.tables",
        ),
        ("controller/newpart/x.py", "import os\n", "part controller.newpart is not in the rules"),
    ],
)
def test_a_broken_rule_is_reported(tmp_path: Path, name: str, source: str, needle: str) -> None:
    root = _tree(tmp_path, {name: source})
    found = violations(root)
    assert len(found) == 1 and needle in found[0], found


def test_allowed_imports_are_not_reported(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "controller/tables/paigow/table.py": "from controller.games.paigow import tile\n"
            "from drivers.buttons import ButtonPressed\n"
            "from . import machine\nimport os\n",
            "controller/devices.py": "from drivers.sim.shoe import SimShoe\n",
            "drivers/sim/gpio.py": "from drivers.errors import PinError\n",
        },
    )
    assert violations(root) == []


# -- the table kernel's seams (docs/architecture.md "The table kernel") -------------------------

#: The kernel's modules: the only table code that may know the journal's transactions and the
#: simulator's pins and clock (controller/tables/kernel).
KERNEL = "controller/tables/kernel"
#: What only the simulator has: a table that names one reaches the simulator itself.
SIMULATOR_ONLY = frozenset({"drive", "clock", "advance"})


def kernel_violations(root: Path) -> list[str]:
    """Each place under ``root``'s controller/tables/ (outside the kernel) that reads the
    journal's transaction number, or reaches the simulator other than through the
    simulator-controls handle (``devices.sim``): a simulator-only attribute, a ``hasattr``
    probe of a device, an import of ``drivers.sim``."""
    found: list[str] = []
    for path in sorted((root / "controller" / "tables").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(KERNEL + "/"):
            continue
        tree = ast.parse(path.read_text(), rel)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "transaction_number":
                found.append(f"{rel}:{node.lineno}: reads the journal's transaction_number")
            elif isinstance(node, ast.Attribute) and node.attr in SIMULATOR_ONLY:
                found.append(f"{rel}:{node.lineno}: reaches the simulator (.{node.attr})")
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "hasattr"
                and len(node.args) == 2
                and isinstance(node.args[1], ast.Constant)
                and node.args[1].value in SIMULATOR_ONLY
            ):
                found.append(f"{rel}:{node.lineno}: probes for the simulator (hasattr)")
        for line, module in _imports(root, path):
            if module == "drivers.sim" or module.startswith("drivers.sim."):
                found.append(f"{rel}:{line}: imports the simulator ({module})")
    return found


def console_game_imports(root: Path) -> list[str]:
    """Each import of a game's rules (controller.games) by a console module: the console holds
    no game commands, the tables do."""
    found: list[str] = []
    for path in sorted((root / "controller" / "console").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for line, module in _imports(root, path):
            if module == "controller.games" or module.startswith("controller.games."):
                found.append(f"{rel}:{line}: the console imports a game ({module})")
    return found


def test_tables_keep_the_kernels_seams() -> None:
    assert kernel_violations(ROOT) == []


def test_no_console_module_imports_a_game() -> None:
    assert console_game_imports(ROOT) == []


@pytest.mark.parametrize(
    "name, source, needle",
    [
        (
            "controller/tables/paigow/table.py",
            "def f(j):\n    return j.transaction_number\n",
            "transaction_number",
        ),
        (
            "controller/tables/third/table.py",
            "def f(gpio):\n    gpio.drive(4, 0)\n",
            "reaches the simulator (.drive)",
        ),
        (
            "controller/tables/third/table.py",
            "def f(gpio):\n    return hasattr(gpio, 'drive')\n",
            "probes for the simulator",
        ),
        (
            "controller/tables/baccarat/x.py",
            "from drivers.sim.shoe import SimShoe\n",
            "imports the simulator",
        ),
    ],
)
def test_a_broken_kernel_seam_is_reported(
    tmp_path: Path, name: str, source: str, needle: str
) -> None:
    root = _tree(tmp_path, {name: source})
    found = kernel_violations(root)
    assert any(needle in f for f in found), found


def test_the_kernel_may_hold_the_seams(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "controller/tables/kernel/press.py": "def f(gpio):\n    gpio.drive(4, 0)\n",
            "controller/tables/kernel/unit_of_work.py": "def f(j):\n"
            "    return j.transaction_number\n",
        },
    )
    assert kernel_violations(root) == []


def test_a_console_importing_a_game_is_reported(tmp_path: Path) -> None:
    root = _tree(
        tmp_path, {"controller/console/x.py": "from controller.games.paigow import houseway\n"}
    )
    assert console_game_imports(root) == [
        "controller/console/x.py:1: the console imports a game (controller.games.paigow)"
    ]


def untyped_lines(root: Path) -> list[str]:
    """Each line of controller/ and drivers/ that names ``Any`` without a reason on the line."""
    found = []
    for top in ("controller", "drivers"):
        for path in sorted((root / top).rglob("*.py")):
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if re.search(r"\bAny\b", line) and "# untyped:" not in line:
                    found.append(f"{path.relative_to(root).as_posix()}:{n}: {line.strip()}")
    return found


def test_the_seams_are_typed() -> None:
    """The parts meet through typed interfaces: ``Any`` only where a line says why
    (``# untyped: ...``), and fewer than 60 such lines in all."""
    assert untyped_lines(ROOT) == []
    reasons = [
        line
        for top in ("controller", "drivers")
        for path in (ROOT / top).rglob("*.py")
        for line in path.read_text().splitlines()
        if re.search(r"\bAny\b", line)
    ]
    assert len(reasons) < 60


def test_an_untyped_line_without_a_reason_is_reported(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "controller/feed/x.py": "from typing import Any\n",
            "drivers/y.py": "def f(x: Any) -> None:  # untyped: a library callback\n    ...\n",
        },
    )
    assert untyped_lines(root) == ["controller/feed/x.py:1: from typing import Any"]
