"""The attention-network protocol: what a network must expose for DRGA to retrofit it.

DRGA never looks inside a network. It needs two things from it:

1. ``encode(batch)`` -> :class:`NetworkEncoding`: everything the agent's state (eq. 1) is
   built from, grouped into one or more :class:`AttentionSite` s, plus whatever private
   tensors the network needs to finish its forward pass (``cache``).
2. ``predict(encoding, attention)`` -> network output, recomputed from a *given* attention
   (the revised α′ of eq. 4): the context c′ = Σ_t α′_t h_t (eq. 10) and P(y|X) (eq. 11).

A *site* is one place in the network where attention is computed. Every site holds K
attention arrays of the same length T (K = 1 for a single self-attention; K = layers × heads
for a Transformer; K = number of sentences for the word level of a hierarchical network).
Networks with arrays of different lengths (IAN's context and aspect arrays, a hierarchical
network's word and sentence levels) expose several sites. All sites of a network must share
the feature sizes Dw, Dh and Du so that one agent with one observation size serves all of
them (project them to a common size inside the network if needed).

Shapes (B = batch, K = arrays at the site, T = tokens, H = attention dimensions):

=============  ==================  ===========================================================
field          shape               meaning
=============  ==================  ===========================================================
word_vectors   [B, G, T, Dw]       w_t, the input representation of each token
hidden_states  [B, G, T, Dh]       h_t, the representation attention is computed over
query          [B, K, Du]          u, the attention query (a learned vector for self-attention)
mask           [B, K, T] bool      True on real tokens, False on padding
attention      [B, K, T] or        α, zero on padding, sums to 1 over real tokens
               [B, K, T, H]        (multi-dimensional attention: one weight per dimension)
=============  ==================  ===========================================================

G is K, or a divisor of K when groups of arrays read the same token representations: array k
reads group k // (K / G). G = 1 (or a view expanded over K) shares them by every array, as the
target steps of a translation site do; G = layers is a Transformer's heads site, whose heads of
one layer all attend over that layer's input. Sharing is what lets the agent's first layer
project each token once per group instead of once per array.

Nothing in this module imports from the rest of the toolkit: networks depend on it, never
the other way round.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import torch
from torch import Tensor, nn

__all__ = ["Batch", "AttentionSite", "NetworkEncoding", "RepeatedEncoding", "per_example", "AttentionNetwork", "masked_softmax"]


@dataclass
class Batch:
    """A padded batch of examples, as every network in the toolkit consumes it.

    ``tokens`` is [B, T] for flat text, [B, S, T] for documents (S sentences). ``mask`` has
    the same shape and is True on real tokens. ``labels`` is [B] for classification and
    [B, T_y] for sequence outputs. ``extras`` carries family-specific inputs (for example the
    aspect tokens of task-specific networks) as tensors whose first axis is the batch.
    """

    tokens: Tensor
    mask: Tensor
    labels: Tensor
    extras: dict[str, Tensor] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return int(self.tokens.shape[0])

    def to(self, device: torch.device | str) -> Batch:
        return Batch(
            tokens=self.tokens.to(device),
            mask=self.mask.to(device),
            labels=self.labels.to(device),
            extras={k: v.to(device) for k, v in self.extras.items()},
        )



@dataclass
class AttentionSite:
    """One place where a network computes attention: K arrays over the same T positions."""

    word_vectors: Tensor
    hidden_states: Tensor
    query: Tensor
    mask: Tensor
    attention: Tensor
    name: str = "attention"

    @classmethod
    def single(
        cls, word_vectors: Tensor, hidden_states: Tensor, query: Tensor, mask: Tensor, attention: Tensor, name: str = "attention"
    ) -> AttentionSite:
        """A site of one array (K = 1) from per-sequence tensors: word vectors [B, T, Dw], hidden
        states [B, T, Dh], query [B, Du], mask [B, T], attention [B, T] (or [B, T, H] for
        multi-dimensional attention); the K axis of size 1 is added here."""
        words, hidden, queries, masks, weights = (x.unsqueeze(1) for x in (word_vectors, hidden_states, query, mask, attention))
        return cls(words, hidden, queries, masks, weights, name=name)

    @property
    def multi_dimensional(self) -> bool:
        return self.attention.dim() == 4

    @property
    def action_size(self) -> int:
        """The width of the agent's action at each token: H for multi-dimensional attention, else 1."""
        return int(self.attention.shape[-1]) if self.multi_dimensional else 1

    @property
    def arrays(self) -> int:
        return int(self.attention.shape[1])

    def validate(self) -> None:
        """Raise a readable error when a network hands over tensors of the wrong shape."""
        b, k, t = self.mask.shape
        got = tuple(self.attention.shape[:3])
        if got != (b, k, t):
            raise ValueError(
                f"site '{self.name}': attention has leading shape {got}, expected {(b, k, t)} "
                "(batch, arrays, tokens) to match the mask"
            )
        for name in ("word_vectors", "hidden_states"):
            got = tuple(getattr(self, name).shape[:3])
            if len(got) < 3 or got[0] != b or got[2] != t or got[1] < 1 or k % got[1]:
                raise ValueError(
                    f"site '{self.name}': {name} has leading shape {got}, expected ({b}, G, {t}) "
                    f"(batch, groups of arrays, tokens) with G dividing the {k} arrays of the mask"
                )
        if tuple(self.query.shape[:2]) != (b, k):
            raise ValueError(
                f"site '{self.name}': query has shape {tuple(self.query.shape)}, expected "
                f"({b}, {k}, Du)"
            )
        if self.mask.dtype != torch.bool:
            raise ValueError(f"site '{self.name}': mask must be a bool tensor, got {self.mask.dtype}")


