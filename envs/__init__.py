"""Gymnasium environments for attention retrofitting.

Importing this package registers ``drga/AttentionRetrofit-v0`` with gymnasium (:func:`register`); gymnasium's own
``module:id`` form imports it on the way: ``gymnasium.make("drga.envs:drga/AttentionRetrofit-v0", network=...,
examples=..., collate=...)``.
"""

import gymnasium

from drga import ENV_ID
from drga.envs.attention_retrofit import AttentionRetrofitEnv

__all__ = ["AttentionRetrofitEnv", "ENV_ID", "register"]


def register() -> None:
    """Register the environment under :data:`ENV_ID` (once; importing ``drga.envs`` calls it)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="drga.envs.attention_retrofit:AttentionRetrofitEnv")


register()
