"""Retrofit your own network on your own data from Python (a notebook's door to the toolkit).

    from drga.api import TextData, retrofit

    data = TextData.from_pairs(pairs)                      # [(text, label), ...]: split 80/10/10
    network = MyAttentionNet(len(data.vocab), data.num_classes)   # follows baselines/protocol.py
    result = retrofit(network, data, pretrain_epochs=5, cotrain_epochs=3)
    print(result.table())

``retrofit`` runs the same phases as ``drga train`` (pretraining, the equal-budget baseline,
agent pretraining, co-training) with the same configuration dataclasses, validation and
per-network defaults, and returns the co-trained network, the agent and every row's accuracy.
Output goes to the ``drga`` logger (``logging.getLogger("drga")``); progress bars are tqdm.
"""

from __future__ import annotations

import copy
import dataclasses
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_type_hints

from torch import nn

from drga.config import ConfigError, ExperimentConfig, apply_network_defaults, set_value
from drga.data import DatasetSplits, TextExample, Vocabulary, encode_examples, stratified_split
from drga.data.pretrained_vocab import SubwordVocabulary
from drga.data.tokenize import raw_text_tokens
from drga.runner.run_folder import log_info
from drga.setup import PreparedData

Pair = tuple[Any, Any]


def default_tokenizer(text: str) -> list[str]:
    """The default for strings: lowercased words and punctuation marks (drga/data/tokenize.py)."""
    return raw_text_tokens(text, lowercase=True)


@dataclass
class TextData:
    """Labelled texts ready for a network: the three splits, their vocabulary (from training) and labels."""

    prepared: PreparedData

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
    ) -> TextData:
        """``(text, label)`` pairs (any iterable of them, a torch ``Dataset`` too); a text is a string,
        tokenized by ``tokenizer``, or a list of tokens. Without ``dev`` and ``test`` the pairs are
        split 80/10/10, stratified by label, by ``split_seed``. A label that only dev or test has is
        an error; an empty text is dropped and counted. ``pretrained_tokenizer`` (a Hugging Face
        tokenizer, for ``HFEncoderClassifier``): the words become that tokenizer's subword ids, special
        tokens included, ``max_length`` counting subwords; the vocabulary is the tokenizer's."""
        parts = _pair_lists(train, dev, test)
        labels = _training_labels(parts["train"])
        examples, dropped = _text_examples(parts, {label: i for i, label in enumerate(labels)}, tokenizer)
        notes = [
            f"python: {len(parts['train'])} training pairs"
            + ("" if dev is not None else f", stratified 80/10/10 with split seed {split_seed}")
        ]
        if dev is None:
            examples["train"], examples["dev"], examples["test"] = stratified_split(examples["train"], split_seed)
        if dropped:
            notes.append(f"python: dropped {dropped} pairs with an empty text")
        splits = DatasetSplits("python", examples["train"], examples["dev"], examples["test"], [str(label) for label in labels], notes)
        if pretrained_tokenizer is not None:
            vocab = SubwordVocabulary(pretrained_tokenizer)
        else:
            vocab = Vocabulary.build((example.tokens for example in splits.train), min_freq=min_freq)
        return cls(_encoded(splits, vocab, max_length, notes))


def _pair_lists(train: Iterable[Pair], dev: Iterable[Pair] | None, test: Iterable[Pair] | None) -> dict[str, list[Pair] | None]:
    """Each split's pairs as a list (None for dev and test when the training pairs are to be split)."""
    parts = {
        "train": _pairs(train),
        "dev": _pairs(dev) if dev is not None else None,
        "test": _pairs(test) if test is not None else None,
    }
    if (parts["dev"] is None) != (parts["test"] is None):
        raise ConfigError("give both dev and test pairs, or neither (then the training pairs are split 80/10/10)")
    return parts


def _training_labels(pairs: list[Pair]) -> list[Any]:
    """The training pairs' distinct labels sorted as strings (class i is the i-th)."""
    labels = sorted({_label(pair, "train", i) for i, pair in enumerate(pairs)}, key=str)
    if len(labels) < 2:
        raise ConfigError(f"the training pairs need at least two distinct labels, found {labels}")
    return labels


def _text_examples(
    parts: dict[str, list[Pair] | None], index: dict[Any, int], tokenizer: Callable[[str], list[str]]
) -> tuple[dict[str, list[TextExample]], int]:
    """Each given split's pairs tokenized, their labels as class indices; and how many empty texts were dropped."""
    dropped, examples = 0, {}
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
        if isinstance(vocab, SubwordVocabulary):
            encoded[name], report = vocab.encode_examples(examples, max_length)
        else:
            encoded[name], report = encode_examples(examples, vocab, max_length)
        reports.append(report.describe(name))
    return PreparedData(splits, vocab, encoded["train"], encoded["dev"], encoded["test"], reports)


def _pairs(items: Iterable[Pair]) -> list[Pair]:
    """A list of the pairs; a map-style torch ``Dataset`` is read by index up to its length."""
    if not isinstance(items, (list, tuple)) and hasattr(items, "__len__") and hasattr(items, "__getitem__"):
        return [items[index] for index in range(len(items))]  # type: ignore[index]
    return list(items)


