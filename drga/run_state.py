"""A training run's folder, progress and checkpoints: what both trainers keep the same way.

:class:`drga.trainer.Trainer` (classification) and :class:`drga.nmt.trainer.TranslationTrainer`
(translation) run the same phases (``drga/phase_loop.py``) and keep a run the same way:

- the run folder ``<logdir>/<run name>/``: refused if it holds a run unless resumed or
  overwritten (:func:`prepare_run_dir`); ``config.toml`` and the TensorBoard writer with the
  hyperparameter table (:func:`open_run_folder`);
- model checkpoints ``<phase>_best.pt`` (:func:`model_payload`, the best dev epoch of a phase,
  :func:`consider`) and the resume checkpoint ``last.pt`` written atomically after every epoch
  (:func:`save_last`), read back by :func:`resume_from` (same configuration, progress, history,
  step counter and random state) and :func:`restore_optimizers`;
- the final report's rows (:func:`best_checkpoints`) and ``results.json`` with the TensorBoard
  hparams (:func:`publish_results`); the per-epoch log line and dev scalars
  (:func:`epoch_line`, :func:`log_dev_scalars`).

The functions take the trainer as their first argument and use the attributes and hooks listed
in :class:`RunTrainer`; task-specific parts (data, scores, what a checkpoint holds besides the
modules) stay in the trainers.
"""

from __future__ import annotations

import json
import logging
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Protocol

import torch
from drga.monitor import ARMS, PhaseWriters

from drga import distributed
from drga.checkpoint import FORMAT_VERSION, CheckpointError, load_checkpoint, load_module_state, save_atomic
from drga.config import ExperimentConfig
from drga.errors import UserError

#: The final report's rows: label, the phase whose best checkpoint it reads, its evaluation modes.
FINAL_ROWS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("baseline (pretrain only)", "pretrain", ("net-only",)),
    ("baseline (equal budget)", "baseline", ("net-only",)),
    ("agent on frozen network", "agent", ("with-agent",)),
    ("DRGA (co-trained)", "cotrain", ("net-only", "with-agent")),
)


class RunExistsError(UserError, FileExistsError):
    """The run folder already holds a run; resume it or choose another name."""


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


class RunTrainer(Protocol):
    """What the functions of this module (and of ``drga/phase_loop.py``) use of a trainer."""

    run_dir: Path
    log: Callable[[str], None]
    network: torch.nn.Module
    policy: torch.nn.Module
    strength: torch.nn.Module
    state_size: int
    action_size: int
    plan: list[str]
    progress: PhaseProgress
    history: list[dict[str, Any]]
    global_step: int
    net_optimizer: torch.optim.Optimizer | None
    agent_optimizer: torch.optim.Optimizer | None
    writer: PhaseWriters

    def _model_payload(self, phase: str, epoch: int, scores: Mapping[str, Any] | None = None) -> dict[str, Any]: ...

    def _load_model(self, path: Path, network: bool = True, policy: bool = True) -> dict[str, Any]: ...


def default_run_name(config: ExperimentConfig) -> str:
    """``run.run_name``, or <dataset>-<net>-seed<seed>."""
    return config.run.run_name or f"{config.data.dataset}-{config.network.name}-seed{config.run.seed}"


#: The toolkit's logger: ``logging.getLogger("drga")``. The command line sends it to stdout
#: (``--quiet``: warnings only; ``--verbose``: debug too); a library user configures it with the
#: standard logging calls, and without a handler sees warnings only.
LOGGER = logging.getLogger("drga")


def log_info(line: str) -> None:
    """A trainer's default ``log``: one INFO record of the ``drga`` logger per line."""
    LOGGER.info(line)


# --------------------------------------------------------------------------- the run folder


def prepare_run_dir(run_dir: Path, resume: bool, overwrite: bool) -> Path:
    """Check the run folder for ``resume`` / ``overwrite`` and return its ``last.pt`` path.

    A folder that holds a run (``last.pt``) is refused unless resumed or overwritten; resuming
    needs ``last.pt``; overwriting removes a run folder of ours (one with ``config.toml``) so that
    old curves and checkpoints do not mix with the new ones.
    """
    last = run_dir / "last.pt"
    if last.exists() and not (resume or overwrite):
        raise RunExistsError(f"{run_dir} already holds a run; continue it with --resume or replace it with --overwrite")
    if resume and not last.exists():
        raise CheckpointError(f"nothing to resume: {last} does not exist")
    if overwrite and not resume and (run_dir / "config.toml").exists():
        shutil.rmtree(run_dir)
    return last


