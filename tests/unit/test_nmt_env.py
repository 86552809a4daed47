"""The Gymnasium environment on decoder cross-attention: checkers, episode layout, and agreement
with the batched trainer's reward."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env as gymnasium_check_env

from drga.baselines.seq2seq_luong import LuongSeq2Seq
from drga.baselines.transformer_nmt import TransformerNMT
from drga.data.parallel import EncodedPair, collate_parallel
from drga.envs.attention_retrofit import prediction_scores
from drga.envs.translation import translation_env
from tests.episodes import assert_episode_matches_rollout

PAIRS = [
    EncodedPair([5, 6, 7], [8, 9], 0),  # 3 source tokens, 2 target tokens + </s> = 3 decoder steps
    EncodedPair([10, 11], [12], 1),
    EncodedPair([13, 14, 15, 16], [17, 18, 19], 2),
]


def luong() -> LuongSeq2Seq:
    torch.manual_seed(0)
    return LuongSeq2Seq(24, 24, embedding_dim=8, hidden_size=8, dropout=0.0)


def test_gymnasium_checker_passes_on_cross_attention():
    env = translation_env(luong(), PAIRS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", message=".*Box observation space (minimum|maximum) value is .*infinity")
        gymnasium_check_env(env, skip_render_check=True)


@pytest.mark.parametrize("net", ["luong", "transformer"])
def test_an_episode_visits_every_decoder_step_and_source_token(net):
    torch.manual_seed(0)
    network = luong() if net == "luong" else TransformerNMT(24, 24, hidden_size=8, dropout=0.0, layers=2, heads=2, feedforward_size=16)
    per_step = 1 if net == "luong" else 4  # Transformer: layers × heads arrays per decoder step
    env = translation_env(network, PAIRS)
    _, info = env.reset(options={"index": 0})
    assert info["steps"] == 3 * per_step * 3  # decoder steps × arrays per step × source tokens
    positions = []
    done = False
    while not done:
        _, reward, done, _, step_info = env.step(np.zeros(1, dtype=np.float32))
        if not done:
            positions.append((step_info["array"], step_info["token"]))
    assert positions[:4] == [(0, 0), (0, 1), (0, 2), (1, 0)]  # array by array, token by token
    assert step_info["revised_attention"][0].shape == (3 * per_step, 3)
    assert np.allclose(step_info["revised_attention"][0], step_info["original_attention"][0], atol=1e-6)  # a = 0
    assert isinstance(step_info["correct"], bool)
    assert reward == pytest.approx(step_info["log_likelihood"] - 0.2 * step_info["penalty"], abs=1e-5)


def test_env_reward_equals_the_batched_trainers_reward():
    network = luong()
    env = translation_env(network, PAIRS, beta=0.4)
    info = assert_episode_matches_rollout(env, network, 2, collate_parallel([PAIRS[2]]))
    assert info["log_likelihood"] < 0


def run_episode(env, index):
    env.reset(options={"index": index})
    done = False
    while not done:
        _, _, done, _, info = env.step(np.zeros(1, dtype=np.float32))
    return info


def test_correct_compares_the_whole_target_sequence_over_real_positions():
    network = luong()
    env = translation_env(network, PAIRS)
    reference = collate_parallel([PAIRS[2]]).labels  # [1, 4]: 3 target tokens + </s>
    # The network's own teacher-forced argmax, compared position by position.
    info = run_episode(env, 2)
    with torch.no_grad():
        own = network.predictions(network(collate_parallel([PAIRS[2]])))[0]
    assert info["correct"] == bool((own == reference[0]).all())
    assert info["token_accuracy"] == pytest.approx(float((own == reference[0]).float().mean()))
    # A prediction equal to the reference is correct; one wrong token is not (3 of 4 right).
    network.predictions = lambda output: reference.clone()
    info = run_episode(env, 2)
    assert info["correct"] is True and info["token_accuracy"] == 1.0
    wrong = reference.clone()
    wrong[0, 1] = 23
    network.predictions = lambda output: wrong
    info = run_episode(env, 2)
    assert info["correct"] is False and info["token_accuracy"] == pytest.approx(0.75)


def test_prediction_scores_ignore_padding_and_keep_class_labels():
    label = torch.tensor([4, 5, 3, 0, 0])
    assert prediction_scores(torch.tensor([4, 5, 3, 7, 9]), label) == {"correct": True, "token_accuracy": 1.0}
    assert prediction_scores(torch.tensor([4, 6, 3, 0, 0]), label) == {"correct": False, "token_accuracy": pytest.approx(2 / 3)}
    assert prediction_scores(torch.tensor(1), torch.tensor(1)) == {"correct": True}
    assert prediction_scores(torch.tensor(0), torch.tensor(1)) == {"correct": False}
