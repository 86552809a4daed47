"""What a run saves: model checkpoints (``<phase>_best.pt``) and the resume checkpoint (``last.pt``).

Both hold the three modules DRGA trains (network, agent, β) with their sizes and the run's
configuration; ``last.pt`` adds the progress, the history, the optimisers, the learning-rate
schedule's plateau cuts and the random state, so that a resumed run reproduces an uninterrupted one exactly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from drga.baselines.protocol import AttentionNetwork
from drga.checkpoint_format import CheckpointError, CheckpointPayload, load_module_state
from drga.core.beta import AdjustmentStrength
from drga.core.policy import StatePolicy
from drga.names import Split
from drga.records import EpochRecord, ReportRow


@dataclass
class RetrofitModules:
    """The network, the agent's policy and the adjustment strength β, with the sizes that rebuild them."""

    network: AttentionNetwork
    policy: StatePolicy
    strength: AdjustmentStrength
    state_size: int
    action_size: int


@dataclass
class PhaseProgress:
    index: int = 0  #: index into the run's phase plan
    epoch: int = 0  #: epochs of that phase completed
    done: bool = False
    best: tuple[float, ...] | None = None  #: selection key of the best epoch (e.g. dev accuracy, dev reward)
    stale: int = 0  #: epochs since the best
    #: Co-training: the best key of each dev mode other than the selecting one, whose own best
    #: epoch is kept too (``<phase>_best_<mode>.pt``), so every reported row is selected in its own mode.
    best_by_mode: dict[str, tuple[float, ...]] = field(default_factory=dict)
    start_step: int = 0  #: the run's global step when the phase began (TensorBoard's axis counts from it)

    def to_dict(self) -> dict[str, Any]:
        saved = vars(self).copy()
        saved["best"] = list(self.best) if self.best else None
        saved["best_by_mode"] = {mode: list(key) for mode, key in self.best_by_mode.items()}
        return saved

    @classmethod
    def from_dict(cls, saved: Mapping[str, Any]) -> PhaseProgress:
        return cls(
            index=saved["index"], epoch=saved["epoch"], done=saved["done"],
            best=tuple(saved["best"]) if saved["best"] else None, stale=saved["stale"],
            best_by_mode={mode: tuple(key) for mode, key in saved.get("best_by_mode", {}).items()},
            start_step=int(saved.get("start_step", 0)),
        )


def model_payload(
    modules: RetrofitModules, phase: str, has_agent: bool, epoch: int, dev: Mapping[str, Any], config: dict[str, Any],
    net_name: str, task: str, task_content: Mapping[str, Any], plateau_cuts: int | None = None,
) -> CheckpointPayload:
    """A model checkpoint: network, agent, β and their sizes, the configuration, dev scores, the task's name and its own
    entries (nested under one entry, ``drga.checkpoint_format.TASK_ENTRIES``), and
    the plateau cuts of the learning rate the network was trained at (None: it did not train; ``train.continue_lr``).
    :class:`~drga.checkpoint_format.CheckpointPayload` reads each entry back by name."""
    return CheckpointPayload.model(
        phase=phase, epoch=epoch, net_name=net_name, has_agent=has_agent, config=config, task=task, task_entries=task_content,
        state_size=modules.state_size, action_size=modules.action_size, half_life_steps=modules.strength.half_life_steps,
        network=modules.network.state_dict(), policy=modules.policy.state_dict(), strength=modules.strength.state_dict(),
        dev=dev, plateau_cuts=plateau_cuts,
    )


def inherited_plateau_cuts(payload: Mapping[str, Any], path: str | Path) -> int:
    """``train.continue_lr``: the plateau cuts of the learning rate the checkpoint's network was selected at."""
    cuts = CheckpointPayload.of(payload).plateau_cuts
    if cuts is None:
        raise CheckpointError(
            f"train.continue_lr: {path} does not record the learning rate its network was trained at (a checkpoint written "
            "before drga recorded it, or of a phase that did not train the network); set train.continue_lr = false"
        )
    return int(cuts)


def resume_payload(
    model: Mapping[str, Any], progress: PhaseProgress, history: Sequence[EpochRecord], global_step: int, optimisers: Mapping[str, Any],
) -> CheckpointPayload:
    """``last.pt``: a model checkpoint plus progress, history, the optimisers and their learning-rate schedule
    (``drga/runner/optim.py`` · ``OptimiserStep.state_dict``) and random state."""
    return CheckpointPayload.of(model).resumable(
        progress=progress.to_dict(), history=history, global_step=global_step,
        optimisers=optimisers, rng_cpu=torch.get_rng_state(),
        rng_cuda=torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
    )


def load_model(modules: RetrofitModules, path: Path, net_name: str, network: bool = True, policy: bool = True) -> CheckpointPayload:
    """Load a checkpoint of network ``net_name`` into the network and β (``network``) and the agent (``policy``)."""
    payload = read_model(path, net_name)
    load_weights(modules, payload, path, network, policy)
    return payload


def read_model(path: Path, net_name: str) -> CheckpointPayload:
    """A checkpoint of network ``net_name``, read and verified, its weights not yet loaded anywhere."""
    payload = CheckpointPayload.read(path)
    if payload.net_name != net_name:
        raise CheckpointError(f"{path} holds the network '{payload.net_name}', not '{net_name}'")
    return payload


def load_weights(modules: RetrofitModules, payload: Mapping[str, Any], path: Path, network: bool = True, policy: bool = True) -> None:
    """A checkpoint's weights into the network and β (``network``) and the agent (``policy``)."""
    payload = CheckpointPayload.of(payload)
    if network:
        load_module_state(modules.network, payload.network_state, "network", path)
        load_module_state(modules.strength, payload.strength_state, "adjusting module", path)
    if policy:
        load_module_state(modules.policy, payload.policy_state, "agent", path)


def check_same_config(path: Path, saved: Mapping[str, Any], config: Mapping[str, Any], resumable: frozenset[str]) -> None:
    """Refuse to resume when the configuration differs outside ``resumable`` (both flat ``section.key``)."""
    changed = sorted(k for k, v in config.items() if saved.get(k) != v and k not in resumable)
    if changed:
        differences = ", ".join(f"{key} ({saved.get(key)!r} when it started, {config[key]!r} now)" for key in changed)
        raise CheckpointError(
            f"cannot resume {path}: the configuration differs in {differences}; resume with the same settings, or start a new run"
        )


def restore_random_state(payload: Mapping[str, Any]) -> None:
    payload = CheckpointPayload.of(payload)
    torch.set_rng_state(payload.rng_cpu)
    if payload.rng_cuda and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(payload.rng_cuda)


def arm_metrics(rows: Mapping[str, ReportRow], metric: str = "accuracy") -> dict[str, dict[str, float]]:
    """Per phase, the final report's ``hparam/{dev,test}_<metric>_<mode>`` numbers (the HParams tab's columns)."""
    metrics: dict[str, dict[str, float]] = {}
    for row in rows.values():
        for mode, cell in row.modes.items():
            for split in (Split.TEST, Split.DEV):
                number = (cell.scores(split) or {}).get(metric)
                if isinstance(number, (int, float)):
                    metrics.setdefault(row.phase, {})[f"hparam/{split}_{metric}_{mode.replace('-', '_')}"] = float(number)
    return metrics
