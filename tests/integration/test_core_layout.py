"""The DRGA core in one package (issue 56): the method in drga/core/, how a run uses its process in drga/runtime/,
TensorBoard's tags in drga/runner/tensorboard.py. Each earlier path still imports, warns, and gives the very objects
of the module it moved to; no code of the repository imports an earlier path any more."""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Each earlier path → the modules it re-exports (the first named in its warning).
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
def test_an_earlier_path_warns_and_gives_the_moved_objects(old, monkeypatch):
    new_modules = [importlib.import_module(new) for new in MOVED[old]]
    monkeypatch.delitem(sys.modules, old, raising=False)  # imported afresh, so that it warns here
    with pytest.warns(DeprecationWarning, match=rf"^{old} moved to {MOVED[old][0]}"):
        shim = importlib.import_module(old)
    for module in new_modules:
        public = [name for name in vars(module) if not name.startswith("_")]
        defined_there = [name for name in public if getattr(getattr(module, name), "__module__", None) == module.__name__]
        assert defined_there, module.__name__
        for name in public:
            assert getattr(shim, name) is getattr(module, name), f"{old}.{name}"


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
    shims = {ROOT / (old.replace(".", "/") + ".py") for old in MOVED}
    offenders = []
    for folder in ("drga", "agents", "baselines", "envs", "experiments", "bench", "tests", "docs-site"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path in shims:
                continue
            old_paths = _imported_modules(ast.parse(path.read_text(encoding="utf-8"))) & set(MOVED)
            offenders += [f"{path.relative_to(ROOT)}: {name}" for name in sorted(old_paths)]
    assert offenders == []
