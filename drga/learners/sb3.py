"""Phase 2 (agent pretraining on the frozen network) learned by stable-baselines3 PPO or A2C.

``drga train --agent sb3-ppo`` (``agent.algorithm``) replaces REINFORCE in the agent phase
only; pretraining, the equal-budget baseline, evaluation, model selection and co-training are
the runner's as always. Design (docs/sb3.md has the reasoning and the comparison):

- Environment: :class:`envs.AttentionRetrofitEnv` over the training split, the frozen
  pretrained network, the run's reward (``[reward]``: the one ``reward.name`` chooses, with
  ``reward.closeness``'s term; ``drga/core/reward.py``) and β; ``agent.sb3_n_envs`` copies in one SB3
  ``DummyVecEnv`` (all share the network, so processes would only copy it).
- Actions: SB3 acts through :class:`PreSquashActions`: its action u ∈ [-1, 1] is eq. 2's
  pre-squash x = limit·u and the env receives a = squash(x). SB3's diagonal Gaussian over u is
  then eq. 2's Gaussian over x, and the learned actor converts *exactly* into the toolkit's
  :class:`~agents.gaussian_policy.GaussianPolicy` (:func:`agents.sb3_policy.gaussian_policy_from_sb3`):
  the same architecture (LayerNorm, tanh MLP of ``agent.hidden_sizes``), so ``rollout``,
  ``evaluate``, checkpoints, ``drga evaluate`` and ``env_from_checkpoint`` need no change.
- Objective: SB3's discount is 1 — the episode's return is the chosen reward's objective, as
  REINFORCE's. Its ``agent/reward`` curve is the reward as REINFORCE reports it (without closeness's term).
- Budget: ``agent.sb3_total_steps`` environment steps (tokens); 0 means REINFORCE's budget,
  ``agent_epochs`` × K × (tokens in the training split), since REINFORCE's K samples of a
  sentence are K episodes. The budget is cut into ``agent_epochs`` chunks; after each, the
  converted policy is evaluated on dev (with-agent) and the best chunk is kept, as for REINFORCE.
- Resume: each chunk starts from fresh episodes with its RNGs seeded from (run seed, epoch),
  and the SB3 model (with its optimiser) is saved after each chunk in ``sb3/``; a resumed run
  reproduces an uninterrupted one.
- Co-training: unchanged — the network and the agent co-train by REINFORCE, the agent starting
  from the SB3-learned policy (phase 2's best, converted).
- TensorBoard: SB3's own scalars in ``tb/<algorithm>/`` (x = environment steps), and the
  runner's ``agent/*`` curves in ``tb/agent`` on the phase's step axis (one step = one
  REINFORCE batch's worth of environment steps) so the two learners' curves overlay.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3 import A2C, PPO
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.logger import Logger, configure
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor, FlattenExtractor
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv
from torch import nn

from drga.agents.sb3_policy import gaussian_policy_from_sb3
from drga.baselines.protocol import AttentionNetwork, Batch
from drga.checkpoint_format import CheckpointError
from drga.config import AgentConfig, ExperimentConfig
from drga.core.policy import squash
from drga.core.reward import PAPER_DELTA, Reward
from drga.envs.attention_retrofit import AttentionRetrofitEnv
from drga.files import atomic_path
from drga.learners.context import LearnedEpoch, LearnerContext
from drga.names import Part, PhaseName
from drga.registry import RegistryError, task_spec_of
from drga.runtime.eval_mode import eval_mode

#: ``agent.algorithm`` → SB3 class; "reinforce" is the runner's own learner.
SB3_ALGORITHMS: dict[str, type[BaseAlgorithm]] = {"sb3-ppo": PPO, "sb3-a2c": A2C}
#: Stats of a finished episode that the env reports in ``info`` and the runner logs.
EPISODE_KEYS = ("log_likelihood", "penalty", "penalty_weight", "highlighted_fraction", "beta")


class PreSquashActions(gym.ActionWrapper):
    """The agent acts in eq. 2's pre-squash space: action u ∈ [-1, 1], env action squash(limit·u).

    The action space stays the normalised Box(-1, 1) SB3 recommends; ``limit`` (default 8:
    |a| ≤ 0.9993) sets how close to ±1 the agent can push a weight.
    """

    def __init__(self, env: gym.Env, limit: float):
        super().__init__(env)
        if limit <= 0:
            raise ValueError(f"limit must be positive, got {limit}")
        self.limit = float(limit)
        self.action_space = spaces.Box(-1.0, 1.0, shape=env.action_space.shape, dtype=np.float32)

    def action(self, action: np.ndarray) -> np.ndarray:
        u = np.clip(np.asarray(action, dtype=np.float32), -1.0, 1.0)
        return squash(torch.from_numpy(self.limit * u)).numpy()


class StateNorm(BaseFeaturesExtractor):
    """The LayerNorm GaussianPolicy puts before its MLP (``agent.normalize_state``), for SB3."""

    def __init__(self, observation_space: spaces.Box):
        super().__init__(observation_space, features_dim=int(observation_space.shape[0]))
        self.norm = nn.LayerNorm(self.features_dim)

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return self.norm(observations)


def sb3_policy_kwargs(agent: AgentConfig) -> dict[str, Any]:
    """An SB3 actor-critic whose actor has GaussianPolicy's architecture (the critic mirrors it)."""
    return {
        "net_arch": {"pi": list(agent.hidden_sizes), "vf": list(agent.hidden_sizes)},
        "activation_fn": nn.Tanh,
        # σ over x = limit·u starts where the toolkit's policy starts: exp(init_log_std).
        "log_std_init": agent.init_log_std - math.log(agent.sb3_action_limit),
        "features_extractor_class": StateNorm if agent.normalize_state else FlattenExtractor,
    }


