"""HAN (Yang et al. 2016): hierarchical attention, words within sentences, sentences within a document.

    h_{st} = BiGRU_w(e_{st})                       per sentence s
    α_{st} ∝ exp(u_wᵀ tanh(W_w h_{st} + b_w))      word attention  (Yang et al. eqs. 5–7)
    v_s = Σ_t α_{st} h_{st}
    g_s = BiGRU_s(v_1 … v_S)
    γ_s ∝ exp(u_sᵀ tanh(W_s g_s + b_s))            sentence attention (eqs. 8–10)
    d = Σ_s γ_s g_s,  P(y|X) = softmax(MLP(d))

Two sites, sharing Dw = embedding_dim and Dh = Du = hidden_size:
"words" (K = S arrays, one per sentence, over T words; a padding sentence has an all-False mask
row and all-zero attention), and "sentences" (K = 1 over S sentences).
Observation: words: w = word embedding, h = word-GRU state, u = u_w; eq. 1's h^s, mean and max
of h are taken per array, i.e. per sentence, so a word's state holds its sentence's context.
Sentences: w = the mean word embedding of the sentence, h = sentence-GRU state, u = u_s.

``predict`` recomputes the sentence vectors from the revised word attention and re-runs the
sentence GRU on them; the revised sentence attention (revised from the original pass's γ) pools
the new g_s (all revisions are applied at once, as for the Transformer).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn

from drga.baselines.common import (
    ContextVectorAttention,
    check_tokens,
    even_hidden,
    head_dropout_masks,
    make_embedding,
    masked_mean,
    run_head,
    run_rnn,
)
from drga.baselines.protocol import AttentionNetwork, AttentionSite, Batch, NetworkEncoding, per_example
from drga.registry import register_network


@register_network("han", input="document")
class HierarchicalAttentionNetwork(AttentionNetwork):
    """HAN: BiGRU word encoder + word attention, BiGRU sentence encoder + sentence attention."""


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
        half = even_hidden(hidden_size, "two GRU directions")
        self.embedding = make_embedding(vocab_size, embedding_dim, embeddings, freeze_embeddings)
        self.dropout = nn.Dropout(dropout)
        self.word_gru = nn.GRU(embedding_dim, half, batch_first=True, bidirectional=True)
        self.sentence_gru = nn.GRU(hidden_size, half, batch_first=True, bidirectional=True)
        self.word_query = nn.Parameter(torch.randn(hidden_size) * 0.1)  # u_w
        self.sentence_query = nn.Parameter(torch.randn(hidden_size) * 0.1)  # u_s
        self.word_attention = ContextVectorAttention(hidden_size, attention_size)
        self.sentence_attention = ContextVectorAttention(hidden_size, attention_size)
        self.classifier = nn.Sequential(
            nn.Linear(hidden_size, classifier_hidden), nn.Tanh(), nn.Dropout(dropout), nn.Linear(classifier_hidden, num_classes)
        )

    def _encode_words(self, words: Tensor, mask: Tensor) -> Tensor:
        """Word-GRU states [B, S, T, Dh] over the real sentences only (zero elsewhere)."""
        b, s, t, e = words.shape
        flat_mask = mask.reshape(b * s, t)
        present = flat_mask.any(dim=1)
        hidden = words.new_zeros(b * s, t, self.word_gru.hidden_size * 2)
        if present.any():
            index = present.nonzero(as_tuple=True)[0]
            states = run_rnn(self.word_gru, self.dropout(words.reshape(b * s, t, e)[index]), flat_mask[index])
            hidden = hidden.index_copy(0, index, states)
        return hidden.view(b, s, t, -1)

    def _sentences(self, vectors: Tensor, sentence_mask: Tensor) -> Tensor:
        """Sentence-GRU states g [B, S, Dh]; padding sentences are zeros."""
        return run_rnn(self.sentence_gru, vectors, sentence_mask)

    def encode(self, batch: Batch) -> NetworkEncoding:
        check_tokens(batch.tokens, 3, self.net_name, "documents")
        mask = batch.mask
        b, s, t = mask.shape
        sentence_mask = mask.any(dim=-1)  # [B, S]
        if not bool(sentence_mask.any(dim=1).all()):
            raise ValueError("han: every document needs at least one non-empty sentence")
        words = self.embedding(batch.tokens)  # [B, S, T, E]
        hidden = self._encode_words(words, mask)
        word_query = self.word_query.expand(b, s, -1)
        alpha = self.word_attention(hidden, word_query, mask)  # [B, S, T]; all zero for padding sentences
        vectors = torch.einsum("bst,bstd->bsd", alpha, hidden)
        sentence_hidden = self._sentences(vectors, sentence_mask)
        sentence_query = self.sentence_query.expand(b, -1)
        gamma = self.sentence_attention(sentence_hidden, sentence_query, sentence_mask)
        word_site = AttentionSite(
            word_vectors=words, hidden_states=hidden, query=word_query, mask=mask, attention=alpha, name="words"
        )
        sentence_site = AttentionSite.single(
            masked_mean(words, mask), sentence_hidden, sentence_query, sentence_mask, gamma, name="sentences"
        )
        head = head_dropout_masks(self.classifier, hidden, training=self.training, input_dropout=self.dropout.p)
        return NetworkEncoding(sites=(word_site, sentence_site), cache={"words": hidden, "sentence_mask": sentence_mask, "head": head})

    def predict(self, encoding: NetworkEncoding, attention: Sequence[Tensor]) -> Tensor:
        if len(attention) != 2:
            raise ValueError(f"han: expected 2 attention arrays (words, sentences), got {len(attention)}")
        word_alpha, sentence_gamma = attention
        # eq. 10 at the word level gives the sentence vectors; the sentence GRU re-reads them.
        # The K copies of a document read its word states, not K copies of them.
        words, copies = per_example(encoding, "words")
        alpha = word_alpha.reshape(words.shape[0], copies, *word_alpha.shape[1:])
        vectors = torch.einsum("bkst,bstd->bksd", alpha, words).flatten(0, 1)
        sentence_hidden = self._sentences(vectors, encoding.cache["sentence_mask"])
        document = torch.einsum("bs,bsd->bd", sentence_gamma[:, 0], sentence_hidden)
        return run_head(self.classifier, document, per_example(encoding, "head")[0], copies)  # the masks encode drew
