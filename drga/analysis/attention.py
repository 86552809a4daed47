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

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
import torch
from torch import Tensor
from tqdm.auto import tqdm

from drga.baselines.protocol import AttentionNetwork, Batch, NetworkEncoding
from drga.config import ConfigError
from drga.core.policy import StatePolicy
from drga.core.rollout import rollout
from drga.core.scoring import RewardConstants
from drga.data import EncodedExample, Vocabulary, collate
from drga.data.pretrained_vocab import word_text
from drga.names import Mode, checked_mode
from drga.runtime.eval_mode import eval_mode

if TYPE_CHECKING:
    from drga.tasks.classification.data import PreparedData
    from drga.tasks.classification.trained import TrainedModel

#: How multi-array and multi-dimensional attention becomes one weight per token (stated in
#: every report): the same reduction eq. 5's N uses for H dimensions, then plain means.
SQUASH_RULE = (
    "one weight per token = the mean over the H dimensions of each array (multi-dimensional "
    "attention, DiSAN; as eq. 5 counts N), then the mean over the K arrays of a site (a "
    "Transformer's layers x heads), then the mean over the sites that span the sentence "
    "(a Transformer's heads and pooling sites count equally; IAN's aspect site does not span "
    "the sentence and is left out; the maps and the highlighted-token counts show it on its own). "
    "Every step averages distributions over the real tokens, "
    "so the result is one too. For LSTM+SA (one site, K = 1, scalar) it is α itself."
)

#: What the analyses read of a document network (HAN), stated in every report on one.
DOCUMENT_RULE = (
    "the word level of a document network (HAN) is one array α_s per sentence s (over its words, summing to 1 within the "
    "sentence; the mean over H dimensions and over word-level sites as above) and the sentence level is one "
    "array γ (over the sentences, summing to 1). A word's weight in the document is ω_st = γ_s·α_st, a "
    "distribution over all the document's words; it is what ranks words across sentences (the explainability "
    "test's top and random word, the saliency τ). Highlighted tokens and most-modified words use the per-sentence "
    "arrays α_s; the maps show α_s per sentence beside γ_s."
)


class AnalysisError(ConfigError):
    """Input an analysis cannot use (a ConfigError, so the CLI prints it as one line)."""


# ----------------------------------------------------------------------------- token view


def is_document(batch: Batch) -> bool:
    """Whether the batch holds documents ([B, S, T] tokens) rather than flat text ([B, T])."""
    return batch.tokens.dim() == 3


def _same_mask(site_mask: Tensor, mask: Tensor) -> bool:
    return tuple(site_mask.shape) == tuple(mask.shape) and bool((site_mask == mask).all())


def token_sites(encoding: NetworkEncoding, batch: Batch, site: str | None = None) -> list[int]:
    """Indices of the sites whose every array covers exactly the batch's tokens.

    Flat text: the sites over the sentence's tokens (K arrays of T, each over every token).
    Documents: the word-level sites, whose K = S arrays are the sentences' words (their mask is
    the batch's [B, S, T] mask); the sentence level is :func:`sentence_sites`. ``site`` keeps
    only the site of that name.
    """
    if is_document(batch):
        spanning = [i for i, s in enumerate(encoding.sites) if _same_mask(s.mask, batch.mask)]
        what = "the documents' words (one array per sentence)"
    else:
        spanning = [
            index
            for index, s in enumerate(encoding.sites)
            if s.mask.shape[-1] == batch.tokens.shape[1] and bool((s.mask == batch.mask.unsqueeze(1)).all())
        ]
        what = "the sentence's tokens"
    if not spanning:
        names = ", ".join(s.name for s in encoding.sites)
        raise AnalysisError(f"no attention site of this network spans {what} (sites: {names})")
    if site is not None:
        chosen = [i for i in spanning if encoding.sites[i].name == site]
        if not chosen:
            names = ", ".join(encoding.sites[i].name for i in spanning)
            raise AnalysisError(f"no attention site named '{site}' spans {what}; choose one of: {names}")
        return chosen
    return spanning


def sentence_sites(encoding: NetworkEncoding, batch: Batch) -> list[int]:
    """Documents: the sentence-level sites (one array over the document's sentences); [] if none."""
    present = batch.mask.any(dim=-1).unsqueeze(1)  # [B, 1, S]
    words = set(token_sites(encoding, batch))
    return [i for i, s in enumerate(encoding.sites) if i not in words and _same_mask(s.mask, present)]


