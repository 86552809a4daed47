"""What every analysis shares: the token-level view of a network's attention.

- :func:`token_sites`: the attention sites whose arrays span the sentence's tokens.
- :func:`squash_attention`: one weight per token from however many arrays and dimensions
  (the rule is :data:`SQUASH_RULE`, printed in every report that uses it).
- :func:`remove_token`, :func:`one_hot_attention`: token-level edits of the attention that
  the network's ``predict`` then runs on (explainability test, polarity scores).
- :func:`compute_records`: original α, revised α′ (deterministic agent) and both output
  distributions for a list of examples, in their order.
- :func:`load_inputs`: a checkpoint and the split to analyse, with clear errors.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np
import torch
from torch import Tensor
from tqdm.auto import tqdm

from agents.gaussian_policy import GaussianPolicy
from baselines.protocol import AttentionNetwork, Batch, NetworkEncoding
from drga.config import ConfigError
from drga.data import EncodedExample, Vocabulary, collate
from drga.rollout import rollout

if TYPE_CHECKING:
    from drga.pretrained import TrainedModel
    from drga.setup import PreparedData

#: How multi-array and multi-dimensional attention becomes one weight per token (stated in
#: every report): the same reduction eq. 5's N uses for H dimensions, then plain means.
SQUASH_RULE = (
    "one weight per token = the mean over the H dimensions of each array (multi-dimensional "
    "attention, DiSAN; as eq. 5 counts N), then the mean over the K arrays of a site (a "
    "Transformer's layers x heads), then the mean over the sites that span the sentence "
    "(a Transformer's heads and pooling sites count equally; IAN's aspect site does not span "
    "the sentence and is left out). Every step averages distributions over the real tokens, "
    "so the result is one too. For LSTM+SA (one site, K = 1, scalar) it is α itself."
)


class AnalysisError(ConfigError):
    """Input an analysis cannot use (a ConfigError, so the CLI prints it as one line)."""


# ----------------------------------------------------------------------------- token view


def token_sites(encoding: NetworkEncoding, batch: Batch, site: str | None = None) -> list[int]:
    """Indices of the sites whose every array covers exactly the batch's tokens.

    ``site`` keeps only the site of that name. Document batches ([B, S, T] tokens) have no
    single token axis; they are refused with a clear error.
    """
    if batch.tokens.dim() != 2:
        raise AnalysisError(
            "the analyses read flat text (one token axis); document networks such as 'han' are not supported yet"
        )
    spanning = [
        index
        for index, s in enumerate(encoding.sites)
        if s.mask.shape[-1] == batch.tokens.shape[1] and bool((s.mask == batch.mask.unsqueeze(1)).all())
    ]
    if not spanning:
        names = ", ".join(s.name for s in encoding.sites)
        raise AnalysisError(f"no attention site of this network spans the sentence's tokens (sites: {names})")
    if site is not None:
        chosen = [i for i in spanning if encoding.sites[i].name == site]
        if not chosen:
            names = ", ".join(encoding.sites[i].name for i in spanning)
            raise AnalysisError(f"no attention site named '{site}' spans the sentence; choose one of: {names}")
        return chosen
    return spanning


def squash_attention(attention: Sequence[Tensor], encoding: NetworkEncoding, sites: Sequence[int]) -> Tensor:
    """[B, T] per-token weights by :data:`SQUASH_RULE`; zero on padding."""
    per_site = []
    for index in sites:
        weights = attention[index]
        if weights.dim() == 4:  # [B, K, T, H]: the mean over H, as count_highlighted does
            weights = weights.mean(dim=-1)
        per_site.append(weights.mean(dim=1))
    mask = encoding.sites[sites[0]].mask[:, 0]
    return torch.stack(per_site).mean(dim=0) * mask


def _edit_sites(attention: Sequence[Tensor], sites: Sequence[int], edit: Callable[[Tensor], Tensor]) -> list[Tensor]:
    return [edit(weights) if index in sites else weights for index, weights in enumerate(attention)]


def _position_mask(weights: Tensor, positions: Tensor) -> Tensor:
    """Bool of ``weights``' shape, True at token ``positions[b]`` of every array (and dimension)."""
    b, _, t = weights.shape[:3]
    hit = torch.zeros(b, t, dtype=torch.bool, device=weights.device)
    hit[torch.arange(b, device=weights.device), positions.to(weights.device)] = True
    hit = hit[:, None, :]
    while hit.dim() < weights.dim():
        hit = hit.unsqueeze(-1)
    return hit.expand_as(weights)