def build_sb3_model(algorithm: str, env: VecEnv, agent: AgentConfig, device: torch.device | str = "cpu") -> BaseAlgorithm:
    """A fresh PPO or A2C for ``env`` with the run's agent settings (see module docstring)."""
    if algorithm not in SB3_ALGORITHMS:
        raise ValueError(f"unknown SB3 algorithm {algorithm!r}; choose one of: {', '.join(SB3_ALGORITHMS)}")
    options: dict[str, Any] = dict(
        learning_rate=agent.lr,
        gamma=1.0,
        ent_coef=agent.entropy_coef,
        normalize_advantage=agent.normalize_advantage,
        policy_kwargs=sb3_policy_kwargs(agent),
        device=str(device),
        verbose=0,
    )
    if algorithm == "sb3-ppo":
        n_steps = agent.sb3_n_steps or 2048
        options.update(n_steps=n_steps, batch_size=min(agent.sb3_batch_size, n_steps * env.num_envs))
    elif agent.sb3_n_steps:
        options.update(n_steps=agent.sb3_n_steps)
    return SB3_ALGORITHMS[algorithm]("MlpPolicy", env, **options)


def make_env_factory(
    network: AttentionNetwork, examples: Sequence[Any], collate: Callable[[list[Any]], Batch], config: ExperimentConfig, beta: Any,
    device: torch.device | str, chosen: Reward | None = None,
) -> Callable[[], gym.Env]:
    """A factory of pre-squash-action environments over ``examples`` (for ``make_vec_env``); ``chosen``: the run's reward,
    built once (``context.reward``; default: built from ``config.reward``)."""
    reward = config.reward

    def make() -> gym.Env:
        env = AttentionRetrofitEnv(
            network, list(examples), collate, delta=reward.setting("delta", PAPER_DELTA), beta=beta, order="random", device=device,
            reward=chosen if chosen is not None else reward,  # the reward the run chose, as REINFORCE learns from (drga/core/reward.py)
        )
        return PreSquashActions(env, config.agent.sb3_action_limit)

    return make


@torch.no_grad()
def count_env_steps(
    network: AttentionNetwork, examples: Sequence[Any], collate: Callable[[list[Any]], Batch], device: torch.device | str = "cpu"
) -> int:
    """Environment steps to visit every example once: the real tokens at all attention sites."""
    total = 0
    with eval_mode(network):
        for start in range(0, len(examples), 256):
            batch = collate(list(examples[start : start + 256])).to(device)
            total += sum(int(site.mask.sum()) for site in network.encode(batch).sites)
    return total