def aspect_sites(encoding: NetworkEncoding, batch: Batch) -> list[int]:
    """Aspect networks: the sites over the aspect term's tokens (IAN's "aspect"); [] if none."""
    mask = batch.extras.get("aspect_mask")
    if mask is None or is_document(batch):
        return []
    words = set(token_sites(encoding, batch))
    return [i for i, s in enumerate(encoding.sites) if i not in words and _same_mask(s.mask, mask.unsqueeze(1))]


def _per_site(attention: Sequence[Tensor], sites: Sequence[int], keep_arrays: bool = False) -> Tensor:
    """The mean over H (multi-dimensional arrays, as count_highlighted does), then over the K arrays
    of each site (unless ``keep_arrays``: [B, K, T]), then over the sites: [B, T]."""
    per_site = []
    for index in sites:
        weights = attention[index]
        if weights.dim() == 4:  # [B, K, T, H]
            weights = weights.mean(dim=-1)
        per_site.append(weights if keep_arrays else weights.mean(dim=1))
    return torch.stack(per_site).mean(dim=0)


def squash_attention(attention: Sequence[Tensor], encoding: NetworkEncoding, sites: Sequence[int]) -> Tensor:
    """[B, T] per-token weights of flat text by :data:`SQUASH_RULE`; zero on padding."""
    return _per_site(attention, sites) * encoding.sites[sites[0]].mask[:, 0]


def squash_words(attention: Sequence[Tensor], encoding: NetworkEncoding, sites: Sequence[int]) -> Tensor:
    """Documents: [B, S, T], each sentence's word array α_s (means over H and over word-level sites only)."""
    return _per_site(attention, sites, keep_arrays=True) * encoding.sites[sites[0]].mask


def squash_sentences(attention: Sequence[Tensor], encoding: NetworkEncoding, sites: Sequence[int]) -> Tensor:
    """Documents: [B, S], the sentence-level array γ (means over H, over the K arrays and the sites)."""
    return _per_site(attention, sites) * encoding.sites[sites[0]].mask[:, 0]


def document_weights(words: Tensor, sentences: Tensor) -> Tensor:
    """ω_st = γ_s·α_st [B, S, T]: a word's weight in the document (see :data:`DOCUMENT_RULE`)."""
    return words * sentences.unsqueeze(-1)


def token_weights(attention: Sequence[Tensor], encoding: NetworkEncoding, batch: Batch, sites: Sequence[int]) -> Tensor:
    """The weight that ranks tokens: [B, T] (:data:`SQUASH_RULE`) for text, ω [B, S, T] for documents.

    A document network without a sentence-level site weighs every sentence equally (γ_s = 1/S).
    """
    if not is_document(batch):
        return squash_attention(attention, encoding, sites)
    words = squash_words(attention, encoding, sites)
    upper = sentence_sites(encoding, batch)
    if upper:
        gamma = squash_sentences(attention, encoding, upper)
    else:
        present = batch.mask.any(dim=-1).to(words.dtype)
        gamma = present / present.sum(dim=1, keepdim=True).clamp_min(1.0)
    return document_weights(words, gamma)


@runtime_checkable
class TextMasking(Protocol):
    """A network whose sites leave out special tokens ([CLS], [SEP]: hf-encoder) and says which tokens they span."""

    def text_mask(self, tokens: Tensor, mask: Tensor) -> Tensor: ...


def text_view(network: AttentionNetwork, batch: Batch) -> Batch:
    """The batch with its mask narrowed to the text: a network whose sites leave out special tokens
    ([CLS], [SEP]: hf-encoder) says which tokens they span (``text_mask``); every other network spans them all."""
    return replace(batch, mask=network.text_mask(batch.tokens, batch.mask)) if isinstance(network, TextMasking) else batch


def kept_tokens(example: EncodedExample, keep: Sequence[bool]) -> EncodedExample:
    """The example with only the tokens where ``keep`` is True (one flag per id), the others deleted.

    Documents: each sentence keeps its kept words, and a sentence left empty is dropped. Aspect
    data: the aspect's span in the sentence [start, end) becomes the kept tokens before start and
    before end (the aspect term itself, a separate input, is kept whole).
    """
    if len(keep) != len(example.ids):
        raise ValueError(f"keep has {len(keep)} flags for {len(example.ids)} tokens")
    ids = [token for token, kept in zip(example.ids, keep) if kept]
    extras = dict(example.extras)
    if "aspect_span" in extras:
        start, end = extras["aspect_span"]
        extras["aspect_span"] = [sum(keep[:start]), sum(keep[:end])]
    sentences = None
    if example.sentences is not None:
        sentences, seen = [], 0
        for sentence in example.sentences:
            flags, seen = keep[seen : seen + len(sentence)], seen + len(sentence)
            kept = [token for token, flag in zip(sentence, flags) if flag]
            if kept:
                sentences.append(kept)
    return EncodedExample(ids, example.label, extras, sentences)


