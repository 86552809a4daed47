"""Text classification (MR, SST, SUBJ, the aspect and document sets): the task half of a run.

Eq. 12 is the cross-entropy of the label; a dev score is accuracy, log P(y|X) and eq. 5's reward
in one evaluation mode, selected by (accuracy, reward); the final report scores the test split with
every selected checkpoint and records the data's fingerprint and the majority-class floor.

:class:`ClassificationTask` is registered here (``@register_task``) with what ``drga train``, ``drga evaluate``,
``drga predict``, ``drga.load``, ``drga tune`` and ``drga sweep`` read of it. The registry imports this module by name;
what needs torch is imported when a hook runs, so that ``drga --help`` does not load it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drga.config import CLASSIFICATION_FLAGS, ConfigError, ExperimentConfig
from drga.names import MODES, Mode, PhaseName, Split
from drga.records import ModeScores, ReportRow, RunResults
from drga.registry import register_task
from drga.runner.task import ReportCell, Task
from drga.runner.task_options import Episodes, EpochHooks, RunChecks, ShardedEvaluation, Tunable
from drga.tasks.classification.config import TASK_NAME

if TYPE_CHECKING:
    from torch import Tensor

    from drga.analysis.tracking import ExampleTracker
    from drga.baselines.protocol import AttentionNetwork, Batch
    from drga.core.rollout import Rollout
    from drga.runner.context import RunContext, TaskBatches
    from drga.runner.phases import Phase
    from drga.tasks.classification.data import PreparedData
    from drga.tasks.classification.evaluation import EvalResult


def majority_class(train, dev, test, label_names: list[str]) -> dict[str, Any]:
    """The floor every model must beat: always predicting the training split's most frequent label."""
    counts = Counter(example.label for example in train)
    label = max(sorted(counts), key=lambda value: counts[value])

    def share(split) -> float:
        return sum(example.label == label for example in split) / max(len(split), 1)

    return {"label": label_names[label], "dev_accuracy": share(dev), "test_accuracy": share(test)}


def classification_selection_key(result: EvalResult) -> tuple[float, ...]:
    """Bigger is better: dev accuracy, then the dev reward (eq. 5) between equal accuracies."""
    return (result.accuracy, result.reward)


