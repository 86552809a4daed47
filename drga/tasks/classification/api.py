"""Retrofit your own network on your own data from Python (a notebook's door to the toolkit).

    from drga.api import TextData, retrofit

    data = TextData.from_pairs(pairs)                      # [(text, label), ...]: split 80/10/10
    network = MyAttentionNet(len(data.vocab), data.num_classes)   # follows drga.baselines.protocol
    result = retrofit(network, data, pretrain_epochs=5, cotrain_epochs=3)
    print(result.table())
    result.predict(["a gripping film", "dull and long"])        # labels of new texts

``retrofit`` runs the same phases as ``drga train`` (pretraining, the equal-budget baseline,
agent pretraining, co-training) with the same configuration dataclasses, validation and
per-network defaults, and returns the co-trained network, the agent and every row's accuracy;
the result classifies new texts as :func:`drga.load` does a saved checkpoint (:mod:`drga.prediction`).
This is classification's API; ``drga/api.py`` re-exports it, with :func:`drga.api.train` (any task).
Output goes to the ``drga`` logger (``logging.getLogger("drga")``); progress bars (tqdm) only
when stderr is a terminal, unless ``progress=`` says otherwise.
"""

from __future__ import annotations

import copy
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from drga.baselines.protocol import AttentionNetwork
from drga.config import ConfigError, ExperimentConfig, apply_network_defaults, section_keys, set_value, suggest
from drga.core.beta import AdjustmentStrength
from drga.core.policy import StatePolicy
from drga.data import DatasetSplits, TextExample, Vocabulary, stratified_split
from drga.data.pretrained_vocab import SubwordVocabulary
from drga.data.text import check_label_column, check_rare_labels
from drga.data.tokenize import CUSTOM_TOKENIZER, raw_text_tokens
from drga.names import MODES, Mode, PhaseName, Split, best_checkpoint
from drga.records import EpochRecord, ReportRow
from drga.runner.callbacks import Callback, EpochEnd, Evaluation, PhaseEnd, RunEnd, RunStart, TrainingLog
from drga.runner.loggers import CSVLogger, TensorBoardLogger
from drga.runner.run_folder import default_run_name, log_info
from drga.tasks.classification.data import PreparedData
from drga.tasks.classification.prediction import Classifier, Prediction, Text

__all__ = [
    "TextData", "RetrofitResult", "retrofit", "default_tokenizer", "STARTING_POINTS", "MARK",
    # callbacks (drga.runner.callbacks): what a run reports while it trains
    "Callback", "RunStart", "TrainingLog", "Evaluation", "EpochEnd", "PhaseEnd", "RunEnd", "CSVLogger", "TensorBoardLogger",
]

Pair = tuple[Any, Any]


def default_tokenizer(text: str) -> list[str]:
    """The default for strings: lowercased words and punctuation marks (drga/data/tokenize.py)."""
    return raw_text_tokens(text, lowercase=True)


@dataclass
class TextData:
    """Labelled texts ready for a network: the three splits, their vocabulary (from training) and labels."""

    prepared: PreparedData
    #: How a string became tokens (the result's ``predict`` splits new texts the same way).
    tokenizer: Callable[[str], list[str]] = field(default=default_tokenizer, repr=False)
    max_length: int = 100  #: tokens (a pretrained tokenizer's: subwords) kept per text

    @property
    def vocab(self) -> Vocabulary:
        return self.prepared.vocab

    @property
    def num_classes(self) -> int:
        return self.prepared.splits.num_classes

    @property
    def label_names(self) -> list[str]:
        return list(self.prepared.splits.label_names)

    @classmethod
    def from_pairs(
        cls,
        train: Iterable[Pair],
        dev: Iterable[Pair] | None = None,
        test: Iterable[Pair] | None = None,
        *,
        tokenizer: Callable[[str], list[str]] = default_tokenizer,
        split_seed: int = 1234,
        max_length: int = 100,
        min_freq: int = 1,
        pretrained_tokenizer: Any = None,
        rare_labels: str = "refuse",
    ) -> TextData:
        """``(text, label)`` pairs (any iterable of them, a torch ``Dataset`` too); a text is a string,
        tokenized by ``tokenizer``, or a list of tokens. Without ``dev`` and ``test`` the pairs are
        split 80/10/10, stratified by label, by ``split_seed``. A label that only dev or test has is
        an error; an empty text is dropped and counted. ``pretrained_tokenizer`` (a Hugging Face
        tokenizer, for ``HFEncoderClassifier``): the words become that tokenizer's subword ids, special
        tokens included, ``max_length`` counting subwords; the vocabulary is the tokenizer's. A training label with far
        fewer pairs than the others (a typo, as in a TSV file: ``drga.data.text.check_rare_labels``) is refused, naming its
        pairs and the closest labels, unless ``rare_labels="keep"``."""
        training, parts = _pair_lists(train, dev, test)
        labels = _training_labels(training, rare_labels)
        examples, dropped = _text_examples(parts, {label: i for i, label in enumerate(labels)}, tokenizer)
        notes = [
            f"python: {len(training)} training pairs"
            + ("" if dev is not None else f", stratified 80/10/10 with split seed {split_seed}")
        ]
        if dev is None:
            examples["train"], examples["dev"], examples["test"] = stratified_split(examples["train"], split_seed)
        if dropped:
            notes.append(f"python: dropped {dropped} pairs with an empty text")
        # the default tokenizer is raw_text_tokens, lowercased: a checkpoint records it by that name
        recorded = "raw-text" if tokenizer is default_tokenizer else CUSTOM_TOKENIZER
        splits = DatasetSplits(
            "python", examples["train"], examples["dev"], examples["test"], [str(label) for label in labels], notes, tokenizer=recorded
        )
        if pretrained_tokenizer is not None:
            vocab = SubwordVocabulary(pretrained_tokenizer)
        else:
            vocab = Vocabulary.build((example.tokens for example in splits.train), min_freq=min_freq)
        return cls(_encoded(splits, vocab, max_length, notes), tokenizer, max_length)


