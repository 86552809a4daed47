"""The ``analysis`` extra (``pip install 'drga[analysis]'``): scipy, captum and vaderSentiment, which only
``drga analyze``, ``drga compare`` and the study tables need, kept out of the base install.

:func:`needs_extra` imports one of its modules where an analysis first uses it, or says in one message
what to install (a :class:`~drga.errors.UserError`: exit status 2, no traceback).
"""

from __future__ import annotations

import importlib
from typing import Any

from drga.errors import UserError

#: The extra's packages, by the top-level module the analysis imports.
PACKAGES = {"scipy": "scipy", "captum": "captum", "vaderSentiment": "vaderSentiment", "statsmodels": "statsmodels"}


def needs_extra(module: str, purpose: str) -> Any:
    """``module`` imported (``"scipy.stats"``), or an error saying that ``purpose`` needs the analysis extra."""
    try:
        return importlib.import_module(module)
    except ImportError:
        package = PACKAGES.get(module.split(".", 1)[0], module.split(".", 1)[0])
        raise UserError(f"{purpose} needs {package}, from the analysis extra: pip install 'drga[analysis]'") from None


def require_extra(command: str, modules: tuple[str, ...] = ("scipy", "captum", "vaderSentiment")) -> None:
    """Before ``command`` starts: an error naming the analysis extra when one of its ``modules`` is not installed
    (looked up, not imported)."""
    import importlib.util

    missing = [PACKAGES.get(name, name) for name in modules if importlib.util.find_spec(name) is None]
    if missing:
        raise UserError(f"{command} needs {', '.join(missing)}, from the analysis extra: pip install 'drga[analysis]'")
