"""A Gymnasium environment in which an agent adjusts a network's attention token by token.

One episode is one example: the agent visits every real token of every attention array of the
network (arrays "adjusted one by one", in site order, then array order, then token order).

- observation: the state s_t of eq. 1 for the current token (``Box(-inf, inf, (S,), float32)``);
- action: a_t ∈ [-1, 1]^A, A = 1, or H for multi-dimensional attention;
- reward: 0 until the last token, then the reward of the revised attention: eq. 5 with the env's
  γ, √L0 and δ, or the :class:`~drga.core.reward.Reward` given as ``reward`` (its objective: what the
  agent maximises; ``info["reward"]`` is the reward as runs report it);
- ``info`` at the end: original and revised attention per site, N per array, log P(y|X), the
  penalty, whether the prediction is correct (a sequence label: every real position, plus the
  token accuracy; see :func:`prediction_scores`) and β.

The environment calls the same functions as the batched trainer (:mod:`drga.core.state`,
:func:`drga.core.rollout.site_adjusted_attention`, :func:`drga.core.scoring.score` with the run's :class:`~drga.core.reward.Reward`), so an
agent trained here optimises the same objective.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces

from drga.baselines.protocol import AttentionNetwork, Batch
from drga.core.beta import AdjustmentStrength
from drga.core.reward import Reward, count_highlighted, make_reward
from drga.core.rollout import site_adjusted_attention
from drga.core.scoring import RewardConstants, RewardSettings, score
from drga.core.state import build_agent_state


def prediction_scores(prediction: torch.Tensor, label: torch.Tensor, pad_id: int = 0) -> dict[str, Any]:
    """``info["correct"]`` (and, for a sequence label, ``info["token_accuracy"]``) of one example.

    A class label (a 0-d tensor) is correct when the prediction equals it. A sequence label
    (translation: the target ids, teacher forced) is compared position by position over its real
    positions (``label != pad_id``): ``correct`` when every real position matches, and
    ``token_accuracy`` the fraction that match.
    """
    if label.dim() == 0:
        return {"correct": bool(prediction == label)}
    real = label != pad_id
    matches = (prediction == label) & real
    total = int(real.sum())
    return {"correct": bool(matches.sum() == total), "token_accuracy": float(matches.sum()) / max(total, 1)}


class AttentionRetrofitEnv(gym.Env):
    metadata = {"render_modes": []}

    def __init__(
        self,
        network: AttentionNetwork,
        examples: Sequence[Any],
        collate: Callable[[list[Any]], Batch],
        gamma: float = 0.2,
        sqrt_l0: float = 0.2,
        delta: float = 0.85,
        beta: float | AdjustmentStrength = 0.4,
        order: str = "random",
        device: str | torch.device = "cpu",
        reward: Reward | RewardSettings | None = None,
    ):
        """
        Args:
            network: any network following :mod:`baselines.protocol`; it is used frozen.
            examples: the data set; ``collate([example])`` must give a one-example :class:`Batch`.
            gamma: the reward's γ (eq. 5).
            sqrt_l0: the reward's √L0 (eq. 5).
            delta: the reward's δ (eq. 5), the share of attention mass that counts as highlighted.
            beta: the adjustment strength β (eq. 3), a number or an :class:`AdjustmentStrength`.
            order: "random" (examples drawn with the env's seeded RNG) or "sequential".
            device: where the network runs.
            reward: the reward instead of eq. 5 with ``gamma``, ``sqrt_l0`` and ``delta``: a
                :class:`~drga.core.reward.Reward`, or a ``[reward]`` section (the reward it chooses,
                :func:`drga.core.reward.make_reward`); ``delta`` still counts ``info["highlighted"]``.
        """
        super().__init__()
        if not len(examples):
            raise ValueError("the environment needs at least one example")
        if order not in ("random", "sequential"):
            raise ValueError(f"order must be 'random' or 'sequential', got {order!r}")
        self.network = network.to(device).eval()
        self.examples = examples
        self.collate = collate
        self.gamma, self.sqrt_l0, self.delta = gamma, sqrt_l0, delta
        self.reward = make_reward(reward if reward is not None else RewardConstants(gamma, sqrt_l0, delta))
        self.beta = beta
        self.order = order
        self.device = torch.device(device)
        self._cursor = 0
        probe = self._encode(0)
        state_size = probe["states"].shape[-1]
        self.action_size = probe["action_size"]
        self.observation_space = spaces.Box(-np.inf, np.inf, shape=(state_size,), dtype=np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, shape=(self.action_size,), dtype=np.float32)
        self._episode: dict[str, Any] | None = None

    # ------------------------------------------------------------------ gymnasium API

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        options = options or {}
        if "index" in options:
            index = int(options["index"])
            if not 0 <= index < len(self.examples):
                raise IndexError(f"example index {index} out of range 0..{len(self.examples) - 1}")
        elif self.order == "random":
            index = int(self.np_random.integers(len(self.examples)))
        else:
            index = self._cursor % len(self.examples)
            self._cursor += 1
        self._episode = self._encode(index)
        self._episode["step"] = 0
        return self._observation(), {"index": index, "steps": len(self._episode["positions"])}

    def _current_episode(self) -> dict[str, Any]:
        if self._episode is None:
            raise RuntimeError("call reset() before step()")
        return self._episode

    def step(self, action):
        episode = self._current_episode()
        if episode["step"] >= len(episode["positions"]):
            raise RuntimeError("the episode is over; call reset()")
        action = np.clip(np.asarray(action, dtype=np.float32).reshape(self.action_size), -1.0, 1.0)
        site, array, token = episode["positions"][episode["step"]]
        episode["actions"][site][0, array, token] = torch.as_tensor(action)
        episode["step"] += 1
        if episode["step"] < len(episode["positions"]):
            return self._observation(), 0.0, False, False, {"site": site, "array": array, "token": token}
        reward, info = self._finish()
        return self._observation(), reward, True, False, info

    # ------------------------------------------------------------------ internals

    def current_beta(self) -> torch.Tensor:
        if isinstance(self.beta, AdjustmentStrength):
            return self.beta().detach().to(self.device)
        return torch.tensor(float(self.beta), device=self.device)

    @torch.no_grad()
    def _encode(self, index: int) -> dict[str, Any]:
        batch = self.collate([self.examples[index]]).to(self.device)
        encoding = self.network.encode(batch)
        states, positions, actions, action_size = [], [], [], None
        for s, site in enumerate(encoding.sites):
            site.validate()
            site_states = build_agent_state(site)  # eq. 1, [1, K, T, S]
            size = site.action_size
            if action_size not in (None, size):
                raise ValueError("all attention sites of a network must take the same action size")
            action_size = size
            for array, token in site.mask[0].nonzero().tolist():
                positions.append((s, array, token))
                states.append(site_states[0, array, token])
            actions.append(torch.zeros(*site.mask.shape, size, device=self.device))
        if not positions:
            raise ValueError(f"example {index} has no real token at any attention site")
        return {
            "batch": batch,
            "encoding": encoding,
            "states": torch.stack(states).float().cpu().numpy(),
            "positions": positions,
            "actions": actions,
            "action_size": action_size,
        }

    def _observation(self) -> np.ndarray:
        episode = self._current_episode()
        step = min(episode["step"], len(episode["positions"]) - 1)
        return episode["states"][step]

    @torch.no_grad()
    def _finish(self) -> tuple[float, dict[str, Any]]:
        episode = self._current_episode()
        encoding, batch = episode["encoding"], episode["batch"]
        beta = self.current_beta()
        revised = []
        for site, action in zip(encoding.sites, episode["actions"]):
            revised.append(site_adjusted_attention(site, action, beta))  # eqs. 3–4, as the rollout applies them
        masks = [site.mask for site in encoding.sites]
        scored = score(self.network, encoding, revised, batch.labels, masks, self.reward)
        output, terms = scored.output, scored.terms  # eq. 5, or the reward given
        info = {
            "original_attention": [site.attention[0].cpu().numpy() for site in encoding.sites],
            "revised_attention": [alpha[0].cpu().numpy() for alpha in revised],
            "highlighted": [count_highlighted(a, m, self.delta)[0].cpu().numpy() for a, m in zip(revised, masks)],
            "reward": float(terms.reward[0]),  # as runs report it; the step's reward is the objective
            "log_likelihood": float(terms.log_likelihood[0]),
            "penalty": float(terms.penalty[0]),
            "penalty_weight": float(terms.penalty_weight),  # the reward's weight of its penalty (eq. 5's γ)
            "highlighted_fraction": float(terms.highlighted_fraction[0]),
            **prediction_scores(self.network.predictions(output)[0], batch.labels[0], self.network.pad_id),
            "beta": float(beta),
        }
        return float(terms.objective[0]), info
