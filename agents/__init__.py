"""stable-baselines3's actor-critics converted to the toolkit's agent (``sb3_policy``). The agent itself, eq. 2's
Gaussian policy, is ``drga/core/policy.py``, and REINFORCE (eqs. 6–7) ``drga/core/reinforce.py``."""
