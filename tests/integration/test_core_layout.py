"""The DRGA core in one package (issue 56): the method in drga/core/, how a run uses its process in drga/runtime/,
TensorBoard's tags in drga/runner/tensorboard.py. The earlier paths are gone (issue 63), and no code of the
repository imports one."""

from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Each earlier path → the modules that hold what it held.
MOVED = {
    "drga.state": ("drga.core.state",),
    "drga.adjust": ("drga.core.adjust",),
    "drga.reward": ("drga.core.reward",),
    "drga.beta": ("drga.core.beta",),
    "drga.rollout": ("drga.core.rollout",),
    "drga.scoring": ("drga.core.scoring",),
    "drga.building": ("drga.core.building", "drga.runtime.device"),
    "drga.distributed": ("drga.runtime.distributed",),
    "drga.allocator": ("drga.runtime.allocator",),
    "drga.run_lock": ("drga.runtime.run_lock",),
    "drga.eval_mode": ("drga.runtime.eval_mode",),
    "drga.monitor": ("drga.runner.tensorboard",),
}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_earlier_path_is_gone_and_its_module_is_where_it_moved(old):
    # issue 63: the twelve shims went (no release had them); the modules they pointed to are the only paths
    for new in MOVED[old]:
        importlib.import_module(new)
    assert importlib.util.find_spec(old) is None
    assert not (ROOT / (old.replace(".", "/") + ".py")).exists()


def _imported_modules(tree: ast.AST) -> set[str]:
    """Every module an import statement names, ``from drga import x`` read as ``drga.x``."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_no_code_of_the_repository_imports_an_earlier_path():
    offenders = []
    for folder in ("drga", "agents", "baselines", "envs", "experiments", "bench", "tests", "docs-site"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            old_paths = _imported_modules(ast.parse(path.read_text(encoding="utf-8"))) & set(MOVED)
            offenders += [f"{path.relative_to(ROOT)}: {name}" for name in sorted(old_paths)]
    assert offenders == []
