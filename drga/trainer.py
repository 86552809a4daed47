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
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import torch
from torch import nn
from torch.utils.tensorboard import SummaryWriter
from tqdm.auto import tqdm

from agents.reinforce import reinforce_loss
from drga.checkpoint import CheckpointError, FORMAT_VERSION, load_checkpoint, load_module_state, save_atomic
from drga.config import ExperimentConfig, config_from_dict, config_to_toml
from drga.evaluation import EvalResult, evaluate
from drga.rollout import rollout
from drga.setup import (
    batch_iterators,
    build_attention_network,
    build_policy,
    build_strength,
    first_batch,
    prepare_data,
    resolve_device,
    seed_everything,
    state_and_action_size,
)

PHASES = ("pretrain", "baseline", "agent", "cotrain")
#: Config fields a resumed run may change without changing its results.
RESUMABLE_CHANGES = {"run.device", "run.progress", "run.threads", "train.track_examples"}


class RunExistsError(FileExistsError):
    """The run folder already holds a run; resume it or choose another name."""


@dataclass
class PhaseProgress:
    index: int = 0  #: index into the run's phase plan
    epoch: int = 0  #: epochs of that phase completed
    done: bool = False
    best: tuple[float, float] | None = None  #: (dev accuracy, dev reward) of the best epoch
    stale: int = 0  #: epochs since the best


def default_run_name(config: ExperimentConfig) -> str:
    return config.run.run_name or f"{config.data.dataset}-{config.network.name}-seed{config.run.seed}"


def print_flushed(line: str) -> None:
    """Log lines reach a file or a pipe as they happen, not when a buffer fills."""
    print(line, flush=True)


