"""Translation metrics: perplexity, and corpus BLEU and chrF from sacrebleu.

BLEU and chrF are computed by sacrebleu on *detokenized* hypotheses against the *raw*
references exactly as they are in the data files (sacrebleu applies its own standard
tokenization, ``13a`` by default), so the numbers are comparable with published sacrebleu
scores. Every reported score carries sacrebleu's signature, which pins the settings. BLEU comes
with its brevity penalty and the hypothesis and reference lengths it is computed from (tokens
after sacrebleu's tokenization), so that a BLEU lost to short translations shows as such.

Perplexity is exp of the mean negative log-likelihood per target *subword* token under teacher
forcing (``</s>`` counted, padding not). It depends on the subword vocabulary, so it compares
models that share a tokenizer, not papers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import NamedTuple

from sacrebleu.metrics import BLEU, CHRF


@dataclass
class TranslationScores:
    """Corpus BLEU and chrF of a set of hypotheses, with sacrebleu's signatures and BLEU's length terms."""

    bleu: float
    chrf: float
    bleu_signature: str
    chrf_signature: str
    sentences: int
    brevity_penalty: float
    hypothesis_length: int
    reference_length: int

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def _check(hypotheses: Sequence[str], references: Sequence[str]) -> None:
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references; they must pair up line by line")
    if not references:
        raise ValueError("no sentences to score")


class CorpusBleu(NamedTuple):
    """sacrebleu's corpus BLEU, its signature and the length terms it was computed from."""

    score: float
    signature: str
    #: min(1, exp(1 − reference_length / hypothesis_length)): below 1 when the hypotheses are shorter
    brevity_penalty: float
    hypothesis_length: int  #: tokens of all hypotheses, after sacrebleu's tokenization
    reference_length: int  #: tokens of all references, likewise


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> CorpusBleu:
    """sacrebleu's corpus BLEU (default settings: 13a tokenization, exp smoothing, cased), its signature and length terms."""
    _check(hypotheses, references)
    metric = BLEU()
    score = metric.corpus_score(list(hypotheses), [list(references)])
    return CorpusBleu(float(score.score), str(metric.get_signature()), float(score.bp), int(score.sys_len), int(score.ref_len))


def corpus_chrf(hypotheses: Sequence[str], references: Sequence[str]) -> tuple[float, str]:
    """sacrebleu's corpus chrF (character 6-grams, β = 2) and its signature."""
    _check(hypotheses, references)
    metric = CHRF()
    score = metric.corpus_score(list(hypotheses), [list(references)])
    return float(score.score), str(metric.get_signature())


def score_translations(hypotheses: Sequence[str], references: Sequence[str]) -> TranslationScores:
    """BLEU and chrF of detokenized hypotheses against raw references, with signatures and BLEU's length terms."""
    bleu = corpus_bleu(hypotheses, references)
    chrf, chrf_signature = corpus_chrf(hypotheses, references)
    return TranslationScores(
        bleu.score, chrf, bleu.signature, chrf_signature, len(references), bleu.brevity_penalty, bleu.hypothesis_length,
        bleu.reference_length,
    )


def perplexity(negative_log_likelihood: float, tokens: int) -> float:
    """exp(total NLL / tokens); infinite for no tokens, capped to avoid an overflow error."""
    if tokens <= 0:
        return math.inf
    return math.exp(min(negative_log_likelihood / tokens, 700.0))
