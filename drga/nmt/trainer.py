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

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import torch
from torch import Tensor

from drga.baselines import build_network
from drga.baselines.nmt_common import PAD_ID, TranslationNetwork
from drga.checkpoint import CheckpointError, load_checkpoint
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
from drga.nmt.config import TranslationConfig, config_to_toml, translation_config_from_dict
from drga.nmt.evaluation import MODES, TranslationEval, decode_pairs, decode_settings, evaluate_translation
from drga import phase_loop, run_state  # the phase loop, run folder and checkpoints both trainers share
from drga.run_state import PhaseProgress, default_run_name, log_info
from drga.setup import build_policy, build_strength, resolve_device, seed_everything, state_and_action_size

#: Config fields a resumed run may change without changing its results.
RESUMABLE_CHANGES = {"run.device", "run.progress", "run.threads", "run.logdir"}


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
    hyper = {k: v for k, v in vars(net).items() if k not in ("name", "vectors")}
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


# --------------------------------------------------------------------------- trainer


class TranslationTrainer:
    """The phases of Algorithm 1 for a translation network (see the module docstring).

    The phase loop, run folder, checkpoints and resume are ``drga/phase_loop.py`` and
    ``drga/run_state.py``, shared with the classification trainer; this class supplies the
    translation parts: data and subwords, the token-level loss, perplexity and BLEU, decoding.
    """

    def __init__(
        self, config: TranslationConfig, resume: bool = False, overwrite: bool = False, log: Callable[[str], None] = log_info
    ):
        config.validate()
        self.config = config
        exp = config.experiment
        self.log = log
        self.run_dir = Path(exp.run.logdir) / default_run_name(exp)
        last = run_state.prepare_run_dir(self.run_dir, resume, overwrite)
        self.device = resolve_device(exp.run.device)
        if exp.run.threads > 0:
            torch.set_num_threads(exp.run.threads)

        seed_everything(exp.run.seed)
        saved_tokenizers = tokenizers_from_payload(load_checkpoint(last)) if resume else None
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
        self.plan = phase_loop.phase_plan(exp.train)
        self.progress = PhaseProgress()
        self.history: list[dict[str, Any]] = []
        self.global_step = 0
        self.net_optimizer: torch.optim.Optimizer | None = None
        self.agent_optimizer: torch.optim.Optimizer | None = None
        resume_payload = self._load_resume(last) if resume else None

        resume_at = (self.plan[self.progress.index], run_state.phase_step(self)) if resume and self.progress.index < len(self.plan) else None
        self.writer = run_state.open_run_folder(self.run_dir, config_to_toml(config), resume_at)
        (self.run_dir / "source.spm.model").write_bytes(self.data.source_tokenizer.model_proto)
        (self.run_dir / "target.spm.model").write_bytes(self.data.target_tokenizer.model_proto)
        self._resume_payload = resume_payload

    # ----------------------------------------------------------------------------- phases (drga/phase_loop.py)

    def _epochs(self, phase: str) -> int:
        return phase_loop.phase_epochs(self.config.experiment.train, phase)

    def run(self) -> dict[str, Any]:
        return phase_loop.run_phases(self)

    def _run_phase(self, phase: str) -> None:
        train = self.config.experiment.train
        phase_loop.run_phase(self, phase, train.patience, TranslationEval.numbers, plateau_lr_factor=train.plateau_lr_factor,
                             plateau_patience=train.plateau_patience)

    def train_one_epoch(self, phase: str, epoch: int = 1) -> dict[str, float]:
        """Start ``phase`` afresh and train one epoch of it, without evaluation or checkpoints (benchmarks)."""
        return phase_loop.train_one_epoch(self, phase, epoch)

    def _start_phase(self, phase: str, fresh: bool) -> None:
        phase_loop.start_phase(self, phase, fresh, self.config.experiment)

    # ----------------------------------------------------------------------------- training

    def _train_epoch(self, phase: str, epoch: int, epochs: int) -> dict[str, float]:
        return phase_loop.train_epoch(self, phase, epoch, epochs, self.config.experiment, before_step=self._warmup)

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
            norm = self._step(self.net_optimizer, loss, self.network.parameters())
            return {"task_loss": loss.item(), "grad_norm_network": float(norm)}
        # DRGA on every cross-attention array; eq. 12 on the revised α, token-level, over the K samples.
        labels = batch.labels.repeat_interleave(exp.agent.samples, dim=0)
        return phase_loop.drga_step(self, phase, batch, exp, lambda r: token_loss(r.output, labels, smoothing))

    def _step(self, optimizer: torch.optim.Optimizer, loss: Tensor, params) -> Tensor:
        return phase_loop.optimizer_step(optimizer, loss, params, self.config.experiment.train.grad_clip)

    def _clip(self, params) -> Tensor:
        return phase_loop.clip_gradients(params, self.config.experiment.train.grad_clip)

    # ----------------------------------------------------------------------------- evaluation

    def decode_settings(self, beam_size: int = 1):
        """Decoding as configured in ``[nmt]``, greedy unless ``beam_size`` > 1."""
        return decode_settings(self.config, beam_size)

    def translate_pairs(self, pairs: Sequence[EncodedPair], mode: str, beam_size: int = 1, description: str = "decode") -> list[str]:
        """Detokenized translations of ``pairs`` in their order."""
        return decode_pairs(
            self.network, pairs, self.data.target_tokenizer, self.decode_settings(beam_size), mode, self.policy,
            self.strength().detach(), self.device, self.config.experiment.data.batch_size * 2,
            self.config.experiment.run.progress, description,
        )

    def evaluate(self, split: str, mode: str, beam_size: int = 1, bleu: bool = True) -> tuple[TranslationEval, list[str]]:
        """Scores of ``split`` (dev or test) in ``mode``; BLEU of greedy (beam 1) or beam decoding."""
        batches = self.dev_batches if split == "dev" else self.test_batches
        decode = None
        if bleu:
            pairs = self.dev_bleu_pairs if split == "dev" else self.data.test
            raw = self.data.splits.dev if split == "dev" else self.data.splits.test
            decode = (pairs, [raw[p.index].target for p in pairs], self.data.target_tokenizer)
        return evaluate_translation(
            self.network, batches, self.config, mode, self.policy, self.strength().detach(), self.device,
            decode=decode, beam_size=beam_size, progress=self.config.experiment.run.progress,
        )

    def _evaluate_dev(self, phase: str) -> dict[str, TranslationEval]:
        return {mode: self.evaluate("dev", mode)[0] for mode in phase_loop.DEV_MODES[phase]}

    def _selection_key(self, result: TranslationEval) -> tuple[float, float]:
        bleu = result.bleu if result.bleu is not None else 0.0
        if self.config.nmt.select_metric == "bleu":
            return (bleu, -result.perplexity)
        return (-result.perplexity, bleu)

    def _consider(self, phase: str, scores: dict[str, TranslationEval], epoch: int) -> bool:
        mode = run_state.selection_mode(phase, scores, self.config.experiment.train.select_mode)
        others = {other: self._selection_key(r) for other, r in scores.items() if other != mode}
        return run_state.consider(self, phase, scores, epoch, self._selection_key(scores[mode]), others)

    # ----------------------------------------------------------------------------- checkpoints (drga/run_state.py)

    def _model_payload(self, phase: str, epoch: int, scores: dict[str, TranslationEval] | None = None) -> dict[str, Any]:
        return run_state.model_payload(
            self, phase, epoch, scores, self.config.to_dict(), self.config.experiment.network.name,
            task="translation",
            source_tokenizer=self.data.source_tokenizer.model_proto,
            target_tokenizer=self.data.target_tokenizer.model_proto,
            shared_tokenizer=self.data.source_tokenizer is self.data.target_tokenizer,
        )

    def _save_last(self) -> None:
        run_state.save_last(self)

    def _load_model(self, path: Path, network: bool = True, policy: bool = True) -> dict[str, Any]:
        return run_state.load_model(self, path, self.config.experiment.network.name, network, policy)

    def _load_resume(self, path: Path) -> dict[str, Any]:
        saved = lambda mapping: translation_config_from_dict(mapping).flat()  # noqa: E731
        return run_state.resume_from(self, path, saved, self.config.flat(), RESUMABLE_CHANGES)

    def _restore_optimizers(self, payload: dict[str, Any]) -> None:
        run_state.restore_optimizers(self, payload)

    # ----------------------------------------------------------------------------- reporting

    def _log_epoch(self, phase, epoch, epochs, scores: dict[str, TranslationEval], train_stats, improved, elapsed) -> None:
        values = {mode: r.numbers() for mode, r in scores.items()}
        run_state.log_dev_scalars(self.writer, phase, values, run_state.phase_step(self), skip=("sentences", "tokens"))
        self.writer.scalars(phase, train_stats, run_state.phase_step(self), tag=lambda key: f"epoch/{key}")
        parts = [f"dev {mode} ppl {r.perplexity:.2f} BLEU {r.bleu:.2f}" for mode, r in scores.items()]
        if "reward" in train_stats:
            parts.append(
                f"reward {train_stats['reward']:.2f} (log P {train_stats['reward_log_likelihood']:.2f}, "
                f"penalty {train_stats['reward_penalty']:.3f}) N/L {train_stats['highlighted_fraction']:.2f} β {train_stats['beta']:.3f}"
            )
        self.log(run_state.epoch_line(phase, epoch, epochs, parts, train_stats, improved, elapsed))

    def _final_report(self) -> dict[str, Any]:
        rows: dict[str, dict[str, Any]] = {}
        beam = self.config.nmt.beam_size if self.config.nmt.final_beam and self.config.nmt.beam_size > 1 else None
        out_dir = self.run_dir / "translations"
        out_dir.mkdir(exist_ok=True)
        signature = ""
        target_lang = self.data.splits.target_lang
        for label, phase, mode, path, payload in run_state.best_checkpoints(self):
            row: dict[str, Any] = rows.setdefault(label, {"phase": phase, "epoch": payload["epoch"], "checkpoint": str(path)})
            row[f"epoch_{mode}"] = payload["epoch"]
            greedy, hyps = self.evaluate("test", mode, beam_size=1)
            (out_dir / f"test.{phase}.{mode}.greedy.{target_lang}").write_text("\n".join(hyps) + "\n", encoding="utf-8")
            row[f"test_{mode}"] = greedy.as_dict()
            signature = f"BLEU {greedy.bleu_signature}; chrF {greedy.chrf_signature}"
            if beam:
                searched, hyps = self.evaluate("test", mode, beam_size=beam)
                (out_dir / f"test.{phase}.{mode}.beam{beam}.{target_lang}").write_text("\n".join(hyps) + "\n", encoding="utf-8")
                row[f"test_{mode}_beam"] = searched.as_dict()
            row[f"dev_{mode}"] = payload["dev"].get(mode)
        results = {"run_dir": str(self.run_dir), "config": self.config.to_dict(), "results": rows, "history": self.history,
                   "beam_size": beam, "bleu_signature": signature}
        self._print_table(rows, beam, signature)
        metrics = run_state.arm_metrics(rows, "bleu")
        run_state.publish_results(self, results, metrics, self.config.flat(), note=f"; translations in {out_dir}")
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
