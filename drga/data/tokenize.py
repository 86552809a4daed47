"""Tokenizing raw text: words (with inner apostrophes, hyphens and number dots) and single
punctuation marks, by the Hugging Face ``tokenizers`` library's regex pre-tokenizer.

Raw text (your TSV files, AG News) goes through :func:`raw_text_tokens`; the pre-tokenized
benchmarks (MR, SUBJ, SST, SemEval, movie reviews) keep their own tokens, split on whitespace.
"""

from __future__ import annotations

from functools import lru_cache

#: A word with its inner apostrophes, hyphens or dots (``isn't``, ``e-mail``, ``5.99``), or one
#: punctuation mark; what is between matches (whitespace) is dropped.
TOKEN_PATTERN = r"[^\W_]+(?:['’.\-][^\W_]+)*|[^\w\s]"


@lru_cache(maxsize=1)
def _pre_tokenizer():
    from tokenizers import Regex
    from tokenizers.pre_tokenizers import Split

    return Split(Regex(TOKEN_PATTERN), behavior="isolated")


def raw_text_tokens(text: str, lowercase: bool = True) -> list[str]:
    """``"It's a film, isn't it?"`` → ``["it's", "a", "film", ",", "isn't", "it", "?"]``."""
    pieces = _pre_tokenizer().pre_tokenize_str(text.lower() if lowercase else text)
    return [piece for piece, _ in pieces if piece.strip()]