@contextmanager
def private_rng(seed: int, device: torch.device) -> Iterator[None]:
    """Seed torch and numpy for a block, then give the caller back its own RNG states.

    SB3 draws its actions from torch's and its minibatches from numpy's global RNG; seeding them
    per chunk makes a chunk a function of (model, seed, epoch), whatever ran before, which is
    what lets a resumed run reproduce an uninterrupted one.
    """
    numpy_state = np.random.get_state()
    devices = [torch.cuda.current_device()] if device.type == "cuda" else []
    try:
        with torch.random.fork_rng(devices=devices):
            torch.manual_seed(seed)
            np.random.seed(seed)
            yield
    finally:
        np.random.set_state(numpy_state)


class _EpisodeCallback(BaseCallback):
    """Hands every finished episode's info to ``on_episode(info, steps_in_this_learn_call)``."""

    def __init__(self, on_episode: Callable[[dict[str, Any], int], None]):
        super().__init__()
        self.on_episode = on_episode
        self._start = 0

    def _on_training_start(self) -> None:
        self._start = self.model.num_timesteps

    def _on_step(self) -> bool:
        for info, done in zip(self.locals["infos"], self.locals["dones"]):
            if done and "episode" in info:
                self.on_episode(info, self.model.num_timesteps - self._start)
        return True


