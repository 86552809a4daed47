"""Attention networks DRGA can retrofit, and the protocol they follow.

Nothing here imports the agent, the environment or the trainer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, MutableMapping
from typing import Any

from drga.baselines.atae_lstm import ATAELSTM
from drga.baselines.cnn_sa import CNNSelfAttention
from drga.baselines.disan import DiSAN
from drga.baselines.han import HierarchicalAttentionNetwork
from drga.baselines.hf_encoder import HFEncoderClassifier
from drga.baselines.ian import IAN
from drga.baselines.lstm_sa import LSTMSelfAttention
from drga.baselines.nmt_common import TranslationNetwork
from drga.baselines.protocol import AttentionNetwork, AttentionSite, Batch, NetworkEncoding, masked_softmax
from drga.baselines.seq2seq_luong import LuongSeq2Seq
from drga.baselines.transformer import TransformerClassifier
from drga.baselines.transformer_nmt import TransformerNMT
from drga.registry import NetworkSpec, find_network, network_names, network_spec, register_network, unregister_network

NetworkFactory = Callable[..., AttentionNetwork]


class _Networks(MutableMapping[str, NetworkFactory]):
    """Name → the factory of every registered network (``drga/registry.py``), in registration order.

    Assigning registers a network with the registration's defaults (input "text", its settings read off
    its constructor); deleting removes it. ``@register_network`` says more (docs/extending.md)."""

    def __getitem__(self, name: str) -> NetworkFactory:
        spec = find_network(name)
        if spec is None:
            raise KeyError(name)
        return spec.factory

    def __setitem__(self, name: str, factory: NetworkFactory) -> None:
        register_network(name, replace=True)(factory)

    def __delitem__(self, name: str) -> None:
        if find_network(name) is None:
            raise KeyError(name)
        unregister_network(name)

    def __iter__(self) -> Iterator[str]:
        return iter(network_names())

    def __len__(self) -> int:
        return len(network_names())


class _View(Mapping[str, Any]):
    """A read-only view of one field of the registered networks (those for which ``pick`` is not None)."""

    def __init__(self, pick: Callable[[NetworkSpec], Any]):
        self._pick = pick

    def __getitem__(self, name: str) -> Any:
        spec = find_network(name)
        if spec is None or self._pick(spec) is None:
            raise KeyError(name)
        return self._pick(spec)

    def __iter__(self) -> Iterator[str]:
        return iter([name for name in network_names() if self._pick(network_spec(name)) is not None])

    def __len__(self) -> int:
        return len(list(iter(self)))


#: Networks selectable with ``--net``: a view of the registry. Each factory takes (vocab_size, num_classes, **settings).
NETWORKS: MutableMapping[str, NetworkFactory] = _Networks()

#: What each network needs from a data set ("text": token sequences; "aspect": an aspect term
#: too; "document": sentences of a document; "parallel": source and target text, for the
#: translation networks, trained by drga/tasks/translation). Must equal the data set's ``provides``, except that
#: a text network may read aspect data (ignoring the aspect). A view of the registry (``input=``).
NETWORK_INPUTS: Mapping[str, str] = _View(lambda spec: spec.input)

#: Networks that read the subword ids of their pretrained checkpoint's own tokenizer instead of the
#: toolkit's word vocabulary: name → the loader of that tokenizer from ``network.pretrained``. A view
#: of the registry (``tokenizer=``).
PRETRAINED_TOKENIZERS: Mapping[str, Callable[[str | None], Any]] = _View(lambda spec: spec.tokenizer)


def build_network(name: str, vocab_size: int, num_classes: int, **settings: object) -> AttentionNetwork:
    """The registered network ``name`` with ``settings`` read as a ``[network]`` section: its own passed on,
    other networks' left out, a key no registered network has an error naming its settings."""
    return network_spec(name).build(vocab_size, num_classes, **settings)


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
    "register_network",
]