def real_tokens(values: Tensor, mask: Tensor) -> Tensor:
    """A row's values at its real tokens, in reading order ([T] or [S, T] → [L]); ids follow the same order."""
    return values[mask]


def _edit_sites(attention: Sequence[Tensor], sites: Sequence[int], edit: Callable[[Tensor], Tensor]) -> list[Tensor]:
    return [edit(weights) if index in sites else weights for index, weights in enumerate(attention)]


def _position_mask(weights: Tensor, positions: Tensor, arrays: Tensor | None = None) -> Tensor:
    """Bool of ``weights``' shape, True at token ``positions[b]`` of every array (and dimension).

    With ``arrays`` only in array ``arrays[b]`` (a document's sentence holding the word).
    """
    b, k, t = weights.shape[:3]
    rows = torch.arange(b, device=weights.device)
    if arrays is None:
        hit = torch.zeros(b, t, dtype=torch.bool, device=weights.device)
        hit[rows, positions.to(weights.device)] = True
        hit = hit[:, None, :]
    else:
        hit = torch.zeros(b, k, t, dtype=torch.bool, device=weights.device)
        hit[rows, arrays.to(weights.device), positions.to(weights.device)] = True
    while hit.dim() < weights.dim():
        hit = hit.unsqueeze(-1)
    return hit.expand_as(weights)


def remove_token(attention: Sequence[Tensor], sites: Sequence[int], positions: Tensor, arrays: Tensor | None = None) -> list[Tensor]:
    # Serrano & Smith (2019): zero the token's attention and renormalise over the rest.
    """Attention with token ``positions[b]`` removed from every array of the spanning sites.

    The other weights are renormalised over the token axis. When the removed token held all
    the mass there is nothing left to renormalise: the array stays all zero (an empty context),
    never NaN. With ``arrays`` (documents: the word's sentence) only array ``arrays[b]`` is
    edited and renormalised; the other sentences' arrays are left exactly as they were.
    """

    def edit(weights: Tensor) -> Tensor:
        hit = _position_mask(weights, positions, arrays)
        kept = weights.masked_fill(hit, 0.0)
        total = kept.sum(dim=2, keepdim=True)
        renormalised = torch.where(total > 0, kept / total.clamp_min(1e-30), kept)
        if arrays is None:
            return renormalised
        touched = hit.any(dim=2, keepdim=True).expand_as(weights)
        return torch.where(touched, renormalised, weights)

    return _edit_sites(attention, sites, edit)


def one_hot_attention(attention: Sequence[Tensor], sites: Sequence[int], positions: Tensor) -> list[Tensor]:
    """Attention that puts all the mass of every spanning array on token ``positions[b]``."""
    return _edit_sites(attention, sites, lambda w: _position_mask(w, positions).to(w.dtype))


# ----------------------------------------------------------------------------- records


@dataclass
class AttentionRecord:
    """One example seen through the analyses' eyes (arrays over its L real tokens).

    Documents: the L tokens are all the document's words in reading order, ``original`` and
    ``revised`` the per-sentence word arrays α_s one after the other (each sums to 1 over its
    sentence), ``sentence_lengths`` where they split, and ``sentence_original`` /
    ``sentence_revised`` the sentence-level γ and γ′. Aspect networks: ``aspect`` is the aspect
    term, with the attention over it when the network has such a site (IAN).
    """

    index: int  #: position in the analysed split
    ids: list[int]
    tokens: list[str]
    label: int
    original: np.ndarray  #: the network's own attention α, squashed, [L]
    revised: np.ndarray | None  #: α′ with the agent's deterministic actions, [L]
    probs_original: np.ndarray  #: P(·|X) from α (net-only mode), [C]
    probs_revised: np.ndarray | None  #: P(·|X) from α′ (with-agent mode), [C]
    sentence_lengths: list[int] | None = None  #: documents: words per sentence
    sentence_original: np.ndarray | None = None  #: documents: γ over the sentences, [S]
    sentence_revised: np.ndarray | None = None  #: documents: γ′, [S]
    aspect: list[str] | None = None  #: aspect networks: the aspect term's tokens
    aspect_original: np.ndarray | None = None  #: the attention over the aspect term (IAN), [A]
    aspect_revised: np.ndarray | None = None

    @property
    def length(self) -> int:
        return len(self.ids)

    @property
    def is_document(self) -> bool:
        return self.sentence_lengths is not None

    def sentence_spans(self) -> list[tuple[int, int]]:
        """[start, end) of each sentence in the token list (one span covering all for flat text)."""
        if self.sentence_lengths is None:
            return [(0, self.length)]
        ends = np.cumsum(self.sentence_lengths).tolist()
        return list(zip([0] + ends[:-1], ends))

    def sentence_weights(self, revised: bool = False) -> np.ndarray | None:
        """Documents: γ (or γ′); 1/S each when the network has no sentence-level attention."""
        if self.sentence_lengths is None or (revised and self.revised is None):
            return None
        return self._gamma(revised, self.sentence_lengths)

    def _gamma(self, revised: bool, sentence_lengths: list[int]) -> np.ndarray:
        gamma = self.sentence_revised if revised else self.sentence_original
        return gamma if gamma is not None else np.full(len(sentence_lengths), 1.0 / len(sentence_lengths))

    def document_weights(self, revised: bool = False) -> np.ndarray | None:
        """ω_st = γ_s·α_st over all the words ([L], sums to 1); for flat text the attention itself."""
        words = self.revised if revised else self.original
        if words is None or self.sentence_lengths is None:
            return words
        return words * np.repeat(self._gamma(revised, self.sentence_lengths), self.sentence_lengths)


