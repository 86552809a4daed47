"""Algorithm 1 for translation: the phases of ``drga/trainer.py`` with perplexity and BLEU.

=========  =======================  ================================  ==============================
phase      starts from              trains                            picks its best epoch by
=========  =======================  ================================  ==============================
pretrain   a fresh network          network, cross-entropy (eq. 12)   dev BLEU (or perplexity), net-only
baseline   pretrain's best          network, cross-entropy            the same, net-only
agent      pretrain's best, frozen  agent, REINFORCE (eqs. 6–7)       the same, with-agent
cotrain    pretrain + agent's best  both; network on revised α        the same, ``train.select_mode``
=========  =======================  ================================  ==============================

``baseline`` (the equal-budget baseline: the pretrained network trained alone for as many more
epochs as co-training gets) and ``cotrain`` count their starting point as a candidate, so both
select among the same number of network-training epochs.

One DRGA step is :func:`drga.rollout.rollout` unchanged: the encoder and the teacher-forced
decoder run once, K action samples adjust every cross-attention array (one per target step, and
per layer and head for the Transformer), ``predict`` recomputes the output distribution, and the
reward of a sentence pair (eq. 5) is log P(y|X) (the sum of the target tokens' log-probabilities)
minus γ times the saliency penalty averaged over the arrays. The task loss is token-level
cross-entropy (label-smoothed if ``nmt.label_smoothing`` > 0) of the prediction from the
revised attention, averaged over the K samples (eq. 12).

Model selection uses greedy-decoded dev BLEU (``nmt.select_metric = "bleu"``, ties broken by
perplexity) or dev perplexity. The final report decodes the test set with every selected
checkpoint, greedy and beam search, in each checkpoint's modes.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import torch
from torch import Tensor, nn
from torch.utils.tensorboard import SummaryWriter
from tqdm.auto import tqdm

from agents.reinforce import reinforce_loss
from baselines import build_network
from baselines.nmt_common import PAD_ID, TranslationNetwork
from drga.checkpoint import FORMAT_VERSION, CheckpointError, load_checkpoint, load_module_state, save_atomic
from drga.config import ConfigError
from drga.data.parallel import (
    EncodedPair,
    ParallelBatchIterator,
    ParallelSplits,
    collate_parallel,
    encode_pairs,
    load_parallel_dataset,
)
from drga.data.subword import SubwordTokenizer
from drga.nmt.config import TranslationConfig, config_to_toml
from drga.nmt.decoding import DecodeSettings, agent_adjuster, decode_batches
from drga.nmt.metrics import perplexity, score_translations
from drga.reward import drga_reward
from drga.rollout import rollout
from drga.setup import build_policy, build_strength, resolve_device, seed_everything, state_and_action_size
from drga.trainer import PHASES, PhaseProgress, RunExistsError, print_flushed

#: Config fields a resumed run may change without changing its results.
RESUMABLE_CHANGES = {"run.device", "run.progress", "run.threads"}
MODES = ("net-only", "with-agent")


# --------------------------------------------------------------------------- data


@dataclass
class TranslationData:
    """The splits, the tokenizers and the encoded pairs of a translation run."""

    splits: ParallelSplits
    source_tokenizer: SubwordTokenizer
    target_tokenizer: SubwordTokenizer
    train: list[EncodedPair]
    dev: list[EncodedPair]
    test: list[EncodedPair]
    reports: list[str]


def train_tokenizers(config: TranslationConfig, splits: ParallelSplits, train_pairs) -> tuple[SubwordTokenizer, SubwordTokenizer]:
    """SentencePiece model(s) trained on the training side only (joint with ``nmt.shared_vocab``)."""
    nmt = config.nmt
    sources, targets = [p.source for p in train_pairs], [p.target for p in train_pairs]
    if nmt.shared_vocab:
        joint = SubwordTokenizer.train(sources + targets, nmt.vocab_size, nmt.subword_model)
        return joint, joint
    return (
        SubwordTokenizer.train(sources, nmt.vocab_size, nmt.subword_model),
        SubwordTokenizer.train(targets, nmt.vocab_size, nmt.subword_model),
    )


def load_translation_splits(config: TranslationConfig) -> ParallelSplits:
    """The raw sentence pairs of the configured data set."""
    data, nmt = config.experiment.data, config.nmt
    return load_parallel_dataset(
        data.dataset, data_dir=data.data_dir, source_lang=nmt.source_lang, target_lang=nmt.target_lang,
        train_files=nmt.train_files or None, dev_files=nmt.dev_files or None, test_files=nmt.test_files or None,
    )


def prepare_translation_data(
    config: TranslationConfig, tokenizers: tuple[SubwordTokenizer, SubwordTokenizer] | None = None
) -> TranslationData:
    """Load the pairs, take the seeded training subset, train (or reuse) the tokenizers, encode."""
    data = config.experiment.data
    splits = load_translation_splits(config)
    reports = list(splits.notes)
    train = splits.train
    if data.train_fraction < 1.0:
        keep = max(1, int(round(len(train) * data.train_fraction)))
        order = np.random.default_rng(data.split_seed).permutation(len(train))[:keep]
        train = [train[i] for i in sorted(order)]
        reports.append(f"train: a {data.train_fraction:g} subset, {len(train)} pairs (split seed {data.split_seed})")
    if tokenizers is None:
        tokenizers = train_tokenizers(config, splits, train)
    source_tok, target_tok = tokenizers
    encoded = {}
    for name, pairs in (("train", train), ("dev", splits.dev), ("test", splits.test)):
        encoded[name], report = encode_pairs(pairs, source_tok, target_tok, data.max_length, data.max_length, drop_long=name == "train")
        if not encoded[name]:
            raise ConfigError(f"data set '{data.dataset}' has no usable {name} pair (max_length {data.max_length})")
        reports.append(report.describe(name))
    shared = "one joint model" if source_tok is target_tok else "separate models"
    reports.append(
        f"subwords: SentencePiece {config.nmt.subword_model}, {shared} trained on the training side, "
        f"{len(source_tok)} source / {len(target_tok)} target pieces"
    )
    return TranslationData(splits, source_tok, target_tok, encoded["train"], encoded["dev"], encoded["test"], reports)


def build_translation_network(config: TranslationConfig, source_vocab: int, target_vocab: int) -> TranslationNetwork:
    """The configured network from ``[network]`` and the translation options of ``[nmt]``."""
    net, nmt = config.experiment.network, config.nmt
    hyper = {k: v for k, v in vars(net).items() if k not in ("name", "embeddings_path")}
    hyper.update(encoder=nmt.encoder, rerun_decoder=nmt.rerun_decoder, share_embeddings=nmt.shared_vocab)
    try:
        network = build_network(net.name, source_vocab, target_vocab, **hyper)
    except ValueError as error:
        raise ConfigError(f"network '{net.name}': {error}") from None
    if not isinstance(network, TranslationNetwork):
        raise ConfigError(f"network '{net.name}' is not a translation network; see `drga networks` (input 'parallel')")
    return network


def token_loss(output: Tensor, labels: Tensor, smoothing: float = 0.0) -> Tensor:
    """Token-level cross-entropy over the real target tokens (eq. 12), label-smoothed with ε = ``smoothing``."""
    log_probs = torch.log_softmax(output.float(), dim=-1)
    loss = -log_probs.gather(-1, labels.unsqueeze(-1)).squeeze(-1)
    if smoothing > 0:
        loss = (1.0 - smoothing) * loss - smoothing * log_probs.mean(dim=-1)
    real = (labels != PAD_ID).to(loss.dtype)
    return (loss * real).sum() / real.sum().clamp_min(1.0)


def default_run_name(config: TranslationConfig) -> str:
    """``run.run_name``, or <dataset>-<net>-seed<seed>."""
    exp = config.experiment
    return exp.run.run_name or f"{exp.data.dataset}-{exp.network.name}-seed{exp.run.seed}"


# --------------------------------------------------------------------------- evaluation


@dataclass
class TranslationEval:
    """Dev or test scores of one mode: teacher-forced perplexity and reward, decoded BLEU and chrF."""

    perplexity: float
    log_likelihood: float  #: mean log P(y|X) per sentence
    reward: float
    penalty: float
    highlighted_fraction: float
    bleu: float | None
    chrf: float | None
    sentences: int
    tokens: int
    bleu_signature: str = ""
    chrf_signature: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def numbers(self) -> dict[str, float]:
        """The numeric fields (for logs and TensorBoard)."""
        return {k: float(v) for k, v in self.as_dict().items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


@torch.no_grad()
def teacher_forced_scores(
    network: TranslationNetwork, batches, config: TranslationConfig, mode: str, policy=None, beta=None, device="cpu"
) -> dict[str, float]:
    """Perplexity, mean log P(y|X), reward (eq. 5) and its parts under teacher forcing."""
    reward = config.experiment.reward
    was_training = network.training
    network.eval()
    totals = dict(nll=0.0, tokens=0, log_likelihood=0.0, reward=0.0, penalty=0.0, highlighted_fraction=0.0, sentences=0)
    for batch in batches:
        batch = batch.to(device)
        if mode == "net-only":
            encoding = network.encode(batch)
            output = network.predict(encoding, encoding.attention)
            log_likelihood = network.log_likelihood(output, batch.labels)
            terms = drga_reward(log_likelihood, encoding.attention, [s.mask for s in encoding.sites], reward.gamma, reward.sqrt_l0, reward.delta)
        else:
            r = rollout(network, policy, batch, torch.as_tensor(beta), 1, reward.gamma, reward.sqrt_l0, reward.delta, deterministic=True)
            terms = r.terms
        totals["nll"] -= terms.log_likelihood.sum().item()
        totals["tokens"] += int((batch.labels != PAD_ID).sum())
        totals["log_likelihood"] += terms.log_likelihood.sum().item()
        totals["reward"] += terms.reward.sum().item()
        totals["penalty"] += terms.penalty.sum().item()
        totals["highlighted_fraction"] += terms.highlighted_fraction.sum().item()
        totals["sentences"] += batch.size
    network.train(was_training)
    n = max(totals["sentences"], 1)
    return {
        "perplexity": perplexity(totals["nll"], totals["tokens"]),
        "log_likelihood": totals["log_likelihood"] / n,
        "reward": totals["reward"] / n,
        "penalty": totals["penalty"] / n,
        "highlighted_fraction": totals["highlighted_fraction"] / n,
        "sentences": totals["sentences"],
        "tokens": totals["tokens"],
    }


# --------------------------------------------------------------------------- trainer


class TranslationTrainer:
    """The phases of Algorithm 1 for a translation network (see the module docstring)."""

    def __init__(
        self, config: TranslationConfig, resume: bool = False, overwrite: bool = False, log: Callable[[str], None] = print_flushed
    ):
        config.validate()
        self.config = config
        exp = config.experiment
        self.log = log
        self.run_dir = Path(exp.run.logdir) / default_run_name(config)
        last = self.run_dir / "last.pt"
        if last.exists() and not (resume or overwrite):
            raise RunExistsError(f"{self.run_dir} already holds a run; continue it with --resume or replace it with --overwrite")
        if resume and not last.exists():
            raise CheckpointError(f"nothing to resume: {last} does not exist")
        if overwrite and not resume:
            for stale in self.run_dir.glob("*.pt"):
                stale.unlink()
        self.device = resolve_device(exp.run.device)
        if exp.run.threads > 0:
            torch.set_num_threads(exp.run.threads)

        seed_everything(exp.run.seed)
        saved_tokenizers = self._saved_tokenizers(last) if resume else None
        self.data = prepare_translation_data(config, saved_tokenizers)
        for line in self.data.reports:
            self.log(f"data  {line}")
        size = exp.data.batch_size
        self.train_batches = ParallelBatchIterator(
            self.data.train, size, shuffle=True, seed=exp.run.seed, epoch_size=config.nmt.epoch_pairs
        )
        if config.nmt.epoch_pairs:
            self.log(f"data  an epoch is {self.train_batches.epoch_size} training pairs drawn afresh each epoch (nmt.epoch_pairs)")
        self.dev_batches = ParallelBatchIterator(self.data.dev, size * 2, shuffle=False)
        self.test_batches = ParallelBatchIterator(self.data.test, size * 2, shuffle=False)
        limit = config.nmt.dev_bleu_sentences
        self.dev_bleu_pairs = self.data.dev[:limit] if limit else self.data.dev
        self.network = build_translation_network(config, len(self.data.source_tokenizer), len(self.data.target_tokenizer)).to(self.device)
        probe = collate_parallel(self.data.train[:2]).to(self.device)
        self.state_size, self.action_size = state_and_action_size(self.network, probe)
        self.policy = build_policy(exp, self.state_size, self.action_size).to(self.device)
        self.strength = build_strength(exp, len(self.train_batches)).to(self.device)
        self.plan = [p for p in PHASES if self._epochs(p) > 0]
        self.progress = PhaseProgress()
        self.history: list[dict[str, Any]] = []
        self.global_step = 0
        self.net_optimizer: torch.optim.Optimizer | None = None
        self.agent_optimizer: torch.optim.Optimizer | None = None
        resume_payload = self._load_resume(last) if resume else None

        self.run_dir.mkdir(parents=True, exist_ok=True)
        (self.run_dir / "config.toml").write_text(config_to_toml(config), encoding="utf-8")
        (self.run_dir / "source.spm.model").write_bytes(self.data.source_tokenizer.model_proto)
        (self.run_dir / "target.spm.model").write_bytes(self.data.target_tokenizer.model_proto)
        self.writer = SummaryWriter(str(self.run_dir / "tb"), purge_step=self.global_step if resume else None)
        if not resume:
            table = "\n".join(f"|{k}|{v}|" for k, v in config.flat().items())
            self.writer.add_text("hyperparameters", "|param|value|\n|-|-|\n" + table)
        self._resume_payload = resume_payload

    # ----------------------------------------------------------------------------- phases

    def _epochs(self, phase: str) -> int:
        train = self.config.experiment.train
        return {
            "pretrain": train.pretrain_epochs,
            "baseline": train.cotrain_epochs if train.fair_baseline else 0,
            "agent": train.agent_epochs,
            "cotrain": train.cotrain_epochs,
        }[phase]

    def run(self) -> dict[str, Any]:
        try:
            while self.progress.index < len(self.plan):
                self._run_phase(self.plan[self.progress.index])
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
            scores = self._evaluate_dev(phase)  # the starting point is a candidate too
            self._consider(phase, scores, epoch=0)
        epochs = self._epochs(phase)
        self.log(f"\n== phase {phase}: {epochs} epochs ==")
        while not self.progress.done and self.progress.epoch < epochs:
            epoch = self.progress.epoch + 1
            self.train_batches.set_epoch(PHASES.index(phase) * 10_000 + epoch)
            started = time.time()
            train_stats = self._train_epoch(phase, epoch, epochs)
            scores = self._evaluate_dev(phase)
            improved = self._consider(phase, scores, epoch)
            self.progress.epoch = epoch
            patience = self.config.experiment.train.patience
            if patience and self.progress.stale >= patience:
                self.progress.done = True
            elapsed = time.time() - started
            record = {"phase": phase, "epoch": epoch, "seconds": round(elapsed, 2), **train_stats}
            record.update({f"dev_{mode}_{k}": v for mode, r in scores.items() for k, v in r.numbers().items()})
            self.history.append(record)
            self._log_epoch(phase, epoch, epochs, scores, train_stats, improved, elapsed)
            self._save_last()
        if epochs and self.progress.epoch < epochs:
            self.log(f"   early stop: no better dev score for {self.config.experiment.train.patience} epochs")

    def train_one_epoch(self, phase: str, epoch: int = 1) -> dict[str, float]:
        """Start ``phase`` afresh and train one epoch of it, without evaluation or checkpoints (benchmarks)."""
        if phase not in PHASES:
            raise ValueError(f"unknown phase {phase!r}; one of {PHASES}")
        self._start_phase(phase, fresh=True)
        self.train_batches.set_epoch(PHASES.index(phase) * 10_000 + epoch)
        return self._train_epoch(phase, epoch, epoch)

    def _start_phase(self, phase: str, fresh: bool) -> None:
        train = self.config.experiment.train
        if fresh and phase in ("baseline", "agent", "cotrain") and (self.run_dir / "pretrain_best.pt").exists():
            self._load_model(self.run_dir / "pretrain_best.pt", policy=False)
        if fresh and phase == "cotrain" and (self.run_dir / "agent_best.pt").exists():
            self._load_model(self.run_dir / "agent_best.pt", network=False)
        frozen = phase == "agent"
        self.network.requires_grad_(not frozen)
        self.strength.rho.requires_grad_(phase == "cotrain" and self.config.experiment.adjust.trainable_beta)
        net_params = [p for p in self.network.parameters() if p.requires_grad]
        if phase == "cotrain":
            net_params += [p for p in self.strength.parameters() if p.requires_grad]
        self.net_optimizer = torch.optim.Adam(net_params, lr=train.lr, weight_decay=train.weight_decay) if not frozen else None
        self.agent_optimizer = (
            torch.optim.Adam(self.policy.parameters(), lr=self.config.experiment.agent.lr) if phase in ("agent", "cotrain") else None
        )

    # ----------------------------------------------------------------------------- training

    def _train_epoch(self, phase: str, epoch: int, epochs: int) -> dict[str, float]:
        self.network.train(phase != "agent")
        self.policy.train()
        sums: dict[str, float] = {}
        bar = tqdm(self.train_batches, desc=f"{phase} {epoch}/{epochs}", leave=False, disable=not self.config.experiment.run.progress)
        for step, batch in enumerate(bar, start=1):
            batch = batch.to(self.device)
            self._warmup(phase)
            stats = self._train_step(phase, batch)
            for key, value in stats.items():
                sums[key] = sums.get(key, 0.0) + value
            self.global_step += 1
            if self.global_step % 10 == 0:
                for key, value in stats.items():
                    self.writer.add_scalar(f"{phase}/train/{key}", value, self.global_step)
            bar.set_postfix({k: f"{v / step:.3f}" for k, v in sums.items() if k in ("task_loss", "reward")})
        return {key: value / max(len(self.train_batches), 1) for key, value in sums.items()}

    def _warmup(self, phase: str) -> None:
        """Linear learning-rate warm-up over the first ``nmt.warmup_steps`` steps of pretraining."""
        warmup = self.config.nmt.warmup_steps
        if phase == "pretrain" and warmup > 0 and self.net_optimizer is not None:
            factor = min(1.0, (self.global_step + 1) / warmup)
            for group in self.net_optimizer.param_groups:
                group["lr"] = self.config.experiment.train.lr * factor

    def _train_step(self, phase: str, batch) -> dict[str, float]:
        exp, smoothing = self.config.experiment, self.config.nmt.label_smoothing
        if phase in ("pretrain", "baseline"):
            loss = token_loss(self.network(batch), batch.labels, smoothing)  # eq. 12
            self._step(self.net_optimizer, loss, self.network.parameters())
            return {"task_loss": loss.item()}

        # DRGA: encode once, K sampled adjustments of every cross-attention array, reward (eq. 5), REINFORCE.
        beta = self.strength()
        encoding = None
        if phase == "agent":
            with torch.no_grad():
                encoding = self.network.encode(batch)
        k = exp.agent.samples
        r = rollout(
            self.network, self.policy, batch, beta if phase == "cotrain" else beta.detach(),
            k, exp.reward.gamma, exp.reward.sqrt_l0, exp.reward.delta, encoding=encoding,
        )
        agent_loss = reinforce_loss(r.log_prob.view(-1, k), r.terms.reward.view(-1, k), exp.agent.normalize_advantage)
        agent_loss = agent_loss - exp.agent.entropy_coef * r.entropy
        if phase == "cotrain":
            task_loss = token_loss(r.output, batch.labels.repeat_interleave(k, dim=0), smoothing)  # eq. 12 on revised α
            self.net_optimizer.zero_grad(set_to_none=True)
            self.agent_optimizer.zero_grad(set_to_none=True)
            (task_loss + agent_loss).backward()
            self._clip(list(self.network.parameters()) + list(self.strength.parameters()))
            self._clip(self.policy.parameters())
            self.net_optimizer.step()
            self.agent_optimizer.step()
            self.strength.advance()
        else:
            with torch.no_grad():
                task_loss = token_loss(r.output, batch.labels.repeat_interleave(k, dim=0), smoothing)
            self._step(self.agent_optimizer, agent_loss, self.policy.parameters())
        terms = r.terms
        return {
            "task_loss": task_loss.item(),
            "agent_loss": agent_loss.item(),
            "reward": terms.reward.mean().item(),
            "reward_log_likelihood": terms.log_likelihood.mean().item(),
            "reward_penalty": (exp.reward.gamma * terms.penalty).mean().item(),
            "highlighted_fraction": terms.highlighted_fraction.mean().item(),
            "beta": beta.item(),
            "policy_sigma": r.policy_std.item(),
        }

    def _step(self, optimizer: torch.optim.Optimizer, loss: Tensor, params) -> None:
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self._clip(params)
        optimizer.step()

    def _clip(self, params) -> None:
        if self.config.experiment.train.grad_clip > 0:
            nn.utils.clip_grad_norm_([p for p in params if p.grad is not None], self.config.experiment.train.grad_clip)

    # ----------------------------------------------------------------------------- evaluation

    def decode_settings(self, beam_size: int = 1) -> DecodeSettings:
        """Decoding as configured in ``[nmt]``, greedy unless ``beam_size`` > 1."""
        nmt = self.config.nmt
        return DecodeSettings(beam_size, nmt.length_penalty, nmt.decode_length_ratio, self.config.experiment.data.max_length + 1)

    def translate_pairs(self, pairs: Sequence[EncodedPair], mode: str, beam_size: int = 1, description: str = "decode") -> list[str]:
        """Detokenized translations of ``pairs`` in their order."""
        adjust = agent_adjuster(self.policy, self.strength().detach()) if mode == "with-agent" else None
        batches = ParallelBatchIterator(pairs, self.config.experiment.data.batch_size * 2, shuffle=False)
        ids = decode_batches(
            self.network, batches, self.decode_settings(beam_size), adjust, self.device,
            progress=self.config.experiment.run.progress, description=description, total=len(batches),
        )
        return [self.data.target_tokenizer.decode(ids[p.index]) for p in pairs]

    def evaluate(
        self, split: str, mode: str, beam_size: int = 1, bleu: bool = True
    ) -> tuple[TranslationEval, list[str]]:
        """Scores of ``split`` (dev or test) in ``mode``; BLEU of greedy (beam 1) or beam decoding."""
        batches = self.dev_batches if split == "dev" else self.test_batches
        forced = teacher_forced_scores(
            self.network, batches, self.config, mode, self.policy, self.strength().detach(), self.device
        )
        hypotheses: list[str] = []
        scores = None
        if bleu:
            pairs = self.dev_bleu_pairs if split == "dev" else self.data.test
            raw = self.data.splits.dev if split == "dev" else self.data.splits.test
            hypotheses = self.translate_pairs(pairs, mode, beam_size, description=f"{split} {mode} beam {beam_size}")
            scores = score_translations(hypotheses, [raw[p.index].target for p in pairs])
        result = TranslationEval(
            perplexity=forced["perplexity"], log_likelihood=forced["log_likelihood"], reward=forced["reward"],
            penalty=forced["penalty"], highlighted_fraction=forced["highlighted_fraction"],
            bleu=scores.bleu if scores else None, chrf=scores.chrf if scores else None,
            sentences=int(forced["sentences"]), tokens=int(forced["tokens"]),
            bleu_signature=scores.bleu_signature if scores else "",
            chrf_signature=scores.chrf_signature if scores else "",
        )
        return result, hypotheses

    def _evaluate_dev(self, phase: str) -> dict[str, TranslationEval]:
        modes = {"pretrain": ["net-only"], "baseline": ["net-only"], "agent": ["with-agent"], "cotrain": list(MODES)}
        return {mode: self.evaluate("dev", mode)[0] for mode in modes[phase]}

    def _selection_key(self, result: TranslationEval) -> tuple[float, float]:
        bleu = result.bleu if result.bleu is not None else 0.0
        if self.config.nmt.select_metric == "bleu":
            return (bleu, -result.perplexity)
        return (-result.perplexity, bleu)

    def _consider(self, phase: str, scores: dict[str, TranslationEval], epoch: int) -> bool:
        mode = self.config.experiment.train.select_mode if phase == "cotrain" else next(iter(scores))
        score = self._selection_key(scores[mode])
        if self.progress.best is None or score > tuple(self.progress.best):
            self.progress.best, self.progress.stale = score, 0
            save_atomic(self._model_payload(phase, epoch, scores), self.run_dir / f"{phase}_best.pt")
            return True
        self.progress.stale += 1
        return False

    # ----------------------------------------------------------------------------- checkpoints

    def _model_payload(self, phase: str, epoch: int, scores: dict[str, TranslationEval] | None = None) -> dict[str, Any]:
        return {
            "format": FORMAT_VERSION,
            "kind": "model",
            "task": "translation",
            "phase": phase,
            "epoch": epoch,
            "net_name": self.config.experiment.network.name,
            "has_agent": phase in ("agent", "cotrain"),
            "config": self.config.to_dict(),
            "source_tokenizer": self.data.source_tokenizer.model_proto,
            "target_tokenizer": self.data.target_tokenizer.model_proto,
            "shared_tokenizer": self.data.source_tokenizer is self.data.target_tokenizer,
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

    def _saved_tokenizers(self, path: Path) -> tuple[SubwordTokenizer, SubwordTokenizer]:
        payload = load_checkpoint(path)
        return tokenizers_from_payload(payload)

    def _load_model(self, path: Path, network: bool = True, policy: bool = True) -> dict[str, Any]:
        payload = load_checkpoint(path)
        if payload.get("net_name") != self.config.experiment.network.name:
            raise CheckpointError(f"{path} holds a '{payload.get('net_name')}' network, not '{self.config.experiment.network.name}'")
        if network:
            load_module_state(self.network, payload["network"], "network", path)
            load_module_state(self.strength, payload["strength"], "adjusting module", path)
        if policy:
            load_module_state(self.policy, payload["policy"], "agent", path)
        return payload

    def _load_resume(self, path: Path) -> dict[str, Any]:
        payload = self._load_model(path)
        saved = {f"{s}.{k}": v for s, values in payload["config"].items() for k, v in values.items()}
        changed = sorted(k for k, v in self.config.flat().items() if saved.get(k) != v and k not in RESUMABLE_CHANGES)
        if changed:
            raise CheckpointError(
                f"cannot resume {path}: the configuration differs in {', '.join(changed)}; resume with the same settings, or start a new run"
            )
        progress = payload["progress"]
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

    def _log_epoch(self, phase, epoch, epochs, scores: dict[str, TranslationEval], train_stats, improved, elapsed) -> None:
        for mode, result in scores.items():
            for key, value in result.numbers().items():
                if key not in ("sentences", "tokens") and math.isfinite(value):
                    self.writer.add_scalar(f"{phase}/dev/{mode}/{key}", value, self.global_step)
        for key, value in train_stats.items():
            self.writer.add_scalar(f"{phase}/epoch/{key}", value, self.global_step)
        parts = [f"dev {mode} ppl {r.perplexity:.2f} BLEU {r.bleu:.2f}" for mode, r in scores.items()]
        if "reward" in train_stats:
            parts.append(
                f"reward {train_stats['reward']:.2f} (log P {train_stats['reward_log_likelihood']:.2f}, "
                f"penalty {train_stats['reward_penalty']:.3f}) N/L {train_stats['highlighted_fraction']:.2f} β {train_stats['beta']:.3f}"
            )
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
        beam = self.config.nmt.beam_size if self.config.nmt.final_beam and self.config.nmt.beam_size > 1 else None
        out_dir = self.run_dir / "translations"
        out_dir.mkdir(exist_ok=True)
        signature = ""
        target_lang = self.data.splits.target_lang
        for label, phase, modes in candidates:
            path = self.run_dir / f"{phase}_best.pt"
            if phase not in self.plan or not path.exists():
                continue
            payload = self._load_model(path)
            row: dict[str, Any] = {"phase": phase, "epoch": payload["epoch"], "checkpoint": str(path)}
            for mode in modes:
                greedy, hyps = self.evaluate("test", mode, beam_size=1)
                (out_dir / f"test.{phase}.{mode}.greedy.{target_lang}").write_text("\n".join(hyps) + "\n", encoding="utf-8")
                row[f"test_{mode}"] = greedy.as_dict()
                signature = f"BLEU {greedy.bleu_signature}; chrF {greedy.chrf_signature}"
                if beam:
                    searched, hyps = self.evaluate("test", mode, beam_size=beam)
                    (out_dir / f"test.{phase}.{mode}.beam{beam}.{target_lang}").write_text("\n".join(hyps) + "\n", encoding="utf-8")
                    row[f"test_{mode}_beam"] = searched.as_dict()
                row[f"dev_{mode}"] = payload["dev"].get(mode)
            rows[label] = row
        results = {"run_dir": str(self.run_dir), "config": self.config.to_dict(), "results": rows, "history": self.history,
                   "beam_size": beam, "bleu_signature": signature}
        (self.run_dir / "results.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
        self._print_table(rows, beam, signature)
        metrics = {
            f"hparam/{row['phase']}_{key.replace('-', '_')}_bleu": row[key]["bleu"]
            for row in rows.values() for key in row if key.startswith("test_") and row[key].get("bleu") is not None
        }
        hparams = {k: (v if isinstance(v, (int, float, str, bool)) else str(v)) for k, v in self.config.flat().items()}
        self.writer.add_hparams(hparams, metrics, run_name="hparams")
        self.log(f"\nresults: {self.run_dir / 'results.json'}; translations in {out_dir}")
        self.log(f"TensorBoard: tensorboard --logdir {self.run_dir / 'tb'}")
        return results

    def _print_table(self, rows: dict[str, dict[str, Any]], beam: int | None, signature: str) -> None:
        test_name = f"{self.data.splits.name} test, {len(self.data.test)} sentences"
        self.log(f"\n== test ({test_name}) ==")
        header = f"{'model':26s} {'mode':10s} {'ppl':>7s} {'BLEU greedy':>11s} {'chrF greedy':>11s}"
        if beam:
            header += f" {f'BLEU beam{beam}':>11s} {f'chrF beam{beam}':>11s}"
        self.log(header + "  (best epoch)")
        for label, row in rows.items():
            for mode in MODES:
                if f"test_{mode}" not in row:
                    continue
                g = row[f"test_{mode}"]
                line = f"{label:26s} {mode:10s} {g['perplexity']:7.2f} {g['bleu']:11.2f} {g['chrf']:11.2f}"
                if beam:
                    b = row[f"test_{mode}_beam"]
                    line += f" {b['bleu']:11.2f} {b['chrf']:11.2f}"
                self.log(line + f"  ({row['phase']} epoch {row['epoch']})")
        self.log(f"sacrebleu: {signature}")


def tokenizers_from_payload(payload: dict[str, Any]) -> tuple[SubwordTokenizer, SubwordTokenizer]:
    """The (source, target) tokenizers saved in a translation checkpoint (one object when shared)."""
    if payload.get("task") != "translation":
        raise CheckpointError("this checkpoint holds no translation model (no subword tokenizers)")
    source = SubwordTokenizer(payload["source_tokenizer"])
    target = source if payload.get("shared_tokenizer") else SubwordTokenizer(payload["target_tokenizer"])
    return source, target
