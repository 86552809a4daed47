"""BLEU and chrF through sacrebleu, and perplexity."""

from __future__ import annotations

import math

import pytest
import sacrebleu

from drga.tasks.translation.metrics import corpus_bleu, corpus_chrf, perplexity, score_translations

REFERENCES = [
    "Ein Mann mit einem orangefarbenen Hut, der etwas anstarrt.",
    "Ein Boston Terrier läuft über saftig-grünes Gras vor einem weißen Zaun.",
    "Ein Mädchen in einem Karateanzug bricht einen Stock mit einem Tritt.",
]


def test_references_against_themselves_score_100():
    bleu, signature, brevity_penalty, hypothesis_length, reference_length = corpus_bleu(REFERENCES, REFERENCES)
    assert bleu == pytest.approx(100.0) and brevity_penalty == pytest.approx(1.0) and hypothesis_length == reference_length
    assert "tok:13a" in signature and "case:mixed" in signature and "nrefs:1" in signature
    chrf, chrf_signature = corpus_chrf(REFERENCES, REFERENCES)
    assert chrf == pytest.approx(100.0) and "nc:6" in chrf_signature


def test_a_known_hypothesis_matches_sacrebleus_own_computation():
    hypotheses = [
        "Ein Mann mit orangefarbenem Hut starrt etwas an.",
        "Ein Terrier rennt über grünes Gras vor einem weißen Zaun.",
        "Ein Mädchen im Karateanzug zerbricht einen Stock.",
    ]
    bleu = corpus_bleu(hypotheses, REFERENCES).score
    assert bleu == pytest.approx(sacrebleu.corpus_bleu(hypotheses, [REFERENCES]).score)
    assert 0.0 < bleu < 100.0
    chrf, _ = corpus_chrf(hypotheses, REFERENCES)
    assert chrf == pytest.approx(sacrebleu.corpus_chrf(hypotheses, [REFERENCES]).score)
    scores = score_translations(hypotheses, REFERENCES)
    assert (scores.bleu, scores.chrf, scores.sentences) == (bleu, chrf, 3)


def test_bleu_by_hand_on_a_one_sentence_corpus():
    # Hypothesis "a b c d" against reference "a b c e": 1-4-gram precisions 3/4, 2/3, 1/2, 0/1.
    # sacrebleu's default 'exp' smoothing replaces the zero 4-gram count by 1/(2·1) over 1:
    # BLEU = BP · exp(mean log p) = 1 · (3/4 · 2/3 · 1/2 · 1/2)^(1/4).
    bleu = corpus_bleu(["a b c d"], ["a b c e"])
    assert bleu.score == pytest.approx(100.0 * (0.75 * (2 / 3) * 0.5 * 0.5) ** 0.25, abs=1e-6)
    assert (bleu.brevity_penalty, bleu.hypothesis_length, bleu.reference_length) == (pytest.approx(1.0), 4, 4)


def test_short_translations_pay_the_brevity_penalty():
    # 4 + 4 hypothesis tokens against 8 + 8 reference tokens: BP = exp(1 − r/c) = exp(1 − 16/8) = 1/e,
    # and every n-gram of the hypotheses is in its reference (precisions 1), so BLEU = 100·BP.
    scores = score_translations(
        ["the cat sat on", "a dog ran far"], ["the cat sat on the mat and slept", "a dog ran far away from the house"]
    )
    assert (scores.hypothesis_length, scores.reference_length) == (8, 16)
    assert scores.brevity_penalty == pytest.approx(math.exp(-1.0))
    assert scores.bleu == pytest.approx(100.0 * math.exp(-1.0), abs=1e-6)
    # longer hypotheses than references are not penalised for length
    assert score_translations(["the cat sat on the mat"], ["the cat sat"]).brevity_penalty == pytest.approx(1.0)


def test_mismatched_counts_are_an_error():
    with pytest.raises(ValueError, match="2 hypotheses but 3 references"):
        corpus_bleu(REFERENCES[:2], REFERENCES)


def test_perplexity():
    assert perplexity(10.0, 5) == pytest.approx(math.exp(2.0))
    assert perplexity(0.0, 3) == 1.0
    assert perplexity(1.0, 0) == math.inf