def model_device(network: AttentionNetwork) -> torch.device:
    """The device the network's parameters live on (analyses never move a model)."""
    return next(network.parameters()).device


def revised_attention(
    network: AttentionNetwork, policy: StatePolicy, batch: Batch, beta: Tensor | float | None, encoding: NetworkEncoding
) -> tuple[list[Tensor], Tensor]:
    """α′ per site and the output under it, with the agent's deterministic action squash(μ(s_t))."""
    if beta is None:
        raise ValueError("the agent's revised attention needs β as well as the policy")
    # γ, √L0 and δ only shape the reward, which the analyses do not read.
    result = rollout(
        network, policy, batch, torch.as_tensor(beta), reward=RewardConstants(0.0, 1.0, 1.0), deterministic=True, encoding=encoding
    )
    return result.revised, result.output


def mode_output(
    network: AttentionNetwork, batch: Batch, mode: str, policy: StatePolicy | None = None, beta: Tensor | float | None = None
) -> tuple[list[Tensor], Tensor, NetworkEncoding]:
    """(attention per site, output, encoding) of one evaluation mode: ``net-only`` (the network with its
    own α) or ``with-agent`` (the revised α′, the agent's deterministic action, as evaluation runs it)."""
    encoding = network.encode(batch)
    if mode == Mode.NET_ONLY:
        return encoding.attention, network.predict(encoding, encoding.attention), encoding
    if mode != Mode.WITH_AGENT:
        raise ValueError(f"mode must be 'net-only' or 'with-agent', got {mode!r}")
    if policy is None or beta is None:
        raise ValueError("with-agent mode needs the policy and β")
    attention, output = revised_attention(network, policy, batch, beta, encoding)
    return attention, output, encoding


def length_sorted_chunks(examples: Sequence[EncodedExample], batch_size: int) -> list[list[int]]:
    """Index chunks of similar length (less padding); results are put back in input order."""
    order = sorted(range(len(examples)), key=lambda i: len(examples[i].ids))
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


