"""Every module of the package imports on its own, first, in a fresh interpreter: no import cycle hides behind
the order in which ``mnemonite/__init__`` happens to load things (the CLI imports some modules lazily)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import mnemonite

SCRIPT = """
import importlib, pkgutil, sys
import mnemonite
names = sorted(m.name for m in pkgutil.walk_packages(mnemonite.__path__, "mnemonite."))
failed = []
for name in names:
    for loaded in [m for m in sys.modules if m == "mnemonite" or m.startswith("mnemonite.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as error:
        failed.append(f"{name}: {type(error).__name__}: {error}")
print(len(names))
print("\\n".join(failed))
"""


def test_every_module_imports_first() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300, check=True)
    count, *failed = done.stdout.strip().splitlines()
    assert int(count) > 100
    assert failed == []


def _imports(root: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports anywhere (at the top, in a function, for type checking only)."""
    modules: dict[str, Path] = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(
                        package.split(".")[: len(package.split(".")) - node.level + 1] + [base] * bool(base)
                    )
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names
                ]
            graph[name] |= {found for t in targets if (found := known(t)) and found != name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of the graph, or []."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(name: str) -> list[str]:
        state[name] = 1
        path.append(name)
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        state[name] = 2
        path.pop()
        return []

    for name in sorted(graph):
        if name not in state and (found := visit(name)):
            return found
    return []


def test_no_module_of_the_package_imports_itself_round_a_circle() -> None:
    """Even imports made for type checking or inside a function count: the tools reach memory through a
    protocol (`mnemonite.tools.reach`), the version lives in a module of its own."""
    graph = _imports(Path(mnemonite.__file__).parent)
    assert "mnemonite.memory" not in {
        t for name, targets in graph.items() if name.startswith("mnemonite.tools") for t in targets
    }
    assert _cycle(graph) == []


def test_the_cycle_finder_finds_one() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) == []
