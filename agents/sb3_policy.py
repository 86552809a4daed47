"""stable-baselines3 policies in the toolkit's policy interface (``distribution(state) -> Normal``).

The toolkit's agent is a Gaussian over the *pre-squash* variable x of eq. 2; the action is
a = squash(x) = 2·sigmoid(x) − 1. Anything with a ``distribution(state)`` method returning a
:class:`~torch.distributions.Normal` over x plugs into :func:`drga.core.rollout.rollout`,
:func:`drga.tasks.classification.evaluation.evaluate` and the trainer. Two ways to get there from SB3:

- :func:`gaussian_policy_from_sb3` — *exact* conversion into a :class:`GaussianPolicy`, for an
  SB3 actor-critic policy (PPO, A2C) that acted through
  :class:`drga.learners.sb3.PreSquashActions` (SB3 action u ∈ [-1, 1], x = limit·u). This is what
  ``drga train --agent sb3-ppo|sb3-a2c`` does; checkpoints then hold an ordinary GaussianPolicy.
- :class:`SB3PolicyAdapter` — wraps *any* SB3 policy trained on the environment itself
  (actions a ∈ [-1, 1] given to the env directly), e.g. your own SAC or TD3; see the mapping in
  its docstring and in docs/sb3.md.

Only torch is imported here: SB3 objects are recognised by the attributes they expose.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Protocol, cast

import torch
from torch import Tensor, nn
from torch.distributions import Normal

from drga.core.policy import AgentPolicy, BlockwiseState, GaussianPolicy, squash


def pre_squash(action: Tensor, eps: float = 1e-6) -> Tensor:
    """The inverse of :func:`squash`: x = log((1 + a) / (1 − a)), with a clipped to ±(1 − eps)."""
    a = action.clamp(-1.0 + eps, 1.0 - eps)
    return torch.log1p(a) - torch.log1p(-a)


class _SB3MlpExtractor(Protocol):
    policy_net: nn.Sequential  #: the actor's hidden layers


class _SB3ActorCritic(Protocol):
    """The members of an SB3 ``ActorCriticPolicy`` that :func:`gaussian_policy_from_sb3` reads."""

    pi_features_extractor: nn.Module
    mlp_extractor: _SB3MlpExtractor
    action_net: nn.Module
    log_std: Tensor


def gaussian_policy_from_sb3(
    sb3_policy: nn.Module, action_limit: float, log_std_bounds: tuple[float, float] = (-5.0, 1.0)
) -> GaussianPolicy:
    """The :class:`GaussianPolicy` whose distribution over x equals the SB3 policy's over limit·u.

    ``sb3_policy`` is an SB3 ``ActorCriticPolicy`` with a diagonal Gaussian (PPO, A2C; no gSDE),
    tanh hidden layers, and a features extractor that is either a flatten (identity on the
    state) or one LayerNorm. Its actor is copied layer by layer; the mean head is scaled by
    ``action_limit``, and the state-independent log σ becomes the log-std head's bias
    (+ log limit) with zero weights. The result acts exactly as SB3 did through
    :class:`~drga.learners.sb3.PreSquashActions` wherever SB3 did not clip (|μ_u| ≤ 1); σ is
    clamped to ``log_std_bounds`` like the toolkit's own policy.
    """
    for needed in ("mlp_extractor", "action_net", "log_std", "pi_features_extractor"):
        if not hasattr(sb3_policy, needed):
            raise TypeError(
                f"{type(sb3_policy).__name__} is not an SB3 actor-critic policy with a Gaussian "
                f"(no '{needed}'); wrap it in SB3PolicyAdapter instead"
            )
    if getattr(sb3_policy, "use_sde", False):
        raise TypeError("gSDE policies cannot be converted exactly; wrap them in SB3PolicyAdapter")
    actor_critic = cast(_SB3ActorCritic, sb3_policy)  # it has the members checked above
    extractor = actor_critic.pi_features_extractor
    norms = [m for m in extractor.modules() if isinstance(m, nn.LayerNorm)]
    extractor_params = sum(p.numel() for p in extractor.parameters())
    if len(norms) > 1 or extractor_params != sum(p.numel() for n in norms for p in n.parameters()):
        raise TypeError("only a flatten or a single-LayerNorm features extractor has a GaussianPolicy equivalent")
    layers = list(actor_critic.mlp_extractor.policy_net)
    linears = [m for m in layers if isinstance(m, nn.Linear)]
    if any(not isinstance(m, (nn.Linear, nn.Tanh)) for m in layers):
        raise TypeError("the SB3 actor must use tanh hidden layers (activation_fn=nn.Tanh) like GaussianPolicy")
    action_net = actor_critic.action_net
    if not isinstance(action_net, nn.Linear):
        raise TypeError(f"the SB3 policy's action_net must be linear like GaussianPolicy's mean head, not {type(action_net).__name__}")
    state_size = linears[0].in_features if linears else action_net.in_features
    policy = GaussianPolicy(
        state_size,
        action_net.out_features,
        hidden_sizes=[m.out_features for m in linears],
        log_std_bounds=log_std_bounds,
        normalize_state=bool(norms),
    ).to(action_net.weight.device)
    ours = [m for m in policy.body if isinstance(m, (nn.Linear, nn.LayerNorm))]
    sources: list[nn.Module] = [*norms, *linears]
    with torch.no_grad():
        for target, source in zip(ours, sources):
            target.load_state_dict(source.state_dict())
        policy.mean_head.weight.copy_(action_limit * action_net.weight)
        policy.mean_head.bias.copy_(action_limit * action_net.bias)
        policy.log_std_head.weight.zero_()
        policy.log_std_head.bias.copy_(actor_critic.log_std.detach().reshape(-1) + math.log(action_limit))
    return policy


class SB3PolicyAdapter(nn.Module):
    """Any SB3 policy trained on :class:`~envs.AttentionRetrofitEnv` itself, as a toolkit policy.

    The env takes a ∈ [-1, 1]; the toolkit wants a Normal over x with squash(x) = a. Mapping:

    - tanh-squashed Gaussians (SAC, gSDE with squash_output): a = tanh(u) = squash(2u), so the
      distribution over x is exactly N(2μ, 2σ).
    - clipped Gaussians (PPO, A2C): SB3 sends a = clip(u, −1, 1). The mean is
      x̄ = pre_squash(clip(μ)), so squash(x̄) is SB3's deterministic action exactly; the spread
      is the delta-method σ_x = σ · dx/da = σ · 2 / (1 − ā²), capped at ``max_std`` (a local
      approximation: sampling from it is close to SB3's sampling only where σ is small).
    - deterministic actors (TD3, DDPG, others): x̄ = pre_squash(policy's deterministic action),
      σ_x = ``fallback_std``.

    ``forward(state)`` is the deterministic action, as for :class:`GaussianPolicy`. The SB3
    policy is a submodule: ``adapter.state_dict()`` holds its weights.
    """

    def __init__(self, sb3_policy: nn.Module, fallback_std: float = 0.1, max_std: float = 10.0):
        super().__init__()
        space = getattr(sb3_policy, "action_space", None)
        low, high = getattr(space, "low", None), getattr(space, "high", None)
        if space is None or low is None or high is None or not ((low == -1.0).all() and (high == 1.0).all()):
            raise ValueError(
                "SB3PolicyAdapter needs a policy trained on the environment's own Box(-1, 1) actions; "
                f"this one acts in {space}"
            )
        self.sb3_policy = sb3_policy
        self.action_size = int(space.shape[0])
        self.fallback_std = fallback_std
        self.max_std = max_std

    def distribution(self, state: Tensor | BlockwiseState) -> Normal:
        state = state if isinstance(state, Tensor) else state.dense()  # SB3's MLP reads the concatenated rows
        lead = state.shape[:-1]
        obs = state.reshape(-1, state.shape[-1]).float()
        loc, scale = self._pre_squash_loc_scale(obs)
        scale = scale.clamp(1e-6, self.max_std)
        return Normal(loc.reshape(*lead, self.action_size), scale.reshape(*lead, self.action_size))

    def forward(self, state: Tensor) -> Tensor:
        return squash(self.distribution(state).mean)

    def _pre_squash_loc_scale(self, obs: Tensor) -> tuple[Tensor, Tensor]:
        policy = self.sb3_policy
        actor = getattr(policy, "actor", None)
        if actor is not None and hasattr(actor, "get_action_dist_params"):  # SAC: tanh(u) = squash(2u)
            mean, log_std, _ = actor.get_action_dist_params(obs)
            return 2.0 * mean, 2.0 * log_std.exp().expand_as(mean)
        get_distribution = getattr(policy, "get_distribution", None)
        if get_distribution is not None:
            normal = getattr(get_distribution(obs), "distribution", None)
            if isinstance(normal, Normal):
                mean, std = normal.mean, normal.stddev.expand_as(normal.mean)
                if getattr(policy, "squash_output", False):
                    return 2.0 * mean, 2.0 * std
                action = mean.clamp(-1.0, 1.0)  # SB3 clips its Gaussian's sample to the env's box
                return pre_squash(action), std * 2.0 / (1.0 - action.square()).clamp_min(1e-6)
        predict = getattr(policy, "_predict", None)
        if predict is None:
            raise TypeError(f"{type(policy).__name__} is not an SB3 policy: it has no _predict")
        action = predict(obs, deterministic=True).reshape(obs.shape[0], self.action_size).float()
        return pre_squash(action), torch.full_like(action, self.fallback_std)


if TYPE_CHECKING:  # make lint's mypy checks that the adapter is a policy the rollout takes

    def _adapter_is_a_policy(adapter: SB3PolicyAdapter) -> AgentPolicy:
        return adapter
