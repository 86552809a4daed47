"""The Gymnasium environment for translation networks: decoder cross-attention, token by token.

:class:`~envs.attention_retrofit.AttentionRetrofitEnv` works unchanged on a translation network:
it walks every real (array, token) position of every site, and for the cross-attention site the
arrays are the decoder steps (and, for the Transformer, each step's layers and heads). So:

- one **episode** is one sentence pair, read with teacher forcing;
- one **step** is one (decoder step, source token) pair: the agent sees eq. 1's state for that
  source token at that decoder step (w_src, h_src, α·h_src, the step's context, the source
  summary, the decoder state u) and adjusts its weight; steps go target step by target step,
  source token by source token (Transformer: layer by layer and head by head inside a target
  step); padded target steps and padded source tokens are never visited;
- the **reward** is 0 until the last step, then eq. 5 for the sentence pair: log P(y|X) (the sum
  of the target tokens' log-probabilities under the revised attention) minus γ times the
  saliency penalty averaged over the decoder steps' arrays.

The one thing the classification view does not fit is ``info["correct"]``: the environment
compares ``predictions(output)[0]`` with the label, and a target is a sequence.
:class:`SentencePairView` wraps the network so that the comparison is one boolean: whether the
teacher-forced argmax equals the reference at every target position. Everything else passes
through untouched.
"""

from __future__ import annotations

from typing import Any, Sequence

from torch import Tensor

from baselines.nmt_common import PAD_ID, TranslationNetwork
from baselines.protocol import AttentionNetwork, Batch, NetworkEncoding
from drga.data.parallel import EncodedPair, collate_parallel
from envs.attention_retrofit import AttentionRetrofitEnv


class WholeSentenceMatch:
    """A predicted target sequence that equals a reference when every real position matches."""

    def __init__(self, tokens: Tensor):
        self.tokens = tokens

    def __eq__(self, reference: object) -> bool:  # type: ignore[override]
        if not isinstance(reference, Tensor):
            return NotImplemented
        real = reference != PAD_ID
        return bool((self.tokens[real] == reference[real]).all())

    def __hash__(self) -> int:
        return hash(tuple(self.tokens.tolist()))


class SentencePairView(AttentionNetwork):
    """A translation network for the environment: the same encode / predict / reward, sentence-level ``correct``."""

    def __init__(self, network: TranslationNetwork):
        super().__init__()
        self.network = network
        self.net_name = network.net_name

    def encode(self, batch: Batch) -> NetworkEncoding:
        return self.network.encode(batch)

    def predict(self, encoding: NetworkEncoding, attention: Sequence[Tensor]) -> Tensor:
        return self.network.predict(encoding, attention)

    def log_likelihood(self, output: Tensor, labels: Tensor) -> Tensor:
        return self.network.log_likelihood(output, labels)

    def predictions(self, output: Tensor) -> list[WholeSentenceMatch]:  # type: ignore[override]
        return [WholeSentenceMatch(row) for row in self.network.predictions(output)]


def translation_env(network: TranslationNetwork, pairs: Sequence[EncodedPair], **options: Any) -> AttentionRetrofitEnv:
    """The environment over encoded sentence pairs (``drga.data.parallel.encode_pairs``); options as for the env."""
    return AttentionRetrofitEnv(SentencePairView(network), list(pairs), collate_parallel, **options)