def _label(pair: Any, split: str, position: int) -> Any:
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        raise ConfigError(f"{split} item {position} is not a (text, label) pair: {pair!r}")
    return pair[1]


@dataclass
class RetrofitResult:
    """What :func:`retrofit` returns: the co-trained network and agent, and every row's numbers."""

    network: nn.Module  #: the DRGA network (co-training's best with-agent dev epoch)
    policy: nn.Module  #: its agent
    strength: nn.Module  #: β
    rows: dict[str, dict[str, Any]]  #: results.json's rows: label → test_/dev_ numbers per mode, epochs
    history: list[dict[str, Any]] = field(repr=False)  #: one record per epoch of every phase
    run_dir: Path = Path(".")  #: checkpoints, results.json and TensorBoard logs
    config: ExperimentConfig = field(default_factory=ExperimentConfig, repr=False)

    def accuracy(self, row: str, mode: str = "net-only", split: str = "test") -> float | None:
        cell = self.rows.get(row, {}).get(f"{split}_{mode}")
        return None if cell is None else float(cell["accuracy"])

    def table(self) -> str:
        """Test accuracy of every row in both modes, as ``drga train`` prints it."""
        lines = [f"{'model':28s} {'net-only':>9s} {'with-agent':>11s}"]
        for label in self.rows:
            cells = [f"{value:.4f}" if (value := self.accuracy(label, mode)) is not None else "-" for mode in ("net-only", "with-agent")]
            lines.append(f"{label:28s} {cells[0]:>9s} {cells[1]:>11s}")
        return "\n".join(lines)

    def to_dataframe(self):
        """The table as a pandas DataFrame (pandas is not a dependency: install it to use this)."""
        try:
            import pandas
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError("to_dataframe needs pandas: pip install pandas (or use .table() / .rows)") from None
        records = [
            {"model": label, "net-only": self.accuracy(label, "net-only"), "with-agent": self.accuracy(label, "with-agent")}
            for label in self.rows
        ]
        return pandas.DataFrame.from_records(records).set_index("model")


def retrofit(
    network: nn.Module,
    data: TextData,
    config: ExperimentConfig | None = None,
    *,
    settings: Mapping[str, Any] | None = None,
    run_dir: str | Path | None = None,
    **keywords: Any,
) -> RetrofitResult:
    """Retrofit ``network`` (an instance following the attention-network protocol) on ``data``.

    Hyperparameters: a ``config`` (:class:`~drga.config.ExperimentConfig`, defaults when None),
    then ``settings`` as ``{"section.key": value}``, then keyword arguments named by a field that
    only one section has (``pretrain_epochs=5``, ``samples=3``; ``lr`` is in two sections: use
    ``settings={"agent.lr": ...}``). The network's own defaults (``NETWORK_DEFAULTS``) fill what
    none of these set, as on the command line. ``run_dir``: where checkpoints and logs go
    (default: a new temporary folder).
    """
    config = copy.deepcopy(config) if config is not None else ExperimentConfig()
    given: set[str] = set()
    for key, value in {**dict(settings or {}), **{_qualified(name): value for name, value in keywords.items()}}.items():
        set_value(config, key, value)
        given.add(key)
    config.network.name = getattr(network, "net_name", type(network).__name__)
    config.data.dataset = "python"
    folder = Path(run_dir) if run_dir is not None else Path(tempfile.mkdtemp(prefix="drga-"))
    config.run.logdir, config.run.run_name = str(folder.parent), folder.name
    apply_network_defaults(config, given, report=log_info)
    config.validate()
    from drga.trainer import Trainer  # the trainer imports the whole toolkit: only when training

    trainer = Trainer(config, overwrite=True, network=network, data=data.prepared)
    results = trainer.run()
    best = trainer.run_dir / "cotrain_best.pt"
    if best.exists():
        trainer.load_model(best)
    return RetrofitResult(
        trainer.network, trainer.policy, trainer.strength, results["results"], results["history"], trainer.run_dir, config
    )


def train(config: ExperimentConfig, *, resume: bool = False, overwrite: bool = False, force: bool = False) -> dict[str, Any]:
    """Train what ``config`` names (its network from the registry, its data set): what ``drga train``
    runs. Returns results.json's content. ``resume`` continues the run in its folder (``force``:
    although its data changed); ``overwrite`` replaces it."""
    from drga.trainer import Trainer

    config.validate()
    return Trainer(config, resume=resume, overwrite=overwrite, force=force).run()


def _qualified(name: str) -> str:
    """``pretrain_epochs`` → ``train.pretrain_epochs``: the one section that has the field."""
    if "." in name:
        return name
    sections = [f.name for f in dataclasses.fields(ExperimentConfig) if name in get_type_hints(type(getattr(ExperimentConfig(), f.name)))]
    if len(sections) != 1:
        where = " and ".join(f"{s}.{name}" for s in sections) if sections else "no section"
        raise ConfigError(
            f"'{name}' is {'ambiguous: ' + where if sections else 'not a setting (' + where + ')'}; pass settings={{'section.{name}': ...}}"
        )
    return f"{sections[0]}.{name}"


__all__: Sequence[str] = ["TextData", "RetrofitResult", "retrofit", "train", "default_tokenizer"]
