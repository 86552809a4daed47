"""No import cycles anywhere (issue 63): the package's are import-linter's (``make lint``); this checks the scripts of
experiments/ and bench/ and the tests' helpers, which import their siblings by name (a function's import counts too)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def sibling_imports(folder: Path) -> dict[str, set[str]]:
    """Each module of ``folder`` → the modules of ``folder`` it imports, anywhere in its file: the scripts of
    experiments/ and bench/ import their siblings by name (``import tuned_study``), the tests theirs by package
    (``from tests.integration.test_trainer import ...``, the groups' subfolders included)."""
    scripts = folder.name != "tests"
    paths = folder.glob("*.py") if scripts else folder.rglob("*.py")
    modules = {(path.stem if scripts else ".".join(path.relative_to(ROOT).with_suffix("").parts)): path for path in paths}
    graph = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name if not scripts else alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module if not scripts else node.module.split(".")[0])
        graph[name] = (found & set(modules)) - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    found, state = [], {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = "open"
        for other in sorted(graph[node]):
            if state.get(other) == "open":
                found.append([*path[path.index(other):], other])
            elif other not in state:
                visit(other, [*path, other])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


@pytest.mark.parametrize("folder", ["experiments", "bench", "tests"])
def test_the_scripts_import_each_other_without_a_cycle(folder):
    assert cycles(sibling_imports(ROOT / folder)) == []


def test_a_cycle_is_found():
    assert cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b", "a"]]