class SB3AgentPhase:
    """The agent phase of one run, learned by SB3 in ``agent_epochs`` chunks of env steps."""

    def __init__(self, context: LearnerContext, epochs: int, epochs_done: int = 0):
        config = context.config
        self.context, self.config, self.agent = context, config, config.agent
        self.algorithm = config.agent.algorithm
        if self.algorithm not in SB3_ALGORITHMS:
            raise ValueError(f"agent.algorithm {self.algorithm!r} is not an SB3 algorithm ({', '.join(SB3_ALGORITHMS)})")
        self.device = torch.device(context.device)
        self.epochs_done = epochs_done
        network = context.network
        network.eval()
        agent_examples = getattr(context.task, "agent_examples", None)  # a drga.extend.Episodes
        if agent_examples is None:
            raise RegistryError(f"task '{task_spec_of(type(context.task)).name}' gives no agent_examples, which the "
                                "stable-baselines3 learners read: train its agent with agent.algorithm = \"reinforce\", or "
                                "make its class a drga.extend.Episodes (docs/extending.md, \"A new task\")")
        examples, collate = agent_examples()
        self.tokens = count_env_steps(network, examples, collate, self.device)
        reinforce_budget = epochs * config.agent.samples * self.tokens
        total = config.agent.sb3_total_steps or reinforce_budget
        self.steps_per_epoch = max(1, math.ceil(total / max(epochs, 1)))
        # One runner step is one REINFORCE batch; SB3's curves go on the same axis by env steps.
        self.steps_per_batch = self.steps_per_epoch / max(len(context.train_batches), 1)
        self.folder = context.run_dir / "sb3"
        self.env = make_vec_env(
            make_env_factory(network, examples, collate, config, context.strength, self.device, context.reward),
            n_envs=config.agent.sb3_n_envs,
            vec_env_cls=DummyVecEnv,
        )
        with private_rng(self._seed(0), self.device):
            if epochs_done == 0:
                self.model = build_sb3_model(self.algorithm, self.env, config.agent, self.device)
            else:
                saved = self.checkpoint(epochs_done)
                if not saved.exists():
                    raise CheckpointError(f"cannot resume the {self.algorithm} agent phase: {saved} is missing")
                self.model = SB3_ALGORITHMS[self.algorithm].load(saved, env=self.env, device=str(self.device))
        # stable-baselines3's own curves, beside the arms' (tb/<algorithm>), when the run reports to TensorBoard
        reports = "tensorboard" in config.run.report_to
        self.model.set_logger(configure(str(context.run_dir / "tb" / self.algorithm), ["tensorboard"]) if reports else Logger(None, []))
        if epochs_done == 0:
            context.log(
                f"   {self.algorithm}: {self.steps_per_epoch} environment steps per epoch, {config.agent.sb3_n_envs} envs "
                f"(REINFORCE's budget: {reinforce_budget // max(epochs, 1)} per epoch = K {config.agent.samples} × "
                f"{self.tokens} training tokens)"
            )

    def checkpoint(self, epoch: int) -> Path:
        return self.folder / f"{self.algorithm}-epoch{epoch}.zip"

    def _seed(self, epoch: int) -> int:
        return (self.config.run.seed * 1_000_003 + epoch * 7_919 + 17) % 2**31

    def train_epoch(self, epoch: int) -> LearnedEpoch:
        """Learn one chunk and save the SB3 model; the converted policy, for the loop to load into the agent."""
        context = self.context
        context.network.eval()
        start_step = context.global_step
        phase_began = start_step - context.phase_step  # the global step at which the agent phase began
        episodes: list[dict[str, float]] = []
        window: list[dict[str, float]] = []
        next_log = (start_step // 10 + 1) * 10

        def on_episode(info: dict[str, Any], steps: int) -> None:
            nonlocal next_log, window
            record = {key: float(info[key]) for key in EPISODE_KEYS}
            record["reward"] = round(float(info["reward"]), 6)  # the reported reward, rounded as SB3's Monitor rounds a return
            episodes.append(record)
            window.append(record)
            step = start_step + int(steps / self.steps_per_batch)
            if step >= next_log:
                context.report_scalars(PhaseName.AGENT, self._summarise(window), step - phase_began)
                window, next_log = [], (step // 10 + 1) * 10

        with private_rng(self._seed(epoch), self.device):
            self.env.seed(self._seed(epoch))
            self.model._last_obs = None  # start from fresh episodes, as a resumed run must
            self.model.learn(self.steps_per_epoch, callback=_EpisodeCallback(on_episode), reset_num_timesteps=False)
        converted = gaussian_policy_from_sb3(
            self.model.policy, self.agent.sb3_action_limit, (self.agent.log_std_min, self.agent.log_std_max)
        )
        self._save(epoch)
        self.epochs_done = epoch
        stats = self._summarise(episodes)
        stats["env_steps"] = float(self.model.num_timesteps)
        stats["episodes"] = float(len(episodes))
        # an epoch counts as many updates as REINFORCE's epoch of batches
        return LearnedEpoch(stats, policy_state=converted.state_dict(), steps=len(context.train_batches))

    def _summarise(self, records: list[dict[str, float]]) -> dict[str, float]:
        mean = lambda key: float(np.mean([r[key] for r in records])) if records else float("nan")
        log_std = getattr(self.model.policy, "log_std", None)  # PPO's and A2C's state-independent log σ
        if not isinstance(log_std, torch.Tensor):
            raise TypeError(f"{type(self.model.policy).__name__} has no Gaussian log_std to report")
        sigma = self.agent.sb3_action_limit * float(log_std.detach().exp().mean())
        return {
            "task_loss": -mean("log_likelihood"),  # −log P(y|X) under the revised attention, as REINFORCE reports it
            "reward": mean("reward"),
            "reward_log_likelihood": mean("log_likelihood"),
            # the reward's own weighted penalty (eq. 5's γ·f(N/L) for the paper's reward), as REINFORCE reports it
            "reward_penalty": (records[0]["penalty_weight"] if records else float("nan")) * mean("penalty"),
            "highlighted_fraction": mean("highlighted_fraction"),
            "beta": mean("beta"),
            "policy_sigma": sigma,
        }

    def _save(self, epoch: int) -> None:
        # Keep this chunk's and the previous chunk's model: last.pt may still point at either.
        self.folder.mkdir(parents=True, exist_ok=True)
        target = self.checkpoint(epoch)
        with atomic_path(target) as temporary:
            self.model.save(temporary)
        for old in self.folder.glob(f"{self.algorithm}-epoch*.zip"):
            if int(old.stem.rsplit("epoch", 1)[1]) < epoch - 1:
                old.unlink()


class SB3Learner:
    """The agent phase learned by stable-baselines3 (``agent.algorithm`` "sb3-ppo" or "sb3-a2c")."""

    supports_ddp = False
    steps: tuple[Part, ...] = ()  #: none: SB3 steps its own optimiser, so the loop makes no agent Adam for it

    def __init__(self, algorithm: str):
        if algorithm not in SB3_ALGORITHMS:
            raise ValueError(f"agent.algorithm {algorithm!r} is not an SB3 algorithm ({', '.join(SB3_ALGORITHMS)})")
        self.algorithm = algorithm
        self.phase: SB3AgentPhase | None = None

    def train_epoch(self, context: LearnerContext, epoch: int, epochs: int) -> LearnedEpoch:
        if self.phase is None or self.phase.context is not context or self.phase.epochs_done != epoch - 1:  # new or resumed
            self.phase = SB3AgentPhase(context, epochs, epochs_done=epoch - 1)
        return self.phase.train_epoch(epoch)
