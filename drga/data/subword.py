"""Subword tokenization for translation: SentencePiece models trained on the training side only.

The toolkit uses `SentencePiece <https://github.com/google/sentencepiece>`_ (BPE by default,
unigram on request) because it is lossless: ``decode(encode(text))`` gives the text back
(after SentencePiece's NFKC normalisation), so translations can be scored against the raw,
untokenized references with sacrebleu, and no language-specific detokenizer is needed.

Ids are fixed across models: 0 ``<pad>``, 1 ``<unk>``, 2 ``<s>`` (begin), 3 ``</s>`` (end).
A trained model is kept as its serialized bytes, so a checkpoint carries its tokenizers.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence

PAD_ID, UNK_ID, BOS_ID, EOS_ID = 0, 1, 2, 3

#: SentencePiece model types a config may ask for.
MODEL_TYPES = ("bpe", "unigram")


class SubwordTokenizer:
    """A trained SentencePiece model: text ↔ ids, with the toolkit's fixed special ids."""

    def __init__(self, model_proto: bytes):
        import sentencepiece

        self.model_proto = bytes(model_proto)
        self._processor = sentencepiece.SentencePieceProcessor()
        self._processor.LoadFromSerializedProto(self.model_proto)
        specials = (self._processor.pad_id(), self._processor.unk_id(), self._processor.bos_id(), self._processor.eos_id())
        if specials != (PAD_ID, UNK_ID, BOS_ID, EOS_ID):
            raise ValueError(f"a SentencePiece model for this toolkit needs pad/unk/bos/eos ids 0/1/2/3, this one has {specials}")

    @classmethod
    def train(
        cls, sentences: Iterable[str], vocab_size: int, model_type: str = "bpe", character_coverage: float = 1.0
    ) -> SubwordTokenizer:
        """Train on ``sentences`` (the training side only: never dev or test text).

        One thread and the whole input (no sampling), so the model is a pure function of the
        sentences and the settings.
        """
        import sentencepiece

        if model_type not in MODEL_TYPES:
            raise ValueError(f"unknown subword model type {model_type!r}; choose one of {MODEL_TYPES}")
        if vocab_size < 8:
            raise ValueError(f"vocab_size must be at least 8 (4 special pieces and some text), got {vocab_size}")
        lines = [s for s in sentences if s.strip()]
        if not lines:
            raise ValueError("no text to train a subword model on")
        writer = io.BytesIO()
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=iter(lines),
            model_writer=writer,
            vocab_size=vocab_size,
            model_type=model_type,
            character_coverage=character_coverage,
            pad_id=PAD_ID,
            unk_id=UNK_ID,
            bos_id=BOS_ID,
            eos_id=EOS_ID,
            # A small corpus may not hold vocab_size distinct pieces; take what there is.
            hard_vocab_limit=False,
            input_sentence_size=0,
            shuffle_input_sentence=False,
            num_threads=1,
            minloglevel=2,
        )
        return cls(writer.getvalue())

    def __len__(self) -> int:
        return int(self._processor.get_piece_size())

    def encode(self, text: str) -> list[int]:
        """Ids of the subword pieces of ``text`` (no begin/end markers)."""
        return list(self._processor.encode(text, out_type=int))

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """Ids of many texts at once."""
        return [list(ids) for ids in self._processor.encode(list(texts), out_type=int)]

    def pieces(self, text: str) -> list[str]:
        """The subword pieces of ``text`` as strings (for inspection)."""
        return list(self._processor.encode(text, out_type=str))

    def decode(self, ids: Sequence[int]) -> str:
        """Detokenized text; special ids (pad, begin, end) are dropped."""
        return self._processor.decode([int(i) for i in ids if int(i) > EOS_ID])

    def id_to_piece(self, index: int) -> str:
        """The piece of one id."""
        return str(self._processor.id_to_piece(int(index)))
