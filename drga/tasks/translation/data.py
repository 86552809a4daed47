"""A translation run's data: the sentence pairs, the SentencePiece subwords, the encoded pairs, and the network."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from drga.baselines.nmt_common import TranslationNetwork
from drga.checkpoint_format import CheckpointError, CheckpointPayload
from drga.config import ConfigError
from drga.data.parallel import EncodedPair, ParallelSplits, encode_pairs, load_parallel_dataset
from drga.data.subword import SubwordTokenizer
from drga.registry import network_spec
from drga.tasks.translation.config import TranslationConfig


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

    @cached_property
    def checksum(self) -> str:
        """A fingerprint of what the run trains and is scored on: the subword models and every split's
        pairs as ids (the same files, subset and settings give the same value)."""
        digest = hashlib.sha256(tokenizer_fingerprint(self.source_tokenizer, self.target_tokenizer).encode())
        for split in (self.train, self.dev, self.test):
            for pair in split:
                digest.update(f"{','.join(map(str, pair.source))}>{','.join(map(str, pair.target))}\n".encode())
            digest.update(b"|")
        return digest.hexdigest()[:16]


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
    try:
        spec = network_spec(net.name)
        arguments = spec.arguments(net)  # the network's own settings, from [network]; [nmt]'s below, where it takes them
        arguments.update(encoder=nmt.encoder, rerun_decoder=nmt.rerun_decoder, share_embeddings=nmt.shared_vocab)
        network = spec.build(source_vocab, target_vocab, **arguments)
    except ValueError as error:
        raise ConfigError(f"network '{net.name}': {error}") from None
    if not isinstance(network, TranslationNetwork):
        raise ConfigError(f"network '{net.name}' is not a translation network; see `drga networks` (input 'parallel')")
    return network


def tokenizer_fingerprint(source: SubwordTokenizer, target: SubwordTokenizer) -> str:
    """A short hash of the subword models (the vocabulary of a translation network's embeddings)."""
    digest = hashlib.sha256(source.model_proto)
    digest.update(b"\0" if source is target else b"\1" + target.model_proto)
    return digest.hexdigest()[:16]


def tokenizers_from_payload(
    payload: Mapping[str, Any], source_path: object = "this checkpoint"
) -> tuple[SubwordTokenizer, SubwordTokenizer]:
    """The (source, target) tokenizers saved in a translation checkpoint (one object when shared),
    checked against the fingerprint written with them where the checkpoint has one."""
    checkpoint = CheckpointPayload.of(payload)
    if checkpoint.task != "translation":
        raise CheckpointError(f"{source_path} holds no translation model (no subword tokenizers)")
    source = SubwordTokenizer(checkpoint.source_tokenizer)
    target = source if checkpoint.shared_tokenizer else SubwordTokenizer(checkpoint.target_tokenizer)
    if tokenizer_fingerprint(source, target) != checkpoint.vocab_fingerprint:
        raise CheckpointError(
            f"{source_path} is corrupted: its subword models are not the ones its network was trained with "
            "(they do not match the fingerprint written with them)"
        )
    return source, target