@register_task(
    TASK_NAME,
    config=ExperimentConfig,
    inputs=("text", "aspect", "document"),
    load_config="drga.tasks.classification.config:load_classification_config",
    trainer="drga.tasks.classification.trainer:Trainer",
    load="drga.tasks.classification.prediction:load",
    evaluate="drga.tasks.classification.commands:evaluate_classification_checkpoint",
    commands="drga.tasks.classification.commands",
    train_options=CLASSIFICATION_FLAGS,
)
class ClassificationTask(Task, EpochHooks, RunChecks, Tunable, ShardedEvaluation, Episodes):
    """Text classification. ``network`` and ``data`` (the Python API, drga/api.py): the caller's network and prepared data.

    A subclass registered under a name of its own (docs/extending.md, "A new task") inherits its registration (its
    configuration class and loader, trainer, ``drga evaluate``, ``drga.load`` and ``drga predict``) and its hooks; it
    trains the networks whose registration names it."""

    result_type = "drga.tasks.classification.evaluation:EvalResult"

    #: All but run.threads leave every number as an uninterrupted run's; another thread count can
    #: change float rounding (see run.threads). The log folder is where the run lives, not what it is.
    resumable_changes = RunChecks.resumable_changes | {"train.track_examples"}

    def __init__(self, config: ExperimentConfig, network: AttentionNetwork | None = None, data: PreparedData | None = None):
        super().__init__(config)
        self.network, self._data = network, data
        self.tracker: ExampleTracker | None = None

    @property
    def data(self) -> PreparedData:
        """The run's data: the caller's, or those :meth:`prepare` loads (the runner calls it before any other hook)."""
        if self._data is None:
            raise RuntimeError("the task's data are not loaded yet: prepare() loads them")
        return self._data

    def metric_name(self) -> str:
        return "dev accuracy"

    # ------------------------------------------------------------------ data and network

    def prepare(self, log: Callable[[str], None], resume_from: Path | None) -> TaskBatches:
        from drga.data import BatchIterator
        from drga.runner.context import TaskBatches
        from drga.tasks.classification.data import batch_iterators, prepare_data

        if self._data is None:
            self._data = prepare_data(self.config)
        for line in self.data.reports:
            log(f"data  {line}")
        train, dev, test = batch_iterators(self.config, self.data)
        agent = BatchIterator(self.data.agent_train, self.config.data.batch_size, shuffle=True, seed=self.config.run.seed) \
            if self.data.agent_train else None
        return TaskBatches(train, dev, test, agent)

    def build_network(self, log: Callable[[str], None]) -> AttentionNetwork:
        if self.network is None:
            from drga.tasks.classification.data import build_attention_network

            self.network = build_attention_network(self.config, self.data.vocab, self.data.splits.num_classes, log)
        return self.network

    def probe_batch(self) -> Batch:
        from drga.tasks.classification.data import first_batch

        return first_batch(self.data.train)

    def agent_examples(self) -> tuple[Sequence[Any], Callable[[list[Any]], Batch]]:
        from drga.data import collate

        return self.data.train, collate

    # ------------------------------------------------------------------ training

    def loss(self, network: AttentionNetwork, batch: Batch) -> Tensor:
        from drga.core.scoring import cross_entropy_loss

        return cross_entropy_loss(network, network(batch), batch.labels)  # eq. 12

    def revised_loss(self, rollout: Rollout, batch: Batch) -> Tensor:
        return -rollout.log_likelihood.mean()  # eq. 12 on α′, over the B·K (sequence, sample) rows

    # ------------------------------------------------------------------ evaluation and selection

    def evaluate(self, context: RunContext, split: str, mode: str) -> EvalResult:
        from drga.tasks.classification.evaluation import evaluate

        batches = context.batches(split)
        return evaluate(context.network, batches, self.config.reward, mode, policy=context.policy, beta=context.strength().detach(),
                        device=context.device)

    def combine_over_processes(self, result: EvalResult, batches: Any) -> EvalResult:
        # each process scored its shards: the means over all the examples, the same on every rank
        from drga.runtime import distributed
        from drga.tasks.classification.evaluation import EvalResult

        values = {k: v for k, v in result.as_dict().items() if k != "examples"}
        means, examples = distributed.weighted_mean(values, float(batches.local_examples()))
        return EvalResult(**means, examples=int(round(examples)))

    def selection_key(self, result: EvalResult) -> tuple[float, ...]:
        return classification_selection_key(result)

    def epoch_summary(self, scores: Mapping[str, EvalResult], train_stats: Mapping[str, float]) -> list[str]:
        parts = [f"dev acc {mode} {r.accuracy:.4f}" for mode, r in scores.items()]
        if "reward" in train_stats:
            parts.append(f"reward {train_stats['reward']:.3f} N/L {train_stats['highlighted_fraction']:.2f} β {train_stats['beta']:.3f}")
        return parts

    def after_dev_evaluation(self, context: RunContext, phase: Phase, epoch: int) -> None:
        """Record the tracked sentences' attention (α′ once there is an agent) and show it in TensorBoard."""
        if self.tracker is None:
            return
        policy = context.policy if phase.has_agent else None  # before that the agent is untrained
        entry = self.tracker.record(phase.name, epoch, context.global_step, context.network, policy, context.strength().detach())
        context.report_image(phase.name, "tracked_attention", self.tracker.image(entry), context.phase_step)

    # ------------------------------------------------------------------ run folder, checkpoints, report

    def start(self, context: RunContext, resumed: bool) -> None:
        if self.config.train.track_examples > 0 and context.main:
            from drga.analysis.tracking import ExampleTracker  # matplotlib and friends only when asked for

            self.tracker = ExampleTracker(
                context.run_dir, self.data.dev, self.data.train, self.data.vocab, self.data.splits.label_names,
                self.config.train.track_examples, self.config.run.seed, resumed, context.log,
            )

    def check_adoptable(self, source: Path, payload: Mapping[str, Any]) -> None:
        from drga.checkpoint_format import CheckpointPayload
        from drga.tasks.classification.trained import quoted

        checkpoint = CheckpointPayload.of(payload)
        trained, given = checkpoint.label_names, list(self.data.splits.label_names)
        if trained != given:
            what = f"the labels {quoted(trained)}"
            raise ConfigError(f"train.init_from: {source} was trained on {what}, and these data are labelled {quoted(given)}")
        if checkpoint.vocab != list(self.data.vocab.itos):
            raise ConfigError(f"train.init_from: {source} was trained with another vocabulary than this data gives")

    def data_fingerprint(self) -> str:
        return self.data.checksum

    def content_fingerprint(self) -> str:
        return self.data.splits.content_fingerprint

    def read_content_fingerprint(self) -> str:
        from drga.tasks.classification.data import load_splits

        return str(load_splits(self.config).content_fingerprint)

    def check_continuable(self, last: Path, payload: Mapping[str, Any]) -> None:
        """The network's outputs are the recorded labels and its embedding rows the recorded vocabulary's
        words: --force continues only where both are this data's."""
        from drga.checkpoint_format import CheckpointError, CheckpointPayload
        from drga.tasks.classification.trained import quoted

        cannot = f"cannot resume {last} on these data, even with --force"
        keep = "--force continues a run only on data whose training split gives the same labels and vocabulary"
        if self.config.data.dataset == "tsv":
            keep += " (one --tsv FILE is re-split 80/10/10 when a line is added or removed; a folder keeps its train.tsv)"
        checkpoint = CheckpointPayload.of(payload)
        trained, given = checkpoint.label_names, list(self.data.splits.label_names)
        if trained != given:
            what = f"the labels {quoted(trained)}"
            raise CheckpointError(
                f"{cannot}: its network was trained to output {what}, and these data are labelled {quoted(given)}; "
                f"{keep}: restore the data or start a new run"
            )
        recorded = checkpoint.vocab_fingerprint
        if recorded != self.data.vocab.fingerprint:
            raise CheckpointError(
                f"{cannot}: its embedding has one row per word of the vocabulary its training split gave ({len(checkpoint.vocab)} "
                f"words, fingerprint {recorded}), and the training split of these data gives another ({len(self.data.vocab)} words, "
                f"fingerprint {self.data.vocab.fingerprint}); {keep}: restore the data or start a new run"
            )

    def checkpoint_content(self) -> dict[str, Any]:
        return {"vocab": list(self.data.vocab.itos), "vocab_fingerprint": self.data.vocab.fingerprint,
                "label_names": list(self.data.splits.label_names), "data_checksum": self.data.checksum,
                "tokenizer": self.data.splits.tokenizer}  # how new text is split for this network (drga/prediction.py)

    def final_report(self, context: RunContext, cells: Iterable[ReportCell]) -> tuple[RunResults, str]:
        rows: dict[str, ReportRow] = {}
        pretrain_checksum = None
        for cell in cells:
            if cell.phase == PhaseName.PRETRAIN:  # the network every arm starts from
                pretrain_checksum = cell.payload.tensor_checksum
            row = rows.setdefault(cell.label, ReportRow(cell.phase, cell.payload.epoch, str(cell.path)))
            test = context.evaluate_split(Split.TEST, cell.mode).as_dict()
            row.modes[Mode(cell.mode)] = ModeScores(cell.payload.epoch, test, cell.payload.dev_scores(cell.mode))
        results = RunResults(
            run_dir=str(context.run_dir), config=self.config.to_dict(), rows=rows, history=list(context.history),
            data_checksum=self.data.checksum, pretrain_checksum=pretrain_checksum,
            task_entries={"majority_class": majority_class(self.data.train, self.data.dev, self.data.test, self.data.splits.label_names)},
        )
        self.log_table(context.log, rows)
        return results, ""

    @staticmethod
    def log_table(log: Callable[[str], None], rows: Mapping[str, ReportRow]) -> None:
        log("\n== test accuracy ==")
        log(f"{'model':28s} {Mode.NET_ONLY:>9s} {Mode.WITH_AGENT:>11s}  (best epoch)")
        for label, row in rows.items():
            tests = [row.scores(Split.TEST, mode) for mode in MODES]
            cells = [f"{test['accuracy']:.4f}" if test is not None else "-" for test in tests]
            epochs = sorted({cell.epoch for cell in row.modes.values() if cell.epoch is not None})
            if len(epochs) <= 1:
                where = f"epoch {row.epoch}"
            else:
                where = "epochs " + ", ".join(f"{mode} {row.epoch_of(mode)}" for mode in MODES)
            log(f"{label:28s} {cells[0]:>9s} {cells[1]:>11s}  ({row.phase} {where})")
