"""Loading a trained translation checkpoint, and translating text with it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from drga.baselines.nmt_common import TranslationNetwork
from drga.checkpoint_format import CheckpointError, CheckpointPayload, load_module_state
from drga.core.beta import AdjustmentStrength
from drga.core.policy import StatePolicy
from drga.data.parallel import EncodedPair
from drga.data.subword import SubwordTokenizer
from drga.names import Mode, checked_mode
from drga.tasks.trained import model_checkpoint, ready_for_evaluation, trained_agent
from drga.tasks.translation.config import TranslationConfig, translation_config_from_dict
from drga.tasks.translation.data import build_translation_network, tokenizers_from_payload
from drga.tasks.translation.evaluation import decode_pairs, decode_settings


@dataclass
class TranslationModel:
    """A trained translation network with its agent, β and tokenizers."""

    config: TranslationConfig
    network: TranslationNetwork
    policy: StatePolicy
    strength: AdjustmentStrength
    source_tokenizer: SubwordTokenizer
    target_tokenizer: SubwordTokenizer
    has_agent: bool
    phase: str
    device: torch.device

    def translate(
        self,
        sentences: Sequence[str],
        mode: str = Mode.NET_ONLY,
        beam_size: int = 1,
        length_penalty: float | None = None,
        batch_size: int = 64,
        progress: bool = False,
    ) -> tuple[list[str], int]:
        """Detokenized translations of ``sentences`` (an empty line gives an empty line), and how many sources were cut.

        Sources longer than ``data.max_length`` pieces are cut to it, as dev and test sources are
        in training.
        """
        mode = checked_mode(mode, self.has_agent, f"this checkpoint (phase '{self.phase}')")
        limit = self.config.experiment.data.max_length
        pairs, cut = [], 0
        for index, ids in enumerate(self.source_tokenizer.encode_batch(list(sentences))):
            if not ids:
                continue
            if len(ids) > limit:
                cut += 1
                ids = ids[:limit]
            pairs.append(EncodedPair(ids, [], index))
        translations = [""] * len(sentences)
        if not pairs:
            return translations, cut
        settings = decode_settings(self.config, beam_size, length_penalty)
        hypotheses = decode_pairs(
            self.network, pairs, self.target_tokenizer, settings, mode, self.policy, self.strength().detach(), self.device,
            batch_size, progress, "translate",
        )
        for pair, text in zip(pairs, hypotheses):
            translations[pair.index] = text
        return translations, cut


def is_translation_checkpoint(payload: Mapping[str, Any]) -> bool:
    """Whether a loaded checkpoint (:func:`drga.checkpoint_format.load_checkpoint`) holds a translation model."""
    return CheckpointPayload.of(payload).task == "translation"


def load_translation_model(path: str | Path, device: str = "cpu", payload: Mapping[str, Any] | None = None) -> TranslationModel:
    """Rebuild network, agent, β and tokenizers from a translation checkpoint (``payload``: the file, already loaded)."""
    checkpoint = model_checkpoint(path, payload)
    if not is_translation_checkpoint(checkpoint):
        raise CheckpointError(f"{path} holds the classification network '{checkpoint.net_name}', not a translation model")
    config = translation_config_from_dict(checkpoint.config)
    source, target = tokenizers_from_payload(checkpoint, path)
    network = build_translation_network(config, len(source), len(target))
    load_module_state(network, checkpoint.network_state, "network", path)
    policy, strength = trained_agent(checkpoint, path, config.experiment)
    torch_device = ready_for_evaluation(device, network, policy, strength)
    return TranslationModel(
        config, network, policy, strength, source, target, checkpoint.has_agent, checkpoint.phase, torch_device
    )