def remove_token(attention: Sequence[Tensor], sites: Sequence[int], positions: Tensor) -> list[Tensor]:
    # Serrano & Smith (2019): zero the token's attention and renormalise over the rest.
    """Attention with token ``positions[b]`` removed from every array of the spanning sites.

    The other weights are renormalised over the token axis. When the removed token held all
    the mass there is nothing left to renormalise: the array stays all zero (an empty context),
    never NaN.
    """

    def edit(weights: Tensor) -> Tensor:
        kept = weights.masked_fill(_position_mask(weights, positions), 0.0)
        total = kept.sum(dim=2, keepdim=True)
        return torch.where(total > 0, kept / total.clamp_min(1e-30), kept)

    return _edit_sites(attention, sites, edit)


def one_hot_attention(attention: Sequence[Tensor], sites: Sequence[int], positions: Tensor) -> list[Tensor]:
    """Attention that puts all the mass of every spanning array on token ``positions[b]``."""
    return _edit_sites(attention, sites, lambda w: _position_mask(w, positions).to(w.dtype))


# ----------------------------------------------------------------------------- records


@dataclass
class AttentionRecord:
    """One example seen through the analyses' eyes (arrays over its L real tokens)."""

    index: int  #: position in the analysed split
    ids: list[int]
    tokens: list[str]
    label: int
    original: np.ndarray  #: the network's own attention α, squashed, [L]
    revised: np.ndarray | None  #: α′ with the agent's deterministic actions, [L]
    probs_original: np.ndarray  #: P(·|X) from α (net-only mode), [C]
    probs_revised: np.ndarray | None  #: P(·|X) from α′ (with-agent mode), [C]

    @property
    def length(self) -> int:
        return len(self.ids)


def model_device(network: AttentionNetwork) -> torch.device:
    """The device the network's parameters live on (analyses never move a model)."""
    return next(network.parameters()).device


class eval_mode:
    """Context manager: network (and policy) in eval mode, previous modes restored on exit."""

    def __init__(self, *modules: torch.nn.Module | None):
        self.modules = [m for m in modules if m is not None]

    def __enter__(self) -> None:
        self.previous = [m.training for m in self.modules]
        for module in self.modules:
            module.eval()

    def __exit__(self, *_: object) -> None:
        for module, mode in zip(self.modules, self.previous):
            module.train(mode)


def revised_attention(
    network: AttentionNetwork, policy: GaussianPolicy, batch: Batch, beta: Tensor | float, encoding: NetworkEncoding
) -> tuple[list[Tensor], Tensor]:
    """α′ per site and the output under it, with the agent's deterministic action squash(μ(s_t))."""
    # γ, √L0 and δ only shape the reward, which the analyses do not read.
    result = rollout(network, policy, batch, torch.as_tensor(beta), 1, 0.0, 1.0, 1.0, deterministic=True, encoding=encoding)
    return result.revised, result.output


def length_sorted_chunks(examples: Sequence[EncodedExample], batch_size: int) -> list[list[int]]:
    """Index chunks of similar length (less padding); results are put back in input order."""
    order = sorted(range(len(examples)), key=lambda i: len(examples[i].ids))
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


