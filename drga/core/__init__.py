"""The DRGA method itself (Fei et al., IEEE TNNLS 2022): one module per part, on any attention network.

- :mod:`drga.core.state`: eq. 1, the agent's state s_t for every token (``agent_state``, ``build_agent_state``);
- :mod:`drga.core.policy`: eq. 2, the policy's actions a_t = squash(x_t), x_t ~ N(μ(s_t), σ(s_t))
  (``GaussianPolicy``, ``squash``);
- :mod:`drga.core.adjust`: eqs. 3–4, α* = α + β·a, non-positive entries set to 0, renormalised (``adjust_attention``);
- :mod:`drga.core.beta`: the decaying β of eq. 3, a learned factor times a schedule (``AdjustmentStrength``);
- :mod:`drga.core.reward`: eq. 5, the delayed reward (``drga_reward``), and the ``Reward`` plug point;
- :mod:`drga.core.reinforce`: eqs. 6–7, REINFORCE with the mean of K rewards as baseline (``reinforce_loss``),
  applied by ``drga/learners/``;
- :mod:`drga.core.rollout`: one DRGA pass over a batch (eqs. 1–5): encode once, act K times, adjust, predict, reward;
- :mod:`drga.core.scoring`: predict from an attention, log P(y|X) and the chosen reward; eq. 12's task loss;
- :mod:`drga.core.blockwise`: no equation, the speed-ups behind eq. 1's states (the policy's first layer computed
  block by block), which tests/unit/test_factored_compute.py holds equal to the plain form;
- :mod:`drga.core.building`: the policy (eq. 2) and β (eq. 3) built from a configuration, the seeds and the device.

The runner (``drga/runner/``) and the learners (``drga/learners/``) add Algorithm 1's phases and the
optimisers around these; docs/method.md derives the equations, docs/architecture.md shows who calls whom.
"""
