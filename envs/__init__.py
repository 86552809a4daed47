"""Gymnasium environments for attention retrofitting.

``gymnasium.make("drga/AttentionRetrofit-v0", network=..., examples=..., collate=...)``
"""

import gymnasium

from drga.envs.attention_retrofit import AttentionRetrofitEnv

ENV_ID = "drga/AttentionRetrofit-v0"

if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="drga.envs.attention_retrofit:AttentionRetrofitEnv")

__all__ = ["AttentionRetrofitEnv", "ENV_ID"]
