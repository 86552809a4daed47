"""The phase runner: Algorithm 1's phase table, the loop that runs any phase, the task interface and what its hooks receive.

Its names are imported when first used (PEP 562), so that a task's class (``drga/runner/task.py`` · ``Task``, which the
task registry imports to register it) can be read without loading torch: ``drga --help`` lists each task's commands.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from drga.runner.context import RunContext
    from drga.runner.loop import PhaseRunner
    from drga.runner.phases import PHASES, Phase, phase_epochs, phase_plan
    from drga.runner.task import ReportCell, Task, TaskBatches

#: Each name, and the module that defines it.
_NAMES = {
    "RunContext": "drga.runner.context", "PhaseRunner": "drga.runner.loop",
    **dict.fromkeys(("PHASES", "Phase", "phase_epochs", "phase_plan"), "drga.runner.phases"),
    **dict.fromkeys(("ReportCell", "Task", "TaskBatches"), "drga.runner.task"),
}

__all__ = ["PhaseRunner", "PHASES", "Phase", "phase_epochs", "phase_plan", "Task", "TaskBatches", "ReportCell", "RunContext"]


def __getattr__(name: str) -> Any:
    if name not in _NAMES:
        raise AttributeError(f"module 'drga.runner' has no attribute '{name}'")
    return getattr(importlib.import_module(_NAMES[name]), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
