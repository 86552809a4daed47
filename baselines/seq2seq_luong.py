"""Luong-style attention encoder-decoder (Luong, Pham & Manning 2015) for translation.

- Encoder: a bidirectional LSTM (or GRU) over the source embeddings, ``layers`` layers,
  ``hidden_size`` units in all (half per direction): the source states h̄_s.
- Decoder: an LSTM of ``layers`` layers, ``hidden_size`` units, started from the mean source
  state through a tanh layer. Input feeding (Luong sec. 3.3): the input at step t is
  [embedding of y_{t-1}; h̃_{t-1}].
- Global attention with the *general* score (Luong eq. 8): score(h_t, h̄_s) = h_tᵀ W_a h̄_s,
  α_t = softmax over the real source tokens.
- Context c_t = Σ_s α_ts h̄_s (eq. 10 of the DRGA paper), attentional state
  h̃_t = tanh(W_c [c_t; h_t]) (Luong eq. 5), p(y_t | y_<t, X) = softmax(W_s h̃_t) (Luong eq. 6 /
  DRGA eq. 11).

DRGA site (see ``baselines/nmt_common.py``): one array per decoder step, K = T_y;
w = source embedding, h = h̄_s, u = the decoder state h_t.

Input feeding and revised attention
-----------------------------------
With input feeding, the revised context of step t also changes the decoder *input* at t + 1.
``predict`` offers both readings, chosen by ``rerun_decoder``:

- ``False`` (default, the approximation): the decoder states h_t are those of the
  teacher-forced pass with the network's own attention; the revised α′_t changes c′_t, h̃′_t and
  the output distribution of step t only. One batched matrix product, no sequential loop.
  Decoding with the agent follows the same rule (the decoder is fed the unrevised h̃_t), so
  training and decoding agree exactly.
- ``True`` (exact, slower): ``predict`` re-runs the decoder step by step, feeding h̃′_{t-1};
  the attention weights of each step are the given (revised) ones, not recomputed from the new
  decoder states (the agent acted on the original pass). Decoding with the agent then feeds
  h̃′_t. Costs one more sequential decoder pass per action sample.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn

from drga.baselines.common import check_tokens, even_hidden, masked_mean, run_rnn
from drga.baselines.nmt_common import (
    Adjuster,
    CrossAttentionEncoding,
    DecoderState,
    TranslationNetwork,
    adjusted_attention,
    adjuster_source,
    cross_attention_site,
    decoder_input,
)
from drga.baselines.protocol import Batch, NetworkEncoding, masked_softmax
from drga.registry import register_network


# Translation defaults for the shared sections (the classification defaults, 300-unit layers, dropout
# 0.5 and a 300-300 agent, are not what a translation model wants); the [nmt] options (encoder,
# rerun_decoder, shared_vocab) are passed by the translation task, not [network] settings.
@register_network(
    "seq2seq-luong", input="parallel", runtime=("encoder", "rerun_decoder", "share_embeddings"),
    defaults={
        "network.embedding_dim": 256, "network.hidden_size": 256, "network.dropout": 0.3, "network.layers": 1,
        "agent.hidden_sizes": [128, 128], "train.lr": 1e-3, "train.pretrain_epochs": 10, "train.agent_epochs": 2,
        "train.cotrain_epochs": 5,
    },
)
class LuongSeq2Seq(TranslationNetwork):
    """Luong attention encoder-decoder: BiLSTM/BiGRU encoder, LSTM decoder, 'general' global attention, input feeding."""


    def __init__(
        self,
        vocab_size: int,
        num_classes: int,
        embedding_dim: int = 256,
        hidden_size: int = 256,
        dropout: float = 0.3,
        layers: int = 1,
        encoder: str = "lstm",
        rerun_decoder: bool = False,
        share_embeddings: bool = False,
    ):
        """``vocab_size`` is the source vocabulary, ``num_classes`` the target vocabulary."""
        super().__init__()
        if layers < 1:
            raise ValueError(f"layers must be at least 1, got {layers}")
        if encoder not in ("lstm", "gru"):
            raise ValueError(f"encoder must be 'lstm' or 'gru', got {encoder!r}")
        if share_embeddings and vocab_size != num_classes:
            raise ValueError(f"share_embeddings needs one vocabulary, got {vocab_size} source and {num_classes} target ids")
        self.rerun_decoder = rerun_decoder
        self.hidden_size = hidden_size
        self.layers = layers
        self.source_embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=0)
        self.target_embedding = self.source_embedding if share_embeddings else nn.Embedding(num_classes, embedding_dim, padding_idx=0)
        rnn = nn.LSTM if encoder == "lstm" else nn.GRU
        self.encoder = rnn(
            embedding_dim, even_hidden(hidden_size), num_layers=layers, batch_first=True, bidirectional=True,
            dropout=dropout if layers > 1 else 0.0,
        )
        self.bridge = nn.Linear(hidden_size, 2 * layers * hidden_size)
        self.cells = nn.ModuleList(
            nn.LSTMCell(embedding_dim + hidden_size if i == 0 else hidden_size, hidden_size) for i in range(layers)
        )
        self.score = nn.Linear(hidden_size, hidden_size, bias=False)  # W_a of the 'general' score
        self.combine = nn.Linear(2 * hidden_size, hidden_size, bias=False)  # W_c
        self.output = nn.Linear(hidden_size, num_classes)  # W_s
        self.dropout = nn.Dropout(dropout)

    # ------------------------------------------------------------------ pieces

    def _encode_source(self, tokens: Tensor, mask: Tensor) -> dict[str, Tensor]:
        check_tokens(tokens, 2, self.net_name, "source text")
        words = self.source_embedding(tokens)
        states = run_rnn(self.encoder, self.dropout(words), mask)  # h̄_s, zero on padding
        keys = self.score(states)  # W_a h̄_s, so that score(h_t, h̄_s) = h_t · keys_s
        # Decoder start: tanh(W [mean_s h̄_s]) split into (h, c) of every layer, [N, 2, layers, H].
        start = torch.tanh(self.bridge(masked_mean(states, mask))).view(-1, 2, self.layers, self.hidden_size)
        return {"words": words, "states": states, "keys": keys, "mask": mask, "h": start[:, 0], "c": start[:, 1]}

    def _cell_step(self, x: Tensor, h: Tensor, c: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """One step of the stacked LSTM; h, c are [N, layers, H]. Returns the top state and the new h, c."""
        hs, cs = [], []
        for i, cell in enumerate(self.cells):
            hi, ci = cell(x, (h[:, i], c[:, i]))
            hs.append(hi)
            cs.append(ci)
            x = self.dropout(hi) if i + 1 < self.layers else hi
        return x, torch.stack(hs, dim=1), torch.stack(cs, dim=1)

    def _attend(self, query: Tensor, keys: Tensor, mask: Tensor) -> Tensor:
        """α over the source for queries [N, T_y, H] or [N, H] ('general' score, Luong eq. 8)."""
        squeeze = query.dim() == 2
        query = query.unsqueeze(1) if squeeze else query
        alpha = masked_softmax(torch.einsum("nyh,nxh->nyx", query, keys), mask.unsqueeze(1))
        return alpha.squeeze(1) if squeeze else alpha

    def _attentional(self, alpha: Tensor, states: Tensor, query: Tensor) -> Tensor:
        """h̃ = tanh(W_c [c; h]) with the context c = Σ_s α_s h̄_s (DRGA eq. 10, Luong eq. 5)."""
        context = torch.einsum("n...x,nxh->n...h", alpha, states)
        return torch.tanh(self.combine(torch.cat([context, query], dim=-1)))

    # ------------------------------------------------------------------ protocol

    def encode(self, batch: Batch) -> CrossAttentionEncoding:
        source = self._encode_source(batch.tokens, batch.mask)
        inputs = self.dropout(self.target_embedding(decoder_input(batch.labels)))
        n, steps = batch.labels.shape
        h, c = source["h"], source["c"]
        feed = inputs.new_zeros(n, self.hidden_size)
        queries, alphas, attentional = [], [], []
        for t in range(steps):  # input feeding makes teacher forcing sequential
            top, h, c = self._cell_step(torch.cat([inputs[:, t], feed], dim=-1), h, c)
            alpha = self._attend(top, source["keys"], source["mask"])
            feed = self._attentional(alpha, source["states"], top)
            queries.append(top)
            alphas.append(alpha)
            attentional.append(feed)
        queries_t = torch.stack(queries, dim=1)  # u = h_t, [B, T_y, H]
        cache = {
            "site": {
                "source_words": source["words"], "source_states": source["states"], "queries": queries_t,
                "source_mask": source["mask"], "array_real": batch.labels != self.pad_id,
                "attention": torch.stack(alphas, dim=1),
            },
            "attentional": torch.stack(attentional, dim=1),
            "inputs": inputs,
            "h0": source["h"],
            "c0": source["c"],
        }
        return CrossAttentionEncoding.from_cache(cache)

    def predict(self, encoding: NetworkEncoding, attention: Sequence[Tensor]) -> Tensor:
        if len(attention) != 1:
            raise ValueError(f"{self.net_name}: expected 1 attention site (cross-attention), got {len(attention)}")
        cache, alpha = encoding.cache, attention[0]  # α′ [B, T_y, T_x]
        site = cache["site"]
        if alpha is encoding.sites[0].attention:
            attentional = cache["attentional"]  # the network's own attention: h̃ of the encode pass
        elif not self.rerun_decoder:
            # Approximation: decoder states h_t from the teacher-forced pass; α′ changes step t's output only.
            attentional = self._attentional(alpha, site["source_states"], site["queries"])
        else:
            attentional = self._rerun(cache, alpha)
        return self.output(self.dropout(attentional))  # DRGA eq. 11 / Luong eq. 6 (logits)

    def _rerun(self, cache: dict, alpha: Tensor) -> Tensor:
        """Exact input feeding: the decoder re-run with h̃′_{t-1} fed at step t, α′_t as given."""
        inputs, states = cache["inputs"], cache["site"]["source_states"]
        h, c = cache["h0"], cache["c0"]
        feed = inputs.new_zeros(inputs.shape[0], self.hidden_size)
        outputs = []
        for t in range(inputs.shape[1]):
            top, h, c = self._cell_step(torch.cat([inputs[:, t], feed], dim=-1), h, c)
            feed = self._attentional(alpha[:, t], states, top)
            outputs.append(feed)
        return torch.stack(outputs, dim=1)

    # ------------------------------------------------------------------ decoding

    def start(self, tokens: Tensor, mask: Tensor) -> DecoderState:
        source = self._encode_source(tokens, mask)
        return {
            "words": source["words"], "states": source["states"], "keys": source["keys"], "mask": mask,
            "h": source["h"], "c": source["c"], "feed": source["states"].new_zeros(tokens.shape[0], self.hidden_size),
        }

    def with_adjuster(self, state: DecoderState, adjust: Adjuster) -> DecoderState:
        return {**state, **adjuster_source(adjust, state["words"], state["states"], state["mask"])}

    def step(self, state: DecoderState, tokens: Tensor, adjust: Adjuster | None = None) -> tuple[Tensor, DecoderState]:
        x = torch.cat([self.target_embedding(tokens), state["feed"]], dim=-1)
        top, h, c = self._cell_step(x, state["h"], state["c"])
        alpha = self._attend(top, state["keys"], state["mask"])
        attentional = self._attentional(alpha, state["states"], top)
        output, feed = attentional, attentional
        if adjust is not None:
            real = torch.ones(tokens.shape[0], 1, dtype=torch.bool, device=tokens.device)
            site = cross_attention_site(state["words"], state["states"], top.unsqueeze(1), state["mask"], real, alpha.unsqueeze(1))
            revised = adjusted_attention(adjust, site, state)[:, 0]
            output = self._attentional(revised, state["states"], top)
            # The same reading of input feeding as predict (see the module docstring).
            feed = output if self.rerun_decoder else attentional
        log_probs = torch.log_softmax(self.output(output).float(), dim=-1)
        return log_probs, {**state, "h": h, "c": c, "feed": feed}
