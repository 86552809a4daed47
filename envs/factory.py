"""Building the environment from a trained checkpoint and a data set split."""

from __future__ import annotations

from drga.core.reward import PAPER_DELTA
from drga.data import collate
from drga.envs.attention_retrofit import AttentionRetrofitEnv
from drga.tasks.classification.trained import data_for, load_trained


def env_from_checkpoint(
    checkpoint: str, split: str = "train", data_dir: str | None = None, order: str = "random", device: str = "cpu"
) -> AttentionRetrofitEnv:
    """The environment over a split of the data set the checkpoint was trained on, with its reward (``[reward]``) and β."""
    if split not in ("train", "dev", "test"):
        raise ValueError(f"split must be train, dev or test, got {split!r}")
    model = load_trained(checkpoint, device=device)
    if data_dir is not None:
        model.config.data.data_dir = data_dir
    data = data_for(model, checkpoint)  # labels numbered as the network's outputs, by name
    reward = model.config.reward
    return AttentionRetrofitEnv(
        model.network, getattr(data, split), collate, delta=reward.setting("delta", PAPER_DELTA),
        beta=model.strength, order=order, device=device, reward=reward,
    )