def _pair_lists(
    train: Iterable[Pair], dev: Iterable[Pair] | None, test: Iterable[Pair] | None
) -> tuple[list[Pair], dict[str, list[Pair] | None]]:
    """The training pairs as a list, and each split's (None for dev and test when the training pairs are to be split)."""
    training = _pairs(train)
    parts: dict[str, list[Pair] | None] = {
        "train": training,
        "dev": _pairs(dev) if dev is not None else None,
        "test": _pairs(test) if test is not None else None,
    }
    if (parts["dev"] is None) != (parts["test"] is None):
        raise ConfigError("give both dev and test pairs, or neither (then the training pairs are split 80/10/10)")
    return training, parts


def _training_labels(pairs: list[Pair], rare_labels: str = "refuse") -> list[Any]:
    """The training pairs' distinct labels sorted as strings (class i is the i-th); a rare one refused unless kept."""
    given = [_label(pair, "train", i) for i, pair in enumerate(pairs)]
    check_label_column([str(label) for label in given], [str(pair[0]) for pair in pairs], "the training pairs")  # (label, text)?
    labels = sorted(set(given), key=str)
    if len(labels) < 2:
        raise ConfigError(f"the training pairs need at least two distinct labels, found {labels}")
    check_rare_labels([(str(label), position) for position, label in enumerate(given)], "the training pairs", rare_labels, unit="pair")
    return labels


def _text_examples(
    parts: dict[str, list[Pair] | None], index: dict[Any, int], tokenizer: Callable[[str], list[str]]
) -> tuple[dict[str, list[TextExample]], int]:
    """Each given split's pairs tokenized, their labels as class indices; and how many empty texts were dropped."""
    dropped = 0
    examples: dict[str, list[TextExample]] = {}
    for name, pairs in parts.items():
        if pairs is None:
            continue
        examples[name] = []
        for position, pair in enumerate(pairs):
            label = _label(pair, name, position)
            if label not in index:
                raise ConfigError(f"{name} pair {position}: label {label!r} never occurs in the training pairs")
            text = pair[0]
            tokens = tokenizer(text) if isinstance(text, str) else [str(token) for token in text]
            if not tokens:
                dropped += 1
                continue
            examples[name].append(TextExample(tokens, index[label]))
    return examples, dropped


def _encoded(splits: DatasetSplits, vocab: Vocabulary, max_length: int, notes: list[str]) -> PreparedData:
    """The splits encoded with ``vocab``, each split's encoding report after ``notes``."""
    encoded, reports = {}, list(notes)
    for name in ("train", "dev", "test"):
        if not getattr(splits, name):
            raise ConfigError(f"the {name} split is empty; give more pairs")
        examples = getattr(splits, name)
        encoded[name], report = vocab.encode_examples(examples, max_length)
        reports.append(report.describe(name))
    return PreparedData(splits, vocab, encoded["train"], encoded["dev"], encoded["test"], reports)


@runtime_checkable
class _MapStyle(Protocol):
    """Pairs read by index up to a length, as a map-style torch ``Dataset``."""

    def __len__(self) -> int: ...

    def __getitem__(self, index: int) -> Pair: ...


def _pairs(items: Iterable[Pair]) -> list[Pair]:
    """A list of the pairs; a map-style torch ``Dataset`` is read by index up to its length."""
    if not isinstance(items, (list, tuple)) and isinstance(items, _MapStyle):
        return [items[index] for index in range(len(items))]
    return list(items)


