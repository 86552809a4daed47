"""Algorithm 1: pretrain the network, pretrain the agent on the frozen network, co-train both.

One more phase runs by default: the *equal-budget baseline*, the pretrained network trained
alone for as many extra epochs as co-training gives the DRGA network, with the same dev-based
selection, so that a DRGA gain cannot be extra epochs in disguise.

Phases, in order (each skipped when its epoch count is 0):

======== ======================== ================================ ===========================
phase    starts from              trains                           picks its best epoch by
======== ======================== ================================ ===========================
pretrain a fresh network          network, cross-entropy (eq. 12)  dev accuracy, net-only
baseline pretrain's best          network, cross-entropy           dev accuracy, net-only
agent    pretrain's best, frozen  agent, REINFORCE (eqs. 6–7)      dev accuracy, with-agent
cotrain  pretrain + agent's best  both; network on revised α       dev accuracy, select_mode
======== ======================== ================================ ===========================

``baseline`` and ``cotrain`` count their starting point as a candidate, so both select among
the same number of network-training epochs. Every epoch ends with an atomic ``last.pt``;
``resume`` continues from it and reproduces an uninterrupted run exactly.

Started by ``torchrun`` it trains as N data-parallel processes (``drga/distributed.py``,
docs/distributed.md): DDP over what each phase trains, ``data.batch_size`` the global batch,
sharded evaluation, and only rank 0 logging and writing files.
"""

from __future__ import annotations

import copy
import shutil
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import torch
from torch import nn

from drga import distributed
from drga.checkpoint import CheckpointError, load_checkpoint
from drga.config import ConfigError, ExperimentConfig, config_from_dict, config_to_toml
from drga.evaluation import EvalResult, evaluate
from drga.monitor import NullWriters
from drga import phase_loop, run_state  # the phase loop, run folder and checkpoints both trainers share
from drga.phase_loop import PHASES  # noqa: F401  (drga.trainer.PHASES, as before)
from drga.run_state import PhaseProgress, RunExistsError, default_run_name, log_info  # noqa: F401  (RunExistsError, as before)
from drga.data import BatchIterator
from drga.setup import (
    PreparedData,
    batch_iterators,
    build_attention_network,
    build_policy,
    build_strength,
    first_batch,
    prepare_data,
    seed_everything,
    state_and_action_size,
)

#: Config fields a resumed run may change (the log folder is where the run lives, not what it is:
#: a moved run folder resumes). All but run.threads leave every number as an uninterrupted run's;
#: another thread count can change float rounding (see run.threads).
RESUMABLE_CHANGES = {"run.device", "run.progress", "run.threads", "run.logdir", "train.track_examples"}


def majority_class(train, dev, test, label_names: list[str]) -> dict[str, Any]:
    """The floor every model must beat: always predicting the training split's most frequent label."""
    counts = Counter(example.label for example in train)
    label = max(sorted(counts), key=lambda value: counts[value])
    share = lambda split: sum(example.label == label for example in split) / max(len(split), 1)  # noqa: E731
    return {"label": label_names[label], "dev_accuracy": share(dev), "test_accuracy": share(test)}


