"""A translation mode's teacher-forced scores: the agent's attention shift beside perplexity, reward and N/L."""

from __future__ import annotations

import pytest
import torch

from drga.baselines.protocol import Batch
from drga.core.rollout import rollout
from drga.tasks.translation.evaluation import TranslationEval, evaluate_translation, teacher_forced_scores
from tests.nmt_helpers import tiny_translation_config
from tests.unit.test_nmt_decoding import batch, network_and_agent


def two_batches() -> list[Batch]:
    """The decoding tests' three sentence pairs as batches of two and one: the shift is a mean over sentences, not batches."""
    whole = batch()
    return [Batch(whole.tokens[rows], whole.mask[rows], whole.labels[rows]) for rows in (slice(0, 2), slice(2, 3))]


def shift_by_hand(original: torch.Tensor, revised: torch.Tensor, mask: torch.Tensor) -> list[float]:
    """One sentence's site, [K, T(, H)]: ½ Σ_t |α′_t − α_t| of every array with a real source token
    (a multi-dimensional array: the mean over its H distributions)."""
    distances = []
    for k in range(mask.shape[0]):
        if mask[k].any():
            distance = 0.5 * (revised[k] - original[k]).abs().sum(dim=0)  # [] or [H]
            distances.append(float(distance.mean()))
    return distances


@pytest.mark.parametrize("name", ["luong", "transformer"])
def test_the_attention_shift_is_the_mean_over_sentences_of_how_far_the_agent_moved_the_attention(tmp_path, name):
    network, policy = network_and_agent(name)
    config = tiny_translation_config(tmp_path)
    beta = torch.tensor(0.4)
    batches = two_batches()
    scores = teacher_forced_scores(network, batches, config, "with-agent", policy, beta)
    per_sentence = []
    for b in batches:
        with torch.no_grad():
            sites = network.encode(b).sites
            acted = rollout(network, policy, b, beta, reward=config.experiment.reward, deterministic=True)
        for i in range(b.size):
            arrays = [d for original, revised, site in zip(acted.original, acted.revised, sites)
                      for d in shift_by_hand(original[i], revised[i], site.mask[i])]
            per_sentence.append(sum(arrays) / len(arrays))
    assert scores["attention_shift"] == pytest.approx(sum(per_sentence) / len(per_sentence), rel=1e-5)
    assert 0.0 < scores["attention_shift"] <= 1.0
    # β = 0 leaves α as it is; the network alone has no shift to report
    unmoved = teacher_forced_scores(network, batches, config, "with-agent", policy, torch.tensor(0.0))
    assert unmoved["attention_shift"] == pytest.approx(0.0, abs=1e-7)
    assert teacher_forced_scores(network, batches, config, "net-only")["attention_shift"] is None


def test_a_scored_mode_carries_the_brevity_penalty_and_lengths_of_its_bleu_only_when_it_decoded(tmp_path):
    network, policy = network_and_agent("luong")
    config = tiny_translation_config(tmp_path)
    result, _ = evaluate_translation(network, two_batches(), config, "with-agent", policy, torch.tensor(0.4))
    assert isinstance(result, TranslationEval)
    assert (result.bleu, result.brevity_penalty, result.hypothesis_length, result.reference_length) == (None, None, None, None)
    assert result.attention_shift is not None and "attention_shift" in result.numbers()
    assert "brevity_penalty" not in result.numbers()  # no BLEU, nothing logged for it


def test_early_stop_probability_by_hand():
    from drga.baselines.nmt_common import EOS_ID, PAD_ID
    from drga.tasks.translation.evaluation import early_stop_probability

    def step(eos: float) -> list[float]:  # a next-token distribution over 6 ids with P(</s>) = eos
        rest = (1.0 - eos) / 5
        return [eos if i == EOS_ID else rest for i in range(6)]

    probabilities = torch.tensor([
        [step(0.1), step(0.2), step(0.9)],  # two words, then </s>: 1 − 0.9 · 0.8 = 0.28 (the last step is the end itself)
        [step(0.5), step(0.7), step(0.3)],  # one word, </s>, padding: 0.5
        [step(0.6), step(0.1), step(0.1)],  # an empty translation: no chance to end early, 0
    ])
    labels = torch.tensor([[4, 5, EOS_ID], [4, EOS_ID, PAD_ID], [EOS_ID, PAD_ID, PAD_ID]])
    got = early_stop_probability(probabilities.log(), labels)
    assert torch.allclose(got, torch.tensor([0.28, 0.5, 0.0]), atol=1e-6)
    assert torch.allclose(early_stop_probability(probabilities.log() + 3.0, labels), got, atol=1e-6)  # logits, not probabilities
