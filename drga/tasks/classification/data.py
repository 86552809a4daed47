"""A classification run's data and network from its configuration: the data set loaded, tokenized
and encoded with its vocabulary, the batches, and the attention network the configuration names."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from drga.baselines import NETWORK_INPUTS
from drga.baselines.protocol import AttentionNetwork, Batch
from drga.config import ConfigError, ExperimentConfig
from drga.core.degradation import AttentionDegradation
from drga.data import (
    BatchIterator,
    DatasetSplits,
    EncodedExample,
    Vocabulary,
    collate,
    holdout_split,
    load_dataset,
    load_vectors,
)
from drga.data.embeddings import VectorFileError
from drga.data.pretrained_vocab import SubwordVocabulary
from drga.registry import find_network, network_spec


@dataclass
class PreparedData:
    splits: DatasetSplits
    vocab: Vocabulary
    train: list[EncodedExample]
    dev: list[EncodedExample]
    test: list[EncodedExample]
    reports: list[str]
    #: ``data.agent_holdout``: training examples held out from the network, for the agent alone.
    agent_train: list[EncodedExample] = field(default_factory=list)

    @cached_property
    def checksum(self) -> str:
        """A fingerprint of what the run trains and is scored on: every split's token ids and
        labels, and the vocabulary (the same files, split and settings give the same value)."""
        digest = hashlib.sha256("\n".join(self.vocab.itos).encode("utf-8", errors="surrogatepass"))
        for split in (self.train, self.dev, self.test):
            for example in split:
                digest.update(f"{example.label}:{','.join(map(str, example.ids))}\n".encode())
            digest.update(b"|")
        return digest.hexdigest()[:16]


def load_splits(config: ExperimentConfig) -> DatasetSplits:
    """The configured data set as read from its files: tokenized, split, its labels checked (no vocabulary yet)."""
    data = config.data
    return load_dataset(
        data.dataset,
        data_dir=data.data_dir,
        tsv_path=data.tsv_path,
        split_seed=data.split_seed,
        lowercase=data.lowercase,
        phrase_level=data.phrase_level,
        tsv_header=data.tsv_header,
        rare_labels=data.rare_labels,
        encoding=data.encoding,
        encoding_errors=data.encoding_errors,
    )


def prepare_data(config: ExperimentConfig, vocab: Vocabulary | None = None) -> PreparedData:
    """Load, tokenize and encode the data set; the vocabulary comes from the training split."""
    data = config.data
    required = NETWORK_INPUTS.get(config.network.name, "text")
    splits = load_splits(config)
    # A text network may read aspect data (it ignores the aspect); every other mismatch is an error.
    if required != splits.provides and not (required == "text" and splits.provides == "aspect"):
        raise ConfigError(
            f"network '{config.network.name}' needs {required} data but data set '{data.dataset}' provides "
            f"{splits.provides} data; choose a network whose input is '{splits.provides}' (see `drga networks`)"
        )
    train = splits.train
    if data.train_fraction < 1.0:
        keep = max(1, int(round(len(train) * data.train_fraction)))
        order = np.random.default_rng(data.split_seed).permutation(len(train))[:keep]
        train = [train[i] for i in sorted(order)]
    held_out: list = []
    if data.agent_holdout > 0:  # beyond the paper: the agent's own slice of the training split
        train, held_out = holdout_split(train, data.split_seed + 1, data.agent_holdout)
    if subword_tokenizer(config.network.name) is not None:  # the model's own subwords, not a vocabulary of the training words
        vocab = pretrained_vocabulary(config, vocab.itos if vocab is not None else None)
    elif vocab is None:
        vocab = Vocabulary.build((ex.tokens for ex in train + held_out), min_freq=data.min_freq)
    encoded, reports = {}, list(splits.notes)
    for name, examples in (("train", train), ("dev", splits.dev), ("test", splits.test)):
        if not examples:
            raise ConfigError(f"data set '{data.dataset}' has an empty {name} split")
        encoded[name], report = encode_split(examples, vocab, data)
        reports.append(report.describe(name))
    agent_train: list[EncodedExample] = []
    if held_out:
        agent_train, report = encode_split(held_out, vocab, data)
        reports.append(report.describe(f"agent-only (held out from the network, data.agent_holdout = {data.agent_holdout})"))
    reports.append(vocab.describe(data.min_freq))
    return PreparedData(splits, vocab, encoded["train"], encoded["dev"], encoded["test"], reports, agent_train)


def subword_tokenizer(network: str) -> Callable[[str | None], Any] | None:
    """The loader of the pretrained tokenizer whose subwords network ``network`` reads (its registration's ``tokenizer``:
    hf-encoder's), or None for a network that reads the toolkit's word vocabulary (or that is not registered)."""
    spec = find_network(network)
    return None if spec is None else spec.tokenizer


def pretrained_vocabulary(config: ExperimentConfig, recorded: Sequence[str] | None) -> SubwordVocabulary:
    """The vocabulary of the network's pretrained tokenizer; ``recorded`` (a checkpoint's tokens by id) must be the same."""
    load_tokenizer = subword_tokenizer(config.network.name)
    if load_tokenizer is None:
        raise ConfigError(f"network '{config.network.name}' reads the toolkit's word vocabulary, not a pretrained tokenizer's subwords")
    vocab = SubwordVocabulary(load_tokenizer(config.network.pretrained), source=config.network.pretrained)
    if recorded is not None and list(recorded) != vocab.itos:
        raise ConfigError(f"network.pretrained={config.network.pretrained}: its tokenizer is not the one the checkpoint was trained with")
    return vocab


def encode_split(examples: Sequence, vocab: Vocabulary, data) -> tuple[list[EncodedExample], Any]:
    """A split's ids: the pretrained tokenizer's subwords, or the word vocabulary's ids."""
    return vocab.encode_examples(examples, data.max_length, data.max_sentences, data.max_sentence_length)


