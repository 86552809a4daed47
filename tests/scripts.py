"""Import a script of experiments/ or bench/ (not packages) as a module, for tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_script(relative_path: str, name: str | None = None) -> ModuleType:
    """The script at ``relative_path`` from the repository root, imported under ``name`` (its stem by
    default) and registered in sys.modules, where dataclasses and pickling look their module up."""
    path = ROOT / relative_path
    name = name or path.stem
    if str(path.parent) not in sys.path:  # as `python <script>` does: its siblings (experiments/checkout.py) import
        sys.path.append(str(path.parent))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def data_root() -> Path | None:
    """The benchmark data's root folder (``DRGA_DATA``, ../shared/data, ...), None where none is found; here, not in
    conftest.py, so that tests/regression_runs.py reads it without importing the conftest (which imports it)."""
    from drga.data.locate import candidate_roots

    for root in candidate_roots():
        if (root / "README.md").exists() or (root / "subj").is_dir():
            return root
    return None
