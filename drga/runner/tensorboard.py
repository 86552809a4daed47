"""TensorBoard for comparing arms: one sibling run per arm, the same tags, one step axis.

A run folder's ``tb/`` holds ``tb/pretrain``, ``tb/baseline`` (the equal-budget baseline),
``tb/agent`` (agent pretraining) and ``tb/drga`` (co-training). Every run writes the same tag
for the same quantity, so TensorBoard draws the arms on one chart:

- ``dev/accuracy_net_only``, ``dev/accuracy_with_agent`` (and ``dev/<number>_<mode>``);
- ``train/task_loss`` and the other training statistics, every ``interval`` steps;
- ``agent/...``: how far the agent moves attention, its σ and entropy, the reward's terms.

The step of every run is its own count of updates since its phase began: network updates
for ``baseline`` and ``drga``, which both start from the same pretrained network, so the
equal-budget baseline and co-training line up step for step; agent updates for ``agent``.
``hparams(...)`` adds each arm's hyperparameters and final accuracies to the HParams tab.
A run writes these through its TensorBoard logger (:class:`drga.runner.loggers.TensorBoardLogger`,
on by default: ``run.report_to``).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from torch.utils.tensorboard import SummaryWriter

from drga.files import writing
from drga.names import PhaseName

#: The TensorBoard run (sub-folder of ``tb/``) of each phase, looked up by its :class:`PhaseName` or plain string.
ARMS: dict[str, str] = {PhaseName.PRETRAIN: "pretrain", PhaseName.BASELINE: "baseline", PhaseName.AGENT: "agent", PhaseName.COTRAIN: "drga"}

#: Training statistics that describe the agent: logged as ``agent/<name>``, the rest as ``train/<name>``.
AGENT_SIGNALS = (
    "reward", "reward_log_likelihood", "reward_penalty", "highlighted_fraction", "beta", "policy_sigma", "policy_entropy",
    "attention_shift", "zeroed_fraction", "advantage_std", "agent_loss", "grad_norm_agent",
)


def dev_tag(mode: str, key: str) -> str:
    """``dev/accuracy_net_only`` for mode ``net-only`` and key ``accuracy``."""
    return f"dev/{key}_{mode.replace('-', '_')}"


def train_tag(key: str) -> str:
    return f"agent/{key}" if key in AGENT_SIGNALS else f"train/{key}"


def event_file(writer: SummaryWriter) -> str:
    """The event file ``writer`` appends to (its folder where torch's writer does not say)."""
    events = getattr(writer.file_writer, "event_writer", None)
    return getattr(events, "_file_name", None) or writer.get_logdir()


class PhaseWriters:
    """One ``SummaryWriter`` per arm under ``folder``, opened when first written to."""

    def __init__(self, folder: Path, purge: Mapping[str, int] | None = None):
        self.folder = Path(folder)
        self.purge = dict(purge or {})  #: arm → step from which a resumed run's old events are dropped
        self._writers: dict[str, SummaryWriter] = {}

    def writer(self, phase: str) -> SummaryWriter:
        arm = ARMS.get(phase, phase)
        if arm not in self._writers:
            with writing(self.folder / arm):
                self._writers[arm] = SummaryWriter(str(self.folder / arm), purge_step=self.purge.get(arm))
        return self._writers[arm]

    @contextlib.contextmanager
    def events(self, phase: str) -> Iterator[SummaryWriter]:
        """The arm's writer, in :func:`drga.files.writing` of its event file (the event writer reports a failed write on
        its next call)."""
        writer = self.writer(phase)
        with writing(event_file(writer)):
            yield writer

    def scalars(self, phase: str, values: Mapping[str, Any], step: int, tag=train_tag) -> None:
        """Every finite number of ``values`` under ``tag(key)``."""
        with self.events(phase) as writer:
            for key, value in values.items():
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                    continue
                writer.add_scalar(tag(key), value, step)

    def dev(self, phase: str, scores: Mapping[str, Mapping[str, Any]], step: int, skip: tuple[str, ...] = ()) -> None:
        """Every mode's dev numbers as ``dev/<key>_<mode>``."""
        for mode, numbers in scores.items():
            self.scalars(phase, {k: v for k, v in numbers.items() if k not in skip}, step, tag=lambda key, m=mode: dev_tag(m, key))

    def image(self, phase: str, tag: str, image, step: int) -> None:
        with self.events(phase) as writer:
            writer.add_image(tag, image, step, dataformats="HWC")

    def text(self, phase: str, tag: str, text: str) -> None:
        with self.events(phase) as writer:
            writer.add_text(tag, text)

    def hparams(self, phase: str, hparams: Mapping[str, Any], metrics: Mapping[str, float]) -> None:
        """The arm's row of the HParams tab: the configuration and its final numbers."""
        values = {k: (v if isinstance(v, (int, float, str, bool)) else str(v)) for k, v in hparams.items()}
        with self.events(phase) as writer:  # add_hparams writes an event file of its own beside the arm's
            writer.add_hparams(values, dict(metrics), run_name=".")

    def flush(self) -> None:
        for writer in self._writers.values():
            with writing(event_file(writer)):
                writer.flush()

    def close(self) -> None:
        writers, self._writers = dict(self._writers), {}
        for writer in writers.values():
            with writing(event_file(writer)):
                writer.close()