def batch_iterators(config: ExperimentConfig, data: PreparedData) -> tuple[BatchIterator, BatchIterator, BatchIterator]:
    size = config.data.batch_size
    return (
        BatchIterator(data.train, size, shuffle=True, seed=config.run.seed),
        BatchIterator(data.dev, size * 2, shuffle=False),
        BatchIterator(data.test, size * 2, shuffle=False),
    )


def build_attention_network(
    config: ExperimentConfig, vocab: Vocabulary, num_classes: int, log: Callable[[str], None] = print
) -> AttentionNetwork:
    net = config.network
    spec = network_spec(net.name)
    arguments = spec.arguments(net)  # the network's own settings, from [network]
    if net.vectors:
        if "embeddings" not in spec.runtime or not spec.accepts("embeddings"):
            raise ConfigError(f"network.vectors: network '{net.name}' does not take pretrained word vectors; unset network.vectors")
        try:
            vectors = load_vectors(net.vectors, vocab, net.embedding_dim, seed=config.run.seed, data_dir=config.data.data_dir)
        except (FileNotFoundError, VectorFileError) as error:
            raise ConfigError(f"network.vectors: {error}") from None
        log(f"data  {vectors.describe()}")
        arguments["embeddings"] = vectors.matrix
    try:
        network = spec.build(len(vocab), num_classes, **arguments)
    except ValueError as error:  # an impossible combination of [network] settings: say which
        raise ConfigError(f"network '{net.name}': {error}") from None
    control = config.control
    degradation = AttentionDegradation(control.attention, control.strength, control.freeze_scorer, seed=config.run.seed)
    if degradation.active:
        log(f"model {degradation.describe()} (control.*)")
    return degradation.attach(network)



def first_batch(examples: Sequence[EncodedExample], size: int = 2) -> Batch:
    return collate(list(examples[:size]))