def open_run_folder(run_dir: Path, config_toml: str, resume_at: tuple[str, int] | None = None) -> PhaseWriters:
    """Create the folder, write ``config.toml``, and open TensorBoard's per-arm runs (``drga/monitor.py``).

    ``resume_at`` = (phase, step of that phase): a resumed run drops that arm's events from the step on.
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.toml").write_text(config_toml, encoding="utf-8")
    purge = {ARMS[resume_at[0]]: resume_at[1]} if resume_at else None
    return PhaseWriters(run_dir / "tb", purge)


def phase_step(trainer: RunTrainer) -> int:
    """Updates since the current phase began: the step axis every arm shares (``drga/monitor.py``)."""
    return trainer.global_step - trainer.progress.start_step


# --------------------------------------------------------------------------- checkpoints


def model_payload(
    trainer: RunTrainer, phase: str, epoch: int, scores: Mapping[str, Any] | None, config: dict[str, Any], net_name: str, **task: Any
) -> dict[str, Any]:
    """A model checkpoint: network, agent, β and their sizes, the configuration, dev scores, and ``task``'s own entries."""
    return {
        "format": FORMAT_VERSION,
        "kind": "model",
        "phase": phase,
        "epoch": epoch,
        "net_name": net_name,
        "has_agent": phase in ("agent", "cotrain"),
        "config": config,
        **task,
        "state_size": trainer.state_size,
        "action_size": trainer.action_size,
        "half_life_steps": float(trainer.strength.half_life_steps),
        "network": trainer.network.state_dict(),
        "policy": trainer.policy.state_dict(),
        "strength": trainer.strength.state_dict(),
        "dev": {mode: r.as_dict() for mode, r in (scores or {}).items()},
    }


def save_last(trainer: RunTrainer) -> None:
    """``last.pt``: the current model plus progress, history, optimisers and random state (atomic)."""
    payload = trainer._model_payload(trainer.plan[trainer.progress.index], trainer.progress.epoch)
    payload.update(
        kind="resume",
        progress=vars(trainer.progress).copy(),
        history=trainer.history,
        global_step=trainer.global_step,
        net_optimizer=trainer.net_optimizer.state_dict() if trainer.net_optimizer else None,
        agent_optimizer=trainer.agent_optimizer.state_dict() if trainer.agent_optimizer else None,
        rng_cpu=torch.get_rng_state(),
        rng_cuda=torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
    )
    payload["progress"]["best"] = list(payload["progress"]["best"]) if payload["progress"]["best"] else None
    payload["progress"]["best_by_mode"] = {mode: list(key) for mode, key in trainer.progress.best_by_mode.items()}
    save_atomic(payload, trainer.run_dir / "last.pt")


def load_model(trainer: RunTrainer, path: Path, net_name: str, network: bool = True, policy: bool = True) -> dict[str, Any]:
    """Load a checkpoint of network ``net_name`` into the trainer's network and β (``network``) and agent (``policy``)."""
    payload = load_checkpoint(path)
    if payload.get("net_name") != net_name:
        raise CheckpointError(f"{path} holds a '{payload.get('net_name')}' network, not '{net_name}'")
    if network:
        load_module_state(trainer.network, payload["network"], "network", path)
        load_module_state(trainer.strength, payload["strength"], "adjusting module", path)
    if policy:
        load_module_state(trainer.policy, payload["policy"], "agent", path)
    return payload