def _label(pair: Any, split: str, position: int) -> Any:
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        raise ConfigError(f"{split} item {position} is not a (text, label) pair: {pair!r}")
    return pair[1]


#: The phases whose starting point competes as their epoch 0, and what a row selected there is.
STARTING_POINTS = {
    PhaseName.COTRAIN: "co-training epoch 0, the pretrained network and agent before any co-training step",
    PhaseName.BASELINE: "baseline epoch 0, the pretrained network before any further epoch",
}
#: The table's mark of a cell selected at a starting point.
MARK = "†"


@dataclass
class RetrofitResult:
    """What :func:`retrofit` returns: the co-trained network and agent, every row's numbers, and
    ``predict`` / ``probabilities`` / ``attention`` / ``predictions`` on new texts (as :func:`drga.load`'s model)."""

    network: AttentionNetwork  #: the DRGA network (co-training's best with-agent dev epoch)
    policy: StatePolicy  #: its agent
    strength: AdjustmentStrength  #: β
    rows: dict[str, ReportRow]  #: results.json's rows: label → each mode's epoch, dev and test numbers
    history: list[EpochRecord] = field(repr=False)  #: one record per epoch of every phase
    run_dir: Path = Path(".")  #: checkpoints, results.json and TensorBoard logs
    config: ExperimentConfig = field(default_factory=ExperimentConfig, repr=False)
    classifier: Classifier | None = field(default=None, repr=False)  #: the network and agent, classifying texts

    def accuracy(self, row: str, mode: str = Mode.NET_ONLY, split: str = Split.TEST) -> float | None:
        cell = self.rows[row].scores(split, mode) if row in self.rows else None
        return None if cell is None else float(cell["accuracy"])

    def starting_point(self, row: str, mode: str) -> str | None:
        """What the row's ``mode`` cell was selected at when that is its phase's starting point (epoch 0), else None.

        A DRGA row selected at co-training epoch 0 is the network before co-training: no co-training
        epoch beat it on dev, so its numbers say nothing about what co-training does.
        """
        found = self.rows.get(row)
        if found is None or found.epoch_of(mode) != 0:
            return None
        return STARTING_POINTS.get(PhaseName(found.phase))

    def table(self) -> str:
        """Test accuracy of every row in both modes, as ``drga train`` prints it; † marks a cell
        selected at its phase's starting point (:meth:`starting_point`), explained below the table."""
        lines = [f"{'model':28s} {Mode.NET_ONLY:>10s} {Mode.WITH_AGENT:>12s}"]
        notes: list[str] = []
        for label in self.rows:
            cells = []
            for mode in MODES:
                value, start = self.accuracy(label, mode), self.starting_point(label, mode)
                cells.append("-" if value is None else f"{value:.4f}" + (MARK if start else " "))
                if start and (note := f"{MARK} {label}: selected at {start} (no later epoch scored better on dev)") not in notes:
                    notes.append(note)
            lines.append(f"{label:28s} {cells[0]:>10s} {cells[1]:>12s}".rstrip())
        return "\n".join(lines + notes)

    def to_dataframe(self):
        """The table as a pandas DataFrame, with a ``selected at`` column naming the cells selected at a
        starting point (pandas is not a dependency: install it to use this)."""
        try:
            import pandas
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError("to_dataframe needs pandas: pip install pandas (or use .table() / .rows)") from None
        return pandas.DataFrame.from_records(self.records()).set_index("model")

    def records(self) -> list[dict[str, Any]]:
        """One dict per row: model, the test accuracy in each mode, and ``selected at`` ("" or the modes and their starting point)."""
        records = []
        for label in self.rows:
            starts: dict[Mode, str] = {mode: start for mode in MODES if (start := self.starting_point(label, mode))}
            note = "; ".join(f"{mode}: {start}" for mode, start in starts.items())
            record: dict[str, Any] = {"model": label, **{mode: self.accuracy(label, mode) for mode in MODES}, "selected at": note}
            records.append(record)
        return records

    # ------------------------------------------------------------------ new texts (drga/prediction.py)

    def predict(self, texts: list[Text], mode: str | None = None) -> list[str]:
        """The label of each text (a string, split as the training texts were, or a list of tokens); ``mode``:
        net-only or with-agent (the default: the agent's deterministic action, as evaluation does)."""
        return self._classifier().predict(texts, mode)

    def probabilities(self, texts: list[Text], mode: str | None = None) -> list[dict[str, float]]:
        """P(label | text) of every label, for each text."""
        return self._classifier().probabilities(texts, mode)

    def attention(self, texts: list[Text], mode: str | None = None) -> list[tuple[list[str], list[list[float]]]]:
        """(tokens, one weight per token for each attention array) of each text: α net-only, α′ with the agent."""
        return self._classifier().attention(texts, mode)

    def predictions(self, texts: list[Text], mode: str | None = None) -> list[Prediction]:
        """Label, probabilities, tokens and attention of each text."""
        return self._classifier().predictions(texts, mode)

    def _classifier(self) -> Classifier:
        if self.classifier is None:
            raise ConfigError("this result holds no classifier (it was not made by retrofit)")
        return self.classifier


