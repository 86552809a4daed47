"""Algorithm 1 for text classification: :class:`Trainer` = the phase runner with the classification task.

The phases are ``drga/runner/phases.py``, the loop that runs them ``drga/runner/loop.py``, the
task's own parts ``drga/tasks/classification/task.py``; docs/architecture.md shows how they fit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from torch import nn

from drga.config import ExperimentConfig
from drga.runner.callbacks import Callback
from drga.runner.loop import PhaseRunner
from drga.runner.run_folder import log_info
from drga.tasks.classification.data import PreparedData
from drga.tasks.classification.task import ClassificationTask


class Trainer(PhaseRunner):
    """A classification run. ``force``: resume even when the data differ from the run's (their
    fingerprint is in every checkpoint). ``network`` and ``data`` (the Python API, drga/api.py): a
    network instance of the user's and prepared data, instead of those the configuration names. ``callbacks``:
    told what the run does (:mod:`drga.runner.callbacks`), after the loggers of ``run.report_to``."""

    def __init__(self, config: ExperimentConfig, resume: bool = False, overwrite: bool = False,
                 log: Callable[[str], None] = log_info, force: bool = False, network: nn.Module | None = None,
                 data: PreparedData | None = None, callbacks: Sequence[Callback] = ()):
        super().__init__(ClassificationTask(config, network, data), resume=resume, overwrite=overwrite, log=log, force=force,
                         callbacks=callbacks)

    @property
    def data(self) -> PreparedData:
        return self.task.data