@torch.no_grad()
def compute_records(
    network: AttentionNetwork,
    examples: Sequence[EncodedExample],
    vocab: Vocabulary,
    policy: StatePolicy | None = None,
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
            attention = _batch_attention(network, batch, policy, beta, site)
            for row, position in enumerate(chunk):
                records[position] = _record(examples[position], indices[position], vocab, attention, row, batch)
    return [r for r in records if r is not None]


@dataclass
class _BatchAttention:
    """A batch's attention as the records keep it (``_views``' levels) and its output distributions."""

    original: dict[str, Tensor]
    revised: dict[str, Tensor]  #: empty without a policy
    probs_original: Tensor
    probs_revised: Tensor | None


def _batch_attention(
    network: AttentionNetwork, batch: Batch, policy: StatePolicy | None, beta: Tensor | float | None, site: str | None
) -> _BatchAttention:
    """α and P(·|X) for a batch; α′ and its P(·|X) too with a policy."""
    encoding = network.encode(batch)
    views = _views(encoding, text_view(network, batch), site)
    probs = torch.softmax(network.predict(encoding, encoding.attention), dim=-1)
    original = {name: view(encoding.attention) for name, view in views.items()}
    revised, revised_probs = {}, None
    if policy is not None:
        attention, output = revised_attention(network, policy, batch, beta, encoding)
        revised = {name: view(attention) for name, view in views.items()}
        revised_probs = torch.softmax(output, dim=-1)
    return _BatchAttention(original, revised, probs, revised_probs)


def _record(
    example: EncodedExample, index: int, vocab: Vocabulary, attention: _BatchAttention, row: int, batch: Batch
) -> AttentionRecord:
    """The record of the example at ``row`` of the batch."""
    pick = lambda found, name: _row_values(found.get(name), row, batch, name)
    aspect_ids = example.extras.get("aspect")
    ids, tokens = list(example.ids), vocab.decode(example.ids)
    words_original = _real_values(attention.original["words"], row, batch, "words")  # every view has the words
    words_revised = pick(attention.revised, "words")
    groups = vocab.word_groups(tokens)
    if groups is not None:  # shown as words: a word's subwords merged, their attention summed
        ids, tokens = [ids[g[0]] for g in groups], [word_text(tokens, g) for g in groups]
        merged = lambda a: np.array([a[g].sum() for g in groups])
        words_original = merged(words_original)
        words_revised = None if words_revised is None else merged(words_revised)
    probs_revised = attention.probs_revised
    return AttentionRecord(
        index=index,
        ids=ids,
        tokens=tokens,
        label=int(example.label),
        original=words_original,
        revised=words_revised,
        probs_original=attention.probs_original[row].double().cpu().numpy(),
        probs_revised=None if probs_revised is None else probs_revised[row].double().cpu().numpy(),
        sentence_lengths=[len(s) for s in example.sentences] if example.sentences is not None else None,
        sentence_original=pick(attention.original, "sentences"),
        sentence_revised=pick(attention.revised, "sentences"),
        aspect=vocab.decode(aspect_ids) if aspect_ids else None,
        aspect_original=pick(attention.original, "aspect"),
        aspect_revised=pick(attention.revised, "aspect"),
    )


def _views(encoding: NetworkEncoding, batch: Batch, site: str | None) -> dict[str, Callable[[Sequence[Tensor]], Tensor]]:
    """What a record keeps of an attention list: the word level, and the sentence or aspect level if any."""
    sites = token_sites(encoding, batch, site)
    if is_document(batch):
        views = {"words": lambda a: squash_words(a, encoding, sites)}
        upper = sentence_sites(encoding, batch)
        if upper:
            views["sentences"] = lambda a: squash_sentences(a, encoding, upper)
        return views
    views = {"words": lambda a: squash_attention(a, encoding, sites)}
    aspect = aspect_sites(encoding, batch)
    if aspect:
        views["aspect"] = lambda a: squash_attention(a, encoding, aspect)
    return views


def _row_values(values: Tensor | None, row: int, batch: Batch, name: str) -> np.ndarray | None:
    """One example's weights at its real positions, as float64 numpy (None when absent)."""
    return None if values is None else _real_values(values, row, batch, name)


def _real_values(values: Tensor, row: int, batch: Batch, name: str) -> np.ndarray:
    """One example's weights at its real positions, as float64 numpy."""
    if name == "words":
        mask = batch.mask[row]
    elif name == "sentences":
        mask = batch.mask[row].any(dim=-1)
    else:
        mask = batch.extras["aspect_mask"][row]
    return real_tokens(values[row], mask).double().cpu().numpy()


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
    require_agent: bool = True,
) -> AnalysisInputs:
    """Load a trained run's checkpoint and the split to analyse, refusing what cannot work.

    Errors (one line each): a missing or unreadable checkpoint, a checkpoint without a trained
    agent (unless not ``require_agent``), an unknown data set, a data set other than the one the run was trained on (unless
    ``allow_other_dataset``), or one labelled with a label the network was not trained on (labels
    are matched by name).
    """
    from drga.data import DATASETS
    from drga.tasks.classification.trained import data_for, load_trained

    if split not in ("train", "dev", "test"):
        raise AnalysisError(f"unknown split '{split}'; choose train, dev or test")
    path = Path(checkpoint)
    if path.is_dir():
        raise AnalysisError(f"{path} is a folder; give a checkpoint in it, e.g. {path / 'cotrain_best.pt'}")
    model = load_trained(path, device=device)
    if require_agent:
        checked_mode(Mode.WITH_AGENT, model.has_agent, f"{path} (phase '{model.phase}')",
                     "analyse the run's cotrain_best.pt (or agent_best.pt), or this one with --only faithfulness")
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
    data = data_for(model, path)  # labels matched to the network's outputs by name
    examples = {"train": data.train, "dev": data.dev, "test": data.test}[split]
    return AnalysisInputs(model, data, split, examples, path)