def retrofit(
    network: AttentionNetwork,
    data: TextData,
    config: ExperimentConfig | None = None,
    *,
    settings: Mapping[str, Any] | None = None,
    run_dir: str | Path | None = None,
    progress: bool | None = None,
    callbacks: Sequence[Callback] = (),
    **keywords: Any,
) -> RetrofitResult:
    """Retrofit ``network`` (an instance following the attention-network protocol) on ``data``.

    Hyperparameters: a ``config`` (:class:`~drga.config.ExperimentConfig`, defaults when None),
    then ``settings`` as ``{"section.key": value}``, then keyword arguments named by a field that
    only one section has (``pretrain_epochs=5``, ``samples=3``; ``lr`` is in two sections: use
    ``settings={"agent.lr": ...}``). The network's own defaults (``NETWORK_DEFAULTS``) fill what
    none of these set, as on the command line. ``run_dir``: where checkpoints, ``results.json``
    and TensorBoard logs go (default: a new folder ``runs/<name>-<date>-<time>`` under the working
    directory, logged and in ``result.run_dir``; a given folder that holds a run is replaced).
    ``progress``: tqdm progress bars (default: only when stderr is a terminal and ``run.progress``
    is not turned off, so that a log file or a notebook's saved output holds no bar).
    ``callbacks``: :class:`~drga.runner.callbacks.Callback` instances told what the run does (its dev
    scores epoch by epoch, ...), after the loggers of ``run.report_to`` (TensorBoard by default).
    """
    config = copy.deepcopy(config) if config is not None else ExperimentConfig()
    given: set[str] = set()
    for key, value in {**dict(settings or {}), **{_qualified(name): value for name, value in keywords.items()}}.items():
        set_value(config, key, value)
        given.add(key)
    config.network.name = getattr(network, "net_name", type(network).__name__)
    config.data.dataset = "python"
    # what the data were made with, for a checkpoint's reader (predict): not settings a run could change
    config.data.max_length = data.max_length
    config.data.lowercase = config.data.lowercase if data.tokenizer is not default_tokenizer else True
    given |= {"data.max_length", "data.lowercase"}
    config.run.progress = progress if progress is not None else config.run.progress and sys.stderr.isatty()
    folder = Path(run_dir) if run_dir is not None else _new_run_folder(config)
    config.run.logdir, config.run.run_name = str(folder.parent), folder.name
    apply_network_defaults(config, given, report=log_info)
    config.validate()
    log_info(f"retrofit: checkpoints, results.json and TensorBoard logs in {folder} (result.run_dir)")
    from drga.tasks.classification.trainer import Trainer  # the trainer imports the whole toolkit: only when training

    trainer = Trainer(config, overwrite=True, network=network, data=data.prepared, callbacks=callbacks)
    results = trainer.run()
    best = best_checkpoint(trainer.run_dir, PhaseName.COTRAIN)
    has_agent = trainer.context.load_model(best).has_agent if best.exists() else False
    classifier = Classifier(trainer.network, trainer.policy, trainer.strength, data.vocab, data.label_names, data.tokenizer,
                            config.data, has_agent)
    return RetrofitResult(
        trainer.network, trainer.policy, trainer.strength, results.rows, results.history, trainer.run_dir, config, classifier
    )


def _new_run_folder(config: ExperimentConfig) -> Path:
    """``runs/<dataset>-<net>-seed<seed>-<date>-<time>`` under the working directory, created here (a suffix if taken)."""
    stem = Path("runs") / f"{default_run_name(config)}-{time.strftime('%Y%m%d-%H%M%S')}"
    folder, number = stem, 1
    while True:
        try:
            folder.mkdir(parents=True)
            return folder
        except FileExistsError:
            number += 1
            folder = stem.with_name(f"{stem.name}-{number}")


def _qualified(name: str) -> str:
    """``pretrain_epochs`` → ``train.pretrain_epochs``: the one section that has the field."""
    if "." in name:
        return name
    keys = section_keys(ExperimentConfig())
    sections = [section for section, names in keys.items() if name in names]
    if not sections:
        raise ConfigError(f"'{name}' is not a setting{suggest(name, sorted({key for names in keys.values() for key in names}))}")
    if len(sections) != 1:
        where = " and ".join(f"{s}.{name}" for s in sections)
        raise ConfigError(f"'{name}' is ambiguous: {where}; pass settings={{'section.{name}': ...}}")
    return f"{sections[0]}.{name}"
