"""Translation (Multi30k, any parallel corpus): the task half of a run.

One DRGA step is :func:`drga.core.rollout.rollout` unchanged: the encoder and the teacher-forced
decoder run once, K action samples adjust every cross-attention array (one per target step, and
per layer and head for the Transformer), ``predict`` recomputes the output distribution, and the
reward of a sentence pair (eq. 5) is log P(y|X) (the sum of the target tokens' log-probabilities)
minus γ times the saliency penalty averaged over the arrays. Eq. 12 is token-level cross-entropy
(label-smoothed if ``nmt.label_smoothing`` > 0).

Model selection uses greedy-decoded dev BLEU (``nmt.select_metric = "bleu"``, ties broken by
perplexity) or dev perplexity. The final report decodes the test set with every selected
checkpoint, greedy and beam search, in each checkpoint's modes. Under torchrun, training is
data-parallel and every process scores dev and test whole (BLEU is not a mean over shards).

:class:`TranslationTask` is registered here (``@register_task``) with what ``drga train``, ``drga evaluate``,
``drga translate``, ``drga tune`` and ``drga sweep`` read of it. The registry imports this module by name; what needs
torch is imported when a hook runs, so that ``drga --help`` does not load it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drga.config import ConfigError
from drga.files import write_bytes_atomic, write_text_atomic
from drga.names import MODES, Mode, Split
from drga.records import ModeScores, ReportRow, RunResults
from drga.registry import TaskReport, register_task
from drga.runner.task import ReportCell, Task
from drga.runner.task_options import Episodes, EpochHooks, RunChecks, Tunable
from drga.tasks.translation.config import (
    TranslationConfig,
    translation_config_from_dict,
)

if TYPE_CHECKING:
    from torch import Tensor

    from drga.baselines.nmt_common import TranslationNetwork
    from drga.baselines.protocol import AttentionNetwork, Batch
    from drga.core.rollout import Rollout
    from drga.data.parallel import EncodedPair
    from drga.runner.context import RunContext, TaskBatches
    from drga.runner.phases import Phase
    from drga.tasks.translation.data import TranslationData
    from drga.tasks.translation.evaluation import TranslationEval


def token_cross_entropy(output: Tensor, labels: Tensor, smoothing: float = 0.0) -> Tensor:
    # eq. 12, token-level: cross-entropy over the real target tokens, label-smoothed with ε = smoothing
    import torch

    from drga.baselines.nmt_common import PAD_ID

    log_probs = torch.log_softmax(output.float(), dim=-1)
    loss = -log_probs.gather(-1, labels.unsqueeze(-1)).squeeze(-1)
    if smoothing > 0:
        loss = (1.0 - smoothing) * loss - smoothing * log_probs.mean(dim=-1)
    real = (labels != PAD_ID).to(loss.dtype)
    return (loss * real).sum() / real.sum().clamp_min(1.0)


def translation_selection_key(result: TranslationEval, select_metric: str) -> tuple[float, ...]:
    """Bigger is better: dev BLEU then minus the perplexity (``nmt.select_metric = "bleu"``), or the other way round."""
    bleu = result.bleu if result.bleu is not None else 0.0
    return (bleu, -result.perplexity) if select_metric == "bleu" else (-result.perplexity, bleu)


@register_task(
    "translation",
    config=TranslationConfig,
    inputs=("parallel",),
    load_config="drga.tasks.translation.config:load_checked_translation_config",
    trainer="drga.tasks.translation.trainer:TranslationTrainer",
    load="drga.tasks.translation.trained:load_translation_model",
    evaluate="drga.tasks.translation.commands:evaluate_translation_checkpoint",
    commands="drga.tasks.translation.commands",
    inference="translate with it (drga translate {path} < input.txt)",
    report=TaskReport("bleu", 1.0, "BLEU, greedy"),  # greedy decoding's, on sacrebleu's 0–100 scale already
)
class TranslationTask(Task, EpochHooks, RunChecks, Tunable, Episodes):
    """Translation; its checkpoints record the task's name, ``translation``. Under torchrun every process scores dev and
    test whole (no :class:`~drga.runner.task_options.ShardedEvaluation`): corpus BLEU is no mean of shards."""

    result_type = "drga.tasks.translation.evaluation:TranslationEval"

    def __init__(self, config: TranslationConfig):
        super().__init__(config.experiment, settings=config)
        self.translation = config
        self._data: TranslationData | None = None
        self.dev_bleu_pairs: list[EncodedPair] = []

    @property
    def data(self) -> TranslationData:
        """The run's data, which :meth:`prepare` loads (the runner calls it before any other hook)."""
        if self._data is None:
            raise RuntimeError("the task's data are not loaded yet: prepare() loads them")
        return self._data

    def metric_name(self) -> str:
        return "dev BLEU" if self.translation.nmt.select_metric == "bleu" else "minus dev perplexity"

    @staticmethod
    def translation_network(context: RunContext) -> TranslationNetwork:
        """The run's network, the translation network :meth:`build_network` made."""
        from drga.baselines.nmt_common import TranslationNetwork

        network = context.network
        if not isinstance(network, TranslationNetwork):
            raise TypeError(f"a translation run needs a translation network, not {type(network).__name__}")
        return network

    # ------------------------------------------------------------------ configuration

    def saved_flat_config(self, saved: dict[str, Any]) -> dict[str, Any]:
        return translation_config_from_dict(saved).flat()

    # ------------------------------------------------------------------ data and network

    def prepare(self, log: Callable[[str], None], resume_from: Path | None) -> TaskBatches:
        from drga.checkpoint_format import CheckpointPayload
        from drga.data.parallel import ParallelBatchIterator
        from drga.runner.context import TaskBatches
        from drga.tasks.translation.data import prepare_translation_data, tokenizers_from_payload

        saved_tokenizers = tokenizers_from_payload(CheckpointPayload.read(resume_from), resume_from) if resume_from is not None else None
        self._data = prepare_translation_data(self.translation, saved_tokenizers)
        for line in self.data.reports:
            log(f"data  {line}")
        size, nmt = self.config.data.batch_size, self.translation.nmt
        train = ParallelBatchIterator(self.data.train, size, shuffle=True, seed=self.config.run.seed, epoch_size=nmt.epoch_pairs)
        if nmt.epoch_pairs:
            log(f"data  an epoch is {train.epoch_size} training pairs drawn afresh each epoch (nmt.epoch_pairs)")
        limit = nmt.dev_bleu_sentences
        self.dev_bleu_pairs = self.data.dev[:limit] if limit else self.data.dev
        return TaskBatches(train, ParallelBatchIterator(self.data.dev, size * 2, shuffle=False),
                           ParallelBatchIterator(self.data.test, size * 2, shuffle=False))

    def build_network(self, log: Callable[[str], None]) -> TranslationNetwork:
        from drga.tasks.translation.data import build_translation_network

        return build_translation_network(self.translation, len(self.data.source_tokenizer), len(self.data.target_tokenizer))

    def probe_batch(self) -> Batch:
        from drga.data.parallel import collate_parallel

        return collate_parallel(self.data.train[:2])

    def agent_examples(self) -> tuple[Sequence[Any], Callable[[list[Any]], Batch]]:
        from drga.data.parallel import collate_parallel

        return self.data.train, collate_parallel

    # ------------------------------------------------------------------ training

    def loss(self, network: AttentionNetwork, batch: Batch) -> Tensor:
        return token_cross_entropy(network(batch), batch.labels, self.translation.nmt.label_smoothing)  # eq. 12

    def revised_loss(self, rollout: Rollout, batch: Batch) -> Tensor:
        k, n, smoothing = self.config.agent.samples, self.config.train.task_loss_samples, self.translation.nmt.label_smoothing
        labels = batch.labels.repeat_interleave(k, dim=0)
        if not 0 < n < k:
            return token_cross_entropy(rollout.output, labels, smoothing)  # eq. 12 on α′, the K samples
        # Only the first n samples of each pair carry the gradient (rollout.predict_fewer_gradients,
        # scaled by k/n for a mean over all B·k rows; the copies of a pair share its real tokens).
        # The loss over their rows alone, its gradient scaled back by n/k, has the same gradient
        # without a log-softmax over the other k − n samples' vocabulary; its value is their mean.
        def kept(x: Tensor) -> Tensor:
            return x.unflatten(0, (-1, k))[:, :n].flatten(0, 1)

        loss = token_cross_entropy(kept(rollout.output), kept(labels), smoothing)
        return loss.detach() + (loss - loss.detach()) * (n / k)

    def warmup_steps(self, phase: Phase) -> int:
        return self.translation.nmt.warmup_steps if phase.warms_up else 0

    # ------------------------------------------------------------------ evaluation and selection

    def scores(
        self, context: RunContext, split: str, mode: str, beam_size: int = 1, bleu: bool = True
    ) -> tuple[TranslationEval, list[str]]:
        """Scores of ``split`` (dev or test) in ``mode``, and the translations; BLEU of greedy (beam 1) or beam decoding."""
        from drga.tasks.translation.evaluation import evaluate_translation

        batches = context.batches(split)
        decode = None
        if bleu:
            pairs = self.dev_bleu_pairs if split == "dev" else self.data.test
            raw = self.data.splits.dev if split == "dev" else self.data.splits.test
            decode = (pairs, [raw[p.index].target for p in pairs], self.data.target_tokenizer)
        return evaluate_translation(
            self.translation_network(context),
            batches,
            self.translation,
            mode,
            context.policy,
            context.strength().detach(),
            context.device,
            decode=decode,
            beam_size=beam_size,
            progress=context.show_progress,
        )

    def evaluate(self, context: RunContext, split: str, mode: str) -> TranslationEval:
        return self.scores(context, split, mode)[0]

    def numbers(self, result: TranslationEval) -> dict[str, Any]:
        return result.numbers()

    def selection_key(self, result: TranslationEval) -> tuple[float, ...]:
        return translation_selection_key(result, self.translation.nmt.select_metric)

    def epoch_summary(self, scores: Mapping[str, TranslationEval], train_stats: Mapping[str, float]) -> list[str]:
        parts = [f"dev {mode} ppl {r.perplexity:.2f} BLEU {r.bleu:.2f}" for mode, r in scores.items()]
        if "reward" in train_stats:
            parts.append(
                f"reward {train_stats['reward']:.2f} (log P {train_stats['reward_log_likelihood']:.2f}, "
                f"penalty {train_stats['reward_penalty']:.3f}) N/L {train_stats['highlighted_fraction']:.2f} β {train_stats['beta']:.3f}"
            )
        return parts

    # ------------------------------------------------------------------ run folder, checkpoints, report

    def start(self, context: RunContext, resumed: bool) -> None:
        if context.main:
            write_bytes_atomic(context.run_dir / "source.spm.model", self.data.source_tokenizer.model_proto)
            write_bytes_atomic(context.run_dir / "target.spm.model", self.data.target_tokenizer.model_proto)

    def check_adoptable(self, source: Path, payload: Mapping[str, Any]) -> None:
        # Its embedding rows and outputs are the pieces of its subword models: this run's must be the same.
        from drga.checkpoint_format import CheckpointPayload
        from drga.tasks.translation.data import tokenizer_fingerprint, tokenizers_from_payload

        if CheckpointPayload.of(payload).task != self.name:
            raise ConfigError(f"train.init_from: {source} holds no translation network")
        mine = tokenizer_fingerprint(self.data.source_tokenizer, self.data.target_tokenizer)
        if tokenizer_fingerprint(*tokenizers_from_payload(payload, source)) != mine:
            raise ConfigError(
                f"train.init_from: {source} was trained with other subword models than this run's (nmt.vocab_size, "
                "nmt.shared_vocab or the training text differ)"
            )

    def checkpoint_content(self) -> dict[str, Any]:
        from drga.tasks.translation.data import tokenizer_fingerprint

        return {
            "source_tokenizer": self.data.source_tokenizer.model_proto,
            "target_tokenizer": self.data.target_tokenizer.model_proto,
            "shared_tokenizer": self.data.source_tokenizer is self.data.target_tokenizer,
            "vocab_fingerprint": tokenizer_fingerprint(self.data.source_tokenizer, self.data.target_tokenizer),
            "data_checksum": self.data.checksum,
        }

    def data_fingerprint(self) -> str:
        # A resumed run encodes its data with last.pt's subword models, so changed text never changes the
        # network's vocabulary: --force can always continue (RunChecks.check_continuable's default).
        return self.data.checksum

    def content_fingerprint(self) -> str:
        return self.data.splits.content_fingerprint

    def read_content_fingerprint(self) -> str:
        from drga.tasks.translation.data import load_translation_splits

        return str(load_translation_splits(self.translation).content_fingerprint)

    def final_report(self, context: RunContext, cells: Iterable[ReportCell]) -> tuple[RunResults, str]:
        nmt = self.translation.nmt
        rows: dict[str, ReportRow] = {}
        beam = nmt.beam_size if nmt.final_beam and nmt.beam_size > 1 else None
        out_dir = context.run_dir / "translations"
        if context.main:
            out_dir.mkdir(exist_ok=True)
        signature = ""
        target_lang = self.data.splits.target_lang
        for cell in cells:
            row = rows.setdefault(cell.label, ReportRow(cell.phase, cell.payload.epoch, str(cell.path)))
            scores: dict[int, dict[str, Any]] = {}  # beam size → the test scores of that search
            for name, size in [("greedy", 1)] + ([(f"beam{beam}", beam)] if beam else []):
                result, hyps = self.scores(context, "test", cell.mode, beam_size=size)
                if context.main:
                    write_text_atomic(out_dir / f"test.{cell.phase}.{cell.mode}.{name}.{target_lang}", "\n".join(hyps) + "\n")
                scores[size] = result.as_dict()
                if size == 1:
                    signature = f"BLEU {result.bleu_signature}; chrF {result.chrf_signature}"
            row.modes[Mode(cell.mode)] = ModeScores(cell.payload.epoch, scores[1], cell.payload.dev_scores(cell.mode),
                                                    scores[beam] if beam else None)
        results = RunResults(
            run_dir=str(context.run_dir), config=self.translation.to_dict(), rows=rows, history=list(context.history),
            task_entries={"beam_size": beam, "bleu_signature": signature},
        )
        self.log_table(context.log, rows, beam, signature)
        return results, f"; translations in {out_dir}"

    def log_table(self, log: Callable[[str], None], rows: Mapping[str, ReportRow], beam: int | None, signature: str) -> None:
        log(f"\n== test ({self.data.splits.name} test, {len(self.data.test)} sentences) ==")
        header = f"{'model':26s} {'mode':10s} {'ppl':>7s} {'BLEU greedy':>11s} {'chrF greedy':>11s}"
        if beam:
            header += f" {f'BLEU beam{beam}':>11s} {f'chrF beam{beam}':>11s}"
        log(header + "  (best epoch)")
        for label, row in rows.items():
            for mode in MODES:
                g = row.scores(Split.TEST, mode)
                if g is None:
                    continue
                line = f"{label:26s} {mode:10s} {g['perplexity']:7.2f} {g['bleu']:11.2f} {g['chrf']:11.2f}"
                b = row.scores(Split.TEST, mode, beam=True)
                if beam and b is not None:
                    line += f" {b['bleu']:11.2f} {b['chrf']:11.2f}"
                log(line + f"  ({row.phase} epoch {row.epoch})")
        log(f"sacrebleu: {signature}")
