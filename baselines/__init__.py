"""Attention networks DRGA can retrofit, and the protocol they follow.

Nothing here imports the agent, the environment or the trainer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from drga.baselines.atae_lstm import ATAELSTM
from drga.baselines.cnn_sa import CNNSelfAttention
from drga.baselines.disan import DiSAN
from drga.baselines.han import HierarchicalAttentionNetwork
from drga.baselines.hf_encoder import HFEncoderClassifier, load_tokenizer
from drga.baselines.ian import IAN
from drga.baselines.lstm_sa import LSTMSelfAttention
from drga.baselines.nmt_common import TranslationNetwork
from drga.baselines.protocol import AttentionNetwork, AttentionSite, Batch, NetworkEncoding, masked_softmax
from drga.baselines.seq2seq_luong import LuongSeq2Seq
from drga.baselines.transformer import TransformerClassifier
from drga.baselines.transformer_nmt import TransformerNMT

NetworkFactory = Callable[..., AttentionNetwork]

#: Networks selectable with ``--net``. Each factory takes (vocab_size, num_classes, **hyperparameters).
NETWORKS: dict[str, NetworkFactory] = {
    "lstm-sa": LSTMSelfAttention,
    "cnn-sa": CNNSelfAttention,
    "transformer": TransformerClassifier,
    "disan": DiSAN,
    "atae-lstm": ATAELSTM,
    "ian": IAN,
    "han": HierarchicalAttentionNetwork,
    "seq2seq-luong": LuongSeq2Seq,
    "transformer-nmt": TransformerNMT,
    "hf-encoder": HFEncoderClassifier,
}

#: What each network needs from a data set ("text": token sequences; "aspect": an aspect term
#: too; "document": sentences of a document; "parallel": source and target text, for the
#: translation networks, trained by drga/tasks/translation). Must equal the data set's ``provides``, except that
#: a text network may read aspect data (ignoring the aspect).
NETWORK_INPUTS: dict[str, str] = {
    "lstm-sa": "text",
    "cnn-sa": "text",
    "transformer": "text",
    "disan": "text",
    "atae-lstm": "aspect",
    "ian": "aspect",
    "han": "document",
    "seq2seq-luong": "parallel",
    "transformer-nmt": "parallel",
    "hf-encoder": "text",
}

#: Networks that read the subword ids of their pretrained checkpoint's own tokenizer instead of the
#: toolkit's word vocabulary: name → the loader of that tokenizer from ``network.pretrained``.
PRETRAINED_TOKENIZERS: dict[str, Callable[[str | None], Any]] = {
    "hf-encoder": load_tokenizer,
}


def build_network(name: str, vocab_size: int, num_classes: int, **hyperparameters: object) -> AttentionNetwork:
    if name not in NETWORKS:
        raise ValueError(f"unknown network '{name}'; choose one of: {', '.join(sorted(NETWORKS))}")
    return NETWORKS[name](vocab_size=vocab_size, num_classes=num_classes, **hyperparameters)


__all__ = [
    "AttentionNetwork",
    "AttentionSite",
    "Batch",
    "NetworkEncoding",
    "masked_softmax",
    "LSTMSelfAttention",
    "CNNSelfAttention",
    "TransformerClassifier",
    "DiSAN",
    "ATAELSTM",
    "IAN",
    "HierarchicalAttentionNetwork",
    "LuongSeq2Seq",
    "TransformerNMT",
    "TranslationNetwork",
    "HFEncoderClassifier",
    "NETWORKS",
    "PRETRAINED_TOKENIZERS",
    "NETWORK_INPUTS",
    "build_network",
]
