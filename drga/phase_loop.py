"""Algorithm 1's phase loop, shared by the classification and the translation trainer.

Phases, in order (each skipped when its epoch count is 0): ``pretrain`` the network, the
equal-budget ``baseline`` (the pretrained network trained alone for as many epochs as
co-training gets), ``agent`` (REINFORCE on the frozen network), ``cotrain`` (both). This module
holds what is the same for every task:

- :func:`phase_epochs` / :func:`phase_plan`: how many epochs each phase gets;
- :func:`run_phases` and :func:`run_phase`: the loop over phases and epochs, the starting point of
  ``baseline`` and ``cotrain`` as a candidate, dev evaluation, best-epoch selection, early
  stopping after ``train.patience`` epochs without a better dev score, the epoch record, and
  ``last.pt`` after every epoch (resumable);
- :func:`start_phase`: the phase's starting weights and optimisers;
- :func:`train_epoch`: one pass over the training batches with TensorBoard scalars every 10 steps;
- :func:`begin_phase` / :func:`train_step`: a phase step by step, for benchmarks;
- :func:`drga_step`: one DRGA update (eqs. 2–7 and 12): encode once, K sampled adjustments,
  reward, REINFORCE, and for co-training the network on the revised attention.

The trainer supplies the task: its ``_train_step`` (the loss of a batch), ``_evaluate_dev``,
``_consider`` (the selection key), ``_log_epoch``, ``_final_report``; the functions call the
trainer's methods (``_start_phase``, ``_train_epoch``, ``_save_last``, ``_step``, ``_clip``, ...)
so that a trainer can change one of them. Attributes used: see :class:`drga.run_state.RunTrainer`.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Mapping

import torch
from torch import Tensor, nn
from tqdm.auto import tqdm

from drga.agents.reinforce import reinforce_loss
from drga.config import ExperimentConfig, TrainConfig
from drga.rollout import Rollout, rollout
from drga.run_state import PhaseProgress

PHASES = ("pretrain", "baseline", "agent", "cotrain")
#: The evaluation modes of each phase's dev evaluation.
DEV_MODES: dict[str, tuple[str, ...]] = {
    "pretrain": ("net-only",), "baseline": ("net-only",), "agent": ("with-agent",), "cotrain": ("net-only", "with-agent"),
}


#: What each phase's console line calls "loss" (the ``*`` marks the best dev score so far).
PHASE_LEGENDS = {
    "pretrain": "loss: the network's cross-entropy on its own attention, eq. 12",
    "baseline": "loss: the network's cross-entropy on its own attention, eq. 12",
    "agent": "loss: the frozen network's cross-entropy on the revised attention, reported only",
    "cotrain": "loss: the network's cross-entropy on the revised attention, eq. 12",
}


def phase_epochs(train: TrainConfig, phase: str) -> int:
    """Epochs of ``phase``; the equal-budget baseline gets the agent's and co-training's together
    unless ``train.baseline_epochs`` says otherwise (0 without ``train.fair_baseline``)."""
    budget = train.agent_epochs + train.cotrain_epochs if train.baseline_epochs is None else train.baseline_epochs
    return {
        "pretrain": 0 if train.init_from else train.pretrain_epochs,
        "baseline": budget if train.fair_baseline else 0,
        "agent": train.agent_epochs,
        "cotrain": train.cotrain_epochs,
    }[phase]


def phase_plan(train: TrainConfig) -> list[str]:
    """The phases that run, in order."""
    return [p for p in PHASES if phase_epochs(train, p) > 0]


def phase_summary(history: list[dict[str, Any]], train: TrainConfig) -> dict[str, dict[str, Any]]:
    """Per phase that ran: epochs run of the planned cap, whether early stopping ended it, and its wall seconds."""
    summary: dict[str, dict[str, Any]] = {}
    for record in history:
        entry = summary.setdefault(record["phase"], {"epochs": 0, "max_epochs": phase_epochs(train, record["phase"]), "seconds": 0.0})
        entry["epochs"] = max(entry["epochs"], record["epoch"])
        entry["seconds"] = round(entry["seconds"] + record.get("seconds", 0.0), 2)
    for entry in summary.values():
        entry["stopped_early"] = entry["epochs"] < entry["max_epochs"]
    return summary


def run_phases(trainer) -> dict[str, Any]:
    """Every phase of the plan from where the trainer's progress stands, then the final report."""
    try:
        while trainer.progress.index < len(trainer.plan):
            trainer._run_phase(trainer.plan[trainer.progress.index])
            trainer.progress = PhaseProgress(index=trainer.progress.index + 1)
        results = trainer._final_report()
    finally:
        trainer.writer.close()
    return results


