"""A classification run: the phase runner (``drga/runner/loop.py``) with :class:`ClassificationTask`."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from drga.baselines.protocol import AttentionNetwork
from drga.config import ExperimentConfig
from drga.runner.callbacks import Callback
from drga.runner.loop import PhaseRunner
from drga.runner.run_folder import log_info
from drga.tasks.classification.data import PreparedData
from drga.tasks.classification.task import ClassificationTask

__all__ = ["Trainer"]


class Trainer(PhaseRunner):
    """A classification run. ``force``: resume even when the data differ from the run's (their
    fingerprint is in every checkpoint). ``network`` and ``data`` (the Python API, drga/api.py): a
    network instance of the user's and prepared data, instead of those the configuration names. ``callbacks``:
    told what the run does (:mod:`drga.runner.callbacks`), after the loggers of ``run.report_to``. ``task_class``: a
    subclass of :class:`ClassificationTask` registered as a task of its own (its ``trainer``)."""

    task: ClassificationTask

    def __init__(self, config: ExperimentConfig, resume: bool = False, overwrite: bool = False,
                 log: Callable[[str], None] = log_info, force: bool = False, network: AttentionNetwork | None = None,
                 data: PreparedData | None = None, callbacks: Sequence[Callback] = (),
                 task_class: type[ClassificationTask] = ClassificationTask):
        super().__init__(task_class(config, network, data), resume=resume, overwrite=overwrite, log=log, force=force,
                         callbacks=callbacks)

    @property
    def data(self) -> PreparedData:
        return self.task.data
