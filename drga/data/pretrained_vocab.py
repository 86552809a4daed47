"""A pretrained model's own tokenizer as a run's vocabulary (the hf-encoder network).

The loaders' words are split into the model's subwords by its tokenizer (Hugging Face
``tokenizers``/``transformers``), with the special tokens it adds ([CLS] … [SEP]). Ids are the
model's; ``itos`` is its vocabulary by id, which is what checkpoints record. ``max_length`` counts
subword tokens, special tokens included; a truncated text keeps its closing special token.

For display (the analyses), :func:`merge_subwords` joins a word's subwords back into the word and
sums their values, and drops the special tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from drga.data.batching import EncodedExample, EncodingReport
from drga.data.text import TextExample
from drga.data.vocab import Vocabulary

#: How subword vocabularies mark word boundaries: WordPiece continues a word with "##"; SentencePiece
#: ("▁") and byte-level BPE ("Ġ") start a word with a marker instead.
CONTINUATION_PREFIX = "##"
WORD_START_MARKERS = ("▁", "Ġ")
#: Special tokens of the common families, as their vocabularies spell them.
SPECIAL_TOKENS = frozenset({"[CLS]", "[SEP]", "[PAD]", "[MASK]", "<s>", "</s>", "<pad>", "<mask>", "<cls>", "<sep>"})


class SubwordVocabulary(Vocabulary):
    """The vocabulary of a pretrained tokenizer: ids, special ids, and the encoding of tokenized text."""

    def __init__(self, tokenizer: Any, source: str | None = None):  # not Vocabulary.__init__: the model decides its ids
        self.tokenizer = tokenizer
        self.source = source  #: the pretrained model it comes from (``network.pretrained``), for its description
        by_id = {index: token for token, index in tokenizer.get_vocab().items()}
        self.itos = [by_id.get(index, f"<id {index}>") for index in range(max(by_id) + 1)]
        self.stoi = {token: index for index, token in enumerate(self.itos)}
        self.special_ids = frozenset(tokenizer.all_special_ids)
        self.unknown_id = tokenizer.unk_token_id

    def encode(self, tokens: Sequence[str]) -> list[int]:
        return self.tokenizer(list(tokens), is_split_into_words=True)["input_ids"]

    def encode_examples(
        self, examples: Sequence[TextExample], max_length: int, max_sentences: int | None = None, max_sentence_length: int | None = None,
    ) -> tuple[list[EncodedExample], EncodingReport]:
        """Every example's subword ids (special tokens added), cut to ``max_length`` keeping the closing special token
        (a subword network reads text: documents' limits do not apply)."""
        if max_length < 3:
            raise ValueError(f"max_length must leave room for the special tokens and a word (≥ 3), got {max_length}")
        for position, example in enumerate(examples):
            if not example.tokens:
                raise ValueError(f"example {position} has no tokens; empty texts cannot be classified")
        rows = self.tokenizer([list(example.tokens) for example in examples], is_split_into_words=True)["input_ids"]
        encoded, truncated, unknown, total = [], 0, 0, 0
        for example, ids in zip(examples, rows):
            if len(ids) > max_length:
                truncated += 1
                ids = ids[: max_length - 1] + ids[-1:] if ids[-1] in self.special_ids else ids[:max_length]
            unknown += sum(1 for i in ids if i == self.unknown_id)
            total += len(ids)
            encoded.append(EncodedExample(list(ids), example.label))
        return encoded, EncodingReport(len(encoded), truncated, unknown, total)


    def describe(self, min_freq: int) -> str:
        return f"vocabulary: the {len(self)} subword ids of {self.source or 'the pretrained model'}'s tokenizer (lengths in subwords)"

    def shown_tokens(self, words: Sequence[str], ids: Sequence[int], max_length: int) -> tuple[list[str], bool]:
        return [self.itos[i] for i in ids], len(ids) >= max_length

    def word_groups(self, tokens: Sequence[str]) -> list[list[int]] | None:
        return word_groups(tokens)


def word_groups(tokens: Sequence[str]) -> list[list[int]]:
    """The positions of each word's subword tokens, in order; special tokens belong to none.

    WordPiece pieces "##x" continue the word before; in a text whose tokens carry a word-start
    marker (SentencePiece "▁", byte-level BPE "Ġ") a piece without one continues it. Tokens without
    any marker are words of their own, so word vocabularies give one group per token.
    """
    marked_starts = any(token[:1] in WORD_START_MARKERS for token in tokens)
    groups: list[list[int]] = []
    for position, token in enumerate(tokens):
        if token in SPECIAL_TOKENS:
            continue
        if marked_starts:
            continues = token[:1] not in WORD_START_MARKERS
        else:
            continues = token.startswith(CONTINUATION_PREFIX) and len(token) > len(CONTINUATION_PREFIX)
        if continues and groups:
            groups[-1].append(position)
        else:
            groups.append([position])
    return groups


def word_text(tokens: Sequence[str], group: Sequence[int]) -> str:
    """The word a group of subword tokens spells, markers removed."""
    pieces = [tokens[i] for i in group]
    first = pieces[0][1:] if pieces[0][:1] in WORD_START_MARKERS and len(pieces[0]) > 1 else pieces[0]
    rest = [p[len(CONTINUATION_PREFIX):] if p.startswith(CONTINUATION_PREFIX) else p for p in pieces[1:]]
    return first + "".join(rest)


def merge_subwords(tokens: Sequence[str], values: Sequence[float]) -> tuple[list[str], list[float]]:
    """Words and their summed values from subword tokens and one value each; special tokens dropped.

    A word's attention is the sum of its subwords' (attention is mass: the word holds what its pieces hold).
    """
    groups = word_groups(tokens)
    return [word_text(tokens, g) for g in groups], [float(sum(values[i] for i in g)) for g in groups]