def run_phase(
    trainer,
    phase: str,
    patience: int,
    dev_values: Callable[[Any], Mapping[str, Any]],
    after_evaluation: Callable[[str, int], None] | None = None,
    plateau_lr_factor: float = 1.0,
    plateau_patience: int = 1,
) -> None:
    """The epochs of one phase (continuing a resumed one): train, evaluate on dev, select, stop early, save.

    ``dev_values(result)`` gives the numbers of one mode's dev result for the history record;
    ``after_evaluation(phase, epoch)`` runs after every dev evaluation (classification: the
    tracked examples); ``plateau_lr_factor`` scales the network's learning rate after every
    ``plateau_patience`` epochs without a better dev score.
    """
    resuming = trainer._resume_payload is not None
    if not resuming:
        trainer.progress.start_step = trainer.global_step  # TensorBoard's step axis of this arm starts here
    trainer._start_phase(phase, fresh=not resuming)
    if resuming:
        trainer._restore_optimizers(trainer._resume_payload)
        trainer._resume_payload = None
    elif phase in ("baseline", "cotrain"):
        # The starting point is a candidate too: both compete over the same network epochs.
        scores = trainer._evaluate_dev(phase)
        if after_evaluation is not None:
            after_evaluation(phase, 0)
        trainer._consider(phase, scores, epoch=0)
        counts = ("examples", "sentences", "tokens")  # sizes, not scores
        trainer.writer.dev(phase, {mode: dev_values(r) for mode, r in scores.items()}, 0, skip=counts)
    epochs = trainer._epochs(phase)
    trainer.log(f"\n== phase {phase}: {epochs} epochs ({PHASE_LEGENDS[phase]}; *: best dev score so far) ==")
    while not trainer.progress.done and trainer.progress.epoch < epochs:
        epoch = trainer.progress.epoch + 1
        epoch_batches(trainer, phase).set_epoch(PHASES.index(phase) * 10_000 + epoch)
        started = time.time()
        train_stats = trainer._train_epoch(phase, epoch, epochs)
        scores = trainer._evaluate_dev(phase)
        if after_evaluation is not None:
            after_evaluation(phase, epoch)
        improved = trainer._consider(phase, scores, epoch)
        if not improved and trainer.progress.stale % plateau_patience == 0:
            reduce_learning_rate(trainer.net_optimizer, plateau_lr_factor)
        trainer.progress.epoch = epoch
        if patience and trainer.progress.stale >= patience:
            trainer.progress.done = True
        elapsed = time.time() - started
        record = {"phase": phase, "epoch": epoch, "seconds": round(elapsed, 2), **train_stats}
        record.update({f"dev_{mode}_{k}": v for mode, r in scores.items() for k, v in dev_values(r).items()})
        trainer.history.append(record)
        trainer._log_epoch(phase, epoch, epochs, scores, train_stats, improved, elapsed)
        trainer._save_last()
    if epochs and trainer.progress.epoch < epochs:
        trainer.log(f"   early stop: no better dev score for {patience} epochs")


def reduce_learning_rate(optimizer: torch.optim.Optimizer | None, factor: float) -> None:
    """The network's learning rate times ``factor`` after an epoch without a better dev score (a plateau)."""
    if optimizer is None or factor >= 1.0:
        return
    for group in optimizer.param_groups:
        group["lr"] *= factor


def train_one_epoch(trainer, phase: str, epoch: int = 1) -> dict[str, float]:
    """Start ``phase`` afresh and train one epoch of it, without evaluation or checkpoints (benchmarks)."""
    begin_phase(trainer, phase)
    trainer.train_batches.set_epoch(PHASES.index(phase) * 10_000 + epoch)
    return trainer._train_epoch(phase, epoch, epoch)


def begin_phase(trainer, phase: str) -> None:
    """Start ``phase`` afresh for training batch by batch with :func:`train_step` (benchmarks)."""
    if phase not in PHASES:
        raise ValueError(f"unknown phase {phase!r}; one of {PHASES}")
    trainer._start_phase(phase, fresh=True)
    trainer.network.train(phase != "agent")
    trainer.policy.train()


def train_step(trainer, phase: str, batch) -> dict[str, float]:
    """One training step of ``phase`` (begun with :func:`begin_phase`) on ``batch``; its statistics."""
    return trainer._train_step(phase, batch.to(trainer.device))