@dataclass
class NetworkEncoding:
    """What ``encode`` returns: the attention sites and the network's private cache.

    ``cache`` must hold tensors whose first axis is the batch (or nested dicts of them), so
    the trainer can replicate an encoding for K action samples without re-running the encoder.
    """

    sites: tuple[AttentionSite, ...]
    cache: dict[str, Any] = field(default_factory=dict)
    #: For an encoding made by :meth:`repeat_interleave`: the encoding it repeats, each example
    #: ``repeats`` times in a row. ``predict`` may compute what is the same for every copy once
    #: from ``base`` (as the Transformer does for its first layer's values); None otherwise.
    base: NetworkEncoding | None = None
    repeats: int = 1

    @property
    def attention(self) -> list[Tensor]:
        return [site.attention for site in self.sites]

    def repeat_interleave(self, repeats: int) -> NetworkEncoding:
        """Each example repeated ``repeats`` times in a row: [e0, e0, ..., e1, e1, ...].

        Nothing is copied until ``predict`` reads it (see :class:`RepeatedEncoding`)."""
        if repeats == 1:
            return self
        return RepeatedEncoding(self, repeats)


class RepeatedEncoding(NetworkEncoding):
    """``base`` with each example repeated ``repeats`` times, copied on first read: the sites as
    a whole, the cache entry by entry. A ``predict`` reads a few of the encoding's tensors (LSTM+SA
    only its hidden states and head masks), and copying everything K times per batch was a
    measurable share of a co-training step (bench/throughput.py); :func:`per_example` reads an
    entry without copying it at all."""

    def __init__(self, base: NetworkEncoding, repeats: int):  # not the dataclass's: it would copy eagerly
        self.base, self.repeats = base, repeats
        self._sites: tuple[AttentionSite, ...] | None = None
        self._cache = _RepeatedCache(base.cache, repeats)

    base: NetworkEncoding  #: the encoding it repeats (never None here)

    @property
    def sites(self) -> tuple[AttentionSite, ...]:  # type: ignore[override]  # the dataclass field, computed on first read
        if self._sites is None:
            self._sites = tuple(_map_site(site, lambda x: _repeat_rows(x, self.repeats)) for site in self.base.sites)
        return self._sites

    @property
    def cache(self) -> Mapping[str, Any]:  # type: ignore[override]  # the dataclass field, read-only and copied lazily
        return self._cache


def per_example(encoding: NetworkEncoding, key: str) -> tuple[Any, int]:
    """``encoding.cache[key]`` once per example, and how many copies of each example the
    encoding holds: for a :class:`RepeatedEncoding` its base's entry and ``repeats``, so that a
    ``predict`` lets the K copies of an example read its tensors instead of copies of them."""
    if isinstance(encoding, RepeatedEncoding):
        return encoding.base.cache[key], encoding.repeats
    return encoding.cache[key], 1


class _RepeatedCache(Mapping):
    """A network's cache with every entry repeated row-wise, each entry copied when first read."""

    def __init__(self, cache: Mapping[str, Any], repeats: int):
        self._cache, self._repeats = cache, repeats
        self._copied: dict[str, Any] = {}

    def __getitem__(self, key: str) -> Any:
        if key not in self._copied:
            self._copied[key] = _map_tensors(self._cache[key], lambda x: _repeat_rows(x, self._repeats))
        return self._copied[key]

    def __iter__(self):
        return iter(self._cache)

    def __len__(self) -> int:
        return len(self._cache)


def _repeat_rows(x: Tensor, repeats: int) -> Tensor:
    """``x.repeat_interleave(repeats, dim=0)``, with the broadcast (stride-0) axes of ``x`` kept
    broadcast: a site's word vectors expanded over its K arrays are not copied K times."""
    broadcast = [axis for axis in range(1, x.dim()) if x.stride(axis) == 0 and x.shape[axis] > 1]
    if not broadcast:
        return x.repeat_interleave(repeats, dim=0)
    compact = x[tuple(slice(0, 1) if axis in broadcast else slice(None) for axis in range(x.dim()))]
    return compact.repeat_interleave(repeats, dim=0).expand(x.shape[0] * repeats, *x.shape[1:])


