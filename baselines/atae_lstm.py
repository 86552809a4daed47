"""ATAE-LSTM (Wang et al. 2016): attention-based LSTM with aspect embedding.

The aspect vector v_a (the mean embedding of the aspect term's words) is appended to every
input word embedding and to every hidden state inside the attention:

    h_t = LSTM([e_t; v_a])
    M_t = tanh(W [h_t; v_a] + b),  α = softmax(wᵀ M) over the real tokens   (Wang et al. eq. 7–8)
    r = Σ_t α_t h_t                                                          (eq. 10 of DRGA)
    h* = tanh(W_p r + W_x h_N),   P(y|X) = softmax(W_s h*)                 (Wang et al. eq. 10–11)

(The paper writes M = tanh([W_h H; W_v v_a ⊗ e_N]), whose aspect half is the same for every
token and cancels in the softmax; the concatenation inside one projection used here, as in common
reimplementations, lets the aspect shape the weights.)

One site, K = 1. Observation: w_t = word embedding e_t, h_t = LSTM state, u = v_a (Du = Dw).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn

from drga.baselines.common import (
    attention_pool,
    check_tokens,
    head_dropout_masks,
    make_embedding,
    masked_mean,
    require_extras,
    run_head,
    run_rnn,
)
from drga.baselines.lstm_sa import AdditiveSelfAttention
from drga.baselines.protocol import AttentionNetwork, AttentionSite, Batch, NetworkEncoding, per_example
from drga.registry import register_network


@register_network("atae-lstm", input="aspect")
class ATAELSTM(AttentionNetwork):
    """ATAE-LSTM: aspect embedding appended to the inputs and to the hidden states for attention."""


    def __init__(
        self,
        vocab_size: int,
        num_classes: int,
        embedding_dim: int = 300,
        hidden_size: int = 300,
        attention_size: int = 300,
        dropout: float = 0.5,
        embeddings: Tensor | None = None,
        freeze_embeddings: bool = False,
    ):
        super().__init__()
        self.embedding = make_embedding(vocab_size, embedding_dim, embeddings, freeze_embeddings)
        self.dropout = nn.Dropout(dropout)
        self.lstm = nn.LSTM(2 * embedding_dim, hidden_size, batch_first=True)
        # Additive attention over [h_t; v_a]: W[h; v] = W_h h + W_v v, with v_a the query.
        self.attention = AdditiveSelfAttention(hidden_size, embedding_dim, attention_size)
        self.project_context = nn.Linear(hidden_size, hidden_size, bias=False)
        self.project_last = nn.Linear(hidden_size, hidden_size, bias=False)
        self.classifier = nn.Linear(hidden_size, num_classes)

    def encode(self, batch: Batch) -> NetworkEncoding:
        check_tokens(batch.tokens, 2, self.net_name, "sentences with an aspect term")
        require_extras(batch.extras, ("aspect", "aspect_mask"), self.net_name)
        words = self.embedding(batch.tokens)
        aspect = masked_mean(self.embedding(batch.extras["aspect"]), batch.extras["aspect_mask"])  # v_a [B, E]
        inputs = torch.cat([words, aspect.unsqueeze(1).expand_as(words)], dim=-1)
        hidden = run_rnn(self.lstm, self.dropout(inputs), batch.mask)
        last_index = (batch.mask.sum(dim=1) - 1).clamp_min(0)
        last = hidden[torch.arange(batch.size, device=hidden.device), last_index]  # h_N
        alpha = self.attention(hidden, aspect, batch.mask)
        site = AttentionSite.single(words, hidden, aspect, batch.mask, alpha, name="aspect-attention")
        head = head_dropout_masks(self.classifier, hidden, training=self.training, input_dropout=self.dropout.p)
        return NetworkEncoding(sites=(site,), cache={"hidden": hidden, "last": last, "head": head})

    def predict(self, encoding: NetworkEncoding, attention: Sequence[Tensor]) -> Tensor:
        # eq. 10: r = Σ_t α′_t h_t; Wang et al. eq. 10–11: h* = tanh(W_p r + W_x h_N), softmax(W_s h*).
        hidden, copies = per_example(encoding, "hidden")
        context = attention_pool(attention[0][:, 0], hidden, copies)
        final = torch.tanh(self.project_context(context) + self.project_last(encoding.cache["last"]))
        return run_head(self.classifier, final, per_example(encoding, "head")[0], copies)  # the masks encode drew