def start_phase(trainer, phase: str, fresh: bool, config: ExperimentConfig) -> None:
    """Load the phase's starting weights (fresh start only) and make its optimisers.

    ``baseline``, ``agent`` and ``cotrain`` start from pretraining's best network, ``cotrain``
    from the agent phase's best agent. The network is frozen in the agent phase; β's learned
    factor trains in co-training only (``adjust.trainable_beta``).
    """
    train = config.train
    if fresh and phase in ("baseline", "agent", "cotrain") and (trainer.run_dir / "pretrain_best.pt").exists():
        trainer._load_model(trainer.run_dir / "pretrain_best.pt", policy=False)
    if fresh and phase == "cotrain" and (trainer.run_dir / "agent_best.pt").exists():
        trainer._load_model(trainer.run_dir / "agent_best.pt", network=False)
    frozen = phase == "agent"
    trainer.network.requires_grad_(not frozen)
    if config.network.freeze_embeddings and hasattr(trainer.network, "embedding"):
        trainer.network.embedding.weight.requires_grad_(False)
    trainer.strength.log_factor.requires_grad_(phase == "cotrain" and config.adjust.trainable_beta)
    net_params = [p for p in trainer.network.parameters() if p.requires_grad]
    if phase == "cotrain":
        net_params += [p for p in trainer.strength.parameters() if p.requires_grad]
    trainer.net_optimizer = torch.optim.Adam(net_params, lr=train.lr, weight_decay=train.weight_decay) if not frozen else None
    trainer.agent_optimizer = torch.optim.Adam(trainer.policy.parameters(), lr=config.agent.lr) if phase in ("agent", "cotrain") else None


def train_epoch(
    trainer, phase: str, epoch: int, epochs: int, config: ExperimentConfig, before_step: Callable[[str], None] | None = None
) -> dict[str, float]:
    """One pass over ``trainer.train_batches`` with ``trainer._train_step``; the mean of each statistic.

    ``before_step(phase)`` runs before every step (translation: the learning-rate warm-up).
    """
    trainer.network.train(phase != "agent")
    trainer.policy.train()
    sums: dict[str, float] = {}
    interval_started, interval_sequences = time.perf_counter(), 0
    batches = epoch_batches(trainer, phase)
    bar = tqdm(batches, desc=f"{phase} {epoch}/{epochs}", leave=False, disable=not config.run.progress)
    for step, batch in enumerate(bar, start=1):
        batch = batch.to(trainer.device)
        if before_step is not None:
            before_step(phase)
        stats = trainer._train_step(phase, batch)
        for key, value in stats.items():
            sums[key] = sums.get(key, 0.0) + value
        trainer.global_step += 1
        interval_sequences += batch.size
        if trainer.global_step % 10 == 0:
            now = time.perf_counter()
            speed = {"sequences_per_second": interval_sequences / max(now - interval_started, 1e-9)}
            trainer.writer.scalars(phase, {**stats, **speed}, trainer.global_step - trainer.progress.start_step)
            interval_started, interval_sequences = now, 0
        bar.set_postfix({k: f"{v / step:.3f}" for k, v in sums.items() if k in ("task_loss", "reward")})
    return {key: value / max(len(batches), 1) for key, value in sums.items()}


def epoch_batches(trainer, phase: str):
    """What an epoch of ``phase`` passes over: the training batches, or for the agent phase the
    agent's held-out batches when ``data.agent_holdout`` keeps some (beyond the paper)."""
    held_out = getattr(trainer, "agent_batches", None)
    return held_out if phase == "agent" and held_out is not None else trainer.train_batches