def _map_site(site: AttentionSite, fn) -> AttentionSite:
    return replace(site, **{f.name: fn(getattr(site, f.name)) for f in fields(site) if f.name != "name"})


def _map_tensors(value: Any, fn) -> Any:
    if isinstance(value, Tensor):
        return fn(value)
    if isinstance(value, Mapping):
        return {k: _map_tensors(v, fn) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_map_tensors(v, fn) for v in value)
    return value


class AttentionNetwork(nn.Module):
    """Base class for every network DRGA can retrofit.

    Subclasses implement :meth:`encode` and :meth:`predict`; the rest has defaults suited to
    classification. ``forward`` is the network alone with its own attention (the ``net-only``
    evaluation mode). ``log_likelihood`` returns log P(y|X) per example: the first term of the
    reward (eq. 5); the task loss (eq. 12) is its negative mean.
    """

    #: Its name in checkpoints and on the command line: the one its registration gives it (``register_network`` writes it
    #: here); "custom" for a network that no registration names.
    net_name: str = "custom"
    #: Whether ``predict`` expects multi-dimensional attention ([B, K, T, H]).
    multi_dimensional: bool = False
    #: The id its labels or tokens are padded with (a translation network's target padding; hf-encoder's model's own).
    pad_id: int = 0
    #: What ``encode`` passes its encoding through before returning it: a positive control's degraded attention
    #: (``drga.core.degradation.AttentionDegradation``, the ``[control]`` settings); None: the encoding as computed.
    attention_degradation: Callable[[NetworkEncoding, Collection[str] | None], NetworkEncoding] | None = None
    #: The sites (by name) that a degradation reaches; None: every site. A network whose prediction does not read a
    #: site's array as given (the Transformer's heads, a view of its attention matrices) leaves that site out.
    degradable_sites: Collection[str] | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Every subclass's own ``encode`` is wrapped, so that a degradation reaches each way a network is read (training,
        # evaluation, the env, the analyses) without any of them knowing of it; a nested call (``super().encode``) is not
        # degraded twice.
        super().__init_subclass__(**kwargs)
        encode = cls.__dict__.get("encode")
        if encode is None or getattr(encode, "_degradable", False):
            return

        @functools.wraps(encode)
        def degradable_encode(self: AttentionNetwork, batch: Batch) -> NetworkEncoding:
            degradation = self.__dict__.get("attention_degradation")
            if degradation is None or self.__dict__.get("_encoding_depth", 0):
                return encode(self, batch)
            self.__dict__["_encoding_depth"] = 1
            try:
                encoding = encode(self, batch)
            finally:
                self.__dict__["_encoding_depth"] = 0
            return degradation(encoding, self.degradable_sites)

        degradable_encode._degradable = True  # type: ignore[attr-defined]
        cls.encode = degradable_encode  # type: ignore[method-assign]

    def word_embedding(self) -> nn.Embedding | None:
        """Its table of word vectors (``network.freeze_embeddings`` freezes it; the analyses' gradient saliency
        differentiates through it): its submodule ``embedding`` (every built-in classifier's, ``baselines/common.py``),
        None without one. A network that keeps its word vectors elsewhere overrides this."""
        found = self._modules.get("embedding")
        return found if isinstance(found, nn.Embedding) else None

    def pretrained_parameters(self) -> Iterable[nn.Parameter]:
        """Its pretrained body, which ``train.pretrained_lr`` trains at a rate of its own (hf-encoder's encoder);
        none by default."""
        return ()

    def encode(self, batch: Batch) -> NetworkEncoding:  # pragma: no cover - abstract
        raise NotImplementedError

    def predict(self, encoding: NetworkEncoding, attention: Sequence[Tensor]) -> Tensor:  # pragma: no cover
        raise NotImplementedError

    def forward(self, batch: Batch) -> Tensor:
        encoding = self.encode(batch)
        return self.predict(encoding, encoding.attention)

    def log_likelihood(self, output: Tensor, labels: Tensor) -> Tensor:
        """log P(y|X) per example, [B]; classification by default."""
        return torch.log_softmax(output, dim=-1).gather(-1, labels.unsqueeze(-1)).squeeze(-1)

    def predictions(self, output: Tensor) -> Tensor:
        return output.argmax(dim=-1)


def masked_softmax(scores: Tensor, mask: Tensor, dim: int = -1) -> Tensor:
    """Softmax over real positions; padding gets exactly 0 and an all-padding row is all 0.

    ``mask`` broadcasts against ``scores`` (a [..., T] mask for [..., T, H] scores needs the
    caller to unsqueeze it).
    """
    scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=dim)
    # A row with no real token is all -inf and softmax gives NaN there; it must be zeros.
    return torch.nan_to_num(weights, nan=0.0) * mask