class Trainer:
    def __init__(
        self, config: ExperimentConfig, resume: bool = False, overwrite: bool = False, log: Callable[[str], None] = print_flushed
    ):
        config.validate()
        self.config = config
        self.log = log
        self.run_dir = Path(config.run.logdir) / default_run_name(config)
        last = self.run_dir / "last.pt"
        if last.exists() and not (resume or overwrite):
            raise RunExistsError(f"{self.run_dir} already holds a run; continue it with --resume or replace it with --overwrite")
        if resume and not last.exists():
            raise CheckpointError(f"nothing to resume: {last} does not exist")
        if overwrite and not resume and (self.run_dir / "config.toml").exists():
            shutil.rmtree(self.run_dir)  # a run folder of ours: old curves must not mix with new ones
        self.device = resolve_device(config.run.device)
        if config.run.threads > 0:
            torch.set_num_threads(config.run.threads)

        seed_everything(config.run.seed)
        self.data = prepare_data(config)
        for line in self.data.reports:
            self.log(f"data  {line}")
        self.train_batches, self.dev_batches, self.test_batches = batch_iterators(config, self.data)
        self.network = build_attention_network(config, self.data.vocab, self.data.splits.num_classes).to(self.device)
        self.state_size, self.action_size = state_and_action_size(self.network, first_batch(self.data.train).to(self.device))
        self.policy = build_policy(config, self.state_size, self.action_size).to(self.device)
        self.strength = build_strength(config, len(self.train_batches)).to(self.device)
        self.plan = [p for p in PHASES if self._epochs(p) > 0]
        self.progress = PhaseProgress()
        self.history: list[dict[str, Any]] = []
        self.global_step = 0
        self.net_optimizer: torch.optim.Optimizer | None = None
        self.agent_optimizer: torch.optim.Optimizer | None = None
        resume_payload = self._load_resume(last) if resume else None

        self.run_dir.mkdir(parents=True, exist_ok=True)
        (self.run_dir / "config.toml").write_text(config_to_toml(config), encoding="utf-8")
        self.writer = SummaryWriter(str(self.run_dir / "tb"), purge_step=self.global_step if resume else None)
        if not resume:
            table = "\n".join(f"|{k}|{v}|" for k, v in config.flat().items())
            self.writer.add_text("hyperparameters", "|param|value|\n|-|-|\n" + table)
        self._resume_payload = resume_payload
        self.tracker = self._make_tracker(resume)

    # ----------------------------------------------------------------------------- phases

    def _epochs(self, phase: str) -> int:
        train = self.config.train
        return {
            "pretrain": train.pretrain_epochs,
            "baseline": train.cotrain_epochs if train.fair_baseline else 0,
            "agent": train.agent_epochs,
            "cotrain": train.cotrain_epochs,
        }[phase]

    def run(self) -> dict[str, Any]:
        try:
            while self.progress.index < len(self.plan):
                phase = self.plan[self.progress.index]
                self._run_phase(phase)
                self.progress = PhaseProgress(index=self.progress.index + 1)
            results = self._final_report()
        finally:
            self.writer.close()
        return results

    def _run_phase(self, phase: str) -> None:
        resuming = self._resume_payload is not None
        self._start_phase(phase, fresh=not resuming)
        if resuming:
            self._restore_optimizers(self._resume_payload)
            self._resume_payload = None
        elif phase in ("baseline", "cotrain"):
            # The starting point is a candidate too: both compete over the same network epochs.
            scores = self._evaluate_dev(phase)
            self._track(phase, 0)
            self._consider(phase, scores, epoch=0)
        epochs = self._epochs(phase)
        self.log(f"\n== phase {phase}: {epochs} epochs ==")
        while not self.progress.done and self.progress.epoch < epochs:
            epoch = self.progress.epoch + 1
            self.train_batches.set_epoch(PHASES.index(phase) * 10_000 + epoch)
            started = time.time()
            train_stats = self._train_epoch(phase, epoch, epochs)
            scores = self._evaluate_dev(phase)
            self._track(phase, epoch)
            improved = self._consider(phase, scores, epoch)
            self.progress.epoch = epoch
            patience = self.config.train.patience
            if patience and self.progress.stale >= patience:
                self.progress.done = True
            elapsed = time.time() - started
            record = {"phase": phase, "epoch": epoch, "seconds": round(elapsed, 2), **train_stats}
            record.update({f"dev_{mode}_{k}": v for mode, r in scores.items() for k, v in r.as_dict().items()})
            self.history.append(record)
            self._log_epoch(phase, epoch, epochs, scores, train_stats, improved, elapsed)
            self._save_last()
        if epochs and self.progress.epoch < epochs:
            self.log(f"   early stop: no better dev score for {self.config.train.patience} epochs")

    def train_one_epoch(self, phase: str, epoch: int = 1) -> dict[str, float]:
        """Start ``phase`` afresh and train one epoch of it, without evaluation or checkpoints.

        For benchmarks: the same code path as :meth:`run`, minus the bookkeeping.
        """
        if phase not in PHASES:
            raise ValueError(f"unknown phase {phase!r}; one of {PHASES}")
        self._start_phase(phase, fresh=True)
        self.train_batches.set_epoch(PHASES.index(phase) * 10_000 + epoch)
        return self._train_epoch(phase, epoch, epoch)

    def _start_phase(self, phase: str, fresh: bool) -> None:
        """Load the phase's starting weights (fresh start only) and make its optimisers."""
        train = self.config.train
        if fresh and phase in ("baseline", "agent", "cotrain") and (self.run_dir / "pretrain_best.pt").exists():
            self._load_model(self.run_dir / "pretrain_best.pt", policy=False)
        if fresh and phase == "cotrain" and (self.run_dir / "agent_best.pt").exists():
            self._load_model(self.run_dir / "agent_best.pt", network=False)
        frozen = phase == "agent"
        self.network.requires_grad_(not frozen)
        if self.config.network.freeze_embeddings and hasattr(self.network, "embedding"):
            self.network.embedding.weight.requires_grad_(False)
        self.strength.rho.requires_grad_(phase == "cotrain" and self.config.adjust.trainable_beta)
        net_params = [p for p in self.network.parameters() if p.requires_grad]
        if phase == "cotrain":
            net_params += [p for p in self.strength.parameters() if p.requires_grad]
        self.net_optimizer = (
            torch.optim.Adam(net_params, lr=train.lr, weight_decay=train.weight_decay) if not frozen else None
        )
        self.agent_optimizer = (
            torch.optim.Adam(self.policy.parameters(), lr=self.config.agent.lr) if phase in ("agent", "cotrain") else None
        )

    # ----------------------------------------------------------------------------- training

    def _train_epoch(self, phase: str, epoch: int, epochs: int) -> dict[str, float]:
        if phase == "agent" and self.config.agent.algorithm != "reinforce":  # SB3 learns phase 2 (docs/sb3.md)
            from drga.sb3_agent import train_epoch_with_sb3

            return train_epoch_with_sb3(self, epoch, epochs)
        self.network.train(phase != "agent")
        self.policy.train()
        sums: dict[str, float] = {}
        bar = tqdm(self.train_batches, desc=f"{phase} {epoch}/{epochs}", leave=False, disable=not self.config.run.progress)
        for step, batch in enumerate(bar, start=1):
            batch = batch.to(self.device)
            stats = self._train_step(phase, batch)
            for key, value in stats.items():
                sums[key] = sums.get(key, 0.0) + value
            self.global_step += 1
            if self.global_step % 10 == 0:
                for key, value in stats.items():
                    self.writer.add_scalar(f"{phase}/train/{key}", value, self.global_step)
            bar.set_postfix({k: f"{v / step:.3f}" for k, v in sums.items() if k in ("task_loss", "reward")})
        return {key: value / max(len(self.train_batches), 1) for key, value in sums.items()}

    def _train_step(self, phase: str, batch) -> dict[str, float]:
        cfg = self.config
        if phase in ("pretrain", "baseline"):
            loss = -self.network.log_likelihood(self.network(batch), batch.labels).mean()  # eq. 12
            self._step(self.net_optimizer, loss, self.network.parameters())
            return {"task_loss": loss.item()}

        # DRGA: encode once, K sampled adjustments of α, reward (eq. 5), REINFORCE (eqs. 6–7).
        beta = self.strength()
        encoding = None
        if phase == "agent":
            with torch.no_grad():
                encoding = self.network.encode(batch)
        r = rollout(
            self.network, self.policy, batch, beta if phase == "cotrain" else beta.detach(),
            cfg.agent.samples, cfg.reward.gamma, cfg.reward.sqrt_l0, cfg.reward.delta, encoding=encoding,
        )
        k = cfg.agent.samples
        agent_loss = reinforce_loss(r.log_prob.view(-1, k), r.terms.reward.view(-1, k), cfg.agent.normalize_advantage)
        agent_loss = agent_loss - cfg.agent.entropy_coef * r.entropy
        task_loss = -r.log_likelihood.mean()  # eq. 12 on the revised attention
        if phase == "cotrain":
            loss = task_loss
            if cfg.train.original_attention_loss > 0:
                own = -self.network.log_likelihood(self.network(batch), batch.labels).mean()
                loss = loss + cfg.train.original_attention_loss * own
            self.net_optimizer.zero_grad(set_to_none=True)
            self.agent_optimizer.zero_grad(set_to_none=True)
            (loss + agent_loss).backward()
            self._clip(list(self.network.parameters()) + list(self.strength.parameters()))
            self._clip(self.policy.parameters())
            self.net_optimizer.step()
            self.agent_optimizer.step()
            self.strength.advance()
        else:
            self._step(self.agent_optimizer, agent_loss, self.policy.parameters())
        terms = r.terms
        return {
            "task_loss": task_loss.item(),
            "agent_loss": agent_loss.item(),
            "reward": terms.reward.mean().item(),
            "reward_log_likelihood": terms.log_likelihood.mean().item(),
            "reward_penalty": (cfg.reward.gamma * terms.penalty).mean().item(),
            "highlighted_fraction": terms.highlighted_fraction.mean().item(),
            "beta": beta.item(),
            "policy_sigma": r.policy_std.item(),
        }

    def _step(self, optimizer: torch.optim.Optimizer, loss: torch.Tensor, params) -> None:
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self._clip(params)
        optimizer.step()

    def _clip(self, params) -> None:
        if self.config.train.grad_clip > 0:
            nn.utils.clip_grad_norm_([p for p in params if p.grad is not None], self.config.train.grad_clip)

    # ----------------------------------------------------------------------------- selection

    def _evaluate_dev(self, phase: str) -> dict[str, EvalResult]:
        modes = {"pretrain": ["net-only"], "baseline": ["net-only"], "agent": ["with-agent"], "cotrain": ["net-only", "with-agent"]}
        return {mode: self._evaluate(self.dev_batches, mode) for mode in modes[phase]}

    def _evaluate(self, batches, mode: str) -> EvalResult:
        return evaluate(
            self.network, batches, self.config.reward, mode, policy=self.policy, beta=self.strength().detach(), device=self.device
        )

    def _make_tracker(self, resume: bool):
        """The recorder of ``train.track_examples`` fixed dev sentences (None when 0)."""
        if self.config.train.track_examples <= 0:
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
        self.writer.add_image(f"{phase}/tracked_attention", self.tracker.image(entry), self.global_step, dataformats="HWC")

    def _consider(self, phase: str, scores: dict[str, EvalResult], epoch: int) -> bool:
        mode = self.config.train.select_mode if phase == "cotrain" else next(iter(scores))
        score = (scores[mode].accuracy, scores[mode].reward)
        if self.progress.best is None or score > self.progress.best:
            self.progress.best, self.progress.stale = score, 0
            save_atomic(self._model_payload(phase, epoch, scores), self.run_dir / f"{phase}_best.pt")
            return True
        self.progress.stale += 1
        return False

    # ----------------------------------------------------------------------------- checkpoints

    def _model_payload(self, phase: str, epoch: int, scores: dict[str, EvalResult] | None = None) -> dict[str, Any]:
        return {
            "format": FORMAT_VERSION,
            "kind": "model",
            "phase": phase,
            "epoch": epoch,
            "net_name": self.config.network.name,
            "has_agent": phase in ("agent", "cotrain"),
            "config": self.config.to_dict(),
            "vocab": list(self.data.vocab.itos),
            "label_names": list(self.data.splits.label_names),
            "state_size": self.state_size,
            "action_size": self.action_size,
            "half_life_steps": float(self.strength.half_life_steps),
            "network": self.network.state_dict(),
            "policy": self.policy.state_dict(),
            "strength": self.strength.state_dict(),
            "dev": {mode: r.as_dict() for mode, r in (scores or {}).items()},
        }

    def _save_last(self) -> None:
        payload = self._model_payload(self.plan[self.progress.index], self.progress.epoch)
        payload.update(
            kind="resume",
            progress=vars(self.progress).copy(),
            history=self.history,
            global_step=self.global_step,
            net_optimizer=self.net_optimizer.state_dict() if self.net_optimizer else None,
            agent_optimizer=self.agent_optimizer.state_dict() if self.agent_optimizer else None,
            rng_cpu=torch.get_rng_state(),
            rng_cuda=torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
        )
        payload["progress"]["best"] = list(payload["progress"]["best"]) if payload["progress"]["best"] else None
        save_atomic(payload, self.run_dir / "last.pt")

    def _load_model(self, path: Path, network: bool = True, policy: bool = True) -> dict[str, Any]:
        payload = load_checkpoint(path)
        if payload.get("net_name") != self.config.network.name:
            raise CheckpointError(f"{path} holds a '{payload.get('net_name')}' network, not '{self.config.network.name}'")
        if network:
            load_module_state(self.network, payload["network"], "network", path)
            load_module_state(self.strength, payload["strength"], "adjusting module", path)
        if policy:
            load_module_state(self.policy, payload["policy"], "agent", path)
        return payload

    def _load_resume(self, path: Path) -> dict[str, Any]:
        payload = self._load_model(path)
        saved = config_from_dict(payload["config"]).flat()  # keys newer than the checkpoint take their defaults
        changed = sorted(k for k, v in self.config.flat().items() if saved.get(k) != v and k not in RESUMABLE_CHANGES)
        if changed:
            raise CheckpointError(
                f"cannot resume {path}: the configuration differs in {', '.join(changed)}; "
                "resume with the same settings, or start a new run"
            )
        progress = payload["progress"]
        self.plan = [p for p in PHASES if self._epochs(p) > 0]
        self.progress = PhaseProgress(
            index=progress["index"], epoch=progress["epoch"], done=progress["done"],
            best=tuple(progress["best"]) if progress["best"] else None, stale=progress["stale"],
        )
        self.history = list(payload["history"])
        self.global_step = int(payload["global_step"])
        torch.set_rng_state(payload["rng_cpu"])
        if payload["rng_cuda"] and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(payload["rng_cuda"])
        self.log(f"resuming {self.run_dir}: phase {self.plan[self.progress.index]}, {self.progress.epoch} epochs done")
        return payload

    def _restore_optimizers(self, payload: dict[str, Any]) -> None:
        if self.net_optimizer is not None and payload["net_optimizer"] is not None:
            self.net_optimizer.load_state_dict(payload["net_optimizer"])
        if self.agent_optimizer is not None and payload["agent_optimizer"] is not None:
            self.agent_optimizer.load_state_dict(payload["agent_optimizer"])

    # ----------------------------------------------------------------------------- reporting

    def _log_epoch(self, phase, epoch, epochs, scores, train_stats, improved, elapsed) -> None:
        for mode, result in scores.items():
            for key, value in result.as_dict().items():
                if key != "examples":
                    self.writer.add_scalar(f"{phase}/dev/{mode}/{key}", value, self.global_step)
        parts = [f"dev acc {mode} {r.accuracy:.4f}" for mode, r in scores.items()]
        if "reward" in train_stats:
            parts.append(f"reward {train_stats['reward']:.3f} N/L {train_stats['highlighted_fraction']:.2f} β {train_stats['beta']:.3f}")
        parts.append(f"loss {train_stats['task_loss']:.4f}")
        self.log(f"   {phase} {epoch}/{epochs}: " + ", ".join(parts) + (" *" if improved else "") + f" [{elapsed:.1f}s]")

    def _final_report(self) -> dict[str, Any]:
        rows: dict[str, dict[str, Any]] = {}
        candidates = [
            ("baseline (pretrain only)", "pretrain", ["net-only"]),
            ("baseline (equal budget)", "baseline", ["net-only"]),
            ("agent on frozen network", "agent", ["with-agent"]),
            ("DRGA (co-trained)", "cotrain", ["net-only", "with-agent"]),
        ]
        for label, phase, modes in candidates:
            path = self.run_dir / f"{phase}_best.pt"
            if phase not in self.plan or not path.exists():
                continue
            payload = self._load_model(path)
            rows[label] = {
                "phase": phase,
                "epoch": payload["epoch"],
                "checkpoint": str(path),
                **{f"test_{mode}": self._evaluate(self.test_batches, mode).as_dict() for mode in modes},
                **{f"dev_{mode}": payload["dev"].get(mode) for mode in modes},
            }
        results = {"run_dir": str(self.run_dir), "config": self.config.to_dict(), "results": rows, "history": self.history}
        (self.run_dir / "results.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
        self.log("\n== test accuracy ==")
        self.log(f"{'model':28s} {'net-only':>9s} {'with-agent':>11s}  (best epoch)")
        for label, row in rows.items():
            cells = [f"{row[f'test_{m}']['accuracy']:.4f}" if f"test_{m}" in row else "-" for m in ("net-only", "with-agent")]
            self.log(f"{label:28s} {cells[0]:>9s} {cells[1]:>11s}  ({row['phase']} epoch {row['epoch']})")
        metrics = {
            f"hparam/{row['phase']}_{key.replace('-', '_')}": row[key]["accuracy"]
            for label, row in rows.items()
            for key in row
            if key.startswith("test_")
        }
        hparams = {k: (v if isinstance(v, (int, float, str, bool)) else str(v)) for k, v in self.config.flat().items()}
        self.writer.add_hparams(hparams, metrics, run_name="hparams")
        self.log(f"\nresults: {self.run_dir / 'results.json'}")
        self.log(f"TensorBoard: tensorboard --logdir {self.run_dir / 'tb'}")
        return results