def resume_from(
    trainer: RunTrainer,
    path: Path,
    saved_config: Callable[[dict[str, Any]], Mapping[str, Any]],
    config: Mapping[str, Any],
    resumable: set[str] | frozenset[str],
) -> dict[str, Any]:
    """Continue from ``last.pt``: load the model, check the configuration, restore progress and random state.

    ``saved_config`` turns the checkpoint's configuration into the flat ``section.key`` form of
    ``config`` (keys newer than the checkpoint take their defaults there); a difference outside
    ``resumable`` (settings that do not change results: device, progress bars, threads) is refused.
    """
    payload = trainer._load_model(path)
    saved = saved_config(payload["config"])
    changed = sorted(k for k, v in config.items() if saved.get(k) != v and k not in resumable)
    if changed:
        raise CheckpointError(
            f"cannot resume {path}: the configuration differs in {', '.join(changed)}; "
            "resume with the same settings, or start a new run"
        )
    progress = payload["progress"]
    trainer.progress = PhaseProgress(
        index=progress["index"], epoch=progress["epoch"], done=progress["done"],
        best=tuple(progress["best"]) if progress["best"] else None, stale=progress["stale"],
        best_by_mode={mode: tuple(key) for mode, key in progress.get("best_by_mode", {}).items()},
        start_step=int(progress.get("start_step", 0)),
    )
    trainer.history = list(payload["history"])
    trainer.global_step = int(payload["global_step"])
    torch.set_rng_state(payload["rng_cpu"])
    if payload["rng_cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(payload["rng_cuda"])
    trainer.log(f"resuming {trainer.run_dir}: phase {trainer.plan[trainer.progress.index]}, {trainer.progress.epoch} epochs done")
    return payload


def restore_optimizers(trainer: RunTrainer, payload: dict[str, Any]) -> None:
    """The optimiser states saved in ``last.pt``, for the phase being resumed."""
    if trainer.net_optimizer is not None and payload["net_optimizer"] is not None:
        trainer.net_optimizer.load_state_dict(payload["net_optimizer"])
    if trainer.agent_optimizer is not None and payload["agent_optimizer"] is not None:
        trainer.agent_optimizer.load_state_dict(payload["agent_optimizer"])


# --------------------------------------------------------------------------- selection


def selection_mode(phase: str, scores: Mapping[str, Any], select_mode: str) -> str:
    """The evaluation mode that selects a phase's best epoch: ``train.select_mode`` for co-training, else the phase's one mode."""
    return select_mode if phase == "cotrain" else next(iter(scores))


def consider(
    trainer: RunTrainer,
    phase: str,
    scores: Mapping[str, Any],
    epoch: int,
    key: tuple[float, ...],
    other_keys: Mapping[str, tuple[float, ...]] | None = None,
) -> bool:
    """Keep ``<phase>_best.pt`` if ``key`` beats the phase's best so far; count stale epochs (early stopping).

    ``other_keys``: the selection key of each other dev mode; its best epoch is kept as
    ``<phase>_best_<mode>.pt`` (it does not drive early stopping).
    """
    for mode, other in (other_keys or {}).items():
        best = trainer.progress.best_by_mode.get(mode)
        if best is None or other > tuple(best):
            trainer.progress.best_by_mode[mode] = other
            if distributed.is_main():
                save_atomic(trainer._model_payload(phase, epoch, scores), trainer.run_dir / f"{phase}_best_{mode}.pt")
    if trainer.progress.best is None or key > tuple(trainer.progress.best):
        trainer.progress.best, trainer.progress.stale = key, 0
        if distributed.is_main():  # under torchrun every rank decides, rank 0 writes
            save_atomic(trainer._model_payload(phase, epoch, scores), trainer.run_dir / f"{phase}_best.pt")
        return True
    trainer.progress.stale += 1
    return False


# --------------------------------------------------------------------------- reporting


def log_dev_scalars(
    writer: PhaseWriters, phase: str, values: Mapping[str, Mapping[str, Any]], step: int, skip: tuple[str, ...] = ()
) -> None:
    """TensorBoard ``dev/<key>_<mode>`` in the phase's arm for every finite number of every mode's dev scores."""
    writer.dev(phase, values, step, skip)


def epoch_line(
    phase: str, epoch: int, epochs: int, parts: list[str], train_stats: Mapping[str, float], improved: bool, elapsed: float
) -> str:
    """``   <phase> <epoch>/<epochs>: <parts>, loss L *  [s]`` (``*``: the best epoch so far)."""
    parts = [*parts, f"loss {train_stats['task_loss']:.4f}"]
    return f"   {phase} {epoch}/{epochs}: " + ", ".join(parts) + (" *" if improved else "") + f" [{elapsed:.1f}s]"


def best_checkpoints(trainer: RunTrainer) -> Iterator[tuple[str, str, str, Path, dict[str, Any]]]:
    """The final report's cells that ran: (label, phase, mode, checkpoint path, its payload),
    loaded into the trainer. Each mode reads the epoch selected by dev accuracy in that mode
    (``<phase>_best_<mode>.pt`` where the phase kept one, else ``<phase>_best.pt``); the mode
    of ``<phase>_best.pt`` comes first."""
    for label, phase, modes in FINAL_ROWS:
        path = trainer.run_dir / f"{phase}_best.pt"
        if not path.exists() or (phase not in trainer.plan and phase != "pretrain"):  # train.init_from: pretrain's row
            continue
        own = {mode: trainer.run_dir / f"{phase}_best_{mode}.pt" for mode in modes}
        ordered = sorted(modes, key=lambda mode: own[mode].exists())
        for mode in ordered:
            chosen = own[mode] if own[mode].exists() else path
            yield label, phase, mode, chosen, trainer._load_model(chosen)


def arm_metrics(rows: Mapping[str, Mapping[str, Any]], metric: str = "accuracy") -> dict[str, dict[str, float]]:
    """Per phase, the final report's ``hparam/{dev,test}_<metric>_<mode>`` numbers (the HParams tab's columns)."""
    metrics: dict[str, dict[str, float]] = {}
    for row in rows.values():
        for key, value in row.items():
            split, _, mode = key.partition("_")
            if split in ("dev", "test") and mode in ("net-only", "with-agent") and isinstance(value, Mapping):
                number = value.get(metric)
                if isinstance(number, (int, float)):
                    metrics.setdefault(row["phase"], {})[f"hparam/{split}_{metric}_{mode.replace('-', '_')}"] = float(number)
    return metrics


def publish_results(
    trainer: RunTrainer,
    results: dict[str, Any],
    metrics: Mapping[str, Mapping[str, float]],
    flat_config: Mapping[str, Any],
    note: str = "",
) -> None:
    """Write ``results.json``, each arm's HParams entry (configuration → its final ``metrics``), and say where they are."""
    (trainer.run_dir / "results.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    for phase, values in metrics.items():
        trainer.writer.hparams(phase, {"arm": ARMS.get(phase, phase), **flat_config}, values)
    trainer.writer.flush()
    trainer.log(f"\nresults: {trainer.run_dir / 'results.json'}{note}")
    trainer.log(f"TensorBoard: tensorboard --logdir {trainer.run_dir / 'tb'}")