def drga_step(
    trainer,
    phase: str,
    batch,
    config: ExperimentConfig,
    task_loss: Callable[[Rollout], Tensor],
    extra_loss: Callable[[], Tensor] | None = None,
) -> dict[str, float]:
    """One DRGA update of the ``agent`` or ``cotrain`` phase; its statistics.

    Encode once, K sampled adjustments of α, reward (eq. 5), REINFORCE with the K samples' mean
    reward as baseline (eqs. 6–7). ``task_loss(rollout)`` is eq. 12 on the revised attention;
    in co-training it trains the network (plus ``extra_loss()``, when given) together with the
    agent and β's learned factor; in agent pretraining it is only reported.
    """
    beta = trainer.strength()
    with torch.set_grad_enabled(phase == "cotrain"):  # the K samples (and a self-critical pass) share this encoding
        encoding = trainer.network.encode(batch)
    k, reward = config.agent.samples, config.reward
    step_beta = beta if phase == "cotrain" else beta.detach()
    r = rollout(
        trainer.network, trainer.policy, batch, step_beta,
        k, reward.gamma, reward.sqrt_l0, reward.delta, encoding=encoding, task_samples=config.train.task_loss_samples,
    )
    acting, acting_encoding, acting_batch = r, encoding, batch  # the rollout the agent learns from
    held_out = getattr(trainer, "agent_batches", None)
    if phase == "cotrain" and held_out is not None:  # beyond the paper: the agent learns on sentences the network never fit
        acting_batch = held_out.batch_at(trainer.global_step).to(batch.tokens.device)
        with torch.no_grad():
            acting_encoding = trainer.network.encode(acting_batch)
        acting = rollout(trainer.network, trainer.policy, acting_batch, beta.detach(), k, reward.gamma, reward.sqrt_l0,
                         reward.delta, encoding=acting_encoding)
    agent_reward = acting.terms.reward - reward.closeness * acting.shift if reward.closeness > 0 else acting.terms.reward
    baseline = None
    if config.agent.reward_baseline == "self-critical":  # beyond the paper: the reward of the mean action
        with torch.no_grad():
            greedy = rollout(trainer.network, trainer.policy, acting_batch, step_beta.detach(), k, reward.gamma, reward.sqrt_l0,
                             reward.delta, deterministic=True, encoding=acting_encoding)
        baseline = (greedy.terms.reward - reward.closeness * greedy.shift).view(-1, 1)
    agent_loss = reinforce_loss(acting.log_prob.view(-1, k), agent_reward.view(-1, k), config.agent.normalize_advantage, baseline)
    agent_loss = agent_loss - config.agent.entropy_coef * r.entropy
    if phase == "cotrain":
        reported = task_loss(r)
        loss = reported if extra_loss is None else reported + extra_loss()
        trainer.net_optimizer.zero_grad(set_to_none=True)
        trainer.agent_optimizer.zero_grad(set_to_none=True)
        total = loss + agent_loss
        ddp_loss = getattr(trainer, "_ddp_loss", None)  # drga/trainer.py under torchrun: DDP all-reduces the gradients
        (total if ddp_loss is None else ddp_loss(total)).backward()
        network_norm = trainer._clip(list(trainer.network.parameters()) + list(trainer.strength.parameters()))
        agent_norm = trainer._clip(trainer.policy.parameters())
        trainer.net_optimizer.step()
        trainer.agent_optimizer.step()
        trainer.strength.advance()
    else:
        with torch.no_grad():
            reported = task_loss(r)
        network_norm = None
        agent_norm = trainer._step(trainer.agent_optimizer, agent_loss, trainer.policy.parameters())
    terms = acting.terms
    advantage = agent_reward.view(-1, k) - (agent_reward.view(-1, k).mean(dim=1, keepdim=True) if baseline is None else baseline)
    signals = {
        "policy_entropy": acting.entropy.item(),
        "zeroed_fraction": acting.zeroed_fraction.item(),
        "advantage_std": advantage.std().item() if advantage.numel() > 1 else 0.0,
        "grad_norm_agent": float(agent_norm) if agent_norm is not None else float("nan"),
        **({"grad_norm_network": float(network_norm)} if network_norm is not None else {}),
    }
    return {
        **signals,
        "task_loss": reported.item(),
        "agent_loss": agent_loss.item(),
        "reward": terms.reward.mean().item(),
        "reward_log_likelihood": terms.log_likelihood.mean().item(),
        "reward_penalty": (reward.gamma * terms.penalty).mean().item(),
        "highlighted_fraction": terms.highlighted_fraction.mean().item(),
        "beta": beta.item(),
        "policy_sigma": acting.policy_std.item(),
        "attention_shift": acting.shift.mean().item(),
    }


def optimizer_step(optimizer: torch.optim.Optimizer, loss: Tensor, params, grad_clip: float) -> Tensor:
    """Zero the gradients, back-propagate ``loss``, clip ``params`` to ``grad_clip`` (0: no clipping), step;
    the gradient norm before clipping."""
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    norm = clip_gradients(params, grad_clip)
    optimizer.step()
    return norm


def clip_gradients(params, grad_clip: float) -> Tensor:
    """Clip the gradient norm of the parameters that have a gradient (``grad_clip`` 0: no clipping);
    the norm before clipping (0 when none has a gradient)."""
    with_grad = [p for p in params if p.grad is not None]
    if not with_grad:
        return torch.zeros(())
    return nn.utils.clip_grad_norm_(with_grad, grad_clip if grad_clip > 0 else float("inf"))
