"""DiSAN-style source2token multi-dimensional self-attention (Shen et al. 2018).

Multi-dimensional attention gives every token one weight per feature dimension: for each of the
H = Dh dimensions k, α[:, k] is a softmax over the real tokens of the k-th score

    f(h_t) = W₂ ELU(W₁ h_t + U u + b₁) + b₂   ∈ R^H        (DiSAN eq. 13, source2token)
    α_{t,k} = exp f_k(h_t) / Σ_s exp f_k(h_s)
    c_k = Σ_t α_{t,k} h_{t,k}                                (eq. 10 per dimension)

The site's attention is [B, 1, T, H] (H == Dh, as eq. 1's α_t·h_t needs), the agent emits an
action vector a_t ∈ R^H per token, and eqs. 3–4 adjust and renormalise each dimension on its
own (see drga.core.adjust.adjust_attention).

Simplification: DiSAN's token2token directional self-attention block (forward/backward masked
multi-dimensional attention with a fusion gate) costs B·T²·D memory; here a BiLSTM produces the
context-aware h_t instead, so the family's defining part, multi-dimensional source2token
attention, is what DRGA adjusts. Observation: w_t = word embedding, h_t = BiLSTM state,
u = a learned query vector (Du = Dh) added inside f.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from drga.baselines.common import attention_pool, check_tokens, even_hidden, head_dropout_masks, make_embedding, run_head, run_rnn
from drga.baselines.protocol import AttentionNetwork, AttentionSite, Batch, NetworkEncoding, masked_softmax, per_example
from drga.registry import register_network


class Source2TokenAttention(nn.Module):
    """Multi-dimensional source2token attention: α [..., T, H], a softmax over tokens per dimension."""

    def __init__(self, hidden_size: int, query_size: int, attention_size: int):
        super().__init__()
        self.hidden_proj = nn.Linear(hidden_size, attention_size)
        self.query_proj = nn.Linear(query_size, attention_size, bias=False)
        self.score = nn.Linear(attention_size, hidden_size)

    def forward(self, hidden: Tensor, query: Tensor, mask: Tensor) -> Tensor:
        scores = self.score(F.elu(self.hidden_proj(hidden) + self.query_proj(query).unsqueeze(-2)))
        return masked_softmax(scores, mask.unsqueeze(-1), dim=-2)


@register_network("disan")
class DiSAN(AttentionNetwork):
    """Embedding → BiLSTM → multi-dimensional source2token attention (DiSAN) → MLP classifier."""

    multi_dimensional = True

    def __init__(
        self,
        vocab_size: int,
        num_classes: int,
        embedding_dim: int = 300,
        hidden_size: int = 300,
        attention_size: int = 300,
        classifier_hidden: int = 300,
        dropout: float = 0.5,
        embeddings: Tensor | None = None,
        freeze_embeddings: bool = False,
    ):
        super().__init__()
        half = even_hidden(hidden_size)
        self.embedding = make_embedding(vocab_size, embedding_dim, embeddings, freeze_embeddings)
        self.dropout = nn.Dropout(dropout)
        self.lstm = nn.LSTM(embedding_dim, half, batch_first=True, bidirectional=True)
        self.query = nn.Parameter(torch.randn(hidden_size) * 0.1)
        self.attention = Source2TokenAttention(hidden_size, hidden_size, attention_size)
        self.classifier = nn.Sequential(
            nn.Linear(hidden_size, classifier_hidden), nn.Tanh(), nn.Dropout(dropout), nn.Linear(classifier_hidden, num_classes)
        )

    def encode(self, batch: Batch) -> NetworkEncoding:
        check_tokens(batch.tokens, 2, self.net_name, "flat text")
        words = self.embedding(batch.tokens)
        hidden = run_rnn(self.lstm, self.dropout(words), batch.mask)
        query = self.query.expand(batch.size, -1)
        alpha = self.attention(hidden, query, batch.mask)  # [B, T, H]
        site = AttentionSite.single(words, hidden, query, batch.mask, alpha, name="source2token")
        head = head_dropout_masks(self.classifier, hidden, training=self.training, input_dropout=self.dropout.p)
        return NetworkEncoding(sites=(site,), cache={"hidden": hidden, "head": head})

    def predict(self, encoding: NetworkEncoding, attention: Sequence[Tensor]) -> Tensor:
        # eq. 10 per dimension: c′_k = Σ_t α′_{t,k} h_{t,k}; eq. 11: softmax(MLP(c′)).
        hidden, copies = per_example(encoding, "hidden")
        head, _ = per_example(encoding, "head")
        context = attention_pool(attention[0][:, 0], hidden, copies)
        return run_head(self.classifier, context, head, copies)  # the masks encode drew
