"""One episode of an attention-retrofit environment against the batched trainer's pass, for the environments' tests."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from drga.core.policy import GaussianPolicy
from drga.core.rollout import rollout
from drga.core.scoring import RewardConstants


def assert_episode_matches_rollout(env: Any, network: Any, index: int, batch: Any) -> dict[str, Any]:
    """Example ``index``'s episode under a deterministic policy with random weights (so that it adjusts something) ends
    with the reward and the revised attention of the batched trainer's pass over ``batch`` (that example alone, the
    same policy, β 0.4 and eq. 5's paper coefficients, as ``env`` must be built); returns the last step's info."""
    observation, _ = env.reset(options={"index": index})
    policy = GaussianPolicy(env.observation_space.shape[0], 1, hidden_sizes=(8,), init_log_std=0.0)
    with torch.no_grad():  # make the deterministic policy do something non-trivial
        policy.mean_head.weight.normal_(0.0, 1.0)
    done = False
    while not done:
        with torch.no_grad():
            action = policy(torch.as_tensor(observation)).numpy()
        observation, reward, done, _, info = env.step(action)
    with torch.no_grad():
        result = rollout(network, policy, batch, torch.tensor(0.4), samples=1, reward=RewardConstants(0.2, 0.2, 0.85), deterministic=True)
    assert reward == pytest.approx(result.terms.reward.item(), abs=1e-5)
    assert np.allclose(info["revised_attention"][0], result.revised[0][0].numpy(), atol=1e-6)
    return info
