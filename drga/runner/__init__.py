"""The phase runner: Algorithm 1's phase table, the loop that runs any phase, the task interface and what its hooks receive."""

from drga.runner.context import RunContext
from drga.runner.loop import PhaseRunner
from drga.runner.phases import PHASES, Phase, phase_epochs, phase_plan
from drga.runner.task import ReportCell, Task, TaskBatches

__all__ = ["PhaseRunner", "PHASES", "Phase", "phase_epochs", "phase_plan", "Task", "TaskBatches", "ReportCell", "RunContext"]
