"""No two modules of the program import each other, directly or around a longer loop
(docs/architecture.md): a cycle makes the order of imports matter, hides which module is the
lower one, and is how a part grows a second way into itself. Function-level and TYPE_CHECKING
imports count too (a late import only hides the loop)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
TOPS = ("controller", "drivers")


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _targets(root: Path, path: Path, modules: set[str]) -> Iterator[str]:
    """The project's modules a file imports (``from pkg import mod`` names the module ``mod``)."""
    package = _module_name(root, path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            for alias in node.names:
                named = f"{module}.{alias.name}"
                yield named if named in modules else module


def import_graph(root: Path) -> dict[str, set[str]]:
    """module -> the project's modules it imports (a package's own parents left out: importing
    ``controller.program.boot`` runs ``controller/program/__init__.py``, which imports nothing)."""
    paths = {
        _module_name(root, path): path
        for top in TOPS
        if (root / top).is_dir()
        for path in sorted((root / top).rglob("*.py"))
    }
    modules = set(paths)
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        edges = set()
        for target in _targets(root, path, modules):
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name and not name.startswith(target + "."):
                edges.add(target)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            child = next(edges, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_the_program_has_no_import_cycle() -> None:
    assert cycles(import_graph(ROOT)) == []


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


@pytest.mark.parametrize(
    ("files", "cycle"),
    [
        (  # the shape the program's boot check and manifest had: a late import back
            {
                "controller/program/__init__.py": "",
                "controller/program/boot.py": "from controller.program import manifest as mf\n",
                "controller/program/manifest.py": "def root():\n"
                "    from controller.program.boot import release_root\n",
            },
            ["controller.program.boot", "controller.program.manifest"],
        ),
        (  # three modules around, with a relative import
            {
                "controller/a/__init__.py": "",
                "controller/a/x.py": "from . import y\n",
                "controller/a/y.py": "import controller.b.z\n",
                "controller/b/__init__.py": "",
                "controller/b/z.py": "from controller.a.x import thing\n",
            },
            ["controller.a.x", "controller.a.y", "controller.b.z"],
        ),
        (  # a TYPE_CHECKING import counts
            {
                "drivers/p.py": "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from drivers.q import Q\n",
                "drivers/q.py": "import drivers.p\n",
            },
            ["drivers.p", "drivers.q"],
        ),
    ],
)
def test_a_cycle_is_found(tmp_path: Path, files: dict[str, str], cycle: list[str]) -> None:
    assert cycles(import_graph(_tree(tmp_path, files))) == [cycle]


def test_a_chain_is_not_a_cycle(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "controller/program/__init__.py": "",
            "controller/program/origin.py": "import os\n",
            "controller/program/manifest.py": "from controller.program.origin import root\n",
            "controller/program/boot.py": "from controller.program import manifest, origin\n",
        },
    )
    graph = import_graph(root)
    assert graph["controller.program.boot"] == {
        "controller.program.manifest",
        "controller.program.origin",
    }
    assert cycles(graph) == []