@torch.no_grad()
def compute_records(
    network: AttentionNetwork,
    examples: Sequence[EncodedExample],
    vocab: Vocabulary,
    policy: GaussianPolicy | None = None,
    beta: Tensor | float | None = None,
    site: str | None = None,
    batch_size: int = 128,
    progress: bool = False,
    indices: Sequence[int] | None = None,
) -> list[AttentionRecord]:
    """Records for ``examples`` in their order; α′ and its probabilities only with a policy and β.

    ``indices`` are the examples' positions in the split (default 0..n-1), kept in the records.
    """
    if policy is not None and beta is None:
        raise ValueError("revised attention needs β as well as the policy")
    device = model_device(network)
    records: list[AttentionRecord | None] = [None] * len(examples)
    indices = list(indices) if indices is not None else list(range(len(examples)))
    with eval_mode(network, policy):
        chunks = length_sorted_chunks(examples, batch_size)
        for chunk in tqdm(chunks, desc="attention", leave=False, disable=not progress):
            batch = collate([examples[i] for i in chunk]).to(device)
            encoding = network.encode(batch)
            sites = token_sites(encoding, batch, site)
            original = squash_attention(encoding.attention, encoding, sites)
            probs = torch.softmax(network.predict(encoding, encoding.attention), dim=-1)
            revised = revised_probs = None
            if policy is not None:
                attention, output = revised_attention(network, policy, batch, beta, encoding)
                revised = squash_attention(attention, encoding, sites)
                revised_probs = torch.softmax(output, dim=-1)
            for row, position in enumerate(chunk):
                example = examples[position]
                length = len(example.ids)
                records[position] = AttentionRecord(
                    index=indices[position],
                    ids=list(example.ids),
                    tokens=vocab.decode(example.ids),
                    label=int(example.label),
                    original=original[row, :length].double().cpu().numpy(),
                    revised=None if revised is None else revised[row, :length].double().cpu().numpy(),
                    probs_original=probs[row].double().cpu().numpy(),
                    probs_revised=None if revised_probs is None else revised_probs[row].double().cpu().numpy(),
                )
    return [r for r in records if r is not None]


# ----------------------------------------------------------------------------- inputs


@dataclass
class AnalysisInputs:
    """A loaded checkpoint and the data to analyse it on."""

    model: TrainedModel
    data: PreparedData
    split: str
    examples: list[EncodedExample]
    checkpoint: Path

    @property
    def run_dir(self) -> Path:
        return self.checkpoint.parent

    @property
    def beta(self) -> Tensor:
        return self.model.strength().detach()


def load_inputs(
    checkpoint: str | Path,
    dataset: str | None = None,
    split: str = "test",
    data_dir: str | None = None,
    tsv: str | None = None,
    device: str = "cpu",
    allow_other_dataset: bool = False,
) -> AnalysisInputs:
    """Load a trained run's checkpoint and the split to analyse, refusing what cannot work.

    Errors (one line each): a missing or unreadable checkpoint, a checkpoint without a trained
    agent, an unknown data set, a data set other than the one the run was trained on (unless
    ``allow_other_dataset``), or one with a different number of classes.
    """
    from drga.data import DATASETS
    from drga.pretrained import load_trained
    from drga.setup import prepare_data

    if split not in ("train", "dev", "test"):
        raise AnalysisError(f"unknown split '{split}'; choose train, dev or test")
    path = Path(checkpoint)
    if path.is_dir():
        raise AnalysisError(f"{path} is a folder; give a checkpoint in it, e.g. {path / 'cotrain_best.pt'}")
    model = load_trained(path, device=device)
    if not model.has_agent:
        raise AnalysisError(
            f"{path} is from phase '{model.phase}' and holds no trained agent; analyse the run's cotrain_best.pt "
            "(or agent_best.pt)"
        )
    config = model.config
    trained_on = config.data.dataset
    if dataset is not None:
        if dataset not in DATASETS:
            raise AnalysisError(f"unknown dataset '{dataset}'; choose one of: {', '.join(sorted(DATASETS))}")
        if dataset != trained_on and not allow_other_dataset:
            raise AnalysisError(
                f"{path} was trained on '{trained_on}', not '{dataset}'; use --dataset {trained_on} "
                "(or --allow-other-dataset to analyse it on another data set anyway)"
            )
        config.data.dataset = dataset
    if data_dir is not None:
        config.data.data_dir = data_dir
    if tsv is not None:
        config.data.tsv_path = tsv
    data = prepare_data(config, vocab=model.vocab)
    if data.splits.num_classes != len(model.label_names):
        raise AnalysisError(
            f"data set '{config.data.dataset}' has {data.splits.num_classes} classes but {path} was trained on "
            f"{len(model.label_names)} ({', '.join(model.label_names)})"
        )
    examples = {"train": data.train, "dev": data.dev, "test": data.test}[split]
    return AnalysisInputs(model, data, split, examples, path)
