"""The Gymnasium environment: both checkers, and agreement with the batched trainer."""

import warnings

import gymnasium
import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env as gymnasium_check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

from drga.data import collate
from drga.envs import ENV_ID, AttentionRetrofitEnv
from tests.episodes import assert_episode_matches_rollout
from tests.tiny_network import TinyAttentionNet, keyword_examples


@pytest.fixture
def tiny_env():
    torch.manual_seed(0)
    examples, vocab_size = keyword_examples(20, seed=0)
    network = TinyAttentionNet(vocab_size, 2)
    return AttentionRetrofitEnv(network, examples, collate), network, examples


def test_gymnasium_env_checker_passes(tiny_env):
    env, _, _ = tiny_env
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a checker warning is a failure here, except one:
        # the state (embeddings, hidden states) is unbounded, and the space says so honestly.
        warnings.filterwarnings("ignore", message=".*Box observation space (minimum|maximum) value is .*infinity")
        gymnasium_check_env(env, skip_render_check=True)


def test_stable_baselines3_env_checker_passes(tiny_env):
    env, _, _ = tiny_env
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb3_check_env(env, warn=True)


def test_registered_and_made_with_gymnasium_make():
    examples, vocab_size = keyword_examples(5, seed=0)
    env = gymnasium.make(ENV_ID, network=TinyAttentionNet(vocab_size, 2), examples=examples, collate=collate)
    observation, info = env.reset(seed=1)
    assert observation.dtype == np.float32 and info["steps"] == len(examples[info["index"]].ids)


def test_episode_walks_every_token_and_rewards_at_the_end(tiny_env):
    env, _, examples = tiny_env
    observation, info = env.reset(seed=0, options={"index": 3})
    length = len(examples[3].ids)
    rewards = []
    for step in range(length):
        observation, reward, terminated, truncated, step_info = env.step(np.array([0.0], dtype=np.float32))
        rewards.append(reward)
        assert terminated == (step == length - 1) and not truncated
    assert rewards[:-1] == [0.0] * (length - 1) and rewards[-1] != 0.0
    # zero actions change nothing: revised α is the original
    assert np.allclose(step_info["original_attention"][0], step_info["revised_attention"][0], atol=1e-6)
    assert step_info["highlighted"][0].shape == (1,)
    assert step_info["log_likelihood"] < 0 and step_info["penalty"] > 0
    with pytest.raises(RuntimeError):
        env.step(np.array([0.0], dtype=np.float32))


def test_env_reward_equals_the_batched_trainers_reward(tiny_env):
    env, network, examples = tiny_env
    torch.manual_seed(1)
    assert_episode_matches_rollout(env, network, 5, collate([examples[5]]))


def test_env_rejects_bad_arguments(tiny_env):
    _, network, examples = tiny_env
    with pytest.raises(ValueError, match="at least one example"):
        AttentionRetrofitEnv(network, [], collate)
    with pytest.raises(ValueError, match="order"):
        AttentionRetrofitEnv(network, examples, collate, order="shuffled")
    env = AttentionRetrofitEnv(network, examples, collate)
    with pytest.raises(IndexError):
        env.reset(options={"index": 99})


def test_the_environment_is_made_by_id_through_gymnasiums_module_form_or_after_import_drga_envs():
    # issue 63: no meta-path finder patches gymnasium's import; drga.envs registers the environment (drga.envs.register),
    # and gymnasium's own "module:id" form imports drga.envs on the way
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(
        """
        import sys
        import gymnasium
        import drga
        assert drga.ENV_ID not in gymnasium.registry  # importing drga registers nothing, patches nothing
        from tests.tiny_network import TinyAttentionNet, keyword_examples
        from drga.data import collate
        examples, vocab_size = keyword_examples(4, seed=0)
        env = gymnasium.make("drga.envs:" + drga.ENV_ID, network=TinyAttentionNet(vocab_size, 2), examples=examples, collate=collate)
        observation, info = env.reset(seed=0)
        import drga.envs
        drga.envs.register()  # once: a second call changes nothing
        again = gymnasium.make(drga.ENV_ID, network=TinyAttentionNet(vocab_size, 2), examples=examples, collate=collate)
        print(type(env.unwrapped).__name__, type(again.unwrapped).__name__, observation.shape[0] > 0)
        """
    )
    root = __file__.rsplit("/tests/", 1)[0]
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=120)
    assert result.returncode == 0, result.stderr[-1500:]
    assert result.stdout.split() == ["AttentionRetrofitEnv", "AttentionRetrofitEnv", "True"]