class Trainer:
    def __init__(
        self,
        config: ExperimentConfig,
        resume: bool = False,
        overwrite: bool = False,
        log: Callable[[str], None] = log_info,
        force: bool = False,
        network: nn.Module | None = None,
        data: PreparedData | None = None,
    ):
        """``force``: resume even when the data differ from the run's (their fingerprint is in every checkpoint).
        ``network`` and ``data`` (the Python API, drga/api.py): a network instance of the user's and
        prepared data, instead of those the configuration names."""
        config.validate()
        self.force = force
        self.config = config
        self.log = log
        self.run_dir = Path(config.run.logdir) / default_run_name(config)
        # Under torchrun: join the process group (drga/distributed.py); only rank 0 logs and writes files.
        self.device = distributed.setup(config.run.device)
        self.main = distributed.is_main()
        if not self.main:
            self.log = lambda _: None
            self.config = config = copy.deepcopy(config)
            config.run.progress = False
        if distributed.active() and config.agent.algorithm != "reinforce" and config.train.agent_epochs > 0:
            raise ConfigError(f"agent.algorithm={config.agent.algorithm} trains in one process only; run it without torchrun")
        last = run_state.prepare_run_dir(self.run_dir, resume, overwrite) if self.main else self.run_dir / "last.pt"
        if config.run.threads > 0:
            torch.set_num_threads(config.run.threads)

        seed_everything(config.run.seed)
        self.data = data if data is not None else prepare_data(config)
        for line in self.data.reports:
            self.log(f"data  {line}")
        self.train_batches, self.dev_batches, self.test_batches = batch_iterators(config, self.data)
        #: data.agent_holdout (beyond the paper): the agent's own batches, held out from the network
        self.agent_batches = BatchIterator(self.data.agent_train, config.data.batch_size, shuffle=True, seed=config.run.seed) \
            if self.data.agent_train else None
        if self.agent_batches is not None and distributed.active():
            raise ConfigError("data.agent_holdout trains in one process only; run it without torchrun")
        # Under torchrun each process takes its shard of every global batch (training and evaluation).
        self.train_batches = distributed.shard(self.train_batches, pad_empty=True)
        self.dev_batches = distributed.shard(self.dev_batches, pad_empty=False)
        self.test_batches = distributed.shard(self.test_batches, pad_empty=False)
        if network is None:
            network = build_attention_network(config, self.data.vocab, self.data.splits.num_classes, self.log)
        self.network = network.to(self.device)
        self.state_size, self.action_size = state_and_action_size(self.network, first_batch(self.data.train).to(self.device))
        self.policy = build_policy(config, self.state_size, self.action_size).to(self.device)
        self.strength = build_strength(config, len(self.train_batches)).to(self.device)
        self.plan = phase_loop.phase_plan(config.train)
        self.progress = PhaseProgress()
        self.history: list[dict[str, Any]] = []
        self.global_step = 0
        self.net_optimizer: torch.optim.Optimizer | None = None
        self.agent_optimizer: torch.optim.Optimizer | None = None
        self._replica: nn.Module | None = None  # under torchrun: DDP over the modules the phase trains
        resume_payload = self._load_resume(last) if resume else None

        if self.main:
            resume_at = (self.plan[self.progress.index], run_state.phase_step(self)) if resume and self.progress.index < len(self.plan) else None
            self.writer = run_state.open_run_folder(self.run_dir, config_to_toml(config), resume_at)
        else:
            self.writer = NullWriters()
        self._resume_payload = resume_payload
        if config.train.init_from and self.main and not resume:
            self._adopt_pretrained(Path(config.train.init_from))
        self.tracker = self._make_tracker(resume)

    def _adopt_pretrained(self, source: Path) -> None:
        """``train.init_from``: the given network checkpoint becomes this run's ``pretrain_best.pt``."""
        try:
            payload = load_checkpoint(source)
        except CheckpointError as error:
            raise ConfigError(f"train.init_from: {error}") from None
        if payload.get("net_name") != self.config.network.name:
            raise ConfigError(f"train.init_from: {source} holds a '{payload.get('net_name')}' network, not '{self.config.network.name}'")
        if payload.get("vocab") != list(self.data.vocab.itos) or payload.get("label_names") != list(self.data.splits.label_names):
            raise ConfigError(f"train.init_from: {source} was trained with another vocabulary or label set than this data gives")
        self._load_model(source, policy=False)  # its network must fit this configuration (sizes)
        shutil.copyfile(source, self.run_dir / "pretrain_best.pt")
        self.log(f"start  from {source} (pretraining skipped)")

    # ----------------------------------------------------------------------------- phases

    def _epochs(self, phase: str) -> int:
        return phase_loop.phase_epochs(self.config.train, phase)

    def run(self) -> dict[str, Any]:
        return phase_loop.run_phases(self)

    def _run_phase(self, phase: str) -> None:
        phase_loop.run_phase(
            self, phase, self.config.train.patience, EvalResult.as_dict, after_evaluation=self._track,
            plateau_lr_factor=self.config.train.plateau_lr_factor, plateau_patience=self.config.train.plateau_patience,
        )

    def train_one_epoch(self, phase: str, epoch: int = 1) -> dict[str, float]:
        """Start ``phase`` afresh and train one epoch of it, without evaluation or checkpoints.

        For benchmarks: the same code path as :meth:`run`, minus the bookkeeping.
        """
        return phase_loop.train_one_epoch(self, phase, epoch)

    def begin_phase(self, phase: str) -> None:
        """Start ``phase`` afresh for :meth:`train_step` (benchmarks that time single steps)."""
        phase_loop.begin_phase(self, phase)

    def train_step(self, phase: str, batch) -> dict[str, float]:
        """One training step of the phase begun with :meth:`begin_phase` on ``batch``; its statistics."""
        return phase_loop.train_step(self, phase, batch)

    def _start_phase(self, phase: str, fresh: bool) -> None:
        """Load the phase's starting weights (fresh start only) and make its optimisers."""
        distributed.barrier()  # under torchrun: rank 0's checkpoints are written before any process reads them
        phase_loop.start_phase(self, phase, fresh, self.config)
        trained = {"agent": [self.policy], "cotrain": [self.network, self.policy, self.strength]}.get(phase, [self.network])
        self._replica = distributed.replicate(trained, self.device)

    # ----------------------------------------------------------------------------- training

    def _train_epoch(self, phase: str, epoch: int, epochs: int) -> dict[str, float]:
        if phase == "agent" and self.config.agent.algorithm != "reinforce":  # SB3 learns phase 2 (docs/sb3.md)
            from drga.sb3_agent import train_epoch_with_sb3

            return train_epoch_with_sb3(self, epoch, epochs)
        distributed.seed_epoch(self.config.run.seed, PHASES.index(phase) * 10_000 + epoch)
        stats = phase_loop.train_epoch(self, phase, epoch, epochs, self.config)
        return distributed.mean_over_processes(stats)  # under torchrun: averaged over the processes

    def _train_step(self, phase: str, batch) -> dict[str, float]:
        cfg = self.config
        if phase in ("pretrain", "baseline"):
            loss = -self.network.log_likelihood(self.network(batch), batch.labels).mean()  # eq. 12
            norm = self._step(self.net_optimizer, loss, self.network.parameters())
            return {"task_loss": loss.item(), "grad_norm_network": float(norm)}

        # DRGA: encode once, K sampled adjustments of α, reward (eq. 5), REINFORCE (eqs. 6–7).
        own_attention_loss = None
        if cfg.train.original_attention_loss > 0:  # co-training also trains the network's own attention

            def own_attention_loss() -> torch.Tensor:
                return cfg.train.original_attention_loss * -self.network.log_likelihood(self.network(batch), batch.labels).mean()

        task_loss = lambda r: -r.log_likelihood.mean()  # noqa: E731  (eq. 12 on the revised attention)
        return phase_loop.drga_step(self, phase, batch, cfg, task_loss, own_attention_loss)

    def _step(self, optimizer: torch.optim.Optimizer, loss: torch.Tensor, params) -> torch.Tensor:
        return phase_loop.optimizer_step(optimizer, self._ddp_loss(loss), params, self.config.train.grad_clip)

    def _ddp_loss(self, loss: torch.Tensor) -> torch.Tensor:
        """What to back-propagate: ``loss``; under torchrun passed through DDP, which all-reduces the gradients."""
        return distributed.ddp_loss(self._replica, loss, getattr(self.train_batches, "share", 1.0))

    def _clip(self, params) -> torch.Tensor:
        return phase_loop.clip_gradients(params, self.config.train.grad_clip)

    # ----------------------------------------------------------------------------- selection

    def _evaluate_dev(self, phase: str) -> dict[str, EvalResult]:
        return {mode: self._evaluate(self.dev_batches, mode) for mode in phase_loop.DEV_MODES[phase]}

    def _evaluate(self, batches, mode: str) -> EvalResult:
        result = evaluate(
            self.network, batches, self.config.reward, mode, policy=self.policy, beta=self.strength().detach(), device=self.device
        )
        if not distributed.active():
            return result
        # Under torchrun each process scored its shards: the means over all the examples, the same on every rank.
        values = {k: v for k, v in result.as_dict().items() if k != "examples"}
        means, examples = distributed.weighted_mean(values, float(batches.local_examples()))
        return EvalResult(**means, examples=int(round(examples)))

    def _make_tracker(self, resume: bool):
        """The recorder of ``train.track_examples`` fixed dev sentences (None when 0)."""
        if self.config.train.track_examples <= 0 or not self.main:
            return None
        from drga.analysis.tracking import ExampleTracker  # matplotlib and friends only when asked for

        return ExampleTracker(
            self.run_dir, self.data.dev, self.data.train, self.data.vocab, self.data.splits.label_names,
            self.config.train.track_examples, self.config.run.seed, resume, self.log,
        )

    def _track(self, phase: str, epoch: int) -> None:
        """Record the tracked sentences' attention (α′ once there is an agent) and show it in TensorBoard."""
        if self.tracker is None:
            return
        policy = self.policy if phase in ("agent", "cotrain") else None  # before that the agent is untrained
        entry = self.tracker.record(phase, epoch, self.global_step, self.network, policy, self.strength().detach())
        self.writer.image(phase, "tracked_attention", self.tracker.image(entry), run_state.phase_step(self))

    def _consider(self, phase: str, scores: dict[str, EvalResult], epoch: int) -> bool:
        mode = run_state.selection_mode(phase, scores, self.config.train.select_mode)
        others = {other: (r.accuracy, r.reward) for other, r in scores.items() if other != mode}
        return run_state.consider(self, phase, scores, epoch, (scores[mode].accuracy, scores[mode].reward), others)

    # ----------------------------------------------------------------------------- checkpoints

    def _model_payload(self, phase: str, epoch: int, scores: dict[str, EvalResult] | None = None) -> dict[str, Any]:
        return run_state.model_payload(
            self, phase, epoch, scores, self.config.to_dict(), self.config.network.name,
            vocab=list(self.data.vocab.itos), label_names=list(self.data.splits.label_names), data_checksum=self.data.checksum,
        )

    def _save_last(self) -> None:
        if self.main:
            run_state.save_last(self)

    def _load_model(self, path: Path, network: bool = True, policy: bool = True) -> dict[str, Any]:
        return run_state.load_model(self, path, self.config.network.name, network, policy)

    def _load_resume(self, path: Path) -> dict[str, Any]:
        saved = lambda mapping: config_from_dict(mapping).flat()  # noqa: E731  (keys newer than the checkpoint: defaults)
        payload = run_state.resume_from(self, path, saved, self.config.flat(), RESUMABLE_CHANGES)
        recorded = payload.get("data_checksum")
        if recorded is not None and recorded != self.data.checksum:
            if not self.force:
                raise CheckpointError(
                    f"cannot resume {path}: the data differ from those the run was trained on (fingerprint {recorded}, "
                    f"now {self.data.checksum}); restore the data, start a new run, or resume anyway with --force"
                )
            self.log(f"resuming on changed data (--force): fingerprint {recorded} → {self.data.checksum}")
        return payload

    def _restore_optimizers(self, payload: dict[str, Any]) -> None:
        run_state.restore_optimizers(self, payload)

    # ----------------------------------------------------------------------------- reporting

    def _log_epoch(self, phase, epoch, epochs, scores, train_stats, improved, elapsed) -> None:
        values = {mode: r.as_dict() for mode, r in scores.items()}
        run_state.log_dev_scalars(self.writer, phase, values, run_state.phase_step(self), skip=("examples",))
        parts = [f"dev acc {mode} {r.accuracy:.4f}" for mode, r in scores.items()]
        if "reward" in train_stats:
            parts.append(f"reward {train_stats['reward']:.3f} N/L {train_stats['highlighted_fraction']:.2f} β {train_stats['beta']:.3f}")
        self.log(run_state.epoch_line(phase, epoch, epochs, parts, train_stats, improved, elapsed))

    def _final_report(self) -> dict[str, Any]:
        distributed.barrier()  # under torchrun: every process reads rank 0's best checkpoints and scores its test shard
        rows: dict[str, dict[str, Any]] = {}
        pretrain_checksum = None
        for label, phase, mode, path, payload in run_state.best_checkpoints(self):
            if phase == "pretrain":
                pretrain_checksum = payload.get("tensor_checksum")
            row = rows.setdefault(label, {"phase": phase, "epoch": payload["epoch"], "checkpoint": str(path)})
            row[f"test_{mode}"] = self._evaluate(self.test_batches, mode).as_dict()
            row[f"dev_{mode}"] = payload["dev"].get(mode)
            row[f"epoch_{mode}"] = payload["epoch"]
        results = {
            "run_dir": str(self.run_dir), "config": self.config.to_dict(), "data_checksum": self.data.checksum, "results": rows,
            "pretrain_checksum": pretrain_checksum,  # the network this run started from (train.init_from pairs runs by it)
            "phases": phase_loop.phase_summary(self.history, self.config.train), "history": self.history,
            "majority_class": majority_class(self.data.train, self.data.dev, self.data.test, self.data.splits.label_names),
        }
        self.log("\n== test accuracy ==")
        self.log(f"{'model':28s} {'net-only':>9s} {'with-agent':>11s}  (best epoch)")
        for label, row in rows.items():
            cells = [f"{row[f'test_{m}']['accuracy']:.4f}" if f"test_{m}" in row else "-" for m in ("net-only", "with-agent")]
            epochs = sorted({row[key] for key in row if key.startswith("epoch_")})
            where = f"epoch {row['epoch']}" if len(epochs) <= 1 else f"epochs net-only {row['epoch_net-only']}, with-agent {row['epoch_with-agent']}"
            self.log(f"{label:28s} {cells[0]:>9s} {cells[1]:>11s}  ({row['phase']} {where})")
        metrics = run_state.arm_metrics(rows)
        if self.main:
            run_state.publish_results(self, results, metrics, self.config.flat())
        return results
