"""Gymnasium environments for attention retrofitting.

``gymnasium.make("drga/AttentionRetrofit-v0", network=..., examples=..., collate=...)``
"""

from drga import ENV_ID  # registered by drga itself, once gymnasium is imported
from drga.envs.attention_retrofit import AttentionRetrofitEnv

__all__ = ["AttentionRetrofitEnv", "ENV_ID"]
