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

``info["correct"]`` is whether the teacher-forced argmax equals the reference at every real
target position, and ``info["token_accuracy"]`` the fraction of positions where it does
(:func:`envs.attention_retrofit.prediction_scores`, which compares sequence labels over their
non-padding positions).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from drga.baselines.nmt_common import TranslationNetwork
from drga.data.parallel import EncodedPair, collate_parallel
from drga.envs.attention_retrofit import AttentionRetrofitEnv


def translation_env(network: TranslationNetwork, pairs: Sequence[EncodedPair], **options: Any) -> AttentionRetrofitEnv:
    """The environment over encoded sentence pairs (``drga.data.parallel.encode_pairs``); options as for the env."""
    return AttentionRetrofitEnv(network, list(pairs), collate_parallel, **options)
